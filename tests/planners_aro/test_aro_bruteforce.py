"""On small random leaf-spines ARO equals the optimum of an exhaustive search over routes.

``aro-raw`` (continuous rates) must match exactly; ``aro`` (QSR in the multi-task model) within
one QSR level per task; every bound ARO reports must be a true upper bound."""

from __future__ import annotations

import pytest

from inaplanner.evaluate import evaluate
from inaplanner.planners import get, run_planner
from inaplanner.planners.aro.formulation import objective_for, qsr_delta
from inaplanner.planners.aro.planner import _level_slack
from inaplanner.planners.routing import shortest_dag

CASES = [
    ("SJST", 0, dict(spines=3, hosts=3, workers=5, capacities=(1.0, 2.0))),
    ("SJST", 1, dict(spines=3, hosts=3, workers=5, capacities=(1.0, 2.0))),
    ("SJST", 2, dict(spines=3, hosts=3, workers=5, capacities=(1.0, 3.0), pipelines=1)),
    ("SJST", 3, dict(leaves=4, spines=2, hosts=2, workers=5, capacities=(1.0, 2.0), pipelines=4)),
    ("SJMT", 0, dict(spines=3, hosts=2, jobs=1, tasks=2, workers=3, capacities=(1.0, 2.0))),
    ("SJMT", 2, dict(spines=3, hosts=2, jobs=1, tasks=2, workers=3, capacities=(1.0, 2.0))),
    ("MJMT", 1, dict(spines=2, hosts=3, jobs=2, tasks=1, workers=3, capacities=(1.0, 2.0), weights=[1.0, 2.0])),
    ("MJMT", 2, dict(spines=2, hosts=3, jobs=2, tasks=1, workers=3, capacities=(1.0, 2.0))),
    ("MJMT", 0, dict(leaves=4, spines=2, hosts=3, jobs=2, tasks=2, workers=2, capacities=(1.0, 2.0))),
]


@pytest.mark.parametrize("kind,seed,kw", CASES, ids=[f"{k}-{s}" for k, s, _ in CASES])
def test_aro_matches_exhaustive_search(kind, seed, kw, make_leaf_spine, brute):
    sc = make_leaf_spine(seed, **kw)
    best = brute(sc)
    raw = run_planner(get("aro-raw"), sc)
    ev = evaluate(sc, raw)
    assert ev.feasible
    assert ev.objective_kind == kind
    assert ev.objective == pytest.approx(best, rel=1e-6, abs=1e-9)
    assert raw.planner.status == "optimal"
    assert raw.bound >= best * (1 - 1e-6)
    q = run_planner(get("aro"), sc)
    evq = evaluate(sc, q)
    assert evq.feasible
    # one QSR level (largest bandwidth / 100) per task, at most
    slack = _level_slack(objective_for(sc, sc.tasks())) * max(lk.capacity for lk in sc.links) / 100
    assert best - slack - 1e-9 <= evq.objective <= best + 1e-9
    if q.bound is not None:
        assert q.bound >= best * (1 - 1e-6)


@pytest.mark.parametrize("seed", [0, 1])
def test_bypass_makes_aro_exact_with_switch_aggregation_capacity(seed, make_leaf_spine, brute):
    """With a finite aggregation capacity merging can hurt; ARO then lets flows cross a switch
    without merging, and matches the exhaustive search where every merge is optional."""
    sc = make_leaf_spine(seed, spines=2, hosts=3, workers=4, capacities=(1.0, 2.0), agg_capacity=(1.0, 2.0))
    best = brute(sc, optional_merges=True)
    plan = run_planner(get("aro-raw"), sc)
    ev = evaluate(sc, plan)
    assert ev.feasible
    assert ev.objective == pytest.approx(best, rel=1e-6)


@pytest.mark.parametrize("seed", [0, 3])
def test_forced_merging_loses_nothing_without_switch_capacity(seed, make_leaf_spine, brute):
    """ARO section III-B aggregates every flow that enters a programmable switch; with no
    aggregation capacity that is as good as choosing where to merge."""
    sc = make_leaf_spine(seed, spines=2, hosts=2, workers=4, capacities=(1.0, 2.0))
    assert brute(sc, optional_merges=True) == pytest.approx(brute(sc), rel=1e-9)


def test_qsr_delta_is_largest_bandwidth_over_levels(make_leaf_spine):
    sc = make_leaf_spine(0, spines=3, hosts=3, workers=5, capacities=(1.0, 2.0))
    from inaplanner.planners.aro.graph import build_task_graph

    t = sc.tasks()[0]
    w = tuple(sc.job(t.job).workers)
    g = build_task_graph(sc, t, w, shortest_dag(sc, w, t.ps))
    assert qsr_delta(sc, [g], 100) == pytest.approx(2.0 / 100)
