"""What-if changes to a scenario, applied to a copy (Qt-free).

A change is a small frozen object with ``describe()`` and ``apply(sc)`` (edits ``sc`` in place).
:func:`what_if` applies a list of them to an independent copy made with ``copy_scenario``, so the
original is never touched. :func:`display_copy` builds the copy the canvas overlay is evaluated on:
it keeps every link of the original in its place (a failed link or a failed switch's links get
capacity 0), so the overlay's link indices match the canvas that still shows the original.

Removing a link changes the contract's default port -> pipeline split of the switches at its ends,
which would silently move other ports to other pipelines; a failed link therefore first freezes the
current map of those switches.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from inaplanner.errors import InaplannerError, ValidationError
from inaplanner.io.native import copy_scenario
from inaplanner.model import Job, Scenario, Switch


def _freeze_port_map(sc: Scenario, node_id: str) -> None:
    node = sc.node(node_id)
    if isinstance(node, Switch) and node.port_pipeline is None:
        node.port_pipeline = sc.port_pipeline_map(node_id)


def _link_index(sc: Scenario, a: str, b: str) -> int:
    i = sc.link_index(a, b)
    if i is None:
        raise InaplannerError(f"what-if: there is no link {a} - {b} in the scenario")
    return i


@dataclass(frozen=True)
class FailLink:
    a: str
    b: str

    def describe(self) -> str:
        return f"fail link {self.a} - {self.b}"

    def apply(self, sc: Scenario) -> None:
        i = _link_index(sc, self.a, self.b)
        for end in (self.a, self.b):
            _freeze_port_map(sc, end)
        del sc.links[i]
        sc.touch()

    def mask(self, sc: Scenario) -> None:
        sc.links[_link_index(sc, self.a, self.b)].capacity = 0.0
        sc.links[_link_index(sc, self.a, self.b)].background = (0.0, 0.0)


@dataclass(frozen=True)
class FailSwitch:
    switch: str

    def describe(self) -> str:
        return f"fail switch {self.switch}"

    def _check(self, sc: Scenario) -> None:
        if not sc.has_node(self.switch) or not sc.is_switch(self.switch):
            raise InaplannerError(f"what-if: there is no switch {self.switch!r} in the scenario")

    def apply(self, sc: Scenario) -> None:
        self._check(sc)
        for lk in sc.links:
            if self.switch in (lk.a, lk.b):
                _freeze_port_map(sc, lk.other(self.switch))
        sc.links = [lk for lk in sc.links if self.switch not in (lk.a, lk.b)]
        sc.nodes = [n for n in sc.nodes if n.id != self.switch]
        sc.touch()

    def mask(self, sc: Scenario) -> None:
        self._check(sc)
        for lk in sc.links:
            if self.switch in (lk.a, lk.b):
                lk.capacity = 0.0
                lk.background = (0.0, 0.0)


@dataclass(frozen=True)
class SetCapacity:
    a: str
    b: str
    capacity: float

    def describe(self) -> str:
        return f"capacity of {self.a} - {self.b} = {self.capacity:g} Gbps"

    def apply(self, sc: Scenario) -> None:
        if not self.capacity >= 0:
            raise InaplannerError(f"what-if: capacity of {self.a} - {self.b} must be >= 0, got {self.capacity}")
        sc.links[_link_index(sc, self.a, self.b)].capacity = float(self.capacity)

    mask = apply


@dataclass(frozen=True)
class AddJob:
    job: Job = field(hash=False)

    def describe(self) -> str:
        j = self.job
        return f"add job {j.id} ({len(j.workers)} workers, PS {', '.join(j.parameter_servers)})"

    def apply(self, sc: Scenario) -> None:
        if any(j.id == self.job.id for j in sc.jobs):
            raise InaplannerError(f"what-if: a job {self.job.id!r} already exists")
        j = self.job
        sc.jobs.append(
            Job(j.id, list(j.workers), list(j.parameter_servers), j.model_mb, j.weight, j.layers,
                j.comm_comp_ratio, j.remaining_s, dict(j.extra))
        )

    mask = apply


@dataclass(frozen=True)
class RemoveJob:
    job: str

    def describe(self) -> str:
        return f"remove job {self.job}"

    def apply(self, sc: Scenario) -> None:
        if not any(j.id == self.job for j in sc.jobs):
            raise InaplannerError(f"what-if: there is no job {self.job!r}")
        sc.jobs = [j for j in sc.jobs if j.id != self.job]

    mask = apply


@dataclass(frozen=True)
class ScaleWorkers:
    """Keep the first ``workers`` workers of a job (a job that shrinks, or a growth step when a
    sweep runs 25 %, 50 %, ... of every job)."""

    job: str
    workers: int

    def describe(self) -> str:
        return f"job {self.job} with its first {self.workers} workers"

    def apply(self, sc: Scenario) -> None:
        j = next((j for j in sc.jobs if j.id == self.job), None)
        if j is None:
            raise InaplannerError(f"what-if: there is no job {self.job!r}")
        if not 1 <= self.workers <= len(j.workers):
            raise InaplannerError(f"what-if: job {self.job} has {len(j.workers)} workers; keep 1 to "
                                  f"{len(j.workers)}, not {self.workers}")
        j.workers = list(j.workers[: self.workers])

    mask = apply


Change = FailLink | FailSwitch | SetCapacity | AddJob | RemoveJob | ScaleWorkers


def check_changes(sc: Scenario, changes: list[Change]) -> None:
    """A quick check, without copying the scenario, that ``changes`` fit ``sc`` in order (the
    things they name exist, a new job's members are distinct hosts, ...). The full validation runs
    when the what-if copy is built. Raises InaplannerError naming the change."""
    links = {frozenset((lk.a, lk.b)) for lk in sc.links}
    switches = {s.id for s in sc.switches()}
    hosts = {h.id for h in sc.hosts()}
    jobs = {j.id for j in sc.jobs}
    for c in changes:
        where = f"what-if ({c.describe()})"
        if isinstance(c, (FailLink, SetCapacity)):
            pair = frozenset((c.a, c.b))
            if pair not in links:
                raise InaplannerError(f"{where}: there is no link {c.a} - {c.b} (any more)")
            if isinstance(c, FailLink):
                links.discard(pair)
            elif not (c.capacity >= 0 and c.capacity < float("inf")):
                raise InaplannerError(f"{where}: the capacity must be a number >= 0")
        elif isinstance(c, FailSwitch):
            if c.switch not in switches:
                raise InaplannerError(f"{where}: there is no switch {c.switch!r} (any more)")
            switches.discard(c.switch)
            links = {p for p in links if c.switch not in p}
        elif isinstance(c, ScaleWorkers):
            if c.job not in jobs:
                raise InaplannerError(f"{where}: there is no job {c.job!r} (any more)")
        elif isinstance(c, RemoveJob):
            if c.job not in jobs:
                raise InaplannerError(f"{where}: there is no job {c.job!r} (any more)")
            jobs.discard(c.job)
        elif isinstance(c, AddJob):
            j = c.job
            if j.id in jobs:
                raise InaplannerError(f"{where}: a job {j.id!r} already exists")
            if not j.workers or not j.parameter_servers:
                raise InaplannerError(f"{where}: the job needs workers and a parameter server")
            members = [*j.workers, *j.parameter_servers]
            unknown = [m for m in members if m not in hosts]
            if unknown:
                raise InaplannerError(f"{where}: {unknown[0]!r} is not a host of the scenario")
            if len(set(members)) != len(members):
                raise InaplannerError(f"{where}: a host is listed twice or is both worker and PS")
            if not (j.model_mb > 0 and j.weight > 0):
                raise InaplannerError(f"{where}: model size and weight must be > 0")
            jobs.add(j.id)


def _build(base: Scenario, changes: list[Change], masked: bool) -> Scenario:
    sc = copy_scenario(base)
    for change in changes:
        (change.mask if masked else change.apply)(sc)
        sc.touch()
    try:
        sc.validate()
    except ValidationError as exc:
        raise InaplannerError(f"what-if: the changed scenario is not valid: {exc}") from None
    return sc


def what_if(base: Scenario, changes: list[Change]) -> Scenario:
    """An independent copy of ``base`` with ``changes`` applied in order; ``base`` is untouched.
    Raises InaplannerError naming the change that does not fit the scenario."""
    return _build(base, changes, masked=False)


def display_copy(base: Scenario, changes: list[Change]) -> Scenario:
    """A copy of ``base`` with the same links in the same order, failed ones at capacity 0: the
    scenario a what-if plan is evaluated on for the canvas overlay."""
    return _build(base, changes, masked=True)
