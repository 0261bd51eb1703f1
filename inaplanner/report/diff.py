"""The review diff of two plans, under the report's name: it is computed in
:mod:`inaplanner.views.plan_diff` (the view models build on it; the report renders it)."""

from inaplanner.views.plan_diff import (
    LinkDelta,
    PlanDiff,
    RateChange,
    RouteChange,
    diff_plans,
    link_deltas,
    route_changes,
)

__all__ = [
    "LinkDelta", "PlanDiff", "RateChange", "RouteChange", "diff_plans", "link_deltas",
    "route_changes",
]
