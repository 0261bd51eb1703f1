"""The planner panel: pick a planner, fill its generated form, Run; follow the queue of runs with
progress bars and a live log; cancel one run or all."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QSplitter,
    QStackedWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from inaplanner.errors import InaplannerError
from inaplanner.gui.planning.param_form import ParamForm
from inaplanner.gui.planning.workers import BACKENDS, ENDED, PlannerRun, RunManager
from inaplanner.io.native import scenario_to_dict
from inaplanner.model import Scenario
from inaplanner.planners import Planner, all_params, available, resolve_params
from inaplanner.views.fmt import progress_text
from inaplanner.views.runs import RunRequest

ShowError = Callable[[str, str], None]


class RunStrip(QWidget):
    """A compact line following the latest run: planner and state, a progress bar, the message
    (with incumbent and bound when the run reports them) and a Cancel button. It sits in the main
    tool bar and atop the planner panel, so a run can be followed and stopped whatever is scrolled."""

    def __init__(self, manager: RunManager, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.run: PlannerRun | None = None
        self.title = QLabel("no run yet")
        self.bar = QProgressBar()
        self.bar.setRange(0, 1000)
        self.bar.setTextVisible(False)
        self.bar.setFixedWidth(120)
        self.bar.setMaximumHeight(14)
        self.message = QLabel("")
        self.message.setMinimumWidth(80)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop this run")
        self.cancel_button.setEnabled(False)
        row = QHBoxLayout(self)
        row.setContentsMargins(4, 0, 4, 0)
        row.addWidget(self.title)
        row.addWidget(self.bar)
        row.addWidget(self.message, 1)
        row.addWidget(self.cancel_button)
        self.cancel_button.clicked.connect(lambda: self.run.cancel() if self.run is not None else None)
        manager.run_added.connect(self.follow)

    def follow(self, run: PlannerRun) -> None:
        self.run = run
        run.state_changed.connect(lambda _s, r=run: self._show(r))
        run.progressed.connect(lambda _f, _m, r=run: self._show(r))
        self._show(run)

    def text(self) -> str:
        return f"{self.title.text()} {self.message.text()}".strip()

    def _show(self, run: PlannerRun) -> None:
        if run is not self.run:
            return
        self.title.setText(f"{run.title}: {run.state}")
        # the one Progress protocol's figures (inaplanner.progress), as the terminal shows them
        self.message.setText(progress_text("", run.message, getattr(run, "incumbent", None),
                                           getattr(run, "bound", None), getattr(run, "gap", None)))
        if run.state == "running" and run.fraction is None:
            self.bar.setRange(0, 0)
        else:
            self.bar.setRange(0, 1000)
            done = 1.0 if run.state == "finished" else max(0.0, min(1.0, run.fraction or 0.0))
            self.bar.setValue(int(done * 1000))
        self.cancel_button.setEnabled(not run.done)


class PlannerPanel(QWidget):
    """Standalone: needs the run manager, a callable returning the current scenario and one that
    shows an error (title, message); ``version()`` names the scenario's state for the results."""

    def __init__(
        self,
        manager: RunManager,
        scenario: Callable[[], Scenario],
        show_error: ShowError,
        parent: QWidget | None = None,
        version: Callable[[], Any] | None = None,
        snapshot: Callable[[], dict[str, Any]] | None = None,
    ) -> None:
        super().__init__(parent)
        self.manager = manager
        self._version = version or (lambda: None)
        self._document_of = snapshot
        self._scenario = scenario
        self._show_error = show_error
        self.planners: dict[str, Planner] = {}
        self.forms: dict[str, ParamForm] = {}
        self._items: dict[int, tuple[QTreeWidgetItem, QProgressBar]] = {}

        self.planner_combo = QComboBox()
        self.planner_combo.setObjectName("planner_combo")
        self.planner_combo.setToolTip("Planner to run")
        self.description = QLabel()
        self.description.setWordWrap(True)
        self.forms_stack = QStackedWidget()
        self.defaults_button = QPushButton("Defaults")
        self.defaults_button.setToolTip("Reset the form to the planner's defaults")
        self.backend_combo = QComboBox()
        self.backend_combo.addItems(list(BACKENDS))
        self.backend_combo.setToolTip(
            "process: a separate process (keeps the window smooth, parallel, killable); "
            "thread: inside this program; auto: process when the planner can run there"
        )
        self.parallel_spin = QSpinBox()
        self.parallel_spin.setRange(1, max(1, os.cpu_count() or 1) * 2)
        self.parallel_spin.setValue(manager.max_parallel)
        self.parallel_spin.setToolTip("How many runs go side by side; the others wait in the queue")
        self.run_button = QPushButton("Run")
        self.run_button.setObjectName("run_button")
        self.run_button.setToolTip("Queue a run of this planner on the current scenario (Ctrl+R)")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop the selected runs")
        self.cancel_all_button = QPushButton("Cancel all")
        self.cancel_all_button.setToolTip("Stop every queued and running run")
        self.clear_button = QPushButton("Clear finished")
        self.clear_button.setToolTip("Remove the runs that ended from this list (results stay)")

        self.runs_view = QTreeWidget()
        self.runs_view.setHeaderLabels(["Run", "State", "Progress", "Message"])
        self.runs_view.setRootIsDecorated(False)
        self.runs_view.setSelectionMode(QTreeWidget.SelectionMode.ExtendedSelection)
        self.log_view = QPlainTextEdit()
        self.log_view.setReadOnly(True)
        self.log_view.setMaximumBlockCount(5000)
        self.log_view.setPlaceholderText("Run log")

        top = QVBoxLayout()
        top.addWidget(self.planner_combo)
        top.addWidget(self.description)
        top.addWidget(self.forms_stack)
        row = QHBoxLayout()
        row.addWidget(QLabel("Run in"))
        row.addWidget(self.backend_combo)
        row.addWidget(QLabel("Side by side"))
        row.addWidget(self.parallel_spin)
        row.addStretch(1)
        row.addWidget(self.defaults_button)
        top.addLayout(row)
        buttons = QHBoxLayout()
        buttons.addWidget(self.run_button)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.cancel_all_button)
        buttons.addWidget(self.clear_button)
        top.addLayout(buttons)
        head = QWidget()
        head.setLayout(top)
        # the form scrolls on its own: Run, Cancel, the runs and the log stay in view
        form_scroll = QScrollArea()
        form_scroll.setWidgetResizable(True)
        form_scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        form_scroll.setWidget(head)
        form_scroll.setMinimumHeight(120)
        self.form_scroll = form_scroll
        self.strip = RunStrip(manager)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(form_scroll)
        split.addWidget(self.runs_view)
        split.addWidget(self.log_view)
        split.setStretchFactor(0, 0)
        split.setStretchFactor(1, 1)
        split.setStretchFactor(2, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.strip)
        layout.addWidget(split)

        self.planner_combo.currentIndexChanged.connect(self._on_planner_changed)
        self.defaults_button.clicked.connect(self._reset_form)
        self.parallel_spin.valueChanged.connect(manager.set_max_parallel)
        self.run_button.clicked.connect(self._run_clicked)
        self.cancel_button.clicked.connect(self.cancel_selected)
        self.cancel_all_button.clicked.connect(manager.cancel_all)
        self.clear_button.clicked.connect(self.clear_finished)
        manager.run_added.connect(self._on_run_added)
        self.refresh_planners()

    # ---- planners and forms ---------------------------------------------------------------------

    def refresh_planners(self) -> None:
        """Re-read the registry (new planners appear, the current choice is kept)."""
        current = self.current_planner_name()
        self.planners = dict(sorted(available().items()))
        self.planner_combo.blockSignals(True)
        self.planner_combo.clear()
        for name, p in self.planners.items():
            self.planner_combo.addItem(name, name)
            self.planner_combo.setItemData(self.planner_combo.count() - 1, p.description, Qt.ItemDataRole.ToolTipRole)
        self.planner_combo.blockSignals(False)
        if current in self.planners:
            self.select_planner(current)
        else:
            self._on_planner_changed()
        self.run_button.setEnabled(bool(self.planners))

    def current_planner_name(self) -> str | None:
        return self.planner_combo.currentData()

    def select_planner(self, name: str) -> None:
        i = self.planner_combo.findData(name)
        if i < 0:
            raise InaplannerError(f"unknown planner {name!r}")
        self.planner_combo.setCurrentIndex(i)
        self._on_planner_changed()

    def form(self, name: str | None = None) -> ParamForm:
        """The parameter form of ``name`` (default: the current planner), built on first use."""
        name = name or self.current_planner_name()
        if name is None:
            raise InaplannerError("no planner is registered")
        if name not in self.forms:
            form = ParamForm(all_params(self.planners[name]))
            self.forms[name] = form
            self.forms_stack.addWidget(form)
        return self.forms[name]

    def _on_planner_changed(self, *_: Any) -> None:
        name = self.current_planner_name()
        if name is None:
            self.description.setText("No planner is registered.")
            return
        self.description.setText(self.planners[name].description)
        self.forms_stack.setCurrentWidget(self.form(name))

    def _reset_form(self) -> None:
        if self.current_planner_name() is not None:
            self.form().reset()

    # ---- running --------------------------------------------------------------------------------

    def make_request(self, name: str | None = None, label: str = "baseline") -> RunRequest:
        """A request for ``name`` with its form's values on a snapshot of the current scenario.
        Raises InaplannerError for a bad parameter."""
        name = name or self.current_planner_name()
        if name is None:
            raise InaplannerError("no planner is registered")
        if name not in self.planners:
            raise InaplannerError(f"unknown planner {name!r}")
        params = resolve_params(self.planners[name], self.form(name).values())
        sc = self._scenario()
        version = self._version()
        return RunRequest(name, params, self._snapshot(sc), label=label, version=version)

    def _snapshot(self, sc: Any) -> dict[str, Any]:
        """The scenario's document for a request. In a window it is the document's snapshot,
        made once per state (0.6-1.2 s at fat-tree k=64 on the UI thread): the runs queued on one
        state (a compare of several planners) and a save share it; nothing changes it."""
        if self._document_of is not None:
            return self._document_of()
        return scenario_to_dict(sc)

    def run(self, name: str | None = None) -> PlannerRun:
        """Queue a run of ``name`` (default: the current planner) on the current scenario; refused
        (InaplannerError) when the scenario has no jobs."""
        if not self._scenario().jobs:
            raise InaplannerError("the scenario has no jobs: add a job (workers and a parameter server) first")
        return self.manager.submit(self.make_request(name), self.backend_combo.currentText())

    def _run_clicked(self) -> None:
        try:
            self.run()
        except InaplannerError as exc:
            self._show_error("Cannot run the planner", str(exc))

    def cancel_selected(self) -> None:
        chosen = {id(it) for it in self.runs_view.selectedItems()}
        for run in self.manager.runs:
            entry = self._items.get(run.request.id)
            if entry is not None and id(entry[0]) in chosen:
                run.cancel()

    # ---- the runs list --------------------------------------------------------------------------

    def clear_finished(self) -> None:
        for run in [r for r in self.manager.runs if r.done]:
            item, _bar = self._items.pop(run.request.id)
            self.runs_view.takeTopLevelItem(self.runs_view.indexOfTopLevelItem(item))
        self.manager.forget_ended()

    def _on_run_added(self, run: PlannerRun) -> None:
        item = QTreeWidgetItem([run.title, run.state, "", run.message])
        self.runs_view.addTopLevelItem(item)
        bar = QProgressBar()
        bar.setRange(0, 1000)
        bar.setTextVisible(False)
        bar.setMaximumHeight(14)
        self.runs_view.setItemWidget(item, 2, bar)
        self._items[run.request.id] = (item, bar)
        run.state_changed.connect(lambda state, r=run: self._on_state(r))
        run.progressed.connect(lambda f, m, r=run: self._on_progress(r))
        run.logged.connect(lambda line, r=run: self.log_view.appendPlainText(f"[{r.title}] {line}"))

    def _on_state(self, run: PlannerRun) -> None:
        item, bar = self._items[run.request.id]
        item.setText(1, run.state)
        item.setText(3, run.message)
        if run.state == "running" and run.fraction is None:
            bar.setRange(0, 0)  # busy until the planner reports a fraction
        elif run.state in ENDED:
            bar.setRange(0, 1000)
            bar.setValue(1000 if run.state == "finished" else bar.value())
        if run.error:
            item.setToolTip(3, run.error)

    def _on_progress(self, run: PlannerRun) -> None:
        item, bar = self._items[run.request.id]
        if bar.maximum() == 0:
            bar.setRange(0, 1000)
        bar.setValue(int(max(0.0, min(1.0, run.fraction or 0.0)) * 1000))
        item.setText(3, run.message)

    def progress_bar(self, run: PlannerRun) -> QProgressBar:
        return self._items[run.request.id][1]
