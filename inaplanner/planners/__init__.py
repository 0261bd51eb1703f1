"""Planners: ``plan(scenario, params, progress, cancel) -> Plan``, judged by the shared evaluator."""

from inaplanner.planners.base import (
    COMMON_PARAMS,
    Param,
    Planner,
    Progress,
    all_params,
    resolve_params,
    run_planner,
)
from inaplanner.planners.registry import available, get
from inaplanner.planners.solver import CancelToken, SolveResult, solve

__all__ = [
    "COMMON_PARAMS",
    "CancelToken",
    "Param",
    "Planner",
    "Progress",
    "SolveResult",
    "all_params",
    "available",
    "get",
    "resolve_params",
    "run_planner",
    "solve",
]
