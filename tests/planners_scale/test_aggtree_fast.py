"""AggTree's array estimate (aro_baselines._AggTreeEstimate) routes exactly as the straightforward
recursion it replaced: same paths, same merges, same seeded draws, on fat-trees, leaf-spines and
the papers' small networks, with link background and switch aggregation capacities."""

from __future__ import annotations

import math
import random

import pytest

from inaplanner.errors import Cancelled
from inaplanner.model import Host, Job, Link, Route, Scenario, Switch, TaskPlan
from inaplanner.planners import get, run_planner
from inaplanner.planners.aro_baselines import _AggTreeEstimate, _finish, _programmable, _task_dags
from inaplanner.planners.routing import Dag
from inaplanner.progress import CancelToken, Progress
from inaplanner.topologies import (
    aro_fig1,
    fat_tree,
    grid_fig1,
    inart_fig1,
    leaf_spine,
    mark_programmable,
    place_jobs,
)


class _Reference:
    """ARO section II-C's AggTree estimate as first written: b / (w + 1) per link, C / (n + 1) per
    switch, the best share below a node by a memoised recursion per route."""

    def __init__(self, sc: Scenario) -> None:
        self.prog = _programmable(sc)
        self.w: dict[tuple[str, str], int] = {}
        self.n: dict[str, int] = {}
        self.b: dict[tuple[str, str], float] = {}
        for lk in sc.links:
            self.b[(lk.a, lk.b)] = max(lk.capacity - lk.background[0], 0.0)
            self.b[(lk.b, lk.a)] = max(lk.capacity - lk.background[1], 0.0)
        self.cap = {s.id: max(s.aggregation_capacity - s.aggregation_background, 0.0)
                    for s in sc.switches() if s.programmable and s.aggregation_capacity is not None}

    def share(self, u: str, v: str) -> float:
        val = self.b[(u, v)] / (self.w.get((u, v), 0) + 1)
        if v in self.cap:
            val = min(val, self.cap[v] / (self.n.get(v, 0) + 1))
        return val

    def route(self, dag: Dag, worker: str, tails: dict, rng: random.Random) -> Route:
        memo: dict[str, float] = {}

        def best(v: str) -> float:
            if v not in memo:
                if v == dag.dest:
                    memo[v] = math.inf
                elif v in self.prog and v in tails:
                    rest = tails[v][0]
                    memo[v] = min(self.share(a, b) for a, b in zip(rest, rest[1:], strict=False))
                else:
                    memo[v] = max(min(self.share(v, u), best(u)) for u in dag.succ[v])
            return memo[v]

        path, merges, counted, node = [worker], [], True, worker
        while node != dag.dest:
            if node != worker and node in self.prog:
                merges.append(node)
                self.n[node] = self.n.get(node, 0) + 1
                if node in tails:
                    rest, rest_merges = tails[node]
                    counted = len(path) != 2
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


def _reference_plan(sc: Scenario, seed: int):
    rng, ref, tasks = random.Random(seed), _Reference(sc), []
    for t, workers, dag in _task_dags(sc):
        tails: dict = {}
        tasks.append(TaskPlan(t.job, t.ps, 0.0, [ref.route(dag, w, tails, rng) for w in workers]))
    return _finish(sc, "aggtree", tasks)


def _routes_side_by_side(sc: Scenario, seed: int) -> int:
    """Both estimates route the same workers in turn; returns how many routes were compared."""
    fast, ref = _AggTreeEstimate(sc), _Reference(sc)
    rng_fast, rng_ref = random.Random(seed), random.Random(seed)
    compared = 0
    for _, workers, dag in _task_dags(sc):
        fast.task(dag)
        tails: dict = {}
        for w in workers:
            got, want = fast.route(w, rng_fast), ref.route(dag, w, tails, rng_ref)
            assert (got.path, got.merge_at) == (want.path, want.merge_at), (seed, w)
            compared += 1
        assert rng_fast.getstate() == rng_ref.getstate()  # the same draws
    return compared


def _background(sc: Scenario, seed: int) -> Scenario:
    rng = random.Random(seed)
    for lk in sc.links:
        if rng.random() < 0.3:
            lk.background = (rng.choice([0.0, 5.0, 30.0]), rng.choice([0.0, 10.0, 50.0]))
    sc.touch()
    return sc


def _fat_tree(seed: int) -> Scenario:
    sc = fat_tree(6 if seed % 2 else 4, capacity=100.0)
    mark_programmable(sc, (0.3, 0.6, 1.0)[seed % 3], tiers=None, seed=seed, pipelines=1 + seed % 2,
                      aggregation_capacity=(None, 150.0, 400.0)[seed % 3])
    place_jobs(sc, 2, 2, 12 if seed % 2 else 6, seed=seed)
    return _background(sc, seed) if seed % 4 < 2 else sc


def _leaf_spine(seed: int) -> Scenario:
    sc = leaf_spine(5, 4, 5, host_capacity=100.0, fabric_capacity=(40.0, 100.0)[seed % 2])
    mark_programmable(sc, (0.4, 0.8)[seed % 2], tiers=None, seed=seed, aggregation_capacity=(None, 60.0)[seed % 2])
    place_jobs(sc, 2, 1 + seed % 2, 9, seed=seed)
    return _background(sc, seed) if seed % 3 else sc


def _dual_homed() -> Scenario:
    """Workers on two leaves each (a choice at the worker itself), four spines, one PS."""
    sc = Scenario("dual")
    sc.nodes += [Switch(f"L{i}", tier="leaf", programmable=i < 3) for i in range(1, 5)]
    sc.nodes += [Switch(f"S{i}", tier="spine", programmable=i == 2) for i in range(1, 5)]
    sc.nodes += [Host("PS")] + [Host(f"W{i}") for i in range(1, 9)]
    ports: dict[str, int] = {}

    def link(a: str, b: str, capacity: float) -> Link:
        ends = [ports.setdefault(x, 0) + 1 if x[0] in "LS" else None for x in (a, b)]
        for x, port in zip((a, b), ends, strict=True):
            if port is not None:
                ports[x] = port
        return Link(a, b, capacity, *ends)

    sc.links.append(link("PS", "L4", 100.0))
    for i in range(1, 9):
        sc.links += [link(f"W{i}", f"L{1 + i % 2}", 10.0), link(f"W{i}", "L3", 10.0)]
    sc.links += [link(f"L{j}", f"S{i}", 10.0 * i) for i in range(1, 5) for j in range(1, 5)]
    sc.jobs.append(Job("j", [f"W{i}" for i in range(1, 9)], ["PS"]))
    sc.touch()
    sc.validate()
    return sc


def _near_ties(seed: int) -> Scenario:
    """Uplinks of 0.3 and of 1.0 with 0.7 background (0.30000000000000004): shares within AggTree's
    1e-12 tie tolerance that are not equal."""
    sc = leaf_spine(4, 4, 4, host_capacity=1.0, fabric_capacity=0.3)
    for lk in sc.links:
        if lk.b in ("S1", "S3") or lk.a in ("S1", "S3"):
            lk.capacity, lk.background = 1.0, (0.7, 0.7)
    mark_programmable(sc, 0.5, tiers=None, seed=seed)
    place_jobs(sc, 1, 2, 10, seed=seed)
    return sc


SCENARIOS = {
    **{f"fat-tree-{s}": (lambda s=s: _fat_tree(s)) for s in range(6)},
    **{f"leaf-spine-{s}": (lambda s=s: _leaf_spine(s)) for s in range(6)},
    **{f"near-ties-{s}": (lambda s=s: _near_ties(s)) for s in range(2)},
    "dual-homed": _dual_homed, "aro-fig1": aro_fig1, "grid-fig1": grid_fig1, "inart-fig1": inart_fig1,
}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_routes_equal_the_recursive_estimate(name):
    sc = SCENARIOS[name]()
    flows = sum(len([w for w in sc.job(t.job).workers if w != t.ps]) for t in sc.tasks())
    for seed in range(3):
        assert _routes_side_by_side(sc, seed) == flows


@pytest.mark.parametrize("name", ["fat-tree-1", "fat-tree-2", "leaf-spine-3", "dual-homed"])
def test_plan_equals_the_reference_plan(name):
    sc = SCENARIOS[name]()
    for seed in range(3):
        got = run_planner(get("aggtree"), sc, {"seed": seed})
        want = _reference_plan(sc, seed)
        assert [(t.job, t.ps, t.rate, [(r.worker, r.path, r.merge_at) for r in t.routes]) for t in got.tasks] == \
               [(t.job, t.ps, t.rate, [(r.worker, r.path, r.merge_at) for r in t.routes]) for t in want.tasks]


def test_the_estimate_made_choices():
    """The scenarios exercise what the arrays hold: ties broken by the rng, merges into known
    aggregates (tails) and the aggregation capacity."""
    draws = joined = 0
    for name in ("fat-tree-1", "leaf-spine-1"):
        sc = SCENARIOS[name]()
        rng = random.Random(0)
        est = _AggTreeEstimate(sc)
        for _, workers, dag in _task_dags(sc):
            est.task(dag)
            for w in workers:
                state, known = rng.getstate(), set(est.tails)
                path = est.route(w, rng).path
                draws += rng.getstate() != state
                joined += any(v in known for v in path[1:-1])  # followed a known aggregate
        assert min(est.cap) < math.inf and max(est.n) > 0
    assert draws > 10 and joined > 10


def test_cancel_stops_between_workers():
    sc = _fat_tree(1)
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        get("aggtree").plan(sc, {"seed": 0}, Progress(), token)
