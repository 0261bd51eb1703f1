"""The Monitor dock: start/stop polling a testbed (or replay a recording), the planned vs observed
table, pyqtgraph time series of the selected links, alerts; and the View > Monitor mode action that
paints the observed load on the canvas.

Polling runs in the poller's own thread; each snapshot crosses to the UI thread through a queued
signal, and stopping happens in a helper thread, so the UI never waits on a switch.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEventLoop, QObject, Qt, Signal
from PySide6.QtGui import QAction, QColor, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QCheckBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QSlider,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from inaplanner.errors import Cancelled, InaplannerError
from inaplanner.model import Plan, Scenario
from inaplanner.monitor.alerts import Alert, AlertRule, ranked
from inaplanner.monitor.recording import Recording
from inaplanner.monitor.series import Snapshot
from inaplanner.progress import Progress, ProgressEvent
from inaplanner.views.fmt import names, num, pct, signed_pct
from inaplanner.views.monitor import MonitorModel, ReplaySession, open_live, open_replay, plan_loads
from inaplanner.views.overlay import colour_of

TABLE_ROWS = 200  # most loaded directed links shown
PLOT_LINKS = 8  # series drawn at once
COLUMNS = ["link", "observed (Gbps)", "planned (Gbps)", "capacity", "utilisation", "vs plan"]
SERIES_COLOURS = ("#0072b2", "#d55e00", "#009e73", "#cc79a7", "#56b4e9", "#e69f00", "#7f3c8d",
                  "#11a579")


class _Bridge(QObject):
    """Carries snapshots from the poller thread to the UI thread (queued connection)."""

    snapshot = Signal(object)
    opened = Signal(object)  # (generation, what start's helper thread made, or the error)
    replayed = Signal(object)  # (generation, path, what open_recording's thread made, or the error)
    reading = Signal(object)  # (generation, how far open_recording's thread got)


def _pct(x: float | None) -> str:
    return "inf" if x is not None and math.isinf(x) and x > 0 else pct(x)


def _signed_pct(x: float | None) -> str:
    if x is not None and math.isinf(x):
        return "new"  # traffic on a link the plan does not use
    return signed_pct(x)


def _num(x: float | None) -> str:
    return num(x, 4)


class MonitorPanel(QWidget):
    """The Monitor dock's widget. ``scenario()`` gives the open scenario, ``set_overlay`` paints
    the canvas, ``current_plan()`` the plan selected in the planning results (or None)."""

    updated = Signal(object)  # the snapshot just shown
    alert = Signal(object)  # an Alert that just started
    state_changed = Signal(str)  # "idle", "live", "replay"

    def __init__(self, scenario, set_overlay, show_error, current_plan=None, status=None,
                 restore_overlay=None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._scenario = scenario
        self._set_overlay = set_overlay
        self._show_error = show_error
        self._current_plan = current_plan or (lambda: None)
        self._status = status or (lambda msg: None)
        self._restore_overlay = restore_overlay or (lambda: set_overlay(None))
        self.model: MonitorModel | None = None
        self.poller: Any = None
        self.recorder: Any = None
        self.recording: Recording | None = None
        self.plan: Plan | None = None
        self.plan_source = ""
        self.mode_on = False
        self.state = "idle"
        self._bridge = _Bridge(self)
        self._bridge.snapshot.connect(self._on_snapshot, Qt.ConnectionType.QueuedConnection)
        self._bridge.opened.connect(self._on_opened, Qt.ConnectionType.QueuedConnection)
        self._bridge.replayed.connect(self._on_replayed, Qt.ConnectionType.QueuedConnection)
        self._bridge.reading.connect(self._on_reading, Qt.ConnectionType.QueuedConnection)
        self._opening: Progress | None = None  # the recording being read (open_recording)
        self._back_to_replay = False  # the replay to show again if that reading fails
        self._generation = 0  # of start(): a stop() or a new start() drops an older opening
        self.open_outcome = ""  # of the last open_recording: reading, opened, failed or stopped
        self.open_error = ""  # why it failed
        self._stoppers: list[threading.Thread] = []
        self._build()

    # ---- widgets -------------------------------------------------------------------------------
    def _build(self) -> None:
        form = QFormLayout()
        self.testbed_edit = QLineEdit()
        self.testbed_edit.setPlaceholderText("testbed.toml of the deployed switches")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse_testbed)
        row = QHBoxLayout()
        row.addWidget(self.testbed_edit, 1)
        row.addWidget(browse)
        form.addRow("Testbed", row)

        self.plan_label = QLabel("no plan (observed load only)")
        use_current = QPushButton("Use selected result")
        use_current.setToolTip("Compare with the plan selected in the Results list")
        use_current.clicked.connect(self.use_current_plan)
        open_plan = QPushButton("Open plan…")
        open_plan.clicked.connect(self._browse_plan)
        no_plan = QPushButton("None")
        no_plan.clicked.connect(lambda: self.set_plan(None))
        prow = QHBoxLayout()
        prow.addWidget(self.plan_label, 1)
        for b in (use_current, open_plan, no_plan):
            prow.addWidget(b)
        form.addRow("Plan", prow)

        self.interval_spin = QDoubleSpinBox()
        self.interval_spin.setRange(0.05, 60.0)
        self.interval_spin.setValue(1.0)
        self.interval_spin.setSuffix(" s")
        self.record_check = QCheckBox("Record to")
        self.record_edit = QLineEdit()
        self.record_edit.setPlaceholderText("run.csv or run.sqlite")
        self.window_spin = QDoubleSpinBox()
        self.window_spin.setRange(0.0, 600.0)
        self.window_spin.setValue(0.0)
        self.window_spin.setSuffix(" s")
        self.window_spin.setSpecialValueText("last interval")
        self.window_spin.setToolTip("Average each rate over about this long (smooths timing noise)")
        irow = QHBoxLayout()
        irow.addWidget(self.interval_spin)
        irow.addWidget(QLabel("average over"))
        irow.addWidget(self.window_spin)
        irow.addSpacing(12)
        irow.addWidget(self.record_check)
        irow.addWidget(self.record_edit, 1)
        form.addRow("Interval", irow)

        self.threshold_spin = QDoubleSpinBox()
        self.threshold_spin.setRange(1.0, 1000.0)
        self.threshold_spin.setValue(90.0)
        self.threshold_spin.setSuffix(" % of capacity")
        self.deviation_spin = QDoubleSpinBox()
        self.deviation_spin.setRange(1.0, 1000.0)
        self.deviation_spin.setValue(20.0)
        self.deviation_spin.setSuffix(" % off plan")
        self.hold_spin = QDoubleSpinBox()
        self.hold_spin.setRange(0.0, 3600.0)
        self.hold_spin.setValue(3.0)
        self.hold_spin.setSuffix(" s")
        arow = QHBoxLayout()
        for w in (QLabel("above"), self.threshold_spin, QLabel("or"), self.deviation_spin,
                  QLabel("for"), self.hold_spin):
            arow.addWidget(w)
        arow.addStretch(1)
        form.addRow("Alert when", arow)
        for spin in (self.threshold_spin, self.deviation_spin, self.hold_spin):
            spin.valueChanged.connect(self._rule_changed)

        self.start_button = QPushButton("Start")
        self.start_button.clicked.connect(self.start)
        self.stop_button = QPushButton("Stop")
        self.stop_button.clicked.connect(self.stop)
        self.stop_button.setEnabled(False)
        self.replay_button = QPushButton("Open recording…")
        self.replay_button.clicked.connect(self._browse_recording)
        self.mode_check = QCheckBox("Show on canvas")
        self.mode_check.setToolTip("Monitor mode: paint the observed load / capacity on the canvas")
        self.mode_check.toggled.connect(self.set_mode)
        brow = QHBoxLayout()
        for w in (self.start_button, self.stop_button, self.replay_button):
            brow.addWidget(w)
        brow.addStretch(1)
        brow.addWidget(self.mode_check)

        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setEnabled(False)
        self.slider.valueChanged.connect(self._on_slider)
        self.health_label = QLabel("idle")
        self.health_label.setWordWrap(True)

        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.itemSelectionChanged.connect(self._selection_changed)

        self.plot = pg.PlotWidget(background="w")
        self.plot.setLabel("left", "Gbps")
        self.plot.setLabel("bottom", "time (s)")
        self.plot.showGrid(x=True, y=True, alpha=0.3)
        self.plot.addLegend(offset=(5, 5))
        self.alerts_list = QListWidget()

        # controls and alerts | table | plot: a bottom dock is wide and short
        controls = QWidget()
        left = QVBoxLayout(controls)
        left.setContentsMargins(0, 0, 0, 0)
        top = QHBoxLayout()  # first: the dock is short, and these say what it does and where
        top.addWidget(self.health_label, 1)
        top.addWidget(self.slider, 1)
        left.addLayout(top)
        left.addLayout(form)
        left.addLayout(brow)
        left.addWidget(QLabel("Alerts (newest first):"))
        left.addWidget(self.alerts_list, 1)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(controls)
        split.addWidget(self.table)
        split.addWidget(self.plot)
        split.setStretchFactor(0, 0)
        split.setStretchFactor(1, 1)
        split.setStretchFactor(2, 1)
        split.setSizes([520, 420, 420])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(split, 1)
        self.selected_keys: list[tuple[int, int]] = []

    # ---- inputs --------------------------------------------------------------------------------
    def _browse_testbed(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Testbed file", "", "Testbed (*.toml)")
        if path:
            self.testbed_edit.setText(path)

    def _browse_plan(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Plan", "", "Plan (*.json)")
        if path:
            self.load_plan_file(path)

    def _browse_recording(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Recording", "",
                                              "Recordings (*.csv *.sqlite *.sqlite3 *.db)")
        if path:
            self.open_recording(path)

    def load_plan_file(self, path: str) -> None:
        from inaplanner.io.native import load_plan

        try:
            self.set_plan(load_plan(path), Path(path).name)
        except InaplannerError as exc:
            self._show_error("Open plan", str(exc))

    def use_current_plan(self) -> None:
        plan = self._current_plan()
        if plan is None:
            self._show_error("Monitor", "no plan is selected in the Results list")
            return
        self.set_plan(plan, f"{plan.planner.name} (selected result)")

    def set_plan(self, plan: Plan | None, source: str = "") -> None:
        """Compare with ``plan`` (its loads from the evaluator); None: observed load only."""
        self.plan = plan
        self.plan_source = source if plan is not None else ""
        self.plan_label.setText(source or (plan.planner.name if plan else "no plan (observed load only)"))
        if self.model is not None:
            self.model.set_planned(self._planned(self.model.scenario))
            self._refresh()

    def _planned(self, sc: Scenario) -> np.ndarray | None:
        planned, note = plan_loads(sc, self.plan)
        if note:
            self._status(note)
        return planned

    def rule(self) -> AlertRule:
        return AlertRule(threshold=self.threshold_spin.value() / 100.0,
                         deviation=self.deviation_spin.value() / 100.0,
                         hold_s=self.hold_spin.value())

    def _rule_changed(self) -> None:
        if self.model is not None:
            self.model.set_rule(self.rule())

    # ---- sessions ------------------------------------------------------------------------------
    def start(self) -> bool:
        """Start polling the testbed file's switches. Returns False (after showing why) when the
        inputs are missing; the testbed file is read, the switches mapped and the plan's loads
        computed on a helper thread (13 s at fat-tree k=64, which held the window), and polling
        begins when that is done (state "starting", then "live"; an error is shown then)."""
        if self.state != "idle":
            self.stop()
        path = self.testbed_edit.text().strip()
        if not path:
            self._show_error("Monitor", "choose the testbed file (testbed.toml) of the switches")
            return False
        target = self.record_edit.text().strip() if self.record_check.isChecked() else None
        if target == "":
            self._show_error("Monitor", "choose the file to record to")
            return False
        sc, plan = self._scenario(), self.plan
        interval, window, rule = self.interval_spin.value(), self.window_spin.value(), self.rule()
        self._generation += 1
        generation = self._generation
        self._in_background("starting", f"reading {Path(path).name} and mapping its switches…",
                            "inaplanner-monitor-open", self._bridge.opened.emit, (generation,),
                            lambda: open_live(sc, plan, path, interval, window, rule, target))
        return True

    def _in_background(self, state: str, text: str, name: str, emit: Callable[[tuple], None],
                       tag: tuple, work: Callable[[], Any]) -> None:
        """Enter ``state`` saying ``text``, and run ``work`` on a helper thread: ``emit`` gets
        ``(*tag, what it made)`` or ``(*tag, the error)``."""
        def run() -> None:
            try:
                emit((*tag, work()))
            except (InaplannerError, OSError) as exc:
                emit((*tag, exc))
            except Exception as exc:  # noqa: BLE001 - shown, never a dead helper thread
                emit((*tag, InaplannerError(f"{type(exc).__name__}: {exc}")))

        self._set_state(state)
        self.health_label.setText(text)
        t = threading.Thread(target=run, name=name, daemon=True)
        t.start()
        self._stoppers.append(t)

    def _on_opened(self, item: tuple[int, Any]) -> None:
        generation, opened = item
        if generation != self._generation or self.state != "starting":
            if not isinstance(opened, BaseException):  # stopped meanwhile: close what it opened
                opened.close()
            return
        if isinstance(opened, BaseException):
            self._set_state("idle")
            self.health_label.setText("")
            self._show_error("Monitor", str(opened))
            return
        if opened.note:
            self._status(opened.note)
        self.recording = None
        self.model = opened.model
        self.alerts_list.clear()
        self.poller, self.recorder = opened.poller, opened.recorder
        opened.poller.add_listener(self._bridge.snapshot.emit)
        opened.poller.start()
        self._set_state("live")
        self.health_label.setText(f"polling {len(opened.poller.readers)} switches every "
                                  f"{opened.poller.interval:g} s…")

    def stop(self) -> None:
        """Stop polling (in a helper thread: the UI never waits on a switch), leave replay, or
        cancel a recording being read."""
        self._generation += 1  # an opening still under way is closed when it arrives
        if self._opening is not None:
            self._opening.cancel()
            self._opening = None
            self._leave_opening()
            return
        poller, recorder = self.poller, self.recorder
        self.poller = self.recorder = None
        if poller is not None:
            poller.remove_listener(self._bridge.snapshot.emit)

            def halt() -> None:
                poller.stop()
                if recorder is not None:
                    recorder.close()

            t = threading.Thread(target=halt, name="inaplanner-monitor-stop", daemon=True)
            t.start()
            self._stoppers.append(t)
        self._set_state("idle")

    def wait_stopped(self, timeout: float = 10.0) -> None:
        """Wait for stops in progress (tests, application exit)."""
        for t in self._stoppers:
            t.join(timeout)
        self._stoppers = [t for t in self._stoppers if t.is_alive()]

    def shutdown(self) -> None:
        self.stop()
        self.wait_stopped()

    def open_recording(self, path: str, wait: bool = False) -> bool:
        """Replay a recording: the slider walks through its polls. It is read, checked against
        the scenario and its alerts computed on a helper thread (:func:`open_replay`; about 1.1 s
        a poll at fat-tree k=64), the dock showing how far it got; Stop cancels it, and whatever
        was shown stays until it is done. Returns True once it started (an error is shown when
        it ends). ``wait`` (the command line's ``--replay``): returns once it has ended, the
        window going on meanwhile (it used to be read on the window's thread: a k=64 recording
        of 100 polls held the window about two minutes), and whether it opened;
        :attr:`open_outcome` says ``opened``, ``failed`` (the error shown, and kept in
        :attr:`open_error`) or ``stopped``."""
        generation = self._open_in_background(path)
        if not wait:
            return True
        loop = QEventLoop()

        def ended(_state: str = "") -> None:
            if self._opening is None or self._generation != generation:
                loop.quit()

        self.state_changed.connect(ended)
        try:
            ended()
            if self.open_outcome == "reading":
                loop.exec()
        finally:
            self.state_changed.disconnect(ended)
        outcome = self.open_outcome
        if outcome == "reading":  # stopped, or another opening took its place
            outcome = "stopped"
            if self._opening is None:
                self.open_outcome = outcome
        return outcome == "opened"

    def _open_in_background(self, path: str) -> int:
        """Start reading ``path`` on a helper thread; the generation that identifies it."""
        sc, plan, rule = self._scenario(), self.plan, self.rule()
        self.open_outcome, self.open_error = "reading", ""
        if self._opening is not None:
            self.stop()  # the reading under way (the replay before it comes back)
        back = self.state == "replay" and self.recording is not None  # shown again if this fails
        if self.state != "idle":
            self.stop()  # (a live session stops here)
        self._generation += 1
        generation = self._generation
        self._back_to_replay = back
        progress = Progress()
        self._opening = progress
        name = Path(path).name

        def shown(ev: ProgressEvent) -> None:  # (on the helper thread: queued to the window's)
            self._bridge.reading.emit((generation, f"reading {name}: {ev.message}…"))

        progress.subscribe(shown)
        self._in_background("opening", f"reading {name}…", "inaplanner-monitor-replay",
                            self._bridge.replayed.emit, (generation, path),
                            lambda: open_replay(sc, plan, rule, path, progress))
        return generation

    def _on_reading(self, item: tuple[int, str]) -> None:
        generation, text = item
        if generation == self._generation and self.state == "opening":
            self.health_label.setText(text)

    def _on_replayed(self, item: tuple[int, str, Any]) -> None:
        generation, path, opened = item
        if generation != self._generation or self.state != "opening":
            return  # stopped (cancelled) meanwhile, or another one opened since
        self._opening = None
        if isinstance(opened, BaseException):
            self.open_outcome = "stopped" if isinstance(opened, Cancelled) else "failed"
            self.open_error = "" if isinstance(opened, Cancelled) else str(opened)
            self._leave_opening()
            if not isinstance(opened, Cancelled):
                self._show_error("Open recording", str(opened))
            return
        self.open_outcome = "opened"
        self._take_replay(opened, path)

    def _leave_opening(self) -> None:
        """A recording not opened (an error, or Stop): the replay shown before it comes back."""
        self._set_state("idle")
        self.health_label.setText("")
        if self._back_to_replay and self.recording is not None and self.model is not None:
            self._set_state("replay")
            self.health_label.setText(f"replay: {len(self.recording.snapshots)} polls")
            self._refresh()

    def _take_replay(self, opened: ReplaySession, path: str) -> None:
        if self.state != "idle":
            self.stop()
        if opened.note:
            self._status(opened.note)
        rec = opened.recording
        self.recording = rec
        self.model = opened.model
        self.alerts_list.clear()
        for a in opened.alerts:
            self.alert.emit(a)
        if opened.alerts:
            self._status(f"replay of {Path(path).name}: {len(opened.alerts)} alerts")
        self._set_state("replay")
        self.slider.blockSignals(True)
        self.slider.setRange(0, max(0, len(rec.snapshots) - 1))
        self.slider.setValue(max(0, len(rec.snapshots) - 1))
        self.slider.blockSignals(False)
        self.health_label.setText(f"replay of {Path(path).name}: {len(rec.snapshots)} polls")
        self._refresh()

    def _set_state(self, state: str) -> None:
        self.state = state
        self.start_button.setEnabled(state not in ("live", "starting", "opening"))
        self.stop_button.setEnabled(state != "idle")
        self.slider.setEnabled(state == "replay")
        self.state_changed.emit(state)

    # ---- updates -------------------------------------------------------------------------------
    def _on_snapshot(self, snap: Snapshot) -> None:
        if self.model is None or self.state != "live":
            return
        if len(self._scenario().links) != len(self.model.scenario.links):
            self.stop()
            self._status("the scenario's links changed: monitoring stopped")
            return
        for a in self.model.add(snap):
            self._add_alert(a)
        self._show_health(snap)
        self._refresh()
        self.updated.emit(snap)

    def _show_health(self, snap: Snapshot) -> None:
        if self.poller is None:
            return
        health = self.poller.health()
        ok = sum(1 for h in health.values() if h.state == "ok")
        text = f"t={snap.t:.1f}s: {ok} of {len(health)} switches answering"
        if snap.stale:  # at most 12 named (each with its error), the rest counted
            text += "; not answering: " + names(
                [f"{s} ({health[s].last_error})" if s in health else s for s in snap.stale])
        self.health_label.setText(text)

    def _add_alert(self, a: Alert) -> None:
        self.alert.emit(a)
        self._status("monitor alert: " + a.text())
        self._show_alerts()

    def _show_alerts(self) -> None:
        """The alerts in force, the largest departure from the plan first (not newest first)."""
        if self.model is None:
            return
        texts = [a.text() for a in ranked(list(self.model.tracker.active.values()))]
        if texts == [self.alerts_list.item(i).text() for i in range(self.alerts_list.count())]:
            return
        self.alerts_list.clear()
        self.alerts_list.addItems(texts)

    def _on_slider(self, value: int) -> None:
        if self.state == "replay" and self.recording is not None:
            self._refresh(self.recording.snapshots[value])

    def current_snapshot(self) -> Snapshot | None:
        if self.state == "replay" and self.recording is not None and self.recording.snapshots:
            return self.recording.snapshots[self.slider.value()]
        return self.model.latest if self.model is not None else None

    def _refresh(self, snap: Snapshot | None = None) -> None:
        if self.model is None:
            return
        snap = snap if snap is not None else self.current_snapshot()
        self._show_alerts()
        rows = self.model.rows(snap, TABLE_ROWS)
        # Filled with the columns' widths fixed and repaints off, then sized once: with the
        # header sizing its columns to their contents at every cell set, the 1,200 cells of a
        # poll held the window 8 s at fat-tree k=32.
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.table.setUpdatesEnabled(False)
        self.table.blockSignals(True)
        self.table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            cells = [row.name, _num(row.observed), _num(row.planned), _num(row.capacity),
                     _pct(row.utilisation), _signed_pct(row.deviation)]
            for c, text in enumerate(cells):
                item = self.table.item(r, c)
                if item is None:
                    item = QTableWidgetItem()
                    self.table.setItem(r, c, item)
                item.setText(text)
                item.setData(Qt.ItemDataRole.UserRole, row.key)
                if c > 0:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            util = row.utilisation
            colour = colour_of(util if util is not None else 0.0, util is not None and util > 1.0 + 1e-9)
            self.table.item(r, 4).setForeground(QColor(colour))
        # keep the selection on the same links after a re-sort
        self.table.clearSelection()
        for r, row in enumerate(rows):
            if row.key in self.selected_keys:
                for c in range(len(COLUMNS)):
                    self.table.item(r, c).setSelected(True)
        self.table.blockSignals(False)
        self.table.setUpdatesEnabled(True)
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self._plot()
        if self.mode_on:
            self._paint(snap)

    def _paint(self, snap: Snapshot | None) -> None:
        if self.model is None:
            return
        try:
            self._set_overlay(self.model.overlay(snap))
        except InaplannerError as exc:  # the scenario changed under us
            self.mode_check.setChecked(False)
            self._status(str(exc))

    def _selection_changed(self) -> None:
        keys = []
        for item in self.table.selectedItems():
            key = item.data(Qt.ItemDataRole.UserRole)
            if key is not None and tuple(key) not in keys:
                keys.append(tuple(key))
        self.selected_keys = keys[:PLOT_LINKS]
        self._plot()

    def select_links(self, keys: list[tuple[int, int]]) -> None:
        """Plot these directed links (as if chosen in the table)."""
        self.selected_keys = [tuple(k) for k in keys][:PLOT_LINKS]
        self._refresh()

    def _plot(self) -> None:
        self.plot.clear()
        if self.model is None:
            return
        keys = self.selected_keys or [r.key for r in self.model.rows(limit=1) if r.observed is not None]
        self.plotted: dict[tuple[int, int], Any] = {}
        for i, key in enumerate(keys):
            colour = SERIES_COLOURS[i % len(SERIES_COLOURS)]
            ts, vs = self.model.series_of(key)
            name = self.model.names[key]
            self.plotted[key] = self.plot.plot(ts, vs, pen=pg.mkPen(colour, width=2), name=name)
            if self.model.planned is not None and ts.size:
                p = float(self.model.planned[key])
                self.plot.plot([ts[0], ts[-1]], [p, p],
                               pen=pg.mkPen(colour, width=1, style=Qt.PenStyle.DashLine),
                               name=f"{name} planned")

    # ---- monitor mode ------------------------------------------------------------------------
    def set_mode(self, on: bool) -> None:
        """Monitor mode: the canvas shows the observed load; off restores the planner overlay."""
        if on == self.mode_on:
            return
        self.mode_on = on
        if self.mode_check.isChecked() != on:
            self.mode_check.setChecked(on)
        if on:
            self._paint(self.current_snapshot())
        else:
            self._restore_overlay()


def install(window: Any) -> MonitorPanel:
    """Plug-in entry (``PLUGIN_MODULES`` of the main window): add the Monitor dock and the View >
    Monitor mode action to ``window``; return the panel (``window.monitor``)."""

    def current_plan() -> Plan | None:
        """The plan the observed load is compared with: the selected planning result, else the
        plan the window was opened with (``inaplanner gui SCENARIO --plan PLAN``)."""
        planning = getattr(window, "planning", None)
        result = planning.results_panel.current() if planning is not None else None
        if result is not None:
            return result.plan
        return getattr(window, "opened_plan", None)

    def restore() -> None:
        planning = getattr(window, "planning", None)
        overlay = getattr(planning, "last_overlay", None) if planning is not None else None
        try:
            window.canvas.set_overlay(overlay)
        except InaplannerError:
            window.canvas.set_overlay(None)

    panel = MonitorPanel(window.scenario, window.canvas.set_overlay, window.show_error,
                         current_plan=current_plan, status=window.status, restore_overlay=restore,
                         parent=window)
    window.monitor = panel
    panel.dock = window.add_dock("Monitor", panel, Qt.DockWidgetArea.BottomDockWidgetArea)
    panel.dock.hide()
    action = QAction("&Monitor mode", window)
    action.setCheckable(True)
    action.setShortcut(QKeySequence("Ctrl+M"))
    action.setStatusTip("Show the observed load of the deployed testbed on the canvas")

    def toggled(on: bool) -> None:
        if on:
            panel.dock.show()
            panel.dock.raise_()
        panel.set_mode(on)

    action.toggled.connect(toggled)
    panel.mode_check.toggled.connect(lambda on: action.setChecked(on))
    window.menu("View").addAction(action)
    panel.mode_action = action
    app = QApplication.instance()
    if app is not None:
        app.aboutToQuit.connect(panel.shutdown)
    return panel
