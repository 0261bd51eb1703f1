"""A cancelled run stops within a second and returns nothing."""

from __future__ import annotations

import pytest

from inaplanner.errors import Cancelled
from inaplanner.planners import CancelToken, get, run_planner
from inaplanner.topologies import leaf_spine, mark_programmable, place_jobs


def _busy_scenario():
    """The paper's scaling setting at lambda = 3 (144 switches, 5 jobs of 300 workers): tens of
    seconds of work for ARO."""
    sc = leaf_spine(72, 72, 24)
    mark_programmable(sc, 28 / 144, tiers=None, seed=1, pipelines=4, include=[f"L{i + 1}" for i in range(5)])
    place_jobs(sc, 5, 1, 300, seed=1)
    return sc


@pytest.mark.parametrize("delay", [0.3, 1.0, 2.5])
def test_cancel_stops_within_a_second_and_returns_nothing(delay, cancelled_midway):
    sc = _busy_scenario()
    outcome, stopped = cancelled_midway(
        lambda token: run_planner(get("aro"), sc, {"time_limit": 120}, cancel=token), delay)
    assert outcome == {"cancelled": True}
    assert stopped < 1.0, f"took {stopped:.2f} s to stop"


@pytest.mark.parametrize("name", ["aro", "aro-acc", "ecmp", "random", "aggtree"])
def test_cancel_before_start(name):
    sc = _busy_scenario()
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        run_planner(get(name), sc, cancel=token)
