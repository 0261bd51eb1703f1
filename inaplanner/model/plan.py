"""The plan: what a planner decided (CONTRACTS.md, "Plan")."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from inaplanner.model.scenario import Task

STATUSES = ("optimal", "feasible", "timeout", "heuristic")


@dataclass
class Route:
    """One worker's path to the PS and the switches on it where its data is aggregated."""

    worker: str
    path: list[str]
    merge_at: list[str] = field(default_factory=list)


@dataclass
class TaskPlan:
    """Rate and routes of one task (job, PS)."""

    job: str
    ps: str
    rate: float
    routes: list[Route] = field(default_factory=list)

    @property
    def task(self) -> Task:
        return Task(self.job, self.ps)


@dataclass
class PlannerInfo:
    name: str
    params: dict[str, Any] = field(default_factory=dict)
    seed: int | None = None
    solver: str | None = None
    seconds: float = 0.0
    status: str = "heuristic"

    @property
    def stopped(self) -> str | None:
        """Why a limit left the planner at this plan (or without a bound), in the planner's own
        words (``params["stopped"]``); None when nothing stopped it."""
        reason = self.params.get("stopped")
        return str(reason) if reason else None


@dataclass
class Plan:
    scenario_sha256: str
    planner: PlannerInfo
    tasks: list[TaskPlan] = field(default_factory=list)
    bound: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # top-level "x-" keys

    def task_plan(self, job: str, ps: str) -> TaskPlan | None:
        for t in self.tasks:
            if t.job == job and t.ps == ps:
                return t
        return None
