"""Wiring the planning controller into the main window (docks, Plan menu, undo, document events)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import QApplication

from inaplanner.gui.filejobs import snapshot
from inaplanner.gui.planning.controller import PlanningController
from inaplanner.model import Scenario

#: Seconds after start-up before a planner process is started ahead of the first run (real
#: displays only: tests and screenshots on the offscreen platform never start one unasked).
PREWARM_AFTER_S = 3.0


def install(window: Any) -> PlanningController:
    """Plug-in entry (``PLUGIN_MODULES`` of the main window): add the Planner, Results, Compare and
    What-if docks and the Plan menu to ``window``; return the controller (``window.planning``)."""

    def apply(scenario: Scenario, text: str) -> None:
        window.editor.replace(scenario, text)  # one undo step on the window's undo stack

    def selection() -> tuple[list[str], list[int]]:
        return window.canvas.selected_nodes(), window.canvas.selected_links()

    ctrl = PlanningController(
        scenario=window.scenario,
        set_overlay=window.canvas.set_overlay,
        show_error=window.show_error,
        apply_scenario=apply,
        status=window.status,
        selection=selection,
        parent=window,
        snapshot=lambda: snapshot(window.document),
    )
    window.planning = ctrl

    # the scenario hash and the what-if choices follow the document
    refresh = QTimer(ctrl)
    refresh.setSingleShot(True)
    refresh.setInterval(150)
    refresh.timeout.connect(ctrl.whatif_panel.refresh_when_shown)
    refresh.timeout.connect(lambda: ctrl.refresh_overlay() if window.canvas.overlay is ctrl.last_overlay else None)

    def on_event(_event: Any) -> None:
        ctrl.invalidate()
        refresh.start()

    unsubscribe = window.document.subscribe(on_event)
    window.destroyed.connect(lambda *_: unsubscribe())
    ctrl.on_shutdown.extend([refresh.stop, unsubscribe])  # the window closed: stop following it
    ctrl.track_changes = True

    right = Qt.DockWidgetArea.RightDockWidgetArea
    bottom = Qt.DockWidgetArea.BottomDockWidgetArea
    ctrl.planner_dock = window.add_dock("Planner", ctrl.planner_panel, right)
    ctrl.results_dock = window.add_dock("Results", ctrl.results_panel, right)
    ctrl.compare_dock = window.add_dock("Compare", ctrl.compare_panel, bottom)
    ctrl.whatif_dock = window.add_dock("What-if", ctrl.whatif_panel, bottom)
    ctrl.whatif_dock.hide()

    menu = window.menu("Plan")

    def action(text: str, shortcut: str | None, tip: str, slot: Any) -> QAction:
        a = QAction(text, window)
        if shortcut:
            a.setShortcut(QKeySequence(shortcut))
        a.setToolTip(tip)
        a.setStatusTip(tip)
        a.triggered.connect(slot)
        menu.addAction(a)
        return a

    def run() -> None:
        ctrl.planner_panel.run_button.click()

    def show(dock: Any) -> None:
        dock.show()
        dock.raise_()

    def what_if() -> None:
        ctrl.whatif_panel.refresh()
        show(ctrl.whatif_dock)

    ctrl.run_action = action("&Run planner", "Ctrl+R", "Run the planner chosen in the planner panel", run)
    ctrl.cancel_action = action("&Cancel all runs", "Ctrl+Shift+R", "Stop every queued and running run",
                                ctrl.manager.cancel_all)
    menu.addSeparator()
    ctrl.whatif_action = action("&What-if...", "Ctrl+Shift+W",
                                "Try link/switch failures, capacities and jobs on a copy", what_if)
    ctrl.compare_action = action("C&ompare results", "Ctrl+Shift+C", "Show the compare charts and diff",
                                 lambda: show(ctrl.compare_dock))
    ctrl.reload_action = action("Reload &planners", None, "Look for newly installed planners",
                                lambda: (ctrl.planner_panel.refresh_planners(), ctrl.whatif_panel.refresh()))
    app = QApplication.instance()
    if app is not None:
        app.aboutToQuit.connect(ctrl.shutdown)
        if QGuiApplication.platformName() not in ("offscreen", "minimal"):
            QTimer.singleShot(int(PREWARM_AFTER_S * 1000), ctrl, ctrl.manager.prewarm)
    return ctrl
