"""Shared route helpers: up-down shortest DAGs, pruning, ECMP, tree routes with merge points."""

from __future__ import annotations

import random

import pytest

from inaplanner.errors import PlanError
from inaplanner.evaluate import evaluate, is_up_down
from inaplanner.model import Plan, PlannerInfo, TaskPlan
from inaplanner.planners.routing import (
    ecmp_path,
    merge_points,
    random_chooser,
    shortest_dag,
    tree_routes,
)
from inaplanner.topologies import (
    aro_fig1,
    fat_tree,
    grid_fig1,
    leaf_spine,
    mark_programmable,
    place_jobs,
)


def test_leaf_spine_dag_attaches_ps_leaf_workers_to_its_out_side():
    sc = leaf_spine(3, 2, 2)  # H1, H2 under L1; H3, H4 under L2; H5, H6 under L3
    dag = shortest_dag(sc, ["H2", "H3", "H5"], "H1")
    assert dag.succ["H2"] == ("L1",) and dag.succ["L1"] == ("H1",)  # straight to the PS's leaf
    assert dag.succ["L2"] == ("S1", "S2") and dag.succ["S1"] == ("L1",)
    assert dag.dist["H2"] == 2 and dag.dist["H3"] == 4
    assert sorted(map(tuple, dag.paths_from("H3"))) == [("H3", "L2", "S1", "L1", "H1"), ("H3", "L2", "S2", "L1", "H1")]


def test_fat_tree_dag_is_every_shortest_up_down_path():
    sc = fat_tree(4)  # pods of 4 hosts: H1-H4 pod 1, H5-H8 pod 2 ...
    workers = ["H1", "H3", "H5", "H9", "H16"]
    dag = shortest_dag(sc, workers, "H4")
    counts = {"H1": 2, "H3": 1, "H5": 4, "H9": 4, "H16": 4}  # cross-pod: 2 aggs x 2 cores; H3 shares the edge
    for w in workers:
        paths = list(dag.paths_from(w))
        assert len(paths) == counts[w]
        assert all(is_up_down(sc, p) and len(p) == dag.dist[w] + 1 for p in paths)
    # H1 sits under edge E1_1, the PS under E1_2: up to either aggregation switch and down again
    assert {tuple(p) for p in dag.paths_from("H1")} == {
        ("H1", "E1_1", "A1_1", "E1_2", "H4"), ("H1", "E1_1", "A1_2", "E1_2", "H4")}


def test_non_clos_uses_plain_shortest_paths():
    sc = grid_fig1()
    dag = shortest_dag(sc, ["W1", "W5"], "PS")
    assert list(dag.paths_from("W1")) == [["W1", "S1", "S3", "PS"]]
    assert list(dag.paths_from("W5")) == [["W5", "S2", "S3", "PS"]]


def test_unreachable_worker_is_an_error():
    sc = leaf_spine(2, 1, 2)
    sc.links = [lk for lk in sc.links if not (lk.a == "L2" and lk.b == "S1")]
    sc.touch()
    with pytest.raises(PlanError, match="H3 has no up-down path to H1"):
        shortest_dag(sc, ["H3"], "H1")


def test_without_removes_paths_and_refuses_to_cut_a_worker_off():
    sc = aro_fig1()
    dag = shortest_dag(sc, sc.jobs[0].workers, "PS")
    pruned = dag.without({"S0"})
    assert pruned is not None and "S0" not in pruned.dist
    assert all("S0" not in p for w in sc.jobs[0].workers for p in pruned.paths_from(w))
    assert dag.without({"S0", "S1"}) is None
    assert dag.without(set()) is dag


def test_ecmp_paths_are_seeded_and_shortest():
    sc = leaf_spine(4, 8, 2)
    dag = shortest_dag(sc, ["H3"], "H1")
    a = [ecmp_path(dag, "H3", random.Random(7)) for _ in range(3)]
    assert a[0] == a[1] == a[2]
    spread = {ecmp_path(dag, "H3", random.Random(s))[2] for s in range(40)}
    assert len(spread) > 4  # different seeds pick different spines


@pytest.mark.parametrize("seed", range(4))
def test_tree_routes_keep_aggregates_on_one_path(seed):
    """Random per-hop choices would split aggregates; tree_routes makes them follow one path."""
    sc = fat_tree(4)
    mark_programmable(sc, 0.5, tiers=None, seed=seed, pipelines=2)
    place_jobs(sc, 1, 2, 10, seed=seed)
    prog = {s.id for s in sc.switches() if s.programmable}
    rng = random.Random(seed)
    tasks = []
    for t in sc.tasks():
        workers = sc.job(t.job).workers
        dag = shortest_dag(sc, workers, t.ps)
        routes = tree_routes(sc, dag, workers, random_chooser(rng), lambda f, p, n: n in prog)
        for r in routes:
            assert r.merge_at == merge_points(r.path, prog)
        tasks.append(TaskPlan(t.job, t.ps, 1.0, routes))
    ev = evaluate(sc, Plan("", PlannerInfo("t"), tasks))
    assert ev.valid, ev.errors
    assert ev.aggregates  # something did merge


def test_merge_points_accepts_a_predicate():
    assert merge_points(["W", "A", "B", "C", "PS"], {"B", "PS", "W"}) == ["B"]
    assert merge_points(["W", "A", "B", "PS"], lambda n: n != "A") == ["B"]
