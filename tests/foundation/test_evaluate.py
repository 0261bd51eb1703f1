"""The evaluator on hand-made plans whose loads are worked out by hand in the comments."""

from __future__ import annotations

import numpy as np
import pytest

from inaplanner.evaluate import (
    evaluate,
    is_up_down,
    max_min_rates,
    objective_of,
    progressive_filling,
    with_rates,
)
from inaplanner.io.native import scenario_from_dict
from inaplanner.model import Plan, PlannerInfo, Route, TaskPlan
from inaplanner.topologies import aro_fig1, leaf_spine


def _scenario(x_programmable=True):
    """W1..W4 on switch X (ports 1-4; pipelines: ports 1,2,5,6 -> 0, ports 3,4 -> 1), X-Y, X-Z,
    Y-PS, Z-PS, and a second PS (PS2) on Y. Links 10 Gbps; X->Y carries 1 Gbps background;
    X aggregates up to 25 Gbps with 2 Gbps background."""
    return scenario_from_dict({
        "format": "inaplanner-scenario", "version": 1, "name": "hand",
        "nodes": [
            {"id": "X", "kind": "switch", "programmable": x_programmable, "pipelines": 2,
             "port_pipeline": {"1": 0, "2": 0, "3": 1, "4": 1, "5": 0, "6": 0},
             "aggregation_capacity": 25.0, "aggregation_background": 2.0},
            {"id": "Y", "kind": "switch", "programmable": True},
            {"id": "Z", "kind": "switch", "programmable": True},
            *({"id": f"W{i}", "kind": "host"} for i in range(1, 5)),
            {"id": "PS", "kind": "host"}, {"id": "PS2", "kind": "host"},
        ],
        "links": [
            *({"a": f"W{i}", "b": "X", "b_port": i, "capacity": 10} for i in range(1, 5)),
            {"a": "X", "b": "Y", "a_port": 5, "b_port": 1, "capacity": 10, "background": [1.0, 0.0]},
            {"a": "X", "b": "Z", "a_port": 6, "b_port": 1, "capacity": 10},
            {"a": "Y", "b": "PS", "a_port": 2, "capacity": 10},
            {"a": "Z", "b": "PS", "a_port": 2, "capacity": 10},
            {"a": "Y", "b": "PS2", "a_port": 3, "capacity": 10},
        ],
        "jobs": [{"id": "j", "workers": ["W1", "W2", "W3", "W4"], "parameter_servers": ["PS"]}],
    })


def _plan(rate, routes, job="j", ps="PS"):
    return Plan("0" * 64, PlannerInfo("hand"), [TaskPlan(job, ps, rate, [Route(*r) for r in routes])])


def _via_y(merges):
    return [(f"W{i}", [f"W{i}", "X", "Y", "PS"], list(merges)) for i in range(1, 5)]


def _load(ev, a, b):
    sc = ev.scenario
    li = sc.link_index(a, b)
    return ev.link_load[li, 0 if sc.links[li].a == a else 1]


def test_no_merge_counts_every_flow():
    ev = evaluate(_scenario(), _plan(2.0, _via_y([])))
    assert ev.feasible
    assert _load(ev, "X", "Y") == pytest.approx(4 * 2.0 + 1.0)  # 4 raw flows + background
    assert _load(ev, "Y", "PS") == pytest.approx(8.0)
    assert _load(ev, "Y", "X") == 0.0
    assert ev.switch_load[ev.switch_ids.index("X")] == pytest.approx(2.0)  # background only


def test_pipelines_keep_aggregates_apart():
    # W1, W2 enter X on pipeline 0 and W3, W4 on pipeline 1: two aggregates leave X
    ev = evaluate(_scenario(), _plan(3.0, _via_y(["X"])))
    assert ev.valid and ev.feasible
    assert _load(ev, "X", "Y") == pytest.approx(2 * 3.0 + 1.0)
    assert _load(ev, "Y", "PS") == pytest.approx(6.0)
    assert ev.switch_load[ev.switch_ids.index("X")] == pytest.approx(4 * 3.0 + 2.0)
    assert sorted((a.switch, a.pipeline, a.inputs) for a in ev.aggregates) == [("X", 0, 2), ("X", 1, 2)]
    assert ev.switch_rows()[0]["pipelines_used"] == [0, 1]


def test_merge_again_downstream():
    # both X aggregates merge again at Y (one pipeline): one flow to the PS
    ev = evaluate(_scenario(), _plan(3.0, _via_y(["X", "Y"])))
    assert ev.feasible
    assert _load(ev, "Y", "PS") == pytest.approx(3.0)
    assert ev.switch_load[ev.switch_ids.index("Y")] == pytest.approx(2 * 3.0)  # 2 incoming aggregates


def test_capacity_violations_reported_with_load_and_limit():
    ev = evaluate(_scenario(), _plan(7.0, _via_y(["X"])))
    assert ev.valid and not ev.feasible
    found = {(v.kind, v.name): (v.load, v.limit) for v in ev.violations}
    assert found[("link", "X->Y")] == pytest.approx((15.0, 10.0))
    assert found[("switch", "X")] == pytest.approx((30.0, 25.0))
    assert found[("link", "Y->PS")] == pytest.approx((14.0, 10.0))


def test_merge_at_non_programmable_is_invalid():
    ev = evaluate(_scenario(x_programmable=False), _plan(1.0, _via_y(["X"])))
    assert not ev.valid
    assert any("not programmable" in e for e in ev.errors)


def test_aggregate_that_continues_two_ways_is_invalid():
    routes = [("W1", ["W1", "X", "Y", "PS"], ["X"]), ("W2", ["W2", "X", "Z", "PS"], ["X"]),
              ("W3", ["W3", "X", "Y", "PS"], []), ("W4", ["W4", "X", "Y", "PS"], [])]
    ev = evaluate(_scenario(), _plan(1.0, routes))
    assert not ev.valid
    assert any("continues two ways" in e for e in ev.errors)
    # the same split is fine when the two flows enter X on different pipelines
    routes[1] = ("W3", ["W3", "X", "Z", "PS"], ["X"])
    routes[2] = ("W2", ["W2", "X", "Y", "PS"], [])
    ev = evaluate(_scenario(), _plan(1.0, routes))
    assert ev.valid, ev.errors


def test_same_path_different_remaining_merges_is_invalid():
    routes = [("W1", ["W1", "X", "Y", "PS"], ["X", "Y"]), ("W2", ["W2", "X", "Y", "PS"], ["X"]),
              ("W3", ["W3", "X", "Y", "PS"], []), ("W4", ["W4", "X", "Y", "PS"], [])]
    ev = evaluate(_scenario(), _plan(1.0, routes))
    assert any("continues two ways" in e for e in ev.errors)


@pytest.mark.parametrize(
    "routes, needle",
    [
        ([("W1", ["W1", "X", "PS"], [])], "no link X - PS"),
        ([("W1", ["W2", "X", "Y", "PS"], [])], "starts at"),
        ([("W1", ["W1", "X", "Y", "PS2"], [])], "not at the PS"),
        ([("W1", ["W1", "X", "Y", "X", "Z", "PS"], [])], "repeats a node"),
        ([("W1", ["W1", "X", "Y", "PS"], ["Z"])], "not a switch inside the path"),
        ([("W1", ["W1", "X", "Y", "PS"], ["Y", "X"])], "out of path order"),
        ([("PS2", ["PS2", "Y", "PS"], [])], "not a worker"),
        ([("W1", ["W1", "X", "Y", "PS"], []), ("W1", ["W1", "X", "Z", "PS"], [])], "more than one route"),
    ],
)
def test_bad_routes(routes, needle):
    ev = evaluate(_scenario(), _plan(1.0, routes))
    assert any(needle in e for e in ev.errors), ev.errors


def test_missing_route_and_missing_task():
    ev = evaluate(_scenario(), _plan(1.0, _via_y([])[:3]))
    assert any("no route for worker 'W4'" in e for e in ev.errors)
    empty = Plan("0" * 64, PlannerInfo("hand"), [])
    assert any("missing from the plan" in e for e in evaluate(_scenario(), empty).errors)


def test_zero_rate_task_may_have_no_routes():
    ev = evaluate(_scenario(), _plan(0.0, []))
    assert ev.feasible and ev.objective == 0.0


def test_aro_fig1_ecmp_and_aro_routes():
    sc = aro_fig1()
    pairs = [("W0", "L1"), ("W1", "L1"), ("W2", "L2"), ("W3", "L2"), ("W4", "L3")]
    ecmp = _plan(1.0, [(w, [w, leaf, "S0", "L0", "PS"], []) for w, leaf in pairs], job="job0")
    assert max_min_rates(sc, ecmp) == {("job0", "PS"): pytest.approx(0.2)}
    merged = [(w, [w, leaf, "S1", "L0", "PS"], ([leaf] if leaf != "L3" else []) + ["S1"]) for w, leaf in pairs]
    ev = evaluate(sc, _plan(1.0, merged, job="job0"))
    assert ev.feasible and ev.objective == 1.0
    assert ev.link_load[sc.link_index("L0", "PS")].max() == pytest.approx(1.0)


def _two_jobs():
    sc = _scenario()
    sc.jobs[0].workers = ["W1", "W2"]
    from inaplanner.model import Job

    sc.jobs.append(Job("k", ["W3"], ["PS2"], weight=2.0))
    sc.touch()
    return sc


def test_max_min_two_tasks_share_a_bottleneck():
    sc = _two_jobs()
    plan = Plan("0" * 64, PlannerInfo("hand"), [
        TaskPlan("j", "PS", 1.0, [Route(w, [w, "X", "Y", "PS"], []) for w in ("W1", "W2")]),
        TaskPlan("k", "PS2", 1.0, [Route("W3", ["W3", "X", "Y", "PS2"], [])]),
    ])
    # X->Y: 10 Gbps, 1 background; j has 2 flows, k has 1: 3r <= 9 -> r = 3 for both
    assert max_min_rates(sc, plan) == {("j", "PS"): pytest.approx(3.0), ("k", "PS2"): pytest.approx(3.0)}
    # throttle k's PS link to 2: k frozen at 2, then j fills 2r + 2 <= 9 -> 3.5
    sc.links[sc.link_index("Y", "PS2")].capacity = 2.0
    rates = max_min_rates(sc, plan)
    assert rates == {("j", "PS"): pytest.approx(3.5), ("k", "PS2"): pytest.approx(2.0)}
    ev = evaluate(sc, with_rates(plan, rates))
    assert ev.feasible
    # MJMT objective: weighted throughputs 1 * 3.5 and 2 * 2 -> min 3.5 + 0.001 * (3.5 + 4)
    assert ev.objective_kind == "MJMT"
    assert ev.objective == pytest.approx(3.5 + 0.001 * 7.5)


def test_progressive_filling_against_brute_force():
    rng = np.random.default_rng(7)
    for _ in range(30):
        a = rng.integers(0, 3, size=(4, 3)).astype(float)
        b = rng.uniform(1, 10, size=4)
        r = progressive_filling(a, b, np.ones(3, dtype=bool))
        assert np.all(a @ r <= b + 1e-9)
        # max-min fairness: no task can grow alone without breaking a constraint
        for t in range(3):
            if a[:, t].any():
                bumped = r.copy()
                bumped[t] += 1e-6
                assert np.any(a @ bumped > b + 1e-12)
        # the smallest rate is the best possible smallest rate (checked on a grid)
        used = a.any(axis=0)
        if used.any():
            best = max(lv for lv in np.linspace(0, 10, 2001) if np.all(a[:, used].sum(axis=1) * lv <= b + 1e-12))
            assert r[used].min() == pytest.approx(best, abs=1e-2)


def test_objective_kinds():
    sc = _scenario()
    assert objective_of(sc, {"j": 2.5}) == (2.5, "SJST")
    sc.jobs[0].parameter_servers = ["PS", "PS2"]
    assert objective_of(sc, {"j": 4.0}) == (4.0, "SJMT")


def test_up_down_check():
    sc = leaf_spine(2, 2, 1)
    assert is_up_down(sc, ["H1", "L1", "S1", "L2", "H2"])
    assert not is_up_down(sc, ["H1", "L1", "S1", "L2", "S2", "L1"])
    assert not is_up_down(sc, ["L1", "S1", "L2", "S2"])


def test_unknown_task_and_bad_rate():
    sc = _scenario()
    plan = _plan(float("inf"), _via_y([]))
    plan.tasks.append(TaskPlan("nope", "PS", 1.0, []))
    ev = evaluate(sc, plan)
    assert any("not a finite number" in e for e in ev.errors)
    assert any("no such job/PS pair" in e for e in ev.errors)


def test_at_rates_equals_a_fresh_evaluation():
    """GRID's rounding loop re-rates one set of routes many times: the re-rated evaluation must be
    the evaluator's verdict at those rates (loads, capacity violations, fan-in violations that do
    not depend on rates, objective)."""
    import copy
    import random as _random

    from inaplanner.planners import get, run_planner
    from inaplanner.topologies import fat_tree, mark_programmable, place_jobs

    sc = fat_tree(4)
    mark_programmable(sc, 0.5, pipelines=2, seed=3)
    place_jobs(sc, 2, 2, 6, seed=3)
    plan = run_planner(get("random"), sc, {"seed": 3})
    for s in sc.switches():  # after planning: some aggregates now merge more than allowed
        s.max_fan_in = 1
    sc.touch()
    base = evaluate(sc, plan)
    assert any(v.kind == "fan_in" for v in base.violations)
    rng = _random.Random(0)
    kinds = set()
    for _ in range(20):
        rates = [rng.choice([0.0, rng.uniform(0, 60)]) for _ in base.tasks]
        fresh_plan = copy.deepcopy(plan)
        order = [(t.job, t.ps) for t in base.tasks]
        for tp in fresh_plan.tasks:
            tp.rate = rates[order.index((tp.job, tp.ps))]
        fresh = evaluate(sc, fresh_plan)
        fast = base.at_rates(np.array(rates))
        assert [v.as_dict() for v in fast.violations] == [v.as_dict() for v in fresh.violations]
        assert fast.objective == pytest.approx(fresh.objective)
        assert fast.job_throughput == pytest.approx(fresh.job_throughput)
        assert np.allclose(fast.link_load, fresh.link_load)
        assert np.allclose(fast.switch_load, fresh.switch_load)
        kinds |= {v.kind for v in fresh.violations}
    assert {"link", "fan_in"} <= kinds  # both kinds of violation were compared
    with pytest.raises(ValueError):
        base.at_rates(np.array([-1.0] + [0.0] * (len(base.tasks) - 1)))
