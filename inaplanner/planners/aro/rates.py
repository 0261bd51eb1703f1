"""Rates for fixed routes, and the rate-relaxation upper bound.

* :func:`best_rates` — with the routes fixed, the feasible rates are {r >= 0 : A r <= b}, A and b
  taken from the evaluator (:func:`inaplanner.evaluate.constraint_matrix`: flow counts per link and
  aggregation inputs per switch). A small LP picks the rates that maximise the scenario's objective
  (Eq. 1, 2 or 3) — for SJMT the max-min fair filling would not maximise the sum.
* :func:`rate_bound` — an upper bound on the objective over *all* routes: each task's rate is at
  most its own single-task optimum, and on a resource every feasible plan must load (a worker's
  access link; a link every path of some worker crosses) each task puts at least one flow.
* :func:`structural_bound` — a quick upper bound on one task's rate (mandatory links, the flows
  the PS's access link must carry); :func:`direction_max` — how far rates theta * rho fit on
  given routes.
"""

from __future__ import annotations

import math

import numpy as np

from inaplanner.evaluate import Evaluation, constraint_matrix, evaluate, progressive_filling
from inaplanner.model import Plan, Scenario
from inaplanner.planners.aro.formulation import MU, Objective
from inaplanner.planners.aro.graph import Resource, TaskGraph, resource_capacity
from inaplanner.planners.aro.milp import INF, Milp


def _objective_lp(
    a: np.ndarray, b: np.ndarray, objective: Objective, upper: list[float] | None, balance: bool = False
) -> tuple[np.ndarray, float] | None:
    """max objective(r) s.t. A r <= b, 0 <= r <= upper. With ``balance``, a second LP keeps the
    objective and maximises min_i r_i / upper_i (a balanced split of an optimal total)."""
    n = a.shape[1]

    def build(extra_floor: float | None) -> tuple[Milp, list[int], int | None, int | None]:
        m = Milp(maximize=True)
        ub = upper if upper is not None else [INF] * n
        cols = [m.var(0.0, float(ub[i])) for i in range(n)]
        for row, lim in zip(a, b, strict=True):
            nz = np.flatnonzero(row)
            if len(nz):
                m.row([cols[j] for j in nz], [float(row[j]) for j in nz], -INF, float(lim))
        t = None
        if objective.kind == "MJMT":
            t = m.var(0.0, INF)
            for s, beta in enumerate(objective.weights):
                mine = [cols[i] for i in range(n) if objective.job_of[i] == s]
                if mine:
                    m.row([t] + mine, [1.0] + [-beta] * len(mine), -INF, 0.0)
        obj_terms: list[tuple[int, float]] = []
        if objective.kind == "MJMT":
            assert t is not None
            obj_terms.append((t, 1.0))
            obj_terms.extend((cols[i], MU * objective.weights[objective.job_of[i]]) for i in range(n))
        else:
            obj_terms.extend((c, 1.0) for c in cols)
        s_col = None
        if extra_floor is None:
            for c, v in obj_terms:
                m.cost[c] += v
        else:
            m.row([c for c, _ in obj_terms], [v for _, v in obj_terms], extra_floor, INF)
            s_col = m.var(0.0, INF, cost=1.0)
            for i in range(n):
                if upper is not None and upper[i] > 0:
                    m.row([s_col, cols[i]], [float(upper[i]), -1.0], -INF, 0.0)
        return m, cols, t, s_col

    m, cols, _, _ = build(None)
    res = m.solve()
    if res.values is None or res.objective is None:
        return None
    r = res.values[cols]
    if balance and upper is not None and res.objective > 0:
        m2, cols2, _, _ = build(res.objective * (1 - 1e-9))
        res2 = m2.solve()
        if res2.values is not None:
            r = res2.values[cols2]
    return np.maximum(r, 0.0), float(res.objective)


def best_rates(sc: Scenario, plan: Plan, objective: Objective, ev: Evaluation | None = None) -> dict[tuple[str, str], float]:
    """Rates maximising the objective on the plan's routes, scaled so the evaluator finds no
    violation (HiGHS' feasibility tolerance is looser than the evaluator's)."""
    ev = ev or evaluate(sc, plan)
    a, b = constraint_matrix(ev)
    has_routes = [bool((tp := plan.task_plan(t.job, t.ps)) and tp.routes) for t in ev.tasks]
    upper = [INF if h else 0.0 for h in has_routes]
    # a task using no constrained resource would be unbounded: cap it by the largest capacity
    cap = float(max(b.max(initial=0.0), max((lk.capacity for lk in sc.links), default=1.0)))
    upper = [min(u, cap) for u in upper]
    if a.size:
        got = _objective_lp(a, b, objective, upper)
        # should HiGHS fail on this small LP, the evaluator's max-min rates are still feasible
        r = got[0] if got is not None else progressive_filling(a, b, np.array([u > 0 for u in upper]))
    else:
        r = np.asarray(upper, dtype=float)
    if a.size:
        load = a @ r
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(load > b, b / np.where(load > 0, load, 1.0), 1.0)
        r = r * min(1.0, float(ratio.min(initial=1.0)))
    return {(t.job, t.ps): float(x) for t, x in zip(ev.tasks, r, strict=True)}


def direction_max(sc: Scenario, plan: Plan, rho: dict[tuple[str, str], float]) -> float:
    """Largest theta such that task (job, ps) may send theta * rho[(job, ps)] on the plan's routes
    (from the evaluator's constraint matrix); inf when nothing limits it."""
    ev = evaluate(sc, plan)
    a, b = constraint_matrix(ev)
    vec = np.array([rho.get((t.job, t.ps), 0.0) for t in ev.tasks])
    use = a @ vec
    mask = use > 0
    return float(np.min(b[mask] / use[mask])) if mask.any() else math.inf


def mandatory_resources(g: TaskGraph) -> set[Resource]:
    """Links that every path of at least one worker crosses (at least one flow of the task)."""
    dag = g.dag
    must: dict[str, frozenset[tuple[str, str]]] = {dag.dest: frozenset()}
    for u in sorted(dag.succ, key=lambda n: dag.dist[n]):
        sets = [must[v] | {(u, v)} for v in dag.succ[u]]
        must[u] = frozenset.intersection(*sets) if sets else frozenset()
    out: set[Resource] = set()
    for w in g.workers:
        out.update(("link", a, b) for a, b in must.get(w, frozenset()))
    return out


def rate_bound(
    sc: Scenario, graphs: list[TaskGraph], objective: Objective, upper: list[float]
) -> tuple[float, np.ndarray]:
    """(bound, rates): the LP bound described in the module docstring and a balanced rate vector
    reaching it (the direction ARO's multi-task search starts from)."""
    res_rows: dict[Resource, list[int]] = {}
    for i, g in enumerate(graphs):
        for res in mandatory_resources(g):
            res_rows.setdefault(res, []).append(i)
    n = len(graphs)
    rows = []
    lims = []
    for res, tasks in res_rows.items():
        row = np.zeros(n)
        row[tasks] = 1.0
        rows.append(row)
        lims.append(resource_capacity(sc, res))
    a = np.array(rows) if rows else np.zeros((0, n))
    b = np.array(lims)
    got = _objective_lp(a, b, objective, upper, balance=True)
    if got is None:
        return 0.0, np.zeros(n)
    return got[1], got[0]


def structural_bound(sc: Scenario, g: TaskGraph) -> float:
    """A quick upper bound on a task's rate alone: every mandatory link carries one of its flows,
    and the PS's access link carries at least one flow per ingress pipeline of the last switch
    that workers attached to it use, plus one for the rest of the workers (unless they can enter
    on one of those pipelines), or one per attached worker plus one if the switch cannot merge."""
    bound = min((resource_capacity(sc, r) for r in mandatory_resources(g)), default=math.inf)
    preds = g.dag.pred()[g.ps]
    if len(preds) == 1:
        last = preds[0]
        workers = set(g.workers)
        direct = [u for u in g.dag.pred()[last] if u in workers]
        remote = any(g.dag.succ[w] != (last,) for w in g.workers)
        if last in g.aggregators:
            mine = {sc.ingress_pipeline(u, last) for u in direct}
            theirs = {sc.ingress_pipeline(u, last) for u in g.dag.pred()[last] if u not in workers}
            need = len(mine) + (1 if remote and not (theirs & mine) else 0)
        else:
            need = len(direct) + (1 if remote else 0)
        if need:
            bound = min(bound, resource_capacity(sc, ("link", last, g.ps)) / need)
    return bound
