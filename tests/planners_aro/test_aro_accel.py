"""SRO, APP and the presets (ARO section III-C, Table II)."""

from __future__ import annotations

import pytest

from inaplanner.evaluate import evaluate
from inaplanner.planners import get, run_planner
from inaplanner.planners.aro.accel import aa_groups, app_prune, sro_stage1, sro_unused, variance
from inaplanner.planners.aro.formulation import Flows
from inaplanner.planners.aro.graph import inp_scores, task_graphs
from inaplanner.topologies import aro_fig1, fat_tree, leaf_spine, mark_programmable, place_jobs


def test_variance_is_the_papers_sum_of_squares():
    assert variance([5, 1]) == 8.0  # AA0 in Fig. 6
    assert variance([2, 4]) == 2.0  # AA1 in Fig. 6
    assert variance([]) == 0.0


def test_inp_scores_count_flows_that_may_arrive():
    """Fig. 6's rule: an OP may send one flow per INP, a CS everything it receives."""
    sc = aro_fig1()
    (g,) = task_graphs(sc)
    scores = inp_scores(g)
    assert scores[("inp", "L1", 0)] == 2  # W0 and W1
    assert scores[("inp", "S1", 0)] == 1 + 1 + 1  # L1's aggregate, L2's aggregate, W4 through CS L3
    assert set(scores) == {("inp", "L1", 0), ("inp", "L2", 0), ("inp", "S1", 0)}  # L0, L3, S0 are CSs


def test_alternative_aggregators_are_grouped_by_position():
    sc = fat_tree(4)
    mark_programmable(sc, None, tiers=["agg", "core"], pipelines=1)
    place_jobs(sc, 1, 1, 8, seed=1)
    (g,) = task_graphs(sc)
    groups = sorted(sorted(grp) for grp in aa_groups(g))
    assert groups  # the cores of one plane, the aggregation switches of one pod
    for grp in groups:
        dists = {g.dag.dist[s] for s in grp}
        assert len(dists) == 1


def test_app_keeps_alpha_share_round_robin():
    sc = leaf_spine(4, 4, 3)
    mark_programmable(sc, None, tiers=["spine"], pipelines=1)
    place_jobs(sc, 1, 2, 6, seed=0)
    graphs = task_graphs(sc)
    drops = app_prune(graphs, 0.5)
    kept = [set(g.aggregators) - d - {s for s in g.aggregators if not s.startswith("S")} for g, d in zip(graphs, drops, strict=True)]
    assert [len(k) for k in kept] == [2, 2]  # floor(0.5 * 4)
    assert kept[0].isdisjoint(kept[1]) and kept[0] | kept[1] == {"S1", "S2", "S3", "S4"}
    assert app_prune(graphs, 0.01)[0] == {"S1", "S2", "S3", "S4"} - {sorted(kept[0])[0]}  # keeps one


def test_app_prefers_low_variance_aggregators(make_leaf_spine):
    sc = make_leaf_spine(3, leaves=4, spines=4, hosts=3, workers=7, pipelines=2, share=0.6)
    (g,) = task_graphs(sc)
    (drop,) = app_prune([g], 0.5)
    scores = inp_scores(g)
    for grp in aa_groups(g):
        var = {s: variance([scores[n] for n in g.inps_of(s)]) for s in grp}
        kept = [s for s in grp if s not in drop]
        gone = [s for s in grp if s in drop]
        assert kept and max(var[s] for s in kept) <= min((var[s] for s in gone), default=float("inf"))


def test_sro_stage1_drops_common_spines_and_finds_unused_aggregators():
    sc = aro_fig1()
    (g,) = task_graphs(sc)
    g1 = sro_stage1(sc, g)
    assert "S0" not in g1.dag.dist and "S1" in g1.dag.dist
    sc2 = leaf_spine(3, 3, 2)
    mark_programmable(sc2, None, tiers=["spine"], pipelines=1)
    place_jobs(sc2, 1, 1, 4, seed=0)
    (g2,) = task_graphs(sc2)
    used = Flows(x={("inp", "S2", 0): 1})
    assert sro_unused(g2, used) == {"S1", "S3"}


def test_presets_match_table_ii_and_can_be_overridden(make_leaf_spine):
    assert [(p.name, {x.name: x.default for x in p.params if x.name in ("sro", "app", "qsr")})
            for p in (get("aro"), get("aro-acc"), get("aro-raw"))] == [
        ("aro", {"sro": False, "app": False, "qsr": True}),
        ("aro-acc", {"sro": True, "app": True, "qsr": True}),
        ("aro-raw", {"sro": False, "app": False, "qsr": False}),
    ]
    sc = make_leaf_spine(1, leaves=4, spines=4, hosts=3, workers=8, pipelines=2, share=0.6)
    acc = run_planner(get("aro-acc"), sc)
    same = run_planner(get("aro"), sc, {"sro": True, "app": True})
    full = run_planner(get("aro"), sc)
    ev_acc, ev_same, ev_full = (evaluate(sc, p) for p in (acc, same, full))
    assert ev_acc.feasible and ev_full.feasible
    assert ev_acc.objective == pytest.approx(ev_same.objective)
    assert ev_acc.objective <= ev_full.objective + 1e-9  # pruning can only lose
    assert full.planner.status == "optimal"


def test_pruning_reports_no_bound():
    """APP with a tiny alpha removes aggregators: the plan proves nothing about the full model."""
    sc = leaf_spine(4, 4, 3)
    mark_programmable(sc, None, tiers=["spine"], pipelines=1)
    place_jobs(sc, 1, 1, 9, seed=2)
    plan = run_planner(get("aro"), sc, {"app": True, "alpha": 0.01})
    assert plan.bound is None and plan.planner.status == "feasible"
    assert evaluate(sc, plan).feasible
