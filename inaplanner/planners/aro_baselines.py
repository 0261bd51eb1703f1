"""The baselines of the ARO paper (section IV-A): ``ecmp``, ``random`` (ATP-style) and ``aggtree``.

All route over the shortest (up-down on a Clos) paths of :func:`routing.shortest_dag`, task by
task, and take their rates from the evaluator's max-min filling (:func:`max_min_rates`), so every
plan they return is feasible. None proves a bound; their status is ``heuristic``.

* ``ecmp`` — each worker takes a seeded equal-cost path, no aggregation anywhere: the no-INA
  reference of ARO Fig. 1a (rate 1/5 there).
* ``random`` — ATP [11] as ARO upgrades it: ECMP routes, except that each task picks "a random
  programmable spine": wherever a hop offers programmable next hops, the task's flows all take
  one of them drawn once per task (per set of such options, so one spine on a leaf-spine);
  aggregation at every programmable switch the flow passes. An aggregate keeps one onward path.
* ``aggtree`` — AggTree [19] as ARO section II-C describes it: workers (or, once aggregated at a
  programmable leaf, their leaf's flow) are routed one by one onto the path with the most available
  bandwidth, a link of bandwidth b already carrying w flows offering b / (w + 1), and a switch with
  an aggregation capacity C already merging n flows offering C / (n + 1). It merges at every
  programmable switch and, like the original, ignores pipelines when predicting merges.

Rules 5 and 6 (CONTRACTS.md): routes are up-down on Clos networks (the shortest-path DAG of
:mod:`inaplanner.planners.paths`). Fan-in: ``random`` and ``aggtree`` merge wherever they can, so an
aggregate may collect more flows than its switch's ``max_fan_in``; the flows beyond the limit go on
unmerged on the same path (:func:`~inaplanner.planners.ina_common.cap_fan_in`), which is what ATP's
best effort does with a full aggregator and keeps every aggregate's onward path unchanged.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from typing import Any

from inaplanner.evaluate import max_min_rates
from inaplanner.model import Plan, PlannerInfo, Route, Scenario, Switch, TaskPlan
from inaplanner.planners.base import Param, Progress
from inaplanner.planners.ina_common import cap_fan_in, report
from inaplanner.planners.routing import (
    Dag,
    adjacency,
    ecmp_path,
    random_chooser,
    shortest_dag,
    tree_routes,
)
from inaplanner.planners.solver import CancelToken


def _programmable(sc: Scenario) -> set[str]:
    return {s.id for s in sc.switches() if s.programmable}


def _task_dags(sc: Scenario, progress: object = None) -> Iterator[tuple[Any, list[str], Dag]]:
    """Each task's shortest-path DAG, one at a time: progress reports each task as a step while the
    caller routes it (the baselines take seconds a task at fat-tree k=64)."""
    adj = adjacency(sc)
    tasks = sc.tasks()
    for i, t in enumerate(tasks):
        report(progress, 0.05 + 0.85 * i / len(tasks), f"task {i + 1} of {len(tasks)}: {t.job}/{t.ps}",
               phase="routes")
        workers = [w for w in sc.job(t.job).workers if w != t.ps]
        yield t, workers, shortest_dag(sc, workers, t.ps, adj=adj)


def _finish(sc: Scenario, name: str, tasks: list[TaskPlan], progress: object = None) -> Plan:
    report(progress, 0.9, "fan-in limits and max-min rates", phase="rates")
    for tp in tasks:  # CONTRACTS.md rule 5: the flows beyond max_fan_in go on unmerged
        tp.routes = cap_fan_in(sc, tp.routes)[0]
    plan = Plan("", PlannerInfo(name, status="heuristic"), tasks)
    rates = max_min_rates(sc, plan)
    for tp in plan.tasks:
        tp.rate = rates[(tp.job, tp.ps)]
    return plan


class EcmpPlanner:
    name = "ecmp"
    description = "ECMP shortest paths, no in-network aggregation (the no-INA reference)"
    params: tuple[Param, ...] = ()

    def plan(self, scenario: Scenario, params: dict[str, Any], progress: Progress, cancel: CancelToken) -> Plan:
        rng = random.Random(int(params.get("seed", 0)))
        tasks = []
        for t, workers, dag in _task_dags(scenario, progress):
            cancel.check()
            tasks.append(TaskPlan(t.job, t.ps, 0.0, [Route(w, ecmp_path(dag, w, rng), []) for w in workers]))
        return _finish(scenario, self.name, tasks, progress)


class RandomPlanner:
    name = "random"
    description = "ATP-style: ECMP preferring programmable next hops, aggregation wherever possible"
    params: tuple[Param, ...] = ()

    def plan(self, scenario: Scenario, params: dict[str, Any], progress: Progress, cancel: CancelToken) -> Plan:
        sc = scenario
        rng = random.Random(int(params.get("seed", 0)))
        prog = _programmable(sc)
        ecmp = random_chooser(rng)
        tasks = []
        for t, workers, dag in _task_dags(sc, progress):
            cancel.check()
            picked: dict[frozenset[str], str] = {}  # this task's programmable choice per option set

            def choose(flow: object, node: str, options: tuple[str, ...], picked=picked) -> str:
                good = frozenset(o for o in options if o in prog)
                if not good:
                    return ecmp(flow, node, options)
                if good not in picked:
                    picked[good] = rng.choice(sorted(good))
                return picked[good]

            routes = tree_routes(sc, dag, workers, choose, lambda flow, prev, node: node in prog)
            tasks.append(TaskPlan(t.job, t.ps, 0.0, routes))
        return _finish(sc, self.name, tasks, progress)


class AggTreePlanner:
    name = "aggtree"
    description = "AggTree: flows routed one by one onto the path with the most available bandwidth"
    params: tuple[Param, ...] = ()

    def plan(self, scenario: Scenario, params: dict[str, Any], progress: Progress, cancel: CancelToken) -> Plan:
        sc = scenario
        rng = random.Random(int(params.get("seed", 0)))
        est = _AggTreeEstimate(sc)
        tasks = []
        for t, workers, dag in _task_dags(sc, progress):
            tails: dict[str, tuple[list[str], list[str]]] = {}  # switch -> its aggregate's onward path
            routes = []
            for w in workers:
                cancel.check()
                routes.append(est.route(dag, w, tails, rng))
            tasks.append(TaskPlan(t.job, t.ps, 0.0, routes))
        return _finish(sc, self.name, tasks, progress)


class _AggTreeEstimate:
    """AggTree's bookkeeping: w = routed flows per directed link, n = flows merged per switch.

    A routed unit is a raw worker flow, or the first flow of an aggregate (later members follow
    it). AggTree does not foresee merges further on: a unit adds 1 to w on every link up to the
    PS, and a unit reaching a switch where the task already aggregates follows that aggregate's
    path (the evaluator's rule 1), still counted on each of its links."""

    def __init__(self, sc: Scenario) -> None:
        self.sc = sc
        self.prog = _programmable(sc)
        self.w: dict[tuple[str, str], int] = {}
        self.n: dict[str, int] = {}
        self.b: dict[tuple[str, str], float] = {}
        for lk in sc.links:
            self.b[(lk.a, lk.b)] = max(lk.capacity - lk.background[0], 0.0)
            self.b[(lk.b, lk.a)] = max(lk.capacity - lk.background[1], 0.0)
        self.cap = {
            s.id: max(s.aggregation_capacity - s.aggregation_background, 0.0)
            for s in sc.switches()
            if isinstance(s, Switch) and s.programmable and s.aggregation_capacity is not None
        }

    def share(self, u: str, v: str) -> float:
        """b / (w + 1): what a new unit may expect on link u -> v (with v's aggregation rate)."""
        val = self.b[(u, v)] / (self.w.get((u, v), 0) + 1)
        if v in self.cap:
            val = min(val, self.cap[v] / (self.n.get(v, 0) + 1))
        return val

    def route(self, dag: Dag, worker: str, tails: dict[str, tuple[list[str], list[str]]], rng: random.Random) -> Route:
        memo: dict[str, float] = {}
        share, prog, succ, dest = self.share, self.prog, dag.succ, dag.dest

        def best(v: str) -> float:
            """The best share a unit leaving v can expect on its way to the PS (the hot loop:
            fat-tree k=64 with 1,000 workers per job visits millions of nodes)."""
            got = memo.get(v)
            if got is not None:
                return got
            if v == dest:
                return math.inf
            if v in prog and v in tails:
                rest = tails[v][0]
                got = min(share(a, b) for a, b in zip(rest, rest[1:], strict=False))
            else:
                got = -math.inf
                for u in succ[v]:  # every hop is visited: the walk reads the memo as it stands
                    here = share(v, u)
                    below = best(u)
                    here = here if here <= below else below
                    if here > got:
                        got = here
            memo[v] = got
            return got

        path, merges, counted = [worker], [], True
        node = worker
        while node != dag.dest:
            if node != worker and node in self.prog:
                merges.append(node)
                self.n[node] = self.n.get(node, 0) + 1
                if node in tails:
                    rest, rest_merges = tails[node]
                    if len(path) == 2:  # joins its own leaf's aggregate: already routed and counted
                        counted = False
                    path.extend(rest[1:])
                    merges.extend(rest_merges)
                    break
            scores = [(min(self.share(node, u), best(u)), u) for u in dag.succ[node]]
            top = max(val for val, _ in scores)
            choices = [u for val, u in scores if val >= top * (1 - 1e-12)]
            node = rng.choice(choices) if len(choices) > 1 else choices[0]
            path.append(node)
        if counted:
            for a, b in zip(path, path[1:], strict=False):
                self.w[(a, b)] = self.w.get((a, b), 0) + 1
        for i, n in enumerate(path[1:-1], start=1):
            if n in self.prog and n not in tails:
                tails[n] = (path[i:], [m for m in merges if m in set(path[i + 1:])])
        return Route(worker, path, merges)


PLANNERS = [EcmpPlanner(), RandomPlanner(), AggTreePlanner()]
