"""What one planner run asks for and what it produces (Qt-free).

A :class:`RunRequest` carries the scenario the user has open as its canonical document
(``scenario_to_dict``: the only scenario work done on the UI thread, ~2 ms for a fat-tree k=16)
plus, for a what-if run, the list of changes. Everything heavy - rebuilding the scenario, the
what-if copy (``copy_scenario``), planning, evaluating - happens in :func:`execute`, on a worker
thread or split between a child process and a worker thread (see :mod:`.execution`).
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from inaplanner.evaluate import Evaluation, evaluate
from inaplanner.io.native import scenario_from_dict
from inaplanner.model import Plan, Scenario
from inaplanner.planners import CancelToken, get, run_planner

_ids = itertools.count(1)


def next_id() -> int:
    return next(_ids)


@dataclass
class RunRequest:
    """One run to do: which planner, its parameters, the scenario document the user has open, and
    the what-if changes to plan with (none for a plain run). ``version`` identifies the state of
    the open scenario (the GUI's edit counter or its hash), so results can be matched to it."""

    planner: str
    params: dict[str, Any]
    scenario_doc: dict[str, Any]
    label: str = "baseline"
    changes: tuple[Any, ...] = ()  # whatif_model changes
    version: Any = None
    id: int = field(default_factory=next_id)

    @property
    def title(self) -> str:
        return f"#{self.id} {self.planner}" + ("" if self.label == "baseline" else f" ({self.label})")


@dataclass(eq=False)
class PlanResult:
    """A finished run: the plan, the scenario it was made for, and the evaluator's verdict.

    ``display_scenario`` is the scenario the user had open, link for link (for a what-if run: with
    the changes masked in place - failed links at capacity 0 - so link indices match the canvas);
    ``display_evaluation`` is the plan evaluated on it."""

    id: int
    planner: str
    params: dict[str, Any]
    label: str
    scenario: Scenario
    plan: Plan
    evaluation: Evaluation
    display_scenario: Scenario
    display_evaluation: Evaluation
    wall_seconds: float
    changes: tuple[Any, ...] = ()
    version: Any = None
    log: list[str] = field(default_factory=list)

    @property
    def title(self) -> str:
        return f"#{self.id} {self.planner}" + ("" if self.label == "baseline" else f" ({self.label})")

    @property
    def objective(self) -> float:
        return float(self.evaluation.objective)

    @property
    def bound(self) -> float | None:
        return self.plan.bound

    @property
    def seconds(self) -> float:
        return float(self.plan.planner.seconds)

    @property
    def status(self) -> str:
        """The planner's status, or the evaluator's verdict when the plan breaks a rule."""
        if not self.evaluation.valid:
            return "invalid"
        if not self.evaluation.feasible:
            return "infeasible"
        return self.plan.planner.status

    @property
    def gap(self) -> float | None:
        return relative_gap(self.objective, self.bound)

    @property
    def stopped(self) -> str | None:
        """Why a limit stopped the planner (:attr:`inaplanner.model.PlannerInfo.stopped`); None when nothing did."""
        return self.plan.planner.stopped


def relative_gap(objective: float, bound: float | None) -> float | None:
    """(bound - objective) / |bound|: how far the plan may be from the best possible; None when the
    planner proved no bound. A zero bound with a zero objective is a zero gap."""
    if bound is None or not math.isfinite(bound):
        return None
    if bound == 0:
        return 0.0 if objective == 0 else math.inf
    return (bound - objective) / abs(bound)


Emit = Callable[[str, Any], None]


def planning_scenario(request: RunRequest) -> Scenario:
    """The scenario the planner works on: the open one, or its what-if copy."""
    base = scenario_from_dict(request.scenario_doc)
    if not request.changes:
        return base
    from inaplanner.views.whatif import what_if

    return what_if(base, list(request.changes))


def scenarios(request: RunRequest) -> tuple[Scenario, Scenario]:
    """(planning scenario, display scenario); the same object for a plain run."""
    base = scenario_from_dict(request.scenario_doc)
    if not request.changes:
        return base, base
    from inaplanner.views.whatif import display_copy, what_if

    changes = list(request.changes)
    return what_if(base, changes), display_copy(base, changes)


def plan_only(request: RunRequest, scenario: Scenario, emit: Emit, cancel: CancelToken) -> Plan:
    """Run the planner of ``request`` on ``scenario``; ``emit(kind, payload)`` reports
    ``("progress", (fraction, message))`` and ``("log", line)``. Raises ``Cancelled`` when
    ``cancel`` fired (also from inside ``progress``), or the planner's error."""

    from inaplanner.progress import Progress, ProgressEvent

    progress = Progress(cancel)

    def forward(ev: ProgressEvent) -> None:  # the incumbent, bound and gap ride along (run strip)
        if not ev.node:
            emit("progress", (float(ev.fraction or 0.0), str(ev.message), ev.incumbent, ev.bound, ev.gap))
        cancel.check()

    progress.subscribe(forward)
    emit("log", f"{request.title}: planning")
    return run_planner(get(request.planner), scenario, request.params, progress, cancel)


def execute(request: RunRequest, emit: Emit, cancel: CancelToken) -> PlanResult:
    """Prepare the scenarios, plan, evaluate: the whole run in this thread."""
    start = time.perf_counter()
    emit("log", f"{request.title}: preparing the scenario")
    scenario, display = scenarios(request)
    cancel.check()
    plan = plan_only(request, scenario, emit, cancel)
    return finish(request, scenario, display, plan, start)


def finish(request: RunRequest, scenario: Scenario, display: Scenario, plan: Plan, start: float) -> PlanResult:
    """Evaluate ``plan`` (on the planning and the display scenario) and wrap it as a result."""
    evaluation = evaluate(scenario, plan)
    shown = evaluation if display is scenario else evaluate(display, plan)
    return PlanResult(
        id=request.id,
        planner=request.planner,
        params=dict(request.params),
        label=request.label,
        scenario=scenario,
        plan=plan,
        evaluation=evaluation,
        display_scenario=display,
        display_evaluation=shown,
        wall_seconds=time.perf_counter() - start,
        changes=tuple(request.changes),
        version=request.version,
    )
