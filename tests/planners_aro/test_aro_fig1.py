"""ARO Fig. 1 (section I): ECMP without INA gives 1/5, ARO's routes give every worker rate 1."""

from __future__ import annotations

import pytest

from inaplanner.evaluate import evaluate, is_up_down
from inaplanner.planners import get, run_planner
from inaplanner.topologies import aro_fig1


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ecmp_gives_one_fifth(seed):
    sc = aro_fig1()
    plan = run_planner(get("ecmp"), sc, {"seed": seed})
    ev = evaluate(sc, plan)
    assert ev.feasible and not ev.aggregates
    assert ev.objective == pytest.approx(0.2)
    assert all(r.merge_at == [] for r in plan.tasks[0].routes)


@pytest.mark.parametrize("name", ["aro", "aro-acc", "aro-raw"])
def test_aro_gives_one(name):
    sc = aro_fig1()
    plan = run_planner(get(name), sc)
    ev = evaluate(sc, plan)
    assert ev.feasible and not ev.violations and not ev.warnings
    assert ev.objective == pytest.approx(1.0)
    assert plan.planner.status == "optimal"
    assert plan.bound == pytest.approx(1.0)
    assert plan.scenario_sha256 and plan.planner.name == name


def test_aro_routes_are_the_papers():
    """Fig. 1b: every flow crosses S1 (the programmable spine); W0/W1 merge at L1, W2/W3 at L2,
    and everything merges again at S1, so one flow reaches the PS."""
    sc = aro_fig1()
    plan = run_planner(get("aro"), sc)
    routes = {r.worker: r for r in plan.tasks[0].routes}
    assert set(routes) == {"W0", "W1", "W2", "W3", "W4"}
    for w, leaf in (("W0", "L1"), ("W1", "L1"), ("W2", "L2"), ("W3", "L2")):
        assert routes[w].path == [w, leaf, "S1", "L0", "PS"]
        assert routes[w].merge_at == [leaf, "S1"]
    assert routes["W4"].path == ["W4", "L3", "S1", "L0", "PS"]
    assert routes["W4"].merge_at == ["S1"]
    assert all(is_up_down(sc, r.path) for r in routes.values())
    ev = evaluate(sc, plan)
    li = sc.link_index("L0", "PS")
    assert ev.flows[0, li].sum() == 1  # a single aggregated flow into the PS
