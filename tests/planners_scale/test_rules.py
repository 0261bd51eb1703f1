"""Rules 5 (fan-in) and 6 (up-down) for every planner of the GRID/InArt family and the heuristic
baselines, on random small Clos networks with a small max_fan_in."""

from __future__ import annotations

import pytest

from inaplanner.evaluate import evaluate
from inaplanner.model import Job, Route
from inaplanner.planners import get, run_planner
from inaplanner.planners.ina_common import atp_style, cap_fan_in
from inaplanner.topologies import leaf_spine, mark_programmable

NAMES = ("grid", "grid-exact", "grid-aro-eval", "inart", "inart-equal", "atp", "switchml", "geryon", "lbmm",
         "ecmp", "random", "aggtree")


@pytest.mark.parametrize("name", NAMES)
def test_every_plan_inside_the_rules(name, breaks, clos):
    at_limit = 0
    for seed in range(8):
        sc = clos(seed, 2 + seed % 3)
        plan = run_planner(get(name), sc, {"time_limit": 30, "seed": seed})
        assert breaks(sc, plan) == [], (seed, breaks(sc, plan)[:3])
        ev = evaluate(sc, plan)
        at_limit += sum(1 for a in ev.aggregates if a.inputs == sc.node(a.switch).max_fan_in)
    if name not in ("geryon", "lbmm", "ecmp"):
        assert at_limit > 0  # the limit was reached somewhere: the test exercised it


def test_rack_of_48_under_one_leaf(breaks):
    """Issue 17's rack: 2 leaves x 48 servers, one job of 90 workers: no aggregate above 32."""
    sc = leaf_spine(2, 1, 48, host_capacity=10.0, fabric_capacity=100.0)
    mark_programmable(sc)  # the leaves
    hosts = [h.id for h in sc.hosts()]
    sc.jobs.append(Job("job0", hosts[1:91], [hosts[0]]))
    sc.touch()
    for name in ("grid", "inart", "atp", "switchml", "random", "aggtree"):
        plan = run_planner(get(name), sc, {"time_limit": 30})
        assert breaks(sc, plan) == [], name
        ev = evaluate(sc, plan)
        assert max(a.inputs for a in ev.aggregates) <= 32


def test_cap_fan_in_keeps_first_flows_and_rule_1():
    sc = leaf_spine(1, 1, 4, host_capacity=10.0)
    mark_programmable(sc)
    sc.node("L1").max_fan_in = 2
    sc.jobs.append(Job("job0", ["H2", "H3", "H4"], ["H1"]))
    sc.touch()
    routes = [Route(w, [w, "L1", "H1"], ["L1"]) for w in ("H2", "H3", "H4")]
    capped, unmerged = cap_fan_in(sc, routes)
    assert unmerged == 1
    assert [r.merge_at for r in capped] == [["L1"], ["L1"], []]
    assert atp_style(sc, [(w, [w, "L1", "H1"]) for w in ("H2", "H3", "H4")])[2].merge_at == []


def test_grid_aro_eval_candidates(clos, breaks):
    """ARO section IV-A: GRID's candidates are the worker's leaf, the spines and the PS's leaf."""
    from inaplanner.topologies import leaf_spine, mark_programmable, place_jobs

    sc = leaf_spine(6, 3, 4, host_capacity=10.0, fabric_capacity=10.0)
    mark_programmable(sc, 1.0, tiers=None)
    place_jobs(sc, 1, 1, 12, seed=3)
    plan = run_planner(get("grid-aro-eval"), sc, {"assign": "argmax"})
    assert breaks(sc, plan) == []
    ps = plan.tasks[0].ps
    for r in plan.tasks[0].routes:
        assert len(r.merge_at) <= 1
        if r.merge_at:
            s = r.merge_at[0]
            assert s.startswith("S") or s == r.path[1] or s == plan.tasks[0].routes[0].path[-2] or \
                sc.link_between(s, ps) is not None
