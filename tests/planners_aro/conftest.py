"""Small scenarios and an independent exhaustive search for the ARO tests.

``brute_force`` enumerates every combination of per-worker shortest up-down paths (and, when
asked, every choice of where each flow merges), lets the shared evaluator judge each plan and
finds the best rates for its routes with a PuLP LP solved through ``planners.solver.solve`` —
none of ARO's own model, route or rate code is used.
"""

from __future__ import annotations

import itertools
import random
import threading
import time
from collections.abc import Callable

import numpy as np
import pulp
import pytest

from inaplanner.errors import Cancelled
from inaplanner.evaluate import constraint_matrix, evaluate, objective_of
from inaplanner.model import Plan, PlannerInfo, Route, Scenario, TaskPlan
from inaplanner.planners.routing import shortest_dag
from inaplanner.planners.solver import CancelToken, solve
from inaplanner.topologies import leaf_spine, mark_programmable, place_jobs


def small_leaf_spine(
    seed: int,
    *,
    leaves: int = 3,
    spines: int = 2,
    hosts: int = 2,
    jobs: int = 1,
    tasks: int = 1,
    workers: int = 3,
    pipelines: int = 2,
    share: float = 0.5,
    capacities: tuple[float, ...] = (1.0, 2.0, 3.0),
    background: bool = True,
    weights: list[float] | None = None,
    agg_capacity: tuple[float, ...] | None = None,
) -> Scenario:
    """A random small leaf-spine: random link capacities, some background, random programmable
    switches with ``pipelines`` pipelines, jobs placed as ARO section V-A does."""
    rng = random.Random(seed)
    sc = leaf_spine(leaves, spines, hosts, host_capacity=1.0, fabric_capacity=1.0)
    for lk in sc.links:
        lk.capacity = float(rng.choice(capacities))
        if background and rng.random() < 0.3:
            lk.background = (round(rng.uniform(0, 0.5 * lk.capacity), 2), 0.0)
    ps_leaves = [f"L{i + 1}" for i in range(jobs * tasks)]
    mark_programmable(sc, share, tiers=None, seed=seed, pipelines=pipelines, include=ps_leaves[:1])
    place_jobs(sc, jobs, tasks, workers, seed=seed, weights=weights)
    if agg_capacity:
        for sw in sc.switches():
            if sw.programmable:
                sw.aggregation_capacity = float(rng.choice(agg_capacity))
    sc.touch()
    sc.validate()
    return sc


def best_rates_lp(sc: Scenario, plan: Plan) -> tuple[float, np.ndarray]:
    """Objective-maximising rates for fixed routes, by PuLP (independent of ARO's LP code)."""
    ev = evaluate(sc, plan)
    a, b = constraint_matrix(ev)
    n = len(ev.tasks)
    prob = pulp.LpProblem("rates", pulp.LpMaximize)
    r = [prob.add_variable(f"r{i}", 0, 1e6) for i in range(n)]
    for row, lim in zip(a, b, strict=True):
        prob += pulp.lpSum(float(row[j]) * r[j] for j in range(n) if row[j]) <= float(lim)
    jobs = [j.id for j in sc.jobs]
    thr = {j: pulp.lpSum(r[i] for i, t in enumerate(ev.tasks) if t.job == j) for j in jobs}
    if len(jobs) == 1:
        prob += thr[jobs[0]]
    else:
        t = prob.add_variable("t", 0)
        for job in sc.jobs:
            prob += t <= job.weight * thr[job.id]
        prob += t + 0.001 * pulp.lpSum(job.weight * thr[job.id] for job in sc.jobs)
    solve(prob)
    rates = np.array([max(v.value() or 0.0, 0.0) for v in r])
    value, _ = objective_of(sc, {j: float(sum(rates[i] for i, t in enumerate(ev.tasks) if t.job == j)) for j in jobs})
    return value, rates


def brute_force(sc: Scenario, optional_merges: bool = False, limit: int = 20000) -> float:
    """Best objective over every combination of shortest up-down routes (merges forced at every
    programmable switch on the path, or each merge optional)."""
    prog = {s.id for s in sc.switches() if s.programmable}
    per_task = []
    for t in sc.tasks():
        workers = [w for w in sc.job(t.job).workers if w != t.ps]
        dag = shortest_dag(sc, workers, t.ps)
        options = []
        for w in workers:
            choices = []
            for path in dag.paths_from(w):
                inner = [n for n in path[1:-1] if n in prog]
                subsets = (
                    itertools.chain.from_iterable(itertools.combinations(inner, k) for k in range(len(inner) + 1))
                    if optional_merges else [tuple(inner)]
                )
                choices.extend(Route(w, path, list(m)) for m in subsets)
            options.append(choices)
        per_task.append((t, options))
    total = 1
    for _, options in per_task:
        for o in options:
            total *= len(o)
    assert total <= limit, f"brute force would try {total} plans"
    best = 0.0
    seen: dict[bytes, float] = {}
    combos = [itertools.product(*options) for _, options in per_task]
    for choice in itertools.product(*combos):
        plan = Plan("", PlannerInfo("brute"), [
            TaskPlan(t.job, t.ps, 1.0, list(routes)) for (t, _), routes in zip(per_task, choice, strict=True)
        ])
        ev = evaluate(sc, plan)
        if not ev.valid:
            continue
        key = ev.flows.tobytes() + ev.agg_inputs.tobytes()
        if key not in seen:
            seen[key] = best_rates_lp(sc, plan)[0]
        best = max(best, seen[key])
    return best


def cancel_midway(work: Callable[[CancelToken], object], delay: float) -> tuple[dict[str, object], float]:
    """Run ``work(token)`` in a thread, cancel the token after ``delay`` seconds (the work must
    still be running) and wait: what it returned (``{"result": ...}``) or ``{"cancelled": True}``,
    and the seconds it took to stop after the cancel."""
    token = CancelToken()
    outcome: dict[str, object] = {}

    def run() -> None:
        try:
            outcome["result"] = work(token)
        except Cancelled:
            outcome["cancelled"] = True

    th = threading.Thread(target=run)
    th.start()
    time.sleep(delay)
    assert th.is_alive(), "the work ended before it could be cancelled"
    t0 = time.perf_counter()
    token.cancel()
    th.join(10)
    stopped = time.perf_counter() - t0
    assert not th.is_alive()
    return outcome, stopped


@pytest.fixture
def cancelled_midway():
    """:func:`cancel_midway`."""
    return cancel_midway


@pytest.fixture
def make_leaf_spine():
    """The small random leaf-spine builder."""
    return small_leaf_spine


@pytest.fixture
def brute():
    """The exhaustive search."""
    return brute_force


@pytest.fixture
def rates_lp():
    """Objective-maximising rates for fixed routes (PuLP)."""
    return best_rates_lp
