"""Pipelines change the answer: a spine whose ports split across two pipelines cannot merge flows
that enter on both (ARO section II-B, Fig. 2; INP/OP decomposition, Fig. 5)."""

from __future__ import annotations

import pytest

from inaplanner.evaluate import evaluate
from inaplanner.model import Host, Job, Link, Scenario, Switch
from inaplanner.planners import get, run_planner


def three_leaves(spine_pipelines: int, port_pipeline: dict[int, int] | None) -> Scenario:
    """PS under L1; W1, W2 under L2; W3, W4 under L3; one programmable spine S1 (ports 1-3 face
    L1-L3). Leaves cannot aggregate. Uplinks carry 2 flows at rate 1, S1 -> L1 and L1 -> PS one."""
    sc = Scenario("pipelines")
    sc.nodes += [Switch(x, tier="leaf") for x in ("L1", "L2", "L3")]
    sc.nodes.append(Switch("S1", tier="spine", programmable=True, pipelines=spine_pipelines,
                           port_pipeline=port_pipeline))
    for h in ("PS", "W1", "W2", "W3", "W4"):
        sc.nodes.append(Host(h))
    sc.links += [
        Link("PS", "L1", 1.0, None, 1),
        Link("W1", "L2", 1.0, None, 1), Link("W2", "L2", 1.0, None, 2),
        Link("W3", "L3", 1.0, None, 1), Link("W4", "L3", 1.0, None, 2),
        Link("L1", "S1", 1.0, 2, 1), Link("L2", "S1", 2.0, 3, 2), Link("L3", "S1", 2.0, 3, 3),
    ]
    sc.jobs.append(Job("j", ["W1", "W2", "W3", "W4"], ["PS"]))
    sc.touch()
    sc.validate()
    return sc


@pytest.mark.parametrize("name", ["aro", "aro-raw"])
def test_split_pipelines_halve_the_rate(name):
    one = three_leaves(1, None)
    split = three_leaves(2, {1: 0, 2: 0, 3: 1})  # L2 enters S1 on pipeline 0, L3 on pipeline 1
    same = three_leaves(2, {1: 1, 2: 0, 3: 0})  # both leaves on pipeline 0
    results = {}
    for label, sc in (("one", one), ("split", split), ("same", same)):
        plan = run_planner(get(name), sc)
        ev = evaluate(sc, plan)
        assert ev.feasible and plan.planner.status == "optimal"
        results[label] = ev
    assert results["one"].objective == pytest.approx(1.0)
    assert results["same"].objective == pytest.approx(1.0)
    assert results["split"].objective == pytest.approx(0.5)  # two aggregates leave S1
    aggs = sorted((a.switch, a.pipeline, a.inputs) for a in results["split"].aggregates)
    assert aggs == [("S1", 0, 2), ("S1", 1, 2)]
    assert [(a.switch, a.inputs) for a in results["one"].aggregates] == [("S1", 4)]


def test_pipeline_unaware_merging_is_judged_by_pipelines():
    """The evaluator (not the planner) decides: a plan merging everything at a split spine still
    sends two flows towards the PS, which the random baseline cannot avoid."""
    sc = three_leaves(2, {1: 0, 2: 0, 3: 1})
    plan = run_planner(get("random"), sc)
    ev = evaluate(sc, plan)
    assert ev.feasible
    assert ev.objective == pytest.approx(0.5)
    assert len(ev.aggregates) == 2
