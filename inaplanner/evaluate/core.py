"""The evaluator: what a plan means on a scenario (CONTRACTS.md, "What a plan means").

This is the one place where flow counts, link and switch loads, violations and objectives are
computed. Planners, the GUI overlays, reports, the deployer and monitoring all call
:func:`evaluate`.

Rules applied (numbers as in CONTRACTS.md):

1. A worker's data leaves as one flow. Walking its path, at a switch ``v`` in ``merge_at`` the flow
   becomes the aggregate ``(task, v, pipeline)``, ``pipeline`` being that of the port on which the
   flow entered ``v``. Every flow that becomes the same aggregate must continue on the same remaining
   path with the same remaining merges; otherwise the plan is invalid ("continues two ways").
2. Merging at a switch that is not programmable is invalid; flows entering on different pipelines
   are different aggregates.
3. Flows of a task on a directed link = distinct flows (raw worker flows or aggregates) crossing it.
   Link load = sum over tasks of flows x rate + background <= capacity.
4. Switch aggregation load = sum over aggregates formed there of (distinct incoming flows merged) x
   rate + aggregation_background <= aggregation_capacity (null: no limit beyond line rate).
5. An aggregate merges at most the switch's ``max_fan_in`` distinct incoming flows (null: 32, the
   bundled programs' contributor bitmap), whatever the rates: a ``fan_in`` violation.
6. On a Clos network (every switch has a tier) every route is up-down (:func:`is_up_down`); a valley
   path is a ``valley`` violation.
7. Objective: one task -> its rate (ARO SJST, Eq. 1); one job with several PSs -> the job's
   throughput (SJMT, Eq. 2); several jobs -> min_j beta_j T_j + mu * sum_j beta_j T_j with
   mu = 0.001 (MJMT, Eq. 3).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from itertools import repeat
from typing import Any

import numpy as np

from inaplanner.model import DEFAULT_MAX_FAN_IN, Plan, Scenario, Switch, Task

MU = 0.001
REL_TOL = 1e-9
ABS_TOL = 1e-9


@dataclass
class Aggregate:
    """An aggregate formed at ``switch`` on ``pipeline`` for ``task`` from ``inputs`` distinct flows."""

    task: Task
    switch: str
    pipeline: int
    inputs: int
    workers: list[str]
    next_hop: str | None


def fan_in_message(task: Task | str, switch: str, pipeline: int, count: int, limit: int,
                   source: str = "max_fan_in") -> str:
    """CONTRACTS.md rule 5, in the one wording the evaluator and the deployer both use.

    ``source`` says where ``limit`` comes from: the switch's ``max_fan_in`` (the evaluator, and the
    deployer's second line), or the installed program's bitmap when that is narrower."""
    return (f"task {task}: switch {switch} aggregates {count} flows on pipeline {pipeline}; "
            f"the data plane's bitmap holds {limit} ({source})")


def valley_message(task: Task | str, worker: str, path: list[str] | tuple[str, ...]) -> str:
    """CONTRACTS.md rule 6: a route that is not up-down on a Clos network."""
    return (f"task {task} worker {worker}: path {'-'.join(path)} is not up-down "
            "(tiers must rise, then fall)")


#: Violation kinds a rate change cannot repair (rules 5 and 6); "link" and "switch" are capacities.
RULE_KINDS = ("fan_in", "valley")


@dataclass
class Violation:
    """A broken limit. ``kind``:

    - ``"link"`` (rule 3): ``name`` "A->B", ``load`` and ``limit`` in Gbps;
    - ``"switch"`` (rule 4): ``name`` the switch, aggregation ``load`` and ``limit`` in Gbps;
    - ``"fan_in"`` (rule 5): ``name`` the switch, ``pipeline``, ``task``, ``load`` the distinct flows
      merged into the aggregate and ``limit`` the switch's max_fan_in;
    - ``"valley"`` (rule 6): ``name`` the worker, ``task`` and ``path``; ``load``/``limit`` unused (0).
    """

    kind: str
    name: str
    load: float
    limit: float
    task: str | None = None
    pipeline: int | None = None
    path: tuple[str, ...] | None = None

    @property
    def is_capacity(self) -> bool:
        """True for rules 3-4 (rates can repair it), False for rules 5-6 (routes must change)."""
        return self.kind not in RULE_KINDS

    def __str__(self) -> str:
        if self.kind == "fan_in":
            return fan_in_message(self.task or "?", self.name, int(self.pipeline or 0), int(self.load),
                                  int(self.limit))
        if self.kind == "valley":
            return valley_message(self.task or "?", self.name, self.path or ())
        what = "link" if self.kind == "link" else "switch aggregation"
        return f"{what} {self.name}: load {self.load:.6g} > limit {self.limit:.6g}"

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (``summary()``); the rule-specific keys only when set."""
        d: dict[str, Any] = {"kind": self.kind, "name": self.name, "load": self.load, "limit": self.limit}
        if self.task is not None:
            d["task"] = self.task
        if self.pipeline is not None:
            d["pipeline"] = self.pipeline
        if self.path is not None:
            d["path"] = list(self.path)
        d["message"] = str(self)
        return d


@dataclass
class Evaluation:
    """Everything the rules say about one plan on one scenario."""

    scenario: Scenario
    plan: Plan
    tasks: list[Task]
    rates: np.ndarray  # (T,) Gbps per task
    flows: np.ndarray  # (T, L, 2) distinct flows per task per directed link [a->b, b->a]
    agg_inputs: np.ndarray  # (T, S) incoming flows merged per task per switch (all pipelines)
    switch_ids: list[str]
    link_capacity: np.ndarray  # (L,)
    link_background: np.ndarray  # (L, 2)
    switch_capacity: np.ndarray  # (S,), inf where null
    switch_background: np.ndarray  # (S,)
    aggregates: list[Aggregate] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    violations: list[Violation] = field(default_factory=list)
    objective: float = 0.0
    objective_kind: str = "SJST"
    job_throughput: dict[str, float] = field(default_factory=dict)
    #: (S,) per switch: the largest number of distinct flows one aggregate merges there (0: none)
    fan_in_used: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    #: (S,) per switch: its max_fan_in (null -> 32) (CONTRACTS.md rule 5)
    switch_max_fan_in: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    @property
    def valid(self) -> bool:
        """No structural error (rules 1-2, routes well formed)."""
        return not self.errors

    @property
    def feasible(self) -> bool:
        """Valid and no limit broken (rules 3-6)."""
        return self.valid and not self.violations

    @property
    def capacity_violations(self) -> list[Violation]:
        """The violations of rules 3-4 (rates can repair them)."""
        return [v for v in self.violations if v.is_capacity]

    @property
    def rule_violations(self) -> list[Violation]:
        """The violations of rules 5-6 (fan-in, valley paths): only other routes repair them."""
        return [v for v in self.violations if not v.is_capacity]

    @property
    def link_load(self) -> np.ndarray:
        """(L, 2) load per directed link, background included."""
        return np.einsum("t,tld->ld", self.rates, self.flows) + self.link_background

    @property
    def link_utilisation(self) -> np.ndarray:
        """(L, 2) load / capacity (inf on a loaded zero-capacity link, 0 where both are 0)."""
        cap = self.link_capacity[:, None]
        load = self.link_load
        with np.errstate(divide="ignore", invalid="ignore"):
            util = np.where(cap > 0, load / np.where(cap > 0, cap, 1.0), np.where(load > 0, np.inf, 0.0))
        return util

    @property
    def switch_load(self) -> np.ndarray:
        """(S,) aggregation load per switch, background included."""
        return self.rates @ self.agg_inputs + self.switch_background

    def at_rates(self, rates: np.ndarray) -> Evaluation:
        """The same routes at other task rates (finite and >= 0, in ``tasks`` order): loads,
        capacity violations (rules 3-4) and the objective again from the flows already counted,
        without walking the routes again; the rule 5-6 violations do not depend on rates and are
        kept. Equal to :func:`evaluate` of the plan with those rates; the caller sets the plan's
        own rates to match."""
        r = np.asarray(rates, dtype=float).copy()
        if r.shape != self.rates.shape or not np.all(np.isfinite(r)) or np.any(r < 0):
            raise ValueError("at_rates: one finite rate >= 0 per task")
        ev = replace(self, rates=r)
        ev.violations = _violations(ev) + self.rule_violations
        _score(ev)
        return ev

    def task_rate(self, job: str, ps: str) -> float:
        return float(self.rates[self.tasks.index(Task(job, ps))])

    def most_loaded_links(self, n: int = 10) -> list[dict[str, Any]]:
        """The ``n`` directed links with the highest load / capacity, as rows for tables."""
        util = self.link_utilisation
        load = self.link_load
        order = np.argsort(-util, axis=None, kind="stable")[:n]
        rows = []
        for flat in order:
            li, d = divmod(int(flat), 2)
            lk = self.scenario.links[li]
            src, dst = (lk.a, lk.b) if d == 0 else (lk.b, lk.a)
            rows.append(
                {
                    "link": f"{src}->{dst}",
                    "index": li,
                    "direction": d,
                    "load": float(load[li, d]),
                    "capacity": float(lk.capacity),
                    "utilisation": float(util[li, d]),
                    "flows": int(self.flows[:, li, d].sum()),
                }
            )
        return rows

    def switch_rows(self) -> list[dict[str, Any]]:
        """Per programmable switch: aggregation load, capacity, the pipelines that aggregate and the
        largest fan-in used against max_fan_in."""
        load = self.switch_load
        at: dict[str, list[Aggregate]] = {}  # one pass over the aggregates, not one per switch
        for a in self.aggregates:
            at.setdefault(a.switch, []).append(a)
        rows = []
        for si, sid in enumerate(self.switch_ids):
            sw = self.scenario.node(sid)
            if not isinstance(sw, Switch) or not sw.programmable:
                continue
            here = at.get(sid, [])
            pipes = sorted({a.pipeline for a in here})
            cap = float(self.switch_capacity[si])
            rows.append(
                {
                    "switch": sid,
                    "load": float(load[si]),
                    "capacity": None if np.isinf(cap) else cap,
                    "aggregates": len(here),
                    "pipelines_used": pipes,
                    "pipelines": sw.pipelines,
                    "fan_in_used": int(self.fan_in_used[si]) if len(self.fan_in_used) else 0,
                    "max_fan_in": sw.fan_in_limit,
                }
            )
        return rows

    def summary(self) -> dict[str, Any]:
        """A JSON-ready digest (``inaplanner evaluate --json``)."""
        return {
            "valid": self.valid,
            "feasible": self.feasible,
            "objective": self.objective,
            "objective_kind": self.objective_kind,
            "tasks": [
                {"job": t.job, "ps": t.ps, "rate": float(r)} for t, r in zip(self.tasks, self.rates, strict=True)
            ],
            "job_throughput": self.job_throughput,
            "errors": list(self.errors),
            "warnings": list(self.warnings),
            "violations": [v.as_dict() for v in self.violations],
            "most_loaded_links": self.most_loaded_links(10),
            "switches": self.switch_rows(),
        }


def objective_of(scenario: Scenario, job_throughput: dict[str, float]) -> tuple[float, str]:
    """CONTRACTS.md rule 7 / ARO Eqs. (1)-(3): (value, "SJST" | "SJMT" | "MJMT")."""
    jobs = scenario.jobs
    if not jobs:
        return 0.0, "SJST"
    if len(jobs) == 1:
        kind = "SJST" if len(jobs[0].parameter_servers) == 1 else "SJMT"
        return float(job_throughput.get(jobs[0].id, 0.0)), kind
    weighted = [j.weight * job_throughput.get(j.id, 0.0) for j in jobs]
    return float(min(weighted) + MU * sum(weighted)), "MJMT"


def is_up_down(scenario: Scenario, path: list[str], memo: Mapping[str, int] | None = None) -> bool:
    """True when the tier ranks along ``path`` rise strictly, then fall strictly (valley-free; ARO
    section II's up-down routing, CONTRACTS.md rule 6). Hosts rank below every switch; a hop
    between two switches of one tier is neither up nor down, so it breaks the rule too, as in the
    planners' path finders. ``memo``: the nodes' ranks looked up before (the evaluator's)."""
    ranks = list(map(scenario.rank if memo is None else memo.__getitem__, path))
    i = 1
    while i < len(ranks) and ranks[i] > ranks[i - 1]:
        i += 1
    while i < len(ranks) and ranks[i] < ranks[i - 1]:
        i += 1
    return i == len(ranks)


class _Memo(dict):
    """A dict that fills itself: ``memo[key]`` is ``make(key)``, worked out on the first lookup.
    One evaluation asks for the same few hundred nodes and links for every route; looking them
    up in a plain dict is several times cheaper than the scenario's methods (with the merges
    walked in path order: fat-tree k=8, the ``random`` baseline's plan, 2.6 ms per evaluation
    against 3.6 ms; k=32 with 1,000 workers per job 60 ms against 91 ms)."""

    def __init__(self, make: Callable[[Any], Any]) -> None:
        super().__init__()
        self.make = make

    def __missing__(self, key: Any) -> Any:
        value = self[key] = self.make(key)
        return value


class _Walker:
    """Walks one task's routes, collecting distinct flows per directed link and the aggregates."""

    def __init__(self, sc: Scenario) -> None:
        self.sc = sc
        self.rank = _Memo(sc.rank)
        self.arc = _Memo(self._arc)  # (u, v) -> 2 * link index + direction, -1 without a link
        self.kind = _Memo(self._kind)  # node -> 0 unknown, 1 host, 2 switch, 3 programmable switch
        self.pipe = _Memo(lambda hop: sc.ingress_pipeline(*hop))  # (u, v) -> v's ingress pipeline

    def _kind(self, n: str) -> int:
        if not self.sc.has_node(n):
            return 0
        node = self.sc.node(n)
        return (3 if node.programmable else 2) if isinstance(node, Switch) else 1

    def _arc(self, hop: tuple[str, str]) -> int:
        li = self.sc.link_index(*hop)
        return -1 if li is None else 2 * li + (0 if self.sc.links[li].a == hop[0] else 1)

    def route_errors(self, task: Task, worker: str, path: list[str], merges: list[str]) -> list[str]:
        sc = self.sc
        where = f"task {task} worker {worker}"
        if path[0] != worker:
            return [f"{where}: path starts at {path[0]!r}, not at the worker"]
        if path[-1] != task.ps:
            return [f"{where}: path ends at {path[-1]!r}, not at the PS {task.ps!r}"]
        if len(set(path)) != len(path):
            return [f"{where}: path repeats a node"]
        # each test over the whole path at C speed first; the loop that names the culprit runs
        # only for a refused route
        kinds = list(map(self.kind.__getitem__, path))
        if 0 in kinds:
            return [f"{where}: unknown node {path[kinds.index(0)]!r} in path"]
        if 1 in kinds[1:-1]:
            return [f"{where}: host {path[kinds.index(1, 1)]!r} in the middle of the path (a host never forwards)"]
        if -1 in list(map(self.arc.__getitem__, zip(path, path[1:], strict=False))):
            for u, v in zip(path, path[1:], strict=False):
                if sc.link_index(u, v) is None:
                    return [f"{where}: no link {u} - {v}"]
        if not merges:
            return []
        inner = {n: i for i, n in enumerate(path[1:-1], start=1)}
        last = 0
        for m in merges:
            if m not in inner:
                return [f"{where}: merge_at {m!r} is not a switch inside the path"]
            if inner[m] <= last:
                return [f"{where}: merge_at lists {m!r} out of path order or twice"]
            last = inner[m]
            if self.kind[m] != 3:
                return [f"{where}: merge at {m!r}, which is not programmable"]
        return []

    def walk(
        self, task: Task, routes: list[tuple[str, list[str], list[str]]], errors: list[str]
    ) -> tuple[set[tuple[Any, int]], dict[tuple[str, int], list[Any]], list[Aggregate]]:
        """Returns (distinct (flow, link*2+dir) pairs, inputs per aggregate, aggregates). The
        routes have passed :meth:`route_errors`: their merges are inside the path, in path order."""
        on_link: set[tuple[Any, int]] = set()
        inputs: dict[tuple[str, int], set[Any]] = {}
        workers: dict[tuple[str, int], list[str]] = {}
        signature: dict[tuple[str, int], tuple[tuple[str, ...], tuple[str, ...], str]] = {}
        arc, pipe = self.arc, self.pipe
        for worker, path, merges in routes:
            if not merges:  # one flow all the way
                on_link.update(zip(repeat(worker), map(arc.__getitem__, zip(path, path[1:], strict=False))))
                continue
            flow: Any = worker
            k, nxt = 0, merges[0]  # the next merge on the path ("" after the last)
            for i in range(1, len(path)):
                u, v = path[i - 1], path[i]
                on_link.add((flow, arc[(u, v)]))
                if v == nxt:
                    key = (v, pipe[(u, v)])
                    k += 1
                    rest = (tuple(path[i:]), tuple(merges[k:]))
                    nxt = merges[k] if k < len(merges) else ""
                    sig = signature.get(key)
                    if sig is None:
                        signature[key] = (*rest, worker)
                    elif sig[:2] != rest:
                        errors.append(
                            f"task {task}: aggregate at {v} (pipeline {key[1]}) continues two ways: "
                            f"{sig[2]} via {'-'.join(sig[0])} merging at {list(sig[1])}, "
                            f"{worker} via {'-'.join(rest[0])} merging at {list(rest[1])}"
                        )
                    inputs.setdefault(key, set()).add(flow)
                    workers.setdefault(key, []).append(worker)
                    flow = key
        aggs = [
            Aggregate(task, s, p, len(inputs[(s, p)]), workers[(s, p)], (signature[(s, p)][0][1:] or (None,))[0])
            for (s, p) in inputs
        ]
        return on_link, {k: list(v) for k, v in inputs.items()}, aggs


def evaluate(scenario: Scenario, plan: Plan, *, check_hash: bool = False) -> Evaluation:
    """Apply CONTRACTS.md's rules to ``plan`` on ``scenario``; never raises on a bad plan: structural
    problems go to ``errors``, capacity breaches to ``violations``."""
    sc = scenario
    tasks = sc.tasks()
    t_index = {t: i for i, t in enumerate(tasks)}
    switch_ids = [s.id for s in sc.switches()]
    s_index = {s: i for i, s in enumerate(switch_ids)}
    n_links = len(sc.links)
    flows = np.zeros((len(tasks), n_links, 2), dtype=np.int64)
    agg_inputs = np.zeros((len(tasks), len(switch_ids)), dtype=np.int64)
    rates = np.zeros(len(tasks))
    errors: list[str] = []
    warnings: list[str] = []
    aggregates: list[Aggregate] = []

    if check_hash:
        from inaplanner.io.native import scenario_sha256

        if plan.scenario_sha256 != scenario_sha256(sc):
            warnings.append("plan was made for another version of the scenario (scenario_sha256 differs)")

    walker = _Walker(sc)
    seen: set[Task] = set()
    tiered = sc.is_tiered()
    valleys: list[Violation] = []
    for tp in plan.tasks:
        task = Task(tp.job, tp.ps)
        if task not in t_index:
            errors.append(f"task {task}: no such job/PS pair in the scenario")
            continue
        if task in seen:
            errors.append(f"task {task}: listed twice")
            continue
        seen.add(task)
        ti = t_index[task]
        if not np.isfinite(tp.rate) or tp.rate < 0:
            errors.append(f"task {task}: rate {tp.rate!r} is not a finite number >= 0")
            continue
        rates[ti] = tp.rate
        job = sc.job(task.job)
        by_worker: dict[str, int] = {}
        good: list[tuple[str, list[str], list[str]]] = []
        workers = set(job.workers)  # a list: a scan per route was quadratic in the job's size
        for r in tp.routes:
            if r.worker not in workers:
                errors.append(f"task {task}: route for {r.worker!r}, which is not a worker of {job.id}")
                continue
            by_worker[r.worker] = by_worker.get(r.worker, 0) + 1
            errs = walker.route_errors(task, r.worker, r.path, r.merge_at)
            if errs:
                errors.extend(errs)
                continue
            if tiered and not is_up_down(sc, r.path, walker.rank):
                valleys.append(Violation("valley", r.worker, 0.0, 0.0, task=str(task), path=tuple(r.path)))
            good.append((r.worker, r.path, r.merge_at))
        twice = sorted(w for w, c in by_worker.items() if c > 1)
        if twice:
            errors.append(f"task {task}: more than one route for worker {twice[0]!r}")
        if tp.rate > 0:
            missing = [w for w in job.workers if w not in by_worker]
            if missing:
                errors.append(f"task {task}: rate > 0 but no route for worker {missing[0]!r}"
                              + (f" and {len(missing) - 1} more" if len(missing) > 1 else ""))
        n_err = len(errors)
        on_link, inputs, aggs = walker.walk(task, good, errors)
        if len(errors) > n_err:
            continue
        if on_link:
            idx = np.fromiter((k for _, k in on_link), dtype=np.int64, count=len(on_link))
            flows[ti] = np.bincount(idx, minlength=2 * n_links).reshape(n_links, 2)
        for (s, _p), ins in inputs.items():
            agg_inputs[ti, s_index[s]] += len(ins)
        aggregates.extend(aggs)
    for task in tasks:
        if task not in seen:
            errors.append(f"task {task}: missing from the plan")

    link_capacity = np.array([lk.capacity for lk in sc.links], dtype=float)
    link_background = np.array([lk.background for lk in sc.links], dtype=float).reshape(n_links, 2)
    switches = sc.switches()
    switch_capacity = np.array(
        [np.inf if s.aggregation_capacity is None else s.aggregation_capacity for s in switches], dtype=float
    )
    switch_background = np.array([s.aggregation_background for s in switches], dtype=float)
    ev = Evaluation(
        scenario=sc,
        plan=plan,
        tasks=tasks,
        rates=rates,
        flows=flows,
        agg_inputs=agg_inputs,
        switch_ids=switch_ids,
        link_capacity=link_capacity,
        link_background=link_background,
        switch_capacity=switch_capacity,
        switch_background=switch_background,
        aggregates=aggregates,
        errors=errors,
        warnings=warnings,
    )
    fan_in_used = np.zeros(len(switch_ids), dtype=np.int64)
    for a in aggregates:
        si = s_index[a.switch]
        fan_in_used[si] = max(fan_in_used[si], a.inputs)
    ev.fan_in_used = fan_in_used
    ev.switch_max_fan_in = np.array([s.fan_in_limit for s in switches], dtype=np.int64)
    ev.violations = _violations(ev) + _fan_in_violations(ev) + valleys
    _score(ev)
    return ev


def _score(ev: Evaluation) -> None:
    """Job throughputs and the objective (CONTRACTS.md rule 7) from the evaluation's task rates."""
    thr: dict[str, float] = {j.id: 0.0 for j in ev.scenario.jobs}
    for t, rate in zip(ev.tasks, ev.rates, strict=True):
        thr[t.job] += float(rate)
    ev.job_throughput = thr
    ev.objective, ev.objective_kind = objective_of(ev.scenario, thr)


def _exceeds(load: np.ndarray, limit: np.ndarray) -> np.ndarray:
    return load > limit * (1.0 + REL_TOL) + ABS_TOL


def _violations(ev: Evaluation) -> list[Violation]:
    out: list[Violation] = []
    load = ev.link_load
    bad = np.argwhere(_exceeds(load, ev.link_capacity[:, None]))
    for li, d in bad:
        lk = ev.scenario.links[li]
        name = f"{lk.a}->{lk.b}" if d == 0 else f"{lk.b}->{lk.a}"
        out.append(Violation("link", name, float(load[li, d]), float(lk.capacity)))
    sload = ev.switch_load
    for si in np.flatnonzero(_exceeds(sload, ev.switch_capacity)):
        out.append(Violation("switch", ev.switch_ids[si], float(sload[si]), float(ev.switch_capacity[si])))
    return out


def fan_in_limit(scenario: Scenario, switch: str) -> int:
    """The switch's max_fan_in (null -> :data:`~inaplanner.model.DEFAULT_MAX_FAN_IN`)."""
    node = scenario.node(switch)
    return node.fan_in_limit if isinstance(node, Switch) else DEFAULT_MAX_FAN_IN


def _fan_in_violations(ev: Evaluation) -> list[Violation]:
    """Rule 5: one violation per aggregate merging more than its switch's max_fan_in flows."""
    s_index = {s: i for i, s in enumerate(ev.switch_ids)}
    out: list[Violation] = []
    for a in ev.aggregates:
        limit = int(ev.switch_max_fan_in[s_index[a.switch]])
        if a.inputs > limit:
            out.append(Violation("fan_in", a.switch, float(a.inputs), float(limit), task=str(a.task),
                                 pipeline=a.pipeline))
    return out
