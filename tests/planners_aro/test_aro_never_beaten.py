"""ARO is never beaten by any other registered planner (whatever ``available()`` holds when the
test runs) on the test scenarios, and every plan any planner returns passes the evaluator."""

from __future__ import annotations

import pytest

from inaplanner.errors import InaplannerError
from inaplanner.evaluate import evaluate
from inaplanner.planners import available, get, run_planner
from inaplanner.topologies import aro_fig1, fat_tree, leaf_spine, mark_programmable, place_jobs


def _fat_tree():
    sc = fat_tree(4)
    mark_programmable(sc, 0.4, tiers=None, seed=3, pipelines=2)
    place_jobs(sc, 1, 1, 9, seed=3)
    return sc


def _fat_tree_mjmt():
    sc = fat_tree(4)
    mark_programmable(sc, 0.3, tiers=None, seed=5, pipelines=2)
    place_jobs(sc, 2, 1, 5, seed=5)
    return sc


def _leaf_spine_pipelines():
    sc = leaf_spine(6, 6, 4, host_capacity=10.0, fabric_capacity=10.0)
    mark_programmable(sc, 0.25, tiers=None, seed=1, pipelines=4, include=["L1"])
    place_jobs(sc, 1, 1, 14, seed=1)
    return sc


def _sjmt():
    sc = leaf_spine(5, 4, 3, host_capacity=10.0, fabric_capacity=10.0)
    mark_programmable(sc, 0.3, tiers=None, seed=2, pipelines=2, include=["L1", "L2"])
    place_jobs(sc, 1, 2, 8, seed=2)
    return sc


SCENARIOS = {
    "aro-fig1": aro_fig1,
    "fat-tree": _fat_tree,
    "fat-tree-mjmt": _fat_tree_mjmt,
    "leaf-spine-4-pipelines": _leaf_spine_pipelines,
    "sjmt": _sjmt,
}


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_aro_is_never_beaten(name, make_leaf_spine):
    sc = SCENARIOS[name]()
    aro = run_planner(get("aro"), sc, {"time_limit": 30})
    ev_aro = evaluate(sc, aro)
    assert ev_aro.feasible
    assert aro.bound is None or aro.bound >= ev_aro.objective - 1e-9
    ran = []
    for other, planner in available().items():
        if other.startswith("aro"):
            continue
        try:
            plan = run_planner(planner, sc, {"time_limit": 30})
        except InaplannerError:
            continue  # a planner may refuse a scenario it was not made for
        ev = evaluate(sc, plan)
        assert ev.feasible, (other, ev.errors[:3], [str(v) for v in ev.violations[:3]])
        assert ev.objective <= ev_aro.objective * (1 + 1e-6) + 1e-9, (other, ev.objective, ev_aro.objective)
        if aro.bound is not None:
            assert ev.objective <= aro.bound * (1 + 1e-6) + 1e-9  # ARO's bound holds for everybody
        ran.append(other)
    assert {"ecmp", "random", "aggtree"} <= set(ran)


@pytest.mark.parametrize("seed", range(3))
def test_aro_is_never_beaten_on_random_small_leaf_spines(seed, make_leaf_spine):
    sc = make_leaf_spine(seed, leaves=4, spines=3, hosts=3, jobs=2, tasks=1, workers=4, capacities=(1.0, 2.0))
    best = evaluate(sc, run_planner(get("aro"), sc)).objective
    for other in ("ecmp", "random", "aggtree"):
        for s in range(3):
            assert evaluate(sc, run_planner(get(other), sc, {"seed": s})).objective <= best * (1 + 1e-6)
