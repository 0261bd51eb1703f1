"""GRID's repair keeps its movers and overloaded links incrementally (issue 13): at every step they
must equal what a scan of the whole layout finds, so the plans do not change, only the time."""

from __future__ import annotations

import pytest

from inaplanner.planners import get, run_planner
from inaplanner.planners import grid as G
from inaplanner.topologies import fat_tree, mark_programmable, place_jobs


def _scan_movers(kind, which, layouts, members):
    """The repair's original scan over every worker of every task."""
    movers = []
    for task, lay in layouts.items():
        for n in lay.workers:
            s = lay.node[n]
            if kind == "switch":
                if s == which:
                    movers.append((task, n))
                continue
            p = lay.wpath[n]
            hit = which in zip(p, p[1:], strict=False)
            if not hit and s != task.ps and members[task].get(s) == 1:
                ap = lay.apath[s]
                hit = which in zip(ap, ap[1:], strict=False)
            if hit:
                movers.append((task, n))
    return movers


def _scan_worst(loads):
    best = ("", None, 1e-9)
    for e, ld in loads.load.items():
        if ld - loads.cap[e] > best[2]:
            best = ("link", e, ld - loads.cap[e])
    for s, ld in loads.sw.items():
        if s in loads.sw_cap and ld - loads.sw_cap[s] > best[2]:
            best = ("switch", s, ld - loads.sw_cap[s])
    return best


@pytest.mark.parametrize("seed", [1, 2])
def test_incremental_movers_and_worst_equal_a_full_scan(monkeypatch, seed):
    sc = fat_tree(8)
    mark_programmable(sc, 0.2, pipelines=4, seed=seed)
    place_jobs(sc, 2, 2, 50, seed=seed)
    checked = {"movers": 0, "worst": 0, "nonempty": 0}
    movers0 = G._MoverIndex.movers
    worst0 = G._Loads.worst

    def movers(self, kind, which, layouts, members):
        got = movers0(self, kind, which, layouts, members)
        assert got == _scan_movers(kind, which, layouts, members)
        checked["movers"] += 1
        checked["nonempty"] += bool(got)
        return got

    def worst(self):
        got = worst0(self)
        assert got == _scan_worst(self)
        checked["worst"] += 1
        return got

    monkeypatch.setattr(G._MoverIndex, "movers", movers)
    monkeypatch.setattr(G._Loads, "worst", worst)
    plan = run_planner(get("grid"), sc, {"seed": seed, "time_limit": 120})
    assert plan.planner.params["repair_moves"] > 0  # the repair did move workers
    assert checked["movers"] > 10 and checked["nonempty"] > 10 and checked["worst"] > 10


def test_repair_draws_each_candidate_path_once(monkeypatch):
    """The repair weighs the same candidate moves at many steps; a worker's path to a target (or
    an aggregate's path on to the PS) is drawn once per repair, not once per step (the old cost),
    and the plan the moves lead to is still one the evaluator accepts."""
    from collections import Counter

    from inaplanner.evaluate import evaluate
    from inaplanner.planners.paths import Paths

    sc = fat_tree(8)
    mark_programmable(sc, 0.2, pipelines=4, seed=1)
    place_jobs(sc, 2, 2, 50, seed=1)
    per_call: list[Counter] = []
    draw0 = Paths.random_shortest
    repair0 = G.repair_layouts

    def draw(self, src, dst, rng, **kw):
        if per_call and per_call[-1] is not None:
            per_call[-1][(src, dst)] += 1
        return draw0(self, src, dst, rng, **kw)

    def repair(*a, **k):
        per_call.append(Counter())
        try:
            return repair0(*a, **k)
        finally:
            per_call.append(None)

    monkeypatch.setattr(Paths, "random_shortest", draw)
    monkeypatch.setattr(G, "repair_layouts", repair)
    plan = run_planner(get("grid"), sc, {"seed": 1, "time_limit": 120})
    calls = [c for c in per_call if c]
    assert plan.planner.params["repair_moves"] > 0 and calls
    # a pair is drawn again only for another path to join (a new aggregate's path), which is rare
    assert max(max(c.values()) for c in calls) <= 3, [c.most_common(3) for c in calls]
    assert evaluate(sc, plan).feasible

