"""GRID, InArt and the baselines on Clos networks, several PSs and several jobs."""

from __future__ import annotations

import pytest

from inaplanner.errors import Cancelled, InaplannerError
from inaplanner.evaluate import is_up_down
from inaplanner.model import Job
from inaplanner.planners import CancelToken, available, get, run_planner
from inaplanner.topologies import fat_tree, grid_fig1, leaf_spine, mark_programmable, place_jobs

NAMES = ("grid", "grid-exact", "inart", "inart-equal", "geryon", "atp", "switchml", "lbmm")


def small_leaf_spine(capacity: float = 8.0, seed: int = 0, tasks: int = 1, jobs: int = 1):
    sc = leaf_spine(4, 2, 3, host_capacity=10.0, fabric_capacity=10.0)
    mark_programmable(sc, aggregation_capacity=capacity)  # the leaves
    sc.node("S1").programmable = True  # type: ignore[union-attr]
    sc.node("S1").aggregation_capacity = 2 * capacity  # type: ignore[union-attr]
    place_jobs(sc, jobs=jobs, tasks_per_job=tasks, workers_per_job=4 if jobs > 1 else 6, seed=seed)
    return sc


def test_registry_lists_our_planners():
    names = available(reload=True)
    for n in NAMES:
        assert n in names
        assert names[n].description


@pytest.mark.parametrize("name", NAMES)
def test_every_planner_on_leaf_spine(check, name):
    sc = small_leaf_spine()
    plan, ev = check(name, sc)
    assert ev.objective > 0
    if name in ("geryon", "atp", "switchml", "lbmm", "grid", "grid-exact"):
        assert all(is_up_down(sc, r.path) for tp in plan.tasks for r in tp.routes)


def test_grid_updown_rule_recorded(check):
    sc = small_leaf_spine()
    plan, ev = check("grid", sc)
    assert plan.planner.params["aggregator_rule"].startswith("up-down")
    assert not ev.warnings
    with pytest.raises(InaplannerError, match="valley"):  # rule 6: no valley paths on a Clos
        run_planner(get("grid"), sc, {"aggregators": "any"})
    any_plan, _ = check("grid", grid_fig1(), {"aggregators": "any"})
    assert any_plan.planner.params["aggregator_rule"].startswith("any")
    with pytest.raises(InaplannerError, match="tiered"):
        run_planner(get("grid"), grid_fig1(), {"aggregators": "updown"})


def test_grid_updown_candidates_on_fat_tree(check):
    """Up-down candidates: the worker's edge, its pod's aggregation switches, every core reachable
    upward, and the PS pod's switches above the PS; never another pod's edge."""
    sc = fat_tree(4, capacity=10.0)
    mark_programmable(sc, 1.0, tiers=None)
    for s in sc.switches():
        s.aggregation_capacity = 4.0
    sc.jobs.append(Job("job0", ["H1", "H2", "H5", "H9", "H13"], ["H16"]))
    sc.touch()
    pods = set()
    for seed in range(3):
        plan, ev = check("grid", sc, {"seed": seed, "rounds": 4})
        for r in plan.tasks[0].routes:
            assert is_up_down(sc, r.path)
            assert len(r.merge_at) <= 1
            if r.merge_at:
                s = r.merge_at[0]
                own_pod = r.path[1].split("_")[0][1:]
                if s.startswith("E"):
                    assert s in (r.path[1], "E4_2")  # own edge or the PS's edge
                if s.startswith("A"):
                    assert s.split("_")[0][1:] in (own_pod, "4")  # own pod or the PS's pod
                pods.add(s[0])
    assert pods  # something was aggregated in the network


def test_multi_ps_and_multi_job(check):
    sc = small_leaf_spine(tasks=2)
    for name in ("grid", "inart", "inart-equal", "atp", "lbmm", "switchml", "geryon"):
        plan, ev = check(name, sc)
        assert ev.objective_kind == "SJMT"
        assert all(tp.rate > 0 for tp in plan.tasks)
    sc2 = small_leaf_spine(jobs=2, tasks=1)
    sc2.jobs[1].weight = 2.0
    for name in ("grid", "inart", "atp", "geryon"):
        plan, ev = check(name, sc2)
        assert ev.objective_kind == "MJMT"
        assert ev.job_throughput["job0"] > 0 and ev.job_throughput["job1"] > 0


def test_background_loads_are_respected(check):
    sc = small_leaf_spine()
    for lk in sc.links:
        lk.background = (1.0, 2.0)
    for s in sc.switches():
        if s.programmable:
            s.aggregation_background = 1.0
    sc.touch()
    for name in ("grid", "inart", "atp", "lbmm"):
        check(name, sc)


def test_cancel_stops_planners():
    token = CancelToken()
    token.cancel()
    for name in NAMES:
        with pytest.raises(Cancelled):
            run_planner(get(name), small_leaf_spine(), {}, cancel=token)


def test_atp_hierarchical_merges_twice(check):
    sc = leaf_spine(3, 1, 3, host_capacity=10.0, fabric_capacity=10.0)
    mark_programmable(sc, aggregation_capacity=100.0)
    place_jobs(sc, workers_per_job=6, seed=1)
    flat, ev_flat = check("atp", sc)
    deep, ev_deep = check("atp", sc, {"hierarchical": True})
    assert max(len(r.merge_at) for r in flat.tasks[0].routes) == 1
    assert max(len(r.merge_at) for r in deep.tasks[0].routes) == 2
    assert ev_deep.objective >= ev_flat.objective - 1e-9


def test_seed_reproducible():
    sc = small_leaf_spine()
    a = run_planner(get("grid"), sc, {"seed": 3})
    b = run_planner(get("grid"), sc, {"seed": 3})
    assert [r.path for r in a.tasks[0].routes] == [r.path for r in b.tasks[0].routes]
