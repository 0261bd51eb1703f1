"""Shared helpers of the GRID / InArt planner tests."""

from __future__ import annotations

import pytest

from inaplanner.evaluate import Evaluation, evaluate
from inaplanner.model import Plan, Scenario
from inaplanner.planners import get, run_planner


def plan_and_check(name: str, sc: Scenario, params: dict | None = None) -> tuple[Plan, Evaluation]:
    """Run a planner through the common entry point and insist the evaluator accepts the plan."""
    plan = run_planner(get(name), sc, params or {})
    ev = evaluate(sc, plan, check_hash=True)
    assert ev.errors == [], ev.errors
    assert ev.violations == [], [str(v) for v in ev.violations]
    assert not ev.warnings or all("not up-down" in w for w in ev.warnings), ev.warnings
    assert plan.scenario_sha256
    if plan.bound is not None:
        assert ev.objective <= plan.bound * (1 + 1e-6) + 1e-9
    return plan, ev


@pytest.fixture
def check():
    return plan_and_check
