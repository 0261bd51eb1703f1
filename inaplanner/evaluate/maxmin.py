"""The largest rates a plan's routes allow: max-min fair across tasks by progressive filling.

With the routes fixed, task t's rate r_t uses ``flows[t, l, d]`` units of each directed link and
``agg_inputs[t, s]`` units of each switch's aggregation capacity (CONTRACTS.md rules 3-4), so the
feasible rates are {r >= 0 : A r <= b}. Progressive filling raises every unfrozen task's rate
together until a constraint is tight, freezes the tasks that use it, and repeats: the result is the
max-min fair allocation.
"""

from __future__ import annotations

import copy

import numpy as np

from inaplanner.evaluate.core import Evaluation, evaluate
from inaplanner.model import Plan, Scenario


def constraint_matrix(ev: Evaluation) -> tuple[np.ndarray, np.ndarray]:
    """(A, b): rows are directed links then switches with a finite capacity; columns are tasks."""
    n_tasks = len(ev.tasks)
    a_links = ev.flows.reshape(n_tasks, -1).T.astype(float)  # (2L, T)
    b_links = (ev.link_capacity[:, None] - ev.link_background).reshape(-1)
    finite = np.isfinite(ev.switch_capacity)
    a_sw = ev.agg_inputs.T[finite].astype(float)  # (S', T)
    b_sw = (ev.switch_capacity - ev.switch_background)[finite]
    a = np.vstack([a_links, a_sw])
    b = np.concatenate([b_links, b_sw])
    used = a.any(axis=1)
    return a[used], np.maximum(b[used], 0.0)


def progressive_filling(a: np.ndarray, b: np.ndarray, active: np.ndarray) -> np.ndarray:
    """Max-min fair r >= 0 with A r <= b over the tasks marked ``active`` (others stay 0).

    A pure function of small arrays; ``active`` tasks that use no constraint would be unbounded and
    are left at 0 with everything else (they have no route)."""
    n = a.shape[1]
    rates = np.zeros(n)
    active = active.copy() & a.any(axis=0)
    tol = 1e-12
    while active.any():
        slack = b - a @ rates
        growth = a[:, active].sum(axis=1)
        rows = growth > tol
        if not rows.any():
            break
        step = np.min(np.maximum(slack[rows], 0.0) / growth[rows])
        rates[active] += step
        slack = b - a @ rates
        tight = rows & (slack <= 1e-9 * np.maximum(1.0, np.abs(b)))
        frozen = (a[tight] > 0).any(axis=0) & active
        if not frozen.any():  # numerical safety: freeze the tasks of the tightest row
            k = np.flatnonzero(rows)[np.argmin(slack[rows])]
            frozen = (a[k] > 0) & active
        active &= ~frozen
    return rates


def max_min_rates(scenario: Scenario, plan: Plan, ev: Evaluation | None = None) -> dict[tuple[str, str], float]:
    """Max-min fair task rates on the plan's routes; tasks without routes get 0."""
    ev = ev or evaluate(scenario, plan)
    a, b = constraint_matrix(ev)
    has_routes = np.array([bool((tp := plan.task_plan(t.job, t.ps)) and tp.routes) for t in ev.tasks])
    rates = progressive_filling(a, b, has_routes)
    return {(t.job, t.ps): float(r) for t, r in zip(ev.tasks, rates, strict=True)}


def with_rates(plan: Plan, rates: dict[tuple[str, str], float]) -> Plan:
    """A copy of ``plan`` with the given task rates (routes kept)."""
    out = copy.deepcopy(plan)
    for tp in out.tasks:
        if (tp.job, tp.ps) in rates:
            tp.rate = rates[(tp.job, tp.ps)]
    return out
