"""The scenario: network nodes, full-duplex links and training jobs (CONTRACTS.md, "Scenario").

Plain dataclasses with no Qt and no I/O. ``Scenario.validate()`` checks every rule of the contract and
raises :class:`~inaplanner.errors.ValidationError` naming the element and the cause.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import networkx as nx

from inaplanner.errors import ValidationError

#: Tier order of CONTRACTS.md: leaf/tor/edge < agg < spine/core. Hosts sit below every switch.
TIER_RANK = {"leaf": 1, "tor": 1, "edge": 1, "agg": 2, "spine": 3, "core": 3}
HOST_RANK = 0
TARGETS = ("bmv2", "tofino")
#: CONTRACTS.md: a null ``max_fan_in`` means 32, the width of the bundled data-plane programs'
#: contributor bitmap, so the evaluator, the planners and the deployer all use one number.
DEFAULT_MAX_FAN_IN = 32
#: The largest ``max_fan_in`` accepted: a sanity bound (a contributor bitmap of 64 Ki bits).
MAX_FAN_IN_CEILING = 65536


@dataclass
class Host:
    """A worker or parameter server. A host never forwards."""

    id: str
    pos: tuple[float, float] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    kind = "host"

    @property
    def is_switch(self) -> bool:
        return False


@dataclass
class Switch:
    """A switch; when ``programmable`` it can aggregate flows that enter on the same pipeline."""

    id: str
    tier: str | None = None
    programmable: bool = False
    pipelines: int = 1
    port_pipeline: dict[int, int] | None = None
    aggregation_capacity: float | None = None
    aggregation_background: float = 0.0
    aggregators: int | None = None
    target: str | None = None
    pos: tuple[float, float] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    max_fan_in: int | None = None

    kind = "switch"

    @property
    def is_switch(self) -> bool:
        return True

    @property
    def fan_in_limit(self) -> int:
        """The most distinct flows one aggregate may merge here (CONTRACTS.md rule 5);
        ``max_fan_in`` or, when null, :data:`DEFAULT_MAX_FAN_IN`."""
        return DEFAULT_MAX_FAN_IN if self.max_fan_in is None else self.max_fan_in


Node = Host | Switch


@dataclass
class Link:
    """A full-duplex link; ``capacity`` holds in each direction, ``background`` is (a->b, b->a)."""

    a: str
    b: str
    capacity: float
    a_port: int | None = None
    b_port: int | None = None
    background: tuple[float, float] = (0.0, 0.0)
    extra: dict[str, Any] = field(default_factory=dict)

    def port_at(self, node: str) -> int | None:
        if node == self.a:
            return self.a_port
        if node == self.b:
            return self.b_port
        raise KeyError(node)

    def other(self, node: str) -> str:
        return self.b if node == self.a else self.a

    def background_from(self, node: str) -> float:
        """Background load in the direction leaving ``node``."""
        return self.background[0] if node == self.a else self.background[1]


@dataclass
class Job:
    """A training job; with several PSs its model is sharded across them (one task per PS)."""

    id: str
    workers: list[str]
    parameter_servers: list[str]
    model_mb: float = 100.0
    weight: float = 1.0
    layers: int | None = None
    comm_comp_ratio: float | None = None
    remaining_s: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, order=True)
class Task:
    """One (job, PS) pair: every worker of the job sends this PS's share at one common rate."""

    job: str
    ps: str

    def __str__(self) -> str:
        return f"{self.job}/{self.ps}"


def default_port_pipeline(ports: list[int], pipelines: int) -> dict[int, int]:
    """CONTRACTS.md default split: the i-th of n sorted ports is on pipeline floor(i * P / n)."""
    ordered = sorted(ports)
    n = len(ordered)
    return {p: (i * pipelines) // n for i, p in enumerate(ordered)} if n else {}


@dataclass
class Scenario:
    """Nodes, links and jobs. Build it, then call :meth:`validate` (the loaders do)."""

    name: str = "scenario"
    nodes: list[Node] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    jobs: list[Job] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)  # top-level "x-" keys, kept on round trips

    # ---- lookups -------------------------------------------------------------------------------
    # The caches below are dropped by ``touch()``; code that edits a scenario in place calls it.

    def touch(self) -> None:
        """Forget derived data after an in-place edit (and count the edit in :attr:`revision`)."""
        for key in ("_node_index", "_link_index", "_incident", "_ports", "_pipelines", "_derived"):
            self.__dict__.pop(key, None)
        self.__dict__["_revision"] = self.revision + 1

    def derived(self, name: str, make: Callable[[], Any]) -> Any:
        """``make()`` kept until the next :meth:`touch`: data derived from the network (not from
        positions, which move without a touch), made once, possibly ahead on another thread
        (the canvas's grouping is made while a file is read, 0.9 s at fat-tree k=64)."""
        held = self.__dict__.setdefault("_derived", {})
        if name not in held:
            held[name] = make()
        return held[name]

    @property
    def revision(self) -> int:
        """How many times :meth:`touch` was called: data derived from this scenario elsewhere
        (the views' indexes) is still good while it is unchanged."""
        return int(self.__dict__.get("_revision", 0))

    @cached_property
    def _node_index(self) -> dict[str, Node]:
        return {n.id: n for n in self.nodes}

    @cached_property
    def _link_index(self) -> dict[tuple[str, str], int]:
        index: dict[tuple[str, str], int] = {}
        for i, link in enumerate(self.links):
            index[(link.a, link.b)] = i
            index[(link.b, link.a)] = i
        return index

    @cached_property
    def _incident(self) -> dict[str, list[int]]:
        index: dict[str, list[int]] = {}
        for i, link in enumerate(self.links):
            index.setdefault(link.a, []).append(i)
            index.setdefault(link.b, []).append(i)
        return index

    def node(self, node_id: str) -> Node:
        try:
            return self._node_index[node_id]
        except KeyError:
            raise ValidationError(f"unknown node {node_id!r}", "nodes") from None

    def has_node(self, node_id: str) -> bool:
        return node_id in self._node_index

    def switches(self) -> list[Switch]:
        return [n for n in self.nodes if isinstance(n, Switch)]

    def hosts(self) -> list[Host]:
        return [n for n in self.nodes if isinstance(n, Host)]

    def is_switch(self, node_id: str) -> bool:
        return isinstance(self._node_index.get(node_id), Switch)

    def link_index(self, a: str, b: str) -> int | None:
        """Index in ``links`` of the link joining a and b (either order), or None."""
        return self._link_index.get((a, b))

    def link_between(self, a: str, b: str) -> Link | None:
        i = self._link_index.get((a, b))
        return None if i is None else self.links[i]

    def links_of(self, node_id: str) -> list[Link]:
        """The links with ``node_id`` at one end, in ``links`` order."""
        return [self.links[i] for i in self._incident.get(node_id, ())]

    def neighbours(self, node_id: str) -> list[str]:
        return [lk.other(node_id) for lk in self.links_of(node_id)]

    def tasks(self) -> list[Task]:
        """Every (job, PS) pair, in job order then PS order."""
        return [Task(j.id, ps) for j in self.jobs for ps in j.parameter_servers]

    def job(self, job_id: str) -> Job:
        for j in self.jobs:
            if j.id == job_id:
                return j
        raise ValidationError(f"unknown job {job_id!r}", "jobs")

    # ---- ports and pipelines -----------------------------------------------------------------

    @cached_property
    def _ports(self) -> dict[str, list[int]]:
        ports: dict[str, list[int]] = {s.id: [] for s in self.switches()}
        for link in self.links:
            for end, port in ((link.a, link.a_port), (link.b, link.b_port)):
                if end in ports and port is not None:
                    ports[end].append(port)
        return ports

    @cached_property
    def _pipelines(self) -> dict[str, dict[int, int]]:
        return {s.id: self.port_pipeline_map(s.id) for s in self.switches()}

    def switch_ports(self, switch_id: str) -> list[int]:
        return sorted(self._ports.get(switch_id, []))

    def port_pipeline_map(self, switch_id: str) -> dict[int, int]:
        """The switch's port -> pipeline map: its own, or the contract's default split."""
        sw = self.node(switch_id)
        assert isinstance(sw, Switch)
        if sw.port_pipeline is not None:
            return dict(sw.port_pipeline)
        return default_port_pipeline(self.switch_ports(switch_id), sw.pipelines)

    def pipeline_of_port(self, switch_id: str, port: int) -> int:
        return self._pipelines[switch_id][port]

    def ingress_pipeline(self, prev: str, node_id: str) -> int:
        """Pipeline of the port on which a flow coming from ``prev`` enters switch ``node_id``."""
        link = self.link_between(prev, node_id)
        if link is None:
            raise ValidationError(f"no link {prev} - {node_id}", "links")
        port = link.port_at(node_id)
        return self._pipelines[node_id][port] if port is not None else 0

    # ---- tiers -------------------------------------------------------------------------------

    def is_tiered(self) -> bool:
        """True when every switch has a tier: a Clos network where up-down routing applies."""
        sw = self.switches()
        return bool(sw) and all(s.tier in TIER_RANK for s in sw)

    def rank(self, node_id: str) -> int:
        n = self.node(node_id)
        return TIER_RANK.get(n.tier or "", 0) if isinstance(n, Switch) else HOST_RANK

    # ---- graph view ----------------------------------------------------------------------------

    def graph(self) -> nx.Graph:
        """An undirected networkx view: node attribute ``kind``; edge attributes ``index``,
        ``capacity``. Rebuilt on each call (cheap); do not edit the scenario through it."""
        g = nx.Graph()
        for n in self.nodes:
            g.add_node(n.id, kind=n.kind, obj=n)
        for i, link in enumerate(self.links):
            g.add_edge(link.a, link.b, index=i, capacity=link.capacity)
        return g

    # ---- validation ----------------------------------------------------------------------------

    def validate(self) -> None:
        """Check every rule of CONTRACTS.md; raise ValidationError at the first broken one."""
        validate_scenario(self)


def _num(value: Any) -> bool:
    """A finite real number (bools are not numbers here)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _check_port(end: str, port: Any, is_switch: bool, ports_used: dict[tuple[str, int], int], where: str) -> None:
    """Raise unless a link end's (non-null) port is a free integer >= 0 on a switch."""
    if not is_switch:
        raise ValidationError(f"port must be null on host end {end!r}", where)
    if not isinstance(port, int) or isinstance(port, bool) or port < 0:
        raise ValidationError(f"port must be an integer >= 0, got {port!r}", where)
    if (end, port) in ports_used:
        raise ValidationError(f"duplicate port {port} on switch {end!r} (also links[{ports_used[(end, port)]}])",
                              where)


def validate_scenario(sc: Scenario) -> None:
    """The contract's rules, each with a precise message. Ports must already be numbered."""
    seen: dict[str, int] = {}
    for i, n in enumerate(sc.nodes):
        where = f"nodes[{i}]"
        if not isinstance(n.id, str) or not n.id:
            raise ValidationError("id must be a non-empty string", where)
        if n.id in seen:
            raise ValidationError(f"duplicate node id {n.id!r} (also nodes[{seen[n.id]}])", where)
        seen[n.id] = i
        if isinstance(n, Switch):
            _validate_switch(n, where)
    link_seen: dict[frozenset[str], int] = {}
    ports_used: dict[tuple[str, int], int] = {}
    switch = {n.id: isinstance(n, Switch) for n in sc.nodes}
    inf = math.inf
    # the usual link (float capacity and background, both finite and >= 0) passes on type tests
    # alone; anything else takes the general tests (a fat-tree k=64 file: 196,608 links)
    for i, link in enumerate(sc.links):
        a, b = link.a, link.b
        if a not in seen or b not in seen:
            raise ValidationError(f"unknown node {a if a not in seen else b!r}", f"links[{i}]")
        if a == b:
            raise ValidationError(f"link from {a!r} to itself", f"links[{i}]")
        pair = frozenset((a, b))
        if pair in link_seen:
            raise ValidationError(
                f"duplicate link between {a!r} and {b!r} (also links[{link_seen[pair]}])", f"links[{i}]"
            )
        link_seen[pair] = i
        cap = link.capacity
        if not (type(cap) is float and 0.0 <= cap < inf) and (not _num(cap) or cap < 0):
            raise ValidationError(f"capacity must be a number >= 0, got {cap!r}", f"links[{i}].capacity")
        bg = link.background
        if not (len(bg) == 2 and type(bg[0]) is float and type(bg[1]) is float and 0.0 <= bg[0] < inf
                and 0.0 <= bg[1] < inf) and (len(bg) != 2 or not all(_num(x) and x >= 0 for x in bg)):
            raise ValidationError("background must be two numbers >= 0 [a->b, b->a]", f"links[{i}].background")
        for end, port, key in ((a, link.a_port, "a_port"), (b, link.b_port, "b_port")):
            if port is None:
                if switch[end]:
                    raise ValidationError(f"switch end {end!r} has no port", f"links[{i}].{key}")
            elif type(port) is int and port >= 0 and switch[end] and (end, port) not in ports_used:
                ports_used[(end, port)] = i
            else:
                _check_port(end, port, switch[end], ports_used, f"links[{i}].{key}")
                ports_used[(end, port)] = i
    for s in sc.switches():
        if s.port_pipeline is None:
            continue
        where = f"nodes[{seen[s.id]}].port_pipeline"
        for port in sc.switch_ports(s.id):
            if port not in s.port_pipeline:
                raise ValidationError(f"switch {s.id!r}: port {port} has no pipeline", where)
        for port, pipe in s.port_pipeline.items():
            if not isinstance(pipe, int) or isinstance(pipe, bool) or not 0 <= pipe < s.pipelines:
                raise ValidationError(
                    f"switch {s.id!r}: port {port} names pipeline {pipe!r}, "
                    f"but the switch has {s.pipelines} (0..{s.pipelines - 1})",
                    where,
                )
    job_seen: set[str] = set()
    for i, job in enumerate(sc.jobs):
        _validate_job(sc, job, f"jobs[{i}]", job_seen)


def _validate_switch(n: Switch, where: str) -> None:
    if n.tier is not None and n.tier not in TIER_RANK:
        raise ValidationError(
            f"switch {n.id!r}: unknown tier {n.tier!r} (one of {', '.join(TIER_RANK)})", where + ".tier"
        )
    if not isinstance(n.pipelines, int) or isinstance(n.pipelines, bool) or n.pipelines < 1:
        raise ValidationError(f"switch {n.id!r}: pipelines must be an integer >= 1", where + ".pipelines")
    if n.aggregation_capacity is not None and (not _num(n.aggregation_capacity) or n.aggregation_capacity < 0):
        raise ValidationError(
            f"switch {n.id!r}: aggregation_capacity must be >= 0 or null", where + ".aggregation_capacity"
        )
    if not _num(n.aggregation_background) or n.aggregation_background < 0:
        raise ValidationError(
            f"switch {n.id!r}: aggregation_background must be >= 0", where + ".aggregation_background"
        )
    if n.aggregators is not None and (not isinstance(n.aggregators, int) or n.aggregators < 0):
        raise ValidationError(f"switch {n.id!r}: aggregators must be an integer >= 0", where + ".aggregators")
    if n.max_fan_in is not None and (
        not isinstance(n.max_fan_in, int)
        or isinstance(n.max_fan_in, bool)
        or not 1 <= n.max_fan_in <= MAX_FAN_IN_CEILING
    ):
        raise ValidationError(
            f"switch {n.id!r}: max_fan_in must be an integer from 1 to {MAX_FAN_IN_CEILING} or null, "
            f"got {n.max_fan_in!r}",
            where + ".max_fan_in",
        )
    if n.target is not None and n.target not in TARGETS:
        raise ValidationError(
            f"switch {n.id!r}: unknown target {n.target!r} (bmv2 or tofino)", where + ".target"
        )


def _validate_job(sc: Scenario, job: Job, where: str, job_seen: set[str]) -> None:
    if not job.id:
        raise ValidationError("job id must be a non-empty string", where + ".id")
    if job.id in job_seen:
        raise ValidationError(f"duplicate job id {job.id!r}", where + ".id")
    job_seen.add(job.id)
    if not job.workers:
        raise ValidationError(f"job {job.id!r} has no workers", where + ".workers")
    if not job.parameter_servers:
        raise ValidationError(f"job {job.id!r} has no parameter servers", where + ".parameter_servers")
    for key, members in (("workers", job.workers), ("parameter_servers", job.parameter_servers)):
        if len(set(members)) != len(members):
            raise ValidationError(f"job {job.id!r} lists a node twice", f"{where}.{key}")
        for m in members:
            if not sc.has_node(m):
                raise ValidationError(f"job {job.id!r}: unknown node {m!r}", f"{where}.{key}")
            if sc.is_switch(m):
                role = "worker" if key == "workers" else "parameter server"
                raise ValidationError(f"job {job.id!r}: {role} {m!r} is a switch", f"{where}.{key}")
    both = set(job.workers) & set(job.parameter_servers)
    if both:
        raise ValidationError(
            f"job {job.id!r}: {sorted(both)[0]!r} is both a worker and a parameter server", where
        )
    for key in ("model_mb", "weight"):
        value = getattr(job, key)
        if not _num(value) or value <= 0:
            raise ValidationError(f"job {job.id!r}: {key} must be > 0", f"{where}.{key}")
    if job.layers is not None and (not isinstance(job.layers, int) or job.layers < 1):
        raise ValidationError(f"job {job.id!r}: layers must be an integer >= 1", where + ".layers")
    for key in ("comm_comp_ratio", "remaining_s"):
        value = getattr(job, key)
        if value is not None and (not _num(value) or value <= 0):
            raise ValidationError(f"job {job.id!r}: {key} must be > 0", f"{where}.{key}")
