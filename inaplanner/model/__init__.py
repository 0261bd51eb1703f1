"""Scenario and plan model (Qt-free)."""

from inaplanner.model.plan import STATUSES, Plan, PlannerInfo, Route, TaskPlan
from inaplanner.model.scenario import (
    DEFAULT_MAX_FAN_IN,
    MAX_FAN_IN_CEILING,
    TIER_RANK,
    Host,
    Job,
    Link,
    Node,
    Scenario,
    Switch,
    Task,
    default_port_pipeline,
)

__all__ = [
    "DEFAULT_MAX_FAN_IN",
    "MAX_FAN_IN_CEILING",
    "STATUSES",
    "TIER_RANK",
    "Host",
    "Job",
    "Link",
    "Node",
    "Plan",
    "PlannerInfo",
    "Route",
    "Scenario",
    "Switch",
    "Task",
    "TaskPlan",
    "default_port_pipeline",
]
