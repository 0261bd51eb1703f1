"""The review diff: empty against itself, and exact on a changed plan."""

from __future__ import annotations

import copy

import numpy as np

from inaplanner.evaluate import evaluate
from inaplanner.io.native import plan_from_dict, plan_to_dict
from inaplanner.model import Route
from inaplanner.report import diff_plans


def test_plan_diffed_with_itself_is_empty(grid, gplan, two_job_scenario):
    assert diff_plans(grid, gplan, gplan).is_empty()
    twin = plan_from_dict(plan_to_dict(gplan))  # an equal plan through the file format
    d = diff_plans(grid, gplan, twin)
    assert d.is_empty()
    assert "no difference" in d.to_text()
    assert d.to_dict()["empty"] is True
    sc2, plan2 = two_job_scenario
    assert diff_plans(sc2, plan2, copy.deepcopy(plan2)).is_empty()


def test_diff_names_moved_routes_merges_rates_and_load_deltas(grid, gplan):
    other = copy.deepcopy(gplan)
    routes = other.tasks[0].routes
    routes[3] = Route("W4", ["W4", "S1", "S3", "PS"], ["S1"])  # W4 joins S1's aggregate
    routes[6] = Route("W7", ["W7", "S3", "PS"], [])  # W7 no longer merged
    other.tasks[0].rate = 2.0
    d = diff_plans(grid, gplan, other, "a", "b")
    assert not d.is_empty()
    assert [(c.worker, c.kind) for c in d.routes_moved] == [("W4", "moved")]
    assert d.routes_moved[0].path_b == ("W4", "S1", "S3", "PS")
    assert [(c.worker, c.merges_a, c.merges_b) for c in d.merges_changed] == [("W7", ("S3",), ())]
    assert [(r.task, r.rate_a, r.rate_b) for r in d.rate_changes] == [("job0/PS", gplan.tasks[0].rate, 2.0)]
    ev_a, ev_b = evaluate(grid, gplan), evaluate(grid, other)
    delta = ev_b.link_load - ev_a.link_load
    changed = {(x.index, x.direction): x.delta for x in d.link_deltas}
    assert set(changed) == {tuple(int(v) for v in ix) for ix in np.argwhere(np.abs(delta) > 1e-9)}
    for (li, di), value in changed.items():
        assert abs(value - delta[li, di]) < 1e-12
    mags = [abs(x.delta) for x in d.link_deltas]
    assert mags == sorted(mags, reverse=True)
    text = d.to_text()
    assert "moved: job0/PS W4: W4-S1-[S2]-[S3]-PS -> W4-[S1]-S3-PS" in text
    assert "W7-[S3]-PS -> W7-S3-PS" in text


def test_added_and_removed_routes_and_tasks(two_job_scenario):
    sc, plan = two_job_scenario
    other = copy.deepcopy(plan)
    other.tasks[1].routes.pop()  # H6 loses its route
    d = diff_plans(sc, plan, other)
    assert [(c.worker, c.kind) for c in d.routes_moved] == [("H6", "removed")]
    fewer = copy.deepcopy(plan)
    fewer.tasks.pop()
    d2 = diff_plans(sc, fewer, plan)
    assert d2.tasks_added == ["b/H2"]
    assert {c.kind for c in d2.routes_moved} == {"added"}
