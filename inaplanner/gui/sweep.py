"""Tools > Resilience Sweep: every single failure (or growth step) re-planned, off the UI thread.

The dialog builds a :class:`~inaplanner.sweeps.engine.SweepSpec` from the open scenario and runs
:func:`~inaplanner.sweeps.engine.run_sweep` on a helper thread that only waits for results: the
cases run in worker processes of a local pool, or on a Dask cluster when an address is given, so
the UI thread never plans. Progress arrives through the one progress protocol; Cancel terminates
the local workers (or cancels the cluster's tasks). Results go to an SQLite file as they arrive,
so a sweep closed half-way resumes where it stopped.

When results are in: the criticality overlay on the canvas (:mod:`inaplanner.sweeps.view`), the
distribution of each planner's objective relative to no failure, and a table, most critical first,
that selects the failed element on the canvas; double-click a row to open its case in the What-if
dock.
"""

from __future__ import annotations

import os
import tempfile
import threading
from pathlib import Path
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDoubleSpinBox,
    QFormLayout,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from inaplanner.errors import Cancelled, InaplannerError
from inaplanner.gui.tool_dialog import ToolDialogPlugin
from inaplanner.progress import Progress, ProgressEvent
from inaplanner.sweeps.backends import DaskCluster, LocalPool
from inaplanner.sweeps.engine import SweepSpec, run_sweep
from inaplanner.sweeps.view import (
    COLUMNS,
    criticality_overlay,
    distribution,
    element_selection,
    table_rows,
)
from inaplanner.views.overlay import TASK_COLOURS

GUI_GENERATORS = ("single-link", "single-switch", "pod", "random-k")
DEFAULT_PLANNERS = ("random",)


class _Bridge(QObject):
    """Carries reports from the sweep's helper thread to the UI thread (queued signals)."""

    progressed = Signal(object)
    finished = Signal(object, str)  # rows, error ("" when it ended well; "cancelled" on cancel)


class SweepDialog(QDialog):
    def __init__(self, window: Any) -> None:
        super().__init__(window)
        self.window = window
        self.setWindowTitle("Resilience sweep")
        self.rows: list[dict[str, Any]] = []
        self.progress: Progress | None = None
        self.backend: Any = None
        self._thread: threading.Thread | None = None
        self._ran_spec: SweepSpec | None = None
        self._table_rows: list[Any] = []
        self._bridge = _Bridge(self)
        self._bridge.progressed.connect(self._on_progress, Qt.ConnectionType.QueuedConnection)
        self._bridge.finished.connect(self._on_finished, Qt.ConnectionType.QueuedConnection)

        # ---- what to run
        self.case_boxes: dict[str, QCheckBox] = {}
        cases = QHBoxLayout()
        for name in GUI_GENERATORS:
            box = QCheckBox(name)
            box.setChecked(name == "single-link")
            self.case_boxes[name] = box
            cases.addWidget(box)
        self.k = QSpinBox()
        self.k.setRange(2, 8)
        self.k.setPrefix("k = ")
        self.sample = QSpinBox()
        self.sample.setRange(0, 100000)
        self.sample.setSpecialValueText("all cases")
        self.sample.setToolTip("run a seeded sample of this many cases (random-k: its count, default 20)")
        cases.addWidget(self.k)
        cases.addStretch(1)
        self.collapse = QCheckBox("collapse symmetric links and switches")
        self.collapse.setChecked(True)
        self.planner_boxes: dict[str, QCheckBox] = {}
        planners = QGridLayout()
        from inaplanner.planners import available

        for i, name in enumerate(sorted(available())):
            box = QCheckBox(name)
            box.setChecked(name in DEFAULT_PLANNERS)
            self.planner_boxes[name] = box
            planners.addWidget(box, i // 6, i % 6)
        self.time_limit = QDoubleSpinBox()
        self.time_limit.setRange(0.5, 3600.0)
        self.time_limit.setValue(10.0)
        self.time_limit.setSuffix(" s per case")
        self.workers = QSpinBox()
        self.workers.setRange(1, max(1, os.cpu_count() or 1) * 4)
        self.workers.setValue(max(1, os.cpu_count() or 1))
        self.workers.setSuffix(" local worker processes")
        self.cluster = QLineEdit()
        self.cluster.setPlaceholderText("tcp://scheduler:8786 (empty: run locally)")
        self.output = QLineEdit(self._default_output())
        form = QFormLayout()
        form.addRow("Cases", cases)
        form.addRow("Sample", self.sample)
        form.addRow("", self.collapse)
        form.addRow("Planners", planners)
        form.addRow("Time limit", self.time_limit)
        form.addRow("Run on", self.workers)
        form.addRow("Dask cluster", self.cluster)
        form.addRow("Results file", self.output)

        self.run_button = QPushButton("Run sweep")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.run_button.clicked.connect(self.run)
        self.cancel_button.clicked.connect(self.cancel)
        self.bar = QProgressBar()
        self.bar.setRange(0, 1000)
        self.status = QLabel("Choose cases and planners, then Run sweep.")
        self.status.setWordWrap(True)
        buttons = QHBoxLayout()
        buttons.addWidget(self.bar, 1)
        buttons.addWidget(self.run_button)
        buttons.addWidget(self.cancel_button)

        # ---- results
        self.overlay_planner = QComboBox()
        self.overlay_planner.currentTextChanged.connect(self.show_overlay)
        self.chart = pg.PlotWidget()
        self.chart.setLabel("bottom", "objective relative to no failure")
        self.chart.setLabel("left", "share of cases at or below")
        self.chart.addLegend(offset=(10, 10))
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.itemSelectionChanged.connect(self._select_on_canvas)
        self.table.cellDoubleClicked.connect(self.open_as_what_if)
        top = QHBoxLayout()
        top.addWidget(QLabel("Criticality overlay for"))
        top.addWidget(self.overlay_planner)
        top.addStretch(1)
        results = QWidget()
        rl = QVBoxLayout(results)
        rl.setContentsMargins(0, 0, 0, 0)
        rl.addLayout(top)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.table)
        split.addWidget(self.chart)
        split.setSizes([520, 380])
        rl.addWidget(split, 1)

        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addLayout(buttons)
        layout.addWidget(self.status)
        layout.addWidget(results, 1)
        self.resize(980, 720)

    # ---- inputs ---------------------------------------------------------------------------------

    def _default_output(self) -> str:
        path = getattr(self.window, "path", None) or getattr(getattr(self.window, "document", None), "path", None)
        if path:
            return str(Path(path).with_suffix("")) + ".sweep.sqlite"
        return str(Path(tempfile.gettempdir()) / "inaplanner.sweep.sqlite")

    def spec(self) -> SweepSpec:
        generators = [n for n, b in self.case_boxes.items() if b.isChecked()]
        planners = [n for n, b in self.planner_boxes.items() if b.isChecked()]
        if not generators:
            raise InaplannerError("tick at least one kind of case")
        if not planners:
            raise InaplannerError("tick at least one planner")
        return SweepSpec(scenario=self.window.scenario(), generators=generators, planners=planners,
                         time_limit=self.time_limit.value(), k=self.k.value(),
                         sample=self.sample.value() or None, collapse=self.collapse.isChecked())

    # ---- running ---------------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def run(self) -> bool:
        if self.running:
            return False
        try:
            spec = self.spec()
            from inaplanner.io.native import copy_scenario

            spec.scenario = copy_scenario(spec.scenario)  # the user may edit while it runs
        except InaplannerError as exc:
            self.status.setText(f"Cannot run: {exc}")
            return False
        self._ran_spec = spec
        address = self.cluster.text().strip()
        self.backend = DaskCluster(address) if address else LocalPool(self.workers.value())
        self.progress = Progress()
        self.progress.subscribe(self._bridge.progressed.emit)
        output = self.output.text().strip() or self._default_output()
        progress, backend, bridge = self.progress, self.backend, self._bridge

        def work() -> None:
            try:
                rows = run_sweep(spec, output, backend, progress)
            except Cancelled:
                bridge.finished.emit(None, "cancelled")
            except InaplannerError as exc:
                bridge.finished.emit(None, str(exc))
            except Exception as exc:  # shown, never lost on a helper thread
                bridge.finished.emit(None, f"{type(exc).__name__}: {exc}")
            else:
                bridge.finished.emit(rows, "")

        self._thread = threading.Thread(target=work, name="inaplanner-sweep", daemon=True)
        self._thread.start()
        self.run_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.bar.setValue(0)
        self.status.setText(f"Starting on {self.backend.describe()}…")
        return True

    def cancel(self) -> None:
        if self.progress is not None and self.running:
            self.status.setText("Cancelling…")
            self.progress.cancel()

    def wait(self, timeout: float = 30.0) -> bool:
        """Wait for the helper thread (tests, shutdown); True when it ended."""
        if self._thread is not None:
            self._thread.join(timeout)
        return not self.running

    def _on_progress(self, ev: ProgressEvent) -> None:
        if ev.fraction is not None:
            self.bar.setValue(int(ev.fraction * 1000))
        if ev.message:
            self.status.setText(ev.message)

    def _on_finished(self, rows: Any, error: str) -> None:
        self.run_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
        if error == "cancelled":
            self.status.setText("Cancelled. The finished cases are kept in the results file; Run "
                                "sweep again resumes.")
            return
        if error:
            self.status.setText(f"The sweep stopped: {error}")
            return
        self.set_rows(rows)
        errors = sum(1 for r in rows if r["status"] == "error")
        self.status.setText(f"{len(rows)} runs done" + (f", {errors} ended in an error (see the table)" if errors else ""))

    # ---- results ---------------------------------------------------------------------------------

    def set_rows(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows
        planners = list(dict.fromkeys(r["planner"] for r in rows))
        self.overlay_planner.blockSignals(True)
        self.overlay_planner.clear()
        self.overlay_planner.addItems(planners)
        self.overlay_planner.blockSignals(False)
        self._fill_table()
        self._fill_chart(planners)
        if planners:
            self.show_overlay(planners[0])

    def _fill_table(self) -> None:
        self._table_rows = table_rows(self.rows)
        self.table.setRowCount(len(self._table_rows))
        for i, tr in enumerate(self._table_rows):
            for c, text in enumerate(tr.cells()):
                item = QTableWidgetItem(text)
                if c in (2, 3):
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(i, c, item)
        self.table.resizeColumnsToContents()

    def _fill_chart(self, planners: list[str]) -> None:
        self.chart.clear()
        for i, p in enumerate(planners):
            x, y = distribution(self.rows, p)
            if not x.size:
                continue
            colour = TASK_COLOURS[i % len(TASK_COLOURS)]
            self.chart.plot(x, y, stepMode=None, pen=pg.mkPen(colour, width=2), symbol="o", symbolSize=4,
                            symbolBrush=colour, name=p)

    def show_overlay(self, planner: str) -> None:
        if not planner or not self.rows:
            return
        self.window.canvas.set_overlay(criticality_overlay(self.window.scenario(), self.rows, planner))

    def select_row(self, row: int) -> None:
        """Select a table row (as a click does, whatever keys are held): its element is selected
        on the canvas."""
        from PySide6.QtCore import QItemSelectionModel

        flags = (QItemSelectionModel.SelectionFlag.ClearAndSelect
                 | QItemSelectionModel.SelectionFlag.Rows)
        self.table.selectionModel().select(self.table.model().index(row, 0), flags)

    def _select_on_canvas(self) -> None:
        picked = self.table.selectionModel().selectedRows() if self.table.selectionModel() else []
        if not picked:
            return
        tr = self._table_rows[picked[0].row()]
        sc = self.window.scenario()
        nodes, links = element_selection(sc, tr.element)
        ends = [*nodes, *(n for i in links for n in (sc.links[i].a, sc.links[i].b))]
        canvas = self.window.canvas
        canvas.canvas_scene().reveal(ends)  # open the pod or rack that holds it
        canvas.select(nodes, links)
        if nodes:
            canvas.centerOn(canvas.node_item(nodes[0]))
        elif links:
            canvas.centerOn(canvas.link_item(links[0]).line().center())

    def open_as_what_if(self, row: int, _column: int = 0) -> None:
        """Put the case's changes into the What-if dock (replacing what was there) and show it."""
        tr = self._table_rows[row]
        case = next((c for c in self._cases() if c.id == tr.case_id), None)
        planning = getattr(self.window, "planning", None)
        if case is None or planning is None:
            self.status.setText(f"{tr.element}: cannot open as a what-if (the scenario changed?)")
            return
        panel = planning.whatif_panel
        panel.clear_changes()
        try:
            for change in case.changes:
                panel.add_change(change)
        except InaplannerError as exc:
            self.status.setText(f"{tr.element}: {exc}")
            return
        dock = getattr(planning, "whatif_dock", None)
        if dock is not None:
            dock.show()
            dock.raise_()
        self.status.setText(f"Opened '{case.describe()}' in the What-if dock.")

    def _cases(self) -> list[Any]:
        """The cases of the sweep that made the rows shown (not of the boxes ticked now)."""
        spec = self._ran_spec
        if spec is None:
            return []
        spec = SweepSpec(**{**spec.__dict__, "scenario": self.window.scenario()})
        try:
            return spec.cases()
        except InaplannerError:
            return []

    def done(self, code: int) -> None:  # closing the dialog stops its work
        self.cancel()
        super().done(code)


def install(window: Any) -> ToolDialogPlugin:
    """Tools > Resilience Sweep (``window.sweep``)."""
    return ToolDialogPlugin(
        window, "sweep", SweepDialog, name="sweep", text="&Resilience Sweep…", shortcut="Ctrl+Shift+R",
        tip="Re-plan under every single link or switch failure and find the critical elements")
