"""Ties the planning widgets together: runs go to the RunManager, results to the results list,
the current result to the canvas overlay, several results to the compare charts, what-if changes to
the document through one undoable step. Works standalone (callables) or on the main window."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal

from inaplanner.errors import InaplannerError
from inaplanner.evaluate import Evaluation, evaluate
from inaplanner.gui.planning.compare import ComparePanel
from inaplanner.gui.planning.planner_panel import PlannerPanel
from inaplanner.gui.planning.results import ResultsPanel
from inaplanner.gui.planning.whatif import WhatIfPanel
from inaplanner.gui.planning.workers import PlannerRun, RunManager
from inaplanner.io.native import scenario_sha256
from inaplanner.model import Scenario
from inaplanner.views.runs import PlanResult
from inaplanner.views.whatif import Change, display_copy

OverlayFactory = Callable[[Evaluation, Any], Any]


def default_overlay_factory(ev: Evaluation, task_filter: str | None) -> Any:
    from inaplanner.views.overlay import overlay_from_evaluation

    return overlay_from_evaluation(ev, task_filter)


def overlay_evaluation(result: PlanResult, current: Scenario, version: Any) -> tuple[Evaluation, str]:
    """The evaluation to paint for ``result`` on the canvas showing ``current`` (at ``version``),
    and a note for the status bar. A what-if plan is evaluated on a copy that keeps the canvas's
    links in place (failed ones at capacity 0); a plan made before the scenario was edited is
    evaluated on the current one."""
    if result.version is not None and result.version == version:
        return result.display_evaluation, ""
    if not result.changes:
        return evaluate(current, result.plan), (
            f"{result.title}: the scenario changed since this run; the plan is shown on the current scenario"
        )
    try:
        display = display_copy(current, list(result.changes))
    except InaplannerError as exc:
        return evaluate(current, result.plan), f"{result.title}: {exc}"
    return evaluate(display, result.plan), (
        f"{result.title}: the scenario changed since this what-if run; shown on the current scenario"
    )


class PlanningController(QObject):
    """``finished(result)`` fires once a result is in the results list (tests wait on it)."""

    finished = Signal(object)
    overlay_applied = Signal(object)  # the overlay object (None when cleared)

    def __init__(
        self,
        scenario: Callable[[], Scenario],
        set_overlay: Callable[[Any], None],
        show_error: Callable[[str, str], None],
        apply_scenario: Callable[[Scenario, str], None] | None = None,
        status: Callable[[str], None] | None = None,
        overlay_factory: OverlayFactory | None = None,
        selection: Callable[[], tuple[list[str], list[int]]] | None = None,
        parent: QObject | None = None,
        snapshot: Callable[[], dict[str, Any]] | None = None,
    ) -> None:
        super().__init__(parent)
        self._scenario = scenario
        self.on_shutdown: list[Callable[[], object]] = []  # run by shutdown() (wiring adds to it)
        self._set_overlay = set_overlay
        self._show_error = show_error
        self._apply_scenario = apply_scenario or (lambda sc, text: None)
        self._status = status or (lambda msg: None)
        self._overlay_factory = overlay_factory or default_overlay_factory
        self._generation = 0
        self.track_changes = False  # True when a document tells us about edits (see invalidate)
        self.manager = RunManager(max_parallel=1, parent=self)
        self.planner_panel = PlannerPanel(self.manager, scenario, show_error, version=self.scenario_version,
                                          snapshot=snapshot)
        self.results_panel = ResultsPanel()
        self.results_panel.show_error = show_error
        self.compare_panel = ComparePanel()
        self.whatif_panel = WhatIfPanel(scenario, self, self._apply_what_if, show_error, selection=selection)
        self.last_overlay: Any = None
        self.last_note = ""
        self.shown: PlanResult | None = None  # the result painted on the canvas

        self.manager.finished.connect(self._on_result)
        self.manager.run_ended.connect(self._on_run_ended)
        self.results_panel.current_changed.connect(self.show_result)
        self.results_panel.task_filter_changed.connect(lambda _t: self.show_result(self.results_panel.current()))
        self.results_panel.selection_changed.connect(lambda _s: self.refresh_compare())
        self.results_panel.results_changed.connect(self.refresh_compare)
        self.results_panel.clear_overlay_button.clicked.connect(self.clear_overlay)

    # ---- what the what-if panel needs (its Runner protocol) -------------------------------------

    def planner_names(self) -> list[str]:
        return list(self.planner_panel.planners)

    def results(self) -> list[PlanResult]:
        return list(self.results_panel.results)

    def submit(self, planner: str, label: str = "baseline", changes: tuple[Change, ...] = ()) -> PlannerRun:
        """Queue ``planner`` (with its form's parameters) on the current scenario, or on its what-if
        copy with ``changes`` (built on the worker side)."""
        request = self.planner_panel.make_request(planner, label=label)
        request.changes = tuple(changes)
        return self.manager.submit(request, self.planner_panel.backend_combo.currentText())

    # ---- results and overlay --------------------------------------------------------------------

    def run(self, planner: str | None = None) -> PlannerRun:
        """Queue a run of ``planner`` (default: the one shown in the planner panel)."""
        return self.planner_panel.run(planner)

    def _on_result(self, result: PlanResult) -> None:
        self.results_panel.add(result)
        self._status(f"{result.title}: objective {result.objective:.6g}, {result.status}, {result.seconds:.2f} s")
        self.finished.emit(result)

    def _on_run_ended(self, run: PlannerRun) -> None:
        if run.state == "failed":
            self._status(f"{run.title} failed: {run.error}")

    def invalidate(self, *_: Any) -> None:
        """The scenario was edited (the document tells us)."""
        self._generation += 1

    def scenario_version(self) -> Any:
        """Identifies the current state of the scenario: the edit counter when a document reports
        edits, else the scenario's hash."""
        if self.track_changes:
            return self._generation
        return scenario_sha256(self._scenario())

    def refresh_overlay(self) -> None:
        """Paint the shown result again (after edits: the plan on the current scenario)."""
        if self.shown is not None:
            self.show_result(self.shown)

    def show_result(self, result: PlanResult | None) -> None:
        """Paint ``result`` on the canvas (None clears), honouring the task filter."""
        if result is None:
            self.clear_overlay()
            return
        self.shown = result
        ev, note = overlay_evaluation(result, self._scenario(), self.scenario_version())
        task = self.results_panel.task_filter()
        if task is not None and task not in {str(t) for t in ev.tasks}:
            note = (note + "; " if note else "") + f"{result.title} has no task {task}: all tasks shown"
            task = None
        overlay = self._overlay_factory(ev, task)
        self.last_overlay = overlay
        self.last_note = note
        self._set_overlay(overlay)
        self.overlay_applied.emit(overlay)
        if note:
            self._status(note)

    def clear_overlay(self) -> None:
        self.shown = None
        self.last_overlay = None
        self._set_overlay(None)
        self.overlay_applied.emit(None)

    def refresh_compare(self) -> None:
        """Charts show the selected results when two or more are selected, otherwise all."""
        chosen = self.results_panel.selected()
        shown = chosen if len(chosen) >= 2 else list(self.results_panel.results)
        if [id(r) for r in shown] != [id(r) for r in self.compare_panel.results] or not shown:
            self.compare_panel.set_results(shown)

    # ---- what-if --------------------------------------------------------------------------------

    def _apply_what_if(self, scenario: Scenario, text: str) -> None:
        self._apply_scenario(scenario, text)
        self.invalidate()
        self._status(text)

    def shutdown(self) -> None:
        """Stop every run (joining the worker threads) and whatever the wiring registered in
        ``on_shutdown`` (timers, document subscriptions)."""
        while self.on_shutdown:
            self.on_shutdown.pop()()
        self.manager.shutdown()
