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

import numpy as np

from inaplanner.evaluate import max_min_rates
from inaplanner.model import Plan, PlannerInfo, Route, Scenario, Switch, TaskPlan
from inaplanner.planners.base import Param, Progress
from inaplanner.planners.ina_common import cap_fan_in, report
from inaplanner.planners.routing import Dag, ecmp_path, random_chooser, task_dags, tree_routes
from inaplanner.planners.solver import CancelToken


def _programmable(sc: Scenario) -> set[str]:
    return {s.id for s in sc.switches() if s.programmable}


def _task_dags(sc: Scenario, progress: object = None,
               dags: list[Dag] | None = None) -> Iterator[tuple[Any, list[str], Dag]]:
    """Each task with its workers and DAG, one at a time: progress reports each task as a step
    while the caller routes it (the baselines take seconds a task at fat-tree k=64). ``dags`` are
    the DAGs already made by :func:`~inaplanner.planners.routing.task_dags`."""
    tasks = sc.tasks()
    dags = task_dags(sc, tasks) if dags is None else dags
    for i, t in enumerate(tasks):
        report(progress, 0.05 + 0.85 * i / len(tasks), f"task {i + 1} of {len(tasks)}: {t.job}/{t.ps}",
               phase="routes")
        yield t, [w for w in sc.job(t.job).workers if w != t.ps], dags[i]


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

    def __init__(self, dags: list[Dag] | None = None) -> None:
        self.dags = dags  # each task's DAG, made already (routing.task_dags)

    def plan(self, scenario: Scenario, params: dict[str, Any], progress: Progress, cancel: CancelToken) -> Plan:
        rng = random.Random(int(params.get("seed", 0)))
        tasks = []
        for t, workers, dag in _task_dags(scenario, progress, self.dags):
            cancel.check()
            tasks.append(TaskPlan(t.job, t.ps, 0.0, [Route(w, ecmp_path(dag, w, rng), []) for w in workers]))
        return _finish(scenario, self.name, tasks, progress)


class RandomPlanner:
    name = "random"
    description = "ATP-style: ECMP preferring programmable next hops, aggregation wherever possible"
    params: tuple[Param, ...] = ()

    def __init__(self, dags: list[Dag] | None = None) -> None:
        self.dags = dags  # each task's DAG, made already (routing.task_dags)

    def plan(self, scenario: Scenario, params: dict[str, Any], progress: Progress, cancel: CancelToken) -> Plan:
        sc = scenario
        rng = random.Random(int(params.get("seed", 0)))
        prog = _programmable(sc)
        ecmp = random_chooser(rng)
        tasks = []
        for t, workers, dag in _task_dags(sc, progress, self.dags):
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

    def __init__(self, dags: list[Dag] | None = None) -> None:
        self.dags = dags  # each task's DAG, made already (routing.task_dags)

    def plan(self, scenario: Scenario, params: dict[str, Any], progress: Progress, cancel: CancelToken) -> Plan:
        sc = scenario
        rng = random.Random(int(params.get("seed", 0)))
        est = _AggTreeEstimate(sc)
        tasks = []
        for t, workers, dag in _task_dags(sc, progress, self.dags):
            est.task(dag)
            routes = []
            for w in workers:
                cancel.check()
                routes.append(est.route(w, rng))
            tasks.append(TaskPlan(t.job, t.ps, 0.0, routes))
        return _finish(sc, self.name, tasks, progress)


class _AggTreeEstimate:
    """AggTree's bookkeeping: w = routed flows per directed link, n = flows merged per switch.

    A routed unit is a raw worker flow, or the first flow of an aggregate (later members follow
    it). AggTree does not foresee merges further on: a unit adds 1 to w on every link up to the
    PS, and a unit reaching a switch where the task already aggregates follows that aggregate's
    path (the evaluator's rule 1), still counted on each of its links.

    The estimates are kept in arrays: ``lshare[l]`` = b / (w + 1) per directed link and
    ``nshare[v]`` = C / (n + 1) per node (+inf without an aggregation capacity), so the best share
    below a worker's candidate hops is computed one DAG level at a time over every node it can
    reach (fat-tree k=64: the 1,024 cores above a pod), not by a Python recursion per node."""

    def __init__(self, sc: Scenario) -> None:
        self.sc, self.prog = sc, _programmable(sc)
        ids = [n.id for n in sc.nodes]
        self.index = {v: i for i, v in enumerate(ids)}
        self.size = len(ids) + 1  # node len(ids) is a dummy, the head of the padding link
        # directed link 2i is links[i] a -> b, 2i + 1 is b -> a; the last one pads the tail table
        self.head = np.array([*(self.index[v] for lk in sc.links for v in (lk.b, lk.a)), len(ids)], dtype=np.intp)
        self.b = [*(max(lk.capacity - bg, 0.0) for lk in sc.links for bg in lk.background), math.inf]
        self.pad = len(self.b) - 1
        self.w = [0] * len(self.b)
        self.cap = [math.inf] * self.size
        for s in sc.switches():
            if isinstance(s, Switch) and s.programmable and s.aggregation_capacity is not None:
                self.cap[self.index[s.id]] = max(s.aggregation_capacity - s.aggregation_background, 0.0)
        self.n = [0] * self.size
        self.lshare = np.array(self.b)
        self.nshare = np.array(self.cap)
        self.slot = np.zeros(self.size, dtype=np.intp)  # scratch of _distinct

    def link(self, u: str, v: str) -> int:
        """The directed link u -> v (of the last link joining them, as the scenario's index)."""
        i = self.sc.link_index(u, v)
        assert i is not None
        return 2 * i + (self.sc.links[i].a != u)

    def task(self, dag: Dag) -> None:
        """Start a task: its DAG's edges as link ids grouped by node (``first``/``count``), its
        best-share table and its aggregates' onward paths (``tails``, as links in ``tail_links``)."""
        nodes = np.array([self.index[v] for v in dag.succ], dtype=np.intp)
        count = np.array([len(nxt) for nxt in dag.succ.values()], dtype=np.intp)
        ends = np.array([self.sc.link_index(v, u) for v, nxt in dag.succ.items() for u in nxt], dtype=np.intp)
        # the hop v -> u is link 2i + 1 (b -> a) unless v is the link's end a (the head of 2i + 1)
        self.edges = 2 * ends + (self.head[2 * ends + 1] != np.repeat(nodes, count))
        self.first, self.count = np.zeros(self.size, dtype=np.intp), np.zeros(self.size, dtype=np.intp)
        self.first[nodes], self.count[nodes] = np.cumsum(count) - count, count
        self.dag, self.dest = dag, self.index[dag.dest]
        self.best = np.full(self.size, math.inf)  # best[dest] stays +inf
        self.tails: dict[str, tuple[list[str], list[str]]] = {}  # switch -> its aggregate's onward path
        self.tailed = np.zeros(self.size, dtype=bool)
        self.tail_links = np.full((self.size, max(dag.dist.values(), default=1)), self.pad, dtype=np.intp)

    def share(self, links: np.ndarray) -> np.ndarray:
        """b / (w + 1) of each link, or its head's C / (n + 1) when smaller: what a new unit may
        expect there."""
        return np.minimum(self.lshare[links], self.nshare[self.head[links]])

    def _fill(self, starts: np.ndarray) -> None:
        """``best[v]``, the best share a unit leaving v can expect on its way to the PS, for the
        nodes ``starts`` (one DAG level) and every node below them that their values need: a
        switch holding an aggregate offers the least share on that aggregate's path, any other
        node the best over its next hops. Bottom-up, one level at a time."""
        levels: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
        level = starts
        while level.size:  # down: the nodes of each level whose next hops count
            inner = level[~self.tailed[level] & (level != self.dest)]
            count = self.count[inner]
            seg = np.cumsum(count) - count  # where each inner node's hops start in ``links``
            links = self.edges[np.arange(int(count.sum())) + np.repeat(self.first[inner] - seg, count)]
            levels.append((level, inner, seg, links))
            level = self._distinct(self.head[links])
        for level, inner, seg, links in reversed(levels):  # up: each level from the one below
            tailed = level[self.tailed[level]]
            if tailed.size:
                self.best[tailed] = self.share(self.tail_links[tailed]).min(axis=1)
            if inner.size:
                self.best[inner] = np.maximum.reduceat(np.minimum(self.share(links), self.best[self.head[links]]), seg)

    def _distinct(self, nodes: np.ndarray) -> np.ndarray:
        """``nodes`` without repeats (the last of each; no sort: a DAG level has ~1,000 nodes)."""
        at = np.arange(nodes.size)
        self.slot[nodes] = at
        return nodes[self.slot[nodes] == at]

    def route(self, worker: str, rng: random.Random) -> Route:
        """Route one worker of the current task: at each hop, the next hops whose share (with
        the best one below them) is the largest, a seeded draw among ties."""
        dag, prog, tails = self.dag, self.prog, self.tails
        path, merges, counted, filled = [worker], [], True, False
        node = worker
        while node != dag.dest:
            if node != worker and node in prog:
                i = self.index[node]
                merges.append(node)
                self.n[i] += 1
                self.nshare[i] = self.cap[i] / (self.n[i] + 1)
                if node in tails:
                    rest, rest_merges = tails[node]
                    if len(path) == 2:  # joins its own leaf's aggregate: already routed and counted
                        counted = False
                    path.extend(rest[1:])
                    merges.extend(rest_merges)
                    break
            succ = dag.succ[node]
            if len(succ) == 1:
                node = succ[0]
            else:
                i = self.index[node]
                links = self.edges[self.first[i]:self.first[i] + len(succ)]
                if not filled:  # once a route, as a memo: its merges change n only at switches
                    # it has passed, above every node whose best share it still reads
                    self._fill(self._distinct(self.head[links]))
                    filled = True
                scores = np.minimum(self.share(links), self.best[self.head[links]]).tolist()
                top = max(scores)
                choices = [u for val, u in zip(scores, succ, strict=True) if val >= top * (1 - 1e-12)]
                node = rng.choice(choices) if len(choices) > 1 else choices[0]
            path.append(node)
        hops = [self.link(a, b) for a, b in zip(path, path[1:], strict=False)]
        if counted:
            for k in hops:
                self.w[k] += 1
                self.lshare[k] = self.b[k] / (self.w[k] + 1)
        for i, v in enumerate(path[1:-1], start=1):
            if v in prog and v not in tails:
                below = set(path[i + 1:])
                tails[v] = (path[i:], [m for m in merges if m in below])
                self.tailed[self.index[v]] = True
                self.tail_links[self.index[v], :len(hops) - i] = hops[i:]
        return Route(worker, path, merges)


PLANNERS = [EcmpPlanner(), RandomPlanner(), AggTreePlanner()]
