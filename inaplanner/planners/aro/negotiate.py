"""Negotiated congestion for a joint check at fixed rates (issue 13, item 1).

The joint feasibility MILP (:func:`~inaplanner.planners.aro.formulation.feasibility_model`,
ARO Eqs. 4-10 with the rates fixed) couples the tasks only through the bandwidth of shared
resources, Eq. (10): ``sum_i r_i y[i]_e <= b_e``. On large fat-trees HiGHS can take minutes to find
a plan that exists, and routing the tasks one after another fails when an early task takes what a
later one cannot do without.

This is the rip-up-and-reroute scheme of FPGA routing (PathFinder: McMurchie and Ebeling, 1995)
on ARO's per-task model: every task is routed in turn by its own single-task MILP, which may
overuse shared resources, at a cost per flow of

    sum over the edge's resources of (1 + history) * (1 + present * overuse / capacity),

where overuse is what the other tasks plus this flow would take beyond the capacity. Overused
resources raise their history after each round and the present factor grows, so the tasks
negotiate who gives way. When few resources stay overused, two tasks are freed and routed jointly
(a MILP over those two only) in what the others leave. The result is a plan or nothing: it never
proves a check infeasible.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np

from inaplanner.model import Scenario
from inaplanner.planners.aro.formulation import Flows, block_flows, feasibility_model
from inaplanner.planners.aro.graph import Resource, TaskGraph, resource_capacity
from inaplanner.planners.aro.milp import Milp

#: Single-task MILPs stop within this relative gap of their least congestion cost.
ROUTE_GAP = 0.05
#: The history cost an overused resource gains per round, per unit of relative overuse.
HISTORY_STEP = 1.0
#: The present-overuse factor: its value in the first round (0.5 and 1.0 left k=16 seed 2's
#: (25, 25, 25, 25) with 4 overused links after 40 s; 2.0 and 4.0 found plans in 19-22 s), and
#: its growth per round.
PRESENT_START = 2.0
PRESENT_GROWTH = 1.5
#: With at most this many resources overused after a round, pairs of tasks are routed jointly.
PAIR_MAX_OVERUSED = 6
#: At most this many pairs per round, each given at most ``PAIR_SECONDS``.
PAIR_TRIES = 3
PAIR_SECONDS = 8.0
#: A single-task route gets at most this many seconds.
ROUTE_SECONDS = 5.0

#: ``solve(model, seconds, gap)``: the model's solution values, or None when none was found.
Solve = Callable[[Milp, float, float | None], np.ndarray | None]


def usage(g: TaskGraph, f: Flows, r: float) -> dict[Resource, float] | None:
    """The bandwidth flows ``f`` of ``g`` at rate r take from each resource (None: flows of
    another graph)."""
    index = {g.edge_key(k): k for k in range(len(g.edges))}
    use: dict[Resource, float] = {}
    for key, y in f.y.items():
        k = index.get(key)
        if k is None:
            return None
        for res in g.edges[k].resources:
            use[res] = use.get(res, 0.0) + y * r
    return use


def _total(uses: list[dict[Resource, float]]) -> dict[Resource, float]:
    """Resource -> the bandwidth these tasks take from it together."""
    total: dict[Resource, float] = {}
    for u in uses:
        for res, v in u.items():
            total[res] = total.get(res, 0.0) + v
    return total


def _beyond(total: dict[Resource, float], cap: dict[Resource, float]) -> dict[Resource, float]:
    """Resource -> bandwidth beyond its capacity, of a total use."""
    return {res: v - cap[res] for res, v in total.items() if v > cap[res] * (1 + 1e-12) + 1e-9}


def overused(uses: list[dict[Resource, float]], cap: dict[Resource, float]) -> dict[Resource, float]:
    """Resource -> bandwidth beyond its capacity, for the resources the tasks overuse together."""
    return _beyond(_total(uses), cap)


def flow_cost(resources: tuple[Resource, ...], r: float, others: dict[Resource, float], cap: dict[Resource, float],
              history: dict[Resource, float], present: float) -> float:
    """The congestion cost of one more flow at rate r over an edge with these resources."""
    cost = 0.0
    for res in resources:
        over = max(0.0, others.get(res, 0.0) + r - cap[res]) / cap[res] if cap[res] > 0 else 1.0
        cost += (1.0 + history.get(res, 0.0)) * (1.0 + present * over)
    return cost


def negotiate(
    sc: Scenario, graphs: list[TaskGraph], rates: list[float], solve: Solve, time_left: Callable[[], float],
    check: Callable[[], None], rounds: int = 1000,
) -> list[Flows] | None:
    """Flows for every task at ``rates`` that together fit every resource, or None when none was
    found within ``rounds`` rounds or the time ``time_left`` reports. ``check`` is called between
    solves (cancel, time limit). Each round's routes are found afresh, without the last round's
    as a MIP start: started, HiGHS keeps them within its gap and the tasks stop giving way
    (fat-tree k=16 with 200 workers per job, seed 2: no plan in 40 s instead of one in 19-22 s;
    starting from each task's own plan, 27 s or none)."""
    n = len(graphs)
    cap: dict[Resource, float] = {}
    for g in graphs:
        for e in g.edges:
            for res in e.resources:
                if res not in cap:
                    cap[res] = resource_capacity(sc, res)
    # one model per task: only its costs change from round to round
    models = [feasibility_model(sc, [g], [r], check=check) for g, r in zip(graphs, rates, strict=True)]
    flows: list[Flows | None] = [None] * n
    uses: list[dict[Resource, float]] = [{} for _ in range(n)]
    history: dict[Resource, float] = {}
    present = PRESENT_START
    for _ in range(rounds):
        for i, (g, r) in enumerate(zip(graphs, rates, strict=True)):
            if time_left() <= 0:
                return None
            check()
            others = _total([u for j, u in enumerate(uses) if j != i])
            m, (block,) = models[i]
            for k, e in enumerate(g.edges):
                m.cost[block.y[k]] = flow_cost(e.resources, r, others, cap, history, present)
            values = solve(m, min(ROUTE_SECONDS, time_left()), ROUTE_GAP)
            if values is not None:
                flows[i] = block_flows(block, values)
            current = flows[i]
            if current is None:
                return None
            uses[i] = usage(g, current, r) or {}
        over = overused(uses, cap)
        if not over:
            return [f for f in flows if f is not None]
        if len(over) <= PAIR_MAX_OVERUSED:
            paired = _pairs(sc, graphs, rates, flows, uses, cap, over, solve, time_left, check)
            if paired is not None:
                return paired
        for res, v in over.items():
            history[res] = history.get(res, 0.0) + HISTORY_STEP * v / cap[res]
        present *= PRESENT_GROWTH
    return None


def _pairs(
    sc: Scenario, graphs: list[TaskGraph], rates: list[float], flows: list[Flows | None],
    uses: list[dict[Resource, float]], cap: dict[Resource, float], over: dict[Resource, float],
    solve: Solve, time_left: Callable[[], float], check: Callable[[], None],
) -> list[Flows] | None:
    """Two tasks routed jointly in what the others leave, the tasks on the overused resources
    first; only pairs whose fixed tasks fit every overused resource by themselves are tried."""
    weight = {i: sum(uses[i].get(res, 0.0) for res in over) for i in range(len(graphs))}
    near = sorted(weight, key=lambda i: -weight[i])
    tried = 0
    for pair in itertools.combinations(near, 2):
        fixed = _total([uses[j] for j in range(len(graphs)) if j not in pair])
        if not over.keys().isdisjoint(_beyond(fixed, cap)):
            continue
        if tried >= PAIR_TRIES or time_left() <= 0:
            return None
        tried += 1
        check()
        left = {res: cap[res] - v for res, v in fixed.items()}
        m, blocks = feasibility_model(sc, [graphs[k] for k in pair], [rates[k] for k in pair], left, check=check)
        values = solve(m, min(PAIR_SECONDS, time_left() / 2), None)
        if values is None:
            continue
        out = list(flows)
        for k, b in zip(pair, blocks, strict=True):
            out[k] = block_flows(b, values)
        together = [usage(graphs[k], f, rates[k]) or {} for k, f in enumerate(out) if f is not None]
        if len(together) == len(graphs) and not overused(together, cap):
            return [f for f in out if f is not None]
    return None
