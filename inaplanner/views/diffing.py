"""The diff of two results, through the plan diff (``inaplanner.views.plan_diff``).

That diff compares two plans on one scenario, link by link. Two results qualify when their display
scenarios (the scenario the user had open, with a what-if's failed links kept at capacity 0) list
the same links in the same order; the diff is then taken on the later one, so a changed capacity
shows its new value.
"""

from __future__ import annotations

from inaplanner.errors import InaplannerError
from inaplanner.views.plan_diff import PlanDiff, diff_plans
from inaplanner.views.runs import PlanResult


def same_links(a: PlanResult, b: PlanResult) -> bool:
    la, lb = a.display_scenario.links, b.display_scenario.links
    return len(la) == len(lb) and all(x.a == y.a and x.b == y.b for x, y in zip(la, lb, strict=True))


def diff_results(a: PlanResult, b: PlanResult) -> PlanDiff:
    """What changes from result ``a`` to result ``b`` (routes, merges, rates, link loads)."""
    if not same_links(a, b):
        raise InaplannerError(
            f"{a.title} and {b.title} were planned on scenarios with different links; "
            "a diff compares plans of one network"
        )
    return diff_plans(
        b.display_scenario, a.plan, b.plan, a.title, b.title,
        ev_a=a.display_evaluation, ev_b=b.display_evaluation,
    )
