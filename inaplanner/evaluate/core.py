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
5. Objective: one task -> its rate (ARO SJST, Eq. 1); one job with several PSs -> the job's
   throughput (SJMT, Eq. 2); several jobs -> min_j beta_j T_j + mu * sum_j beta_j T_j with
   mu = 0.001 (MJMT, Eq. 3).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from inaplanner.model import Plan, Scenario, Switch, Task

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


@dataclass
class Violation:
    """A link direction or switch whose load exceeds its limit."""

    kind: str  # "link" or "switch"
    name: str  # "A->B" or the switch id
    load: float
    limit: float

    def __str__(self) -> str:
        what = "link" if self.kind == "link" else "switch aggregation"
        return f"{what} {self.name}: load {self.load:.6g} > limit {self.limit:.6g}"


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

    @property
    def valid(self) -> bool:
        """No structural error (rules 1-2, routes well formed)."""
        return not self.errors

    @property
    def feasible(self) -> bool:
        """Valid and no capacity violated (rules 3-4)."""
        return self.valid and not self.violations

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
        """Per programmable switch: aggregation load, capacity and the pipelines that aggregate."""
        load = self.switch_load
        rows = []
        for si, sid in enumerate(self.switch_ids):
            sw = self.scenario.node(sid)
            if not isinstance(sw, Switch) or not sw.programmable:
                continue
            pipes = sorted({a.pipeline for a in self.aggregates if a.switch == sid})
            cap = float(self.switch_capacity[si])
            rows.append(
                {
                    "switch": sid,
                    "load": float(load[si]),
                    "capacity": None if np.isinf(cap) else cap,
                    "aggregates": sum(1 for a in self.aggregates if a.switch == sid),
                    "pipelines_used": pipes,
                    "pipelines": sw.pipelines,
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
            "violations": [
                {"kind": v.kind, "name": v.name, "load": v.load, "limit": v.limit} for v in self.violations
            ],
            "most_loaded_links": self.most_loaded_links(10),
            "switches": self.switch_rows(),
        }


def objective_of(scenario: Scenario, job_throughput: dict[str, float]) -> tuple[float, str]:
    """CONTRACTS.md rule 5 / ARO Eqs. (1)-(3): (value, "SJST" | "SJMT" | "MJMT")."""
    jobs = scenario.jobs
    if not jobs:
        return 0.0, "SJST"
    if len(jobs) == 1:
        kind = "SJST" if len(jobs[0].parameter_servers) == 1 else "SJMT"
        return float(job_throughput.get(jobs[0].id, 0.0)), kind
    weighted = [j.weight * job_throughput.get(j.id, 0.0) for j in jobs]
    return float(min(weighted) + MU * sum(weighted)), "MJMT"


def is_up_down(scenario: Scenario, path: list[str]) -> bool:
    """True when the tier ranks along ``path`` rise strictly, then fall strictly (valley-free)."""
    ranks = [scenario.rank(n) for n in path]
    i = 1
    while i < len(ranks) and ranks[i] > ranks[i - 1]:
        i += 1
    while i < len(ranks) and ranks[i] < ranks[i - 1]:
        i += 1
    return i == len(ranks)


class _Walker:
    """Walks one task's routes, collecting distinct flows per directed link and the aggregates."""

    def __init__(self, sc: Scenario) -> None:
        self.sc = sc

    def route_errors(self, task: Task, worker: str, path: list[str], merges: list[str]) -> list[str]:
        sc = self.sc
        where = f"task {task} worker {worker}"
        if path[0] != worker:
            return [f"{where}: path starts at {path[0]!r}, not at the worker"]
        if path[-1] != task.ps:
            return [f"{where}: path ends at {path[-1]!r}, not at the PS {task.ps!r}"]
        if len(set(path)) != len(path):
            return [f"{where}: path repeats a node"]
        for n in path:
            if not sc.has_node(n):
                return [f"{where}: unknown node {n!r} in path"]
        for n in path[1:-1]:
            if not sc.is_switch(n):
                return [f"{where}: host {n!r} in the middle of the path (a host never forwards)"]
        for u, v in zip(path, path[1:], strict=False):
            if sc.link_index(u, v) is None:
                return [f"{where}: no link {u} - {v}"]
        inner = {n: i for i, n in enumerate(path[1:-1], start=1)}
        last = 0
        for m in merges:
            if m not in inner:
                return [f"{where}: merge_at {m!r} is not a switch inside the path"]
            if inner[m] <= last:
                return [f"{where}: merge_at lists {m!r} out of path order or twice"]
            last = inner[m]
            node = sc.node(m)
            if not (isinstance(node, Switch) and node.programmable):
                return [f"{where}: merge at {m!r}, which is not programmable"]
        return []

    def walk(
        self, task: Task, routes: list[tuple[str, list[str], list[str]]], errors: list[str]
    ) -> tuple[set[tuple[Any, int]], dict[tuple[str, int], list[Any]], list[Aggregate]]:
        """Returns (distinct (flow, link*2+dir) pairs, inputs per aggregate, aggregates)."""
        sc = self.sc
        on_link: set[tuple[Any, int]] = set()
        inputs: dict[tuple[str, int], set[Any]] = {}
        workers: dict[tuple[str, int], list[str]] = {}
        signature: dict[tuple[str, int], tuple[tuple[str, ...], tuple[str, ...], str]] = {}
        for worker, path, merges in routes:
            merge_set = set(merges)
            flow: Any = worker
            for i in range(1, len(path)):
                u, v = path[i - 1], path[i]
                li = sc.link_index(u, v)
                assert li is not None
                d = 0 if sc.links[li].a == u else 1
                on_link.add((flow, 2 * li + d))
                if v in merge_set:
                    key = (v, sc.ingress_pipeline(u, v))
                    rest = (tuple(path[i:]), tuple(m for m in merges if m in set(path[i + 1:])))
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
        for r in tp.routes:
            if r.worker not in job.workers:
                errors.append(f"task {task}: route for {r.worker!r}, which is not a worker of {job.id}")
                continue
            by_worker[r.worker] = by_worker.get(r.worker, 0) + 1
            errs = walker.route_errors(task, r.worker, r.path, r.merge_at)
            if errs:
                errors.extend(errs)
                continue
            if tiered and not is_up_down(sc, r.path):
                warnings.append(f"task {task} worker {r.worker}: path {'-'.join(r.path)} is not up-down")
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
    ev.violations = _violations(ev)
    thr: dict[str, float] = {j.id: 0.0 for j in sc.jobs}
    for t, r in zip(tasks, rates, strict=True):
        thr[t.job] += float(r)
    ev.job_throughput = thr
    ev.objective, ev.objective_kind = objective_of(sc, thr)
    return ev


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
