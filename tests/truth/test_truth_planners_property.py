"""Every planner inside the rules (issue 17): on random small Clos networks (leaf-spines and the
k=4 fat-tree) with a small ``max_fan_in`` (2..4), every registered planner's plan passes the
evaluator with no violation: no aggregate merges more than max_fan_in flows (rule 5), every route
is up-down (rule 6), and no capacity is exceeded (rules 3-4)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inaplanner.evaluate import evaluate
from inaplanner.model import Scenario
from inaplanner.planners.base import run_planner
from inaplanner.planners.registry import available
from inaplanner.topologies import (
    fat_tree,
    leaf_spine,
    mark_programmable,
    place_jobs,
    set_max_fan_in,
)

PLANNERS = sorted(available())
TIME_LIMIT = 3.0


@st.composite
def clos_scenarios(draw: st.DrawFn) -> Scenario:
    """A small Clos scenario: its leaves (and maybe more switches) programmable with 1-2 pipelines,
    max_fan_in 2..4 on every programmable switch, 1-2 jobs placed as ARO's evaluation does."""
    if draw(st.booleans()):
        leaves = draw(st.integers(2, 4))
        sc = leaf_spine(leaves, draw(st.integers(1, 3)), draw(st.integers(2, 5)),
                        fabric_capacity=draw(st.sampled_from([50.0, 100.0, 200.0])))
    else:
        sc = fat_tree(4)
        leaves = 8
    seed = draw(st.integers(0, 10_000))
    pipelines = draw(st.integers(1, 2))
    share = draw(st.sampled_from([None, 0.5, 1.0]))
    mark_programmable(sc, share, seed=seed, pipelines=pipelines)
    hosts = len(sc.hosts())
    jobs = draw(st.integers(1, 2))
    tasks = draw(st.integers(1, max(1, min(2, leaves // jobs))))
    free = hosts - jobs * tasks
    workers = draw(st.integers(min(2, free // jobs), free // jobs))
    place_jobs(sc, jobs, tasks, workers, seed=seed)
    set_max_fan_in(sc, draw(st.integers(2, 4)))
    return sc


@pytest.mark.parametrize("planner", PLANNERS)
@settings(max_examples=20, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(sc=clos_scenarios())
def test_every_planner_stays_inside_the_rules(planner, sc):
    plan = run_planner(available()[planner], sc, {"time_limit": TIME_LIMIT, "seed": 0})
    ev = evaluate(sc, plan)
    assert ev.errors == []
    assert [str(v) for v in ev.violations] == []
    assert ev.objective > 0.0
