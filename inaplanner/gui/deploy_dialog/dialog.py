"""The Deploy dialog: choose a plan (the selected result or a plan file) and a testbed file (or
start an emulated testbed for the open scenario), look at the dry run's per-switch changes, deploy
off the UI thread with a per-node progress table and a live log, cancel (the deployer rolls every
touched switch back), and read the final per-switch summary.

All deployment work is :func:`inaplanner.deploy.deployer.deploy` on a pool thread
(:class:`~inaplanner.gui.deploy_dialog.worker.BackgroundCall`); this module only shows its
progress events and report. Errors reach the user through ``window.show_error``.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QThreadPool, QTimer, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QButtonGroup,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QRadioButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from inaplanner.deploy.deployer import DeployOptions, deploy
from inaplanner.deploy.p4rt import DEFAULT_BATCH
from inaplanner.deploy.results import DeployReport
from inaplanner.errors import InaplannerError
from inaplanner.gui.deploy_dialog.worker import BackgroundCall
from inaplanner.gui.filejobs import FileJob, describe, snapshot, wait_for
from inaplanner.io.native import scenario_from_dict
from inaplanner.progress import ProgressEvent
from inaplanner.views import deploy_sources as sources
from inaplanner.views.deploy_board import (
    CHANGE_KINDS,
    ProgressBoard,
    headline,
    log_line,
    summary_rows,
    switch_changes,
)
from inaplanner.views.fmt import progress_text

#: Expand every switch of the changes tree when it lists at most this many entities.
EXPAND_LIMIT = 400
LOG_LINES = 50_000
#: Progress rows and log lines reach the widgets in batches this often (ms), so that a
#: deployment of many switches does not flood the UI thread with one repaint per event.
FLUSH_MS = 100
PROGRESS_COLUMNS = ("Node", "Kind", "Step", "State", "Detail")
SUMMARY_COLUMNS = ("Node", "Kind", "Status", "Changes", "Note")
TAB_CHANGES, TAB_PROGRESS, TAB_LOG, TAB_RESULT = range(4)


#: The widest text a column shows (its width never goes below it, so "verify" and "running" are
#: never cut to "ve…" and "runni…").
WIDEST = {"Node": "leaf-switch-00", "Kind": "programmable", "Step": "write entries", "State": "succeeded",
          "Status": "succeeded", "Changes": "+9999 -9999 ~9999"}


def _min_width(table: QTableWidget, column: str) -> int:
    fm = table.fontMetrics()
    return max(fm.horizontalAdvance(WIDEST.get(column, "")), fm.horizontalAdvance(column)) + 24


def _read_only_table(columns: tuple[str, ...]) -> QTableWidget:
    t = QTableWidget(0, len(columns))
    t.setHorizontalHeaderLabels(list(columns))
    t.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    t.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    t.verticalHeader().setVisible(False)
    t.verticalHeader().setDefaultSectionSize(t.fontMetrics().height() + 8)
    # Interactive columns sized on demand (fit_columns): ResizeToContents would measure the whole
    # column again on every cell change, which costs milliseconds per progress event.
    t.horizontalHeader().setStretchLastSection(True)
    for i, name in enumerate(columns[:-1]):
        t.setColumnWidth(i, _min_width(t, name))
    return t


def fit_columns(table: QTableWidget) -> None:
    """Size every column but the last (which stretches) to its contents, once."""
    for i in range(table.columnCount() - 1):
        table.resizeColumnToContents(i)
        head = table.horizontalHeaderItem(i)
        floor = _min_width(table, head.text() if head is not None else "")
        if table.columnWidth(i) < floor:
            table.setColumnWidth(i, floor)


def _set_row(table: QTableWidget, row: int, values: tuple[str, ...]) -> None:
    for col, text in enumerate(values):
        item = table.item(row, col)
        if item is None:
            item = QTableWidgetItem(text)
            table.setItem(row, col, item)
        elif item.text() != text:
            item.setText(text)
        item.setToolTip(text if col == len(values) - 1 else "")


class DeployDialog(QDialog):
    """Non-modal; one per window (see :mod:`.wiring`). ``run_finished(report)`` or
    ``run_failed(message)`` then ``run_ended()`` close each dry run or deployment; tests wait on
    them. Closing the dialog stops the emulated testbed it started (a running deployment is
    cancelled and rolled back first)."""

    run_finished = Signal(object)
    run_failed = Signal(str)
    run_ended = Signal()
    emulated_changed = Signal()

    def __init__(self, window: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent if parent is not None else window)
        self.main_window = window
        self.setWindowTitle("Deploy plan")
        self.setModal(False)
        self.resize(980, 680)
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(2)
        self.call: BackgroundCall | None = None
        self.board = ProgressBoard()
        self.report: DeployReport | None = None
        self.emulated: Any = None  # inaplanner.deploy.emulated.EmulatedTestbed
        self._emulated_dir: Path | None = None
        self._dry_run = False
        self._close_pending = False
        self._reading: FileJob | None = None  # the inputs being read, or the emulators starting
        self._reading_cancellable = False  # whether Cancel stops that job
        self._dirty_rows: set[int] = set()
        self._pending_log: list[str] = []
        self._pending_stage: ProgressEvent | None = None  # the newest overall progress
        self._run_title = ""
        self._flush_timer = QTimer(self)
        self._flush_timer.setInterval(FLUSH_MS)
        self._flush_timer.timeout.connect(self.flush)
        self._build()
        self.refresh_sources()
        self._set_running(False)

    # ---- layout ----------------------------------------------------------------------------------

    def _build(self) -> None:
        layout = QVBoxLayout(self)

        plan_box = QGroupBox("Plan")
        pl = QFormLayout(plan_box)
        self.result_radio = QRadioButton("Selected result")
        self.result_radio.setToolTip("Deploy the plan selected in the Results list, with the "
                                     "scenario it was planned on")
        self.result_label = QLabel()
        pl.addRow(self.result_radio, self.result_label)
        self.file_radio = QRadioButton("Plan file")
        self.file_radio.setToolTip("Deploy a plan saved as JSON; its scenario is the open one "
                                   "or the one beside the file with the same hash")
        self.plan_edit = QLineEdit()
        self.plan_edit.setPlaceholderText("plan.json")
        browse_plan = QPushButton("Browse…")
        browse_plan.setToolTip("Choose a plan file")
        browse_plan.clicked.connect(self._browse_plan)
        self.plan_edit.textEdited.connect(lambda _t: self.file_radio.setChecked(True))
        row = QHBoxLayout()
        row.addWidget(self.plan_edit, 1)
        row.addWidget(browse_plan)
        pl.addRow(self.file_radio, row)
        self.source_group = QButtonGroup(self)
        self.source_group.addButton(self.result_radio)
        self.source_group.addButton(self.file_radio)
        layout.addWidget(plan_box)

        bed_box = QGroupBox("Testbed")
        bl = QFormLayout(bed_box)
        self.testbed_edit = QLineEdit()
        self.testbed_edit.setPlaceholderText("testbed.toml")
        self.testbed_edit.setToolTip("The testbed inventory: P4Runtime address, build host and "
                                     "port map of every switch, SSH details of every worker")
        browse_bed = QPushButton("Browse…")
        browse_bed.setToolTip("Choose a testbed.toml")
        browse_bed.clicked.connect(self._browse_testbed)
        row = QHBoxLayout()
        row.addWidget(self.testbed_edit, 1)
        row.addWidget(browse_bed)
        bl.addRow("Testbed file", row)
        self.emulate_button = QPushButton("Start emulated testbed")
        self.emulate_button.setToolTip(
            "Start one emulated P4Runtime switch per programmable switch of the open scenario on "
            "127.0.0.1 and use its testbed file: a full deployment without hardware. The "
            "emulators stop when this dialog closes.")
        self.emulate_button.clicked.connect(self.start_emulated)
        self.stop_emulated_button = QPushButton("Stop emulated testbed")
        self.stop_emulated_button.setToolTip("Stop the emulated switches started here")
        self.stop_emulated_button.clicked.connect(self.stop_emulated)
        self.emulated_label = QLabel("")
        self.emulated_label.setWordWrap(True)
        row = QHBoxLayout()
        row.addWidget(self.emulate_button)
        row.addWidget(self.stop_emulated_button)
        row.addWidget(self.emulated_label, 1)
        bl.addRow("", row)
        layout.addWidget(bed_box)

        opt_box = QGroupBox("Options")
        ol = QHBoxLayout(opt_box)
        self.batch_spin = QSpinBox()
        self.batch_spin.setRange(1, 100_000)
        self.batch_spin.setValue(DEFAULT_BATCH)
        self.batch_spin.setToolTip("P4Runtime updates per WriteRequest")
        self.parallel_spin = QSpinBox()
        self.parallel_spin.setRange(1, 64)
        self.parallel_spin.setValue(DeployOptions().parallel)
        self.parallel_spin.setToolTip("Switches prepared and written at the same time")
        self.log_edit = QLineEdit()
        self.log_edit.setPlaceholderText("no log file")
        self.log_edit.setToolTip("Append a detailed, timestamped log of each run to this file")
        browse_log = QPushButton("Browse…")
        browse_log.setToolTip("Choose the log file")
        browse_log.clicked.connect(self._browse_log)
        ol.addWidget(QLabel("Batch size"))
        ol.addWidget(self.batch_spin)
        ol.addWidget(QLabel("Parallel switches"))
        ol.addWidget(self.parallel_spin)
        ol.addWidget(QLabel("Log file"))
        ol.addWidget(self.log_edit, 1)
        ol.addWidget(browse_log)
        layout.addWidget(opt_box)

        run_row = QHBoxLayout()
        self.dry_run_button = QPushButton("Dry run")
        self.dry_run_button.setToolTip("Show what would change on each switch; change nothing")
        self.dry_run_button.clicked.connect(self.dry_run)
        self.deploy_button = QPushButton("Deploy")
        self.deploy_button.setToolTip("Build, install, write the entries and read them back; any "
                                      "failure rolls every switch back")
        self.deploy_button.clicked.connect(self.deploy)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop the deployment; every switch touched is rolled back")
        self.cancel_button.clicked.connect(self.cancel)
        self.busy = QProgressBar()
        self.busy.setRange(0, 0)
        self.busy.setMaximumWidth(140)
        self.busy.setTextVisible(False)
        run_row.addWidget(self.dry_run_button)
        run_row.addWidget(self.deploy_button)
        run_row.addWidget(self.cancel_button)
        run_row.addWidget(self.busy)
        self.headline = QLabel("")
        self.headline.setWordWrap(True)
        self.headline.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        run_row.addWidget(self.headline, 1)
        layout.addLayout(run_row)

        self.tabs = QTabWidget()
        self.changes_tree = QTreeWidget()
        self.changes_tree.setColumnCount(4)
        self.changes_tree.setHeaderLabels(["Switch / entity", "Add", "Modify", "Delete"])
        self.changes_tree.header().setStretchLastSection(False)
        self.changes_tree.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for col in (1, 2, 3):
            self.changes_tree.header().setSectionResizeMode(
                col, QHeaderView.ResizeMode.ResizeToContents)
        self.progress_table = _read_only_table(PROGRESS_COLUMNS)
        self.log_view = QPlainTextEdit()
        self.log_view.setReadOnly(True)
        self.log_view.setMaximumBlockCount(LOG_LINES)
        self.log_view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.summary_table = _read_only_table(SUMMARY_COLUMNS)
        self.tabs.addTab(self.changes_tree, "Changes (dry run)")
        self.tabs.addTab(self.progress_table, "Progress")
        self.tabs.addTab(self.log_view, "Log")
        self.tabs.addTab(self.summary_table, "Result")
        layout.addWidget(self.tabs, 1)

        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    # ---- inputs --------------------------------------------------------------------------------

    def _planning(self) -> Any:
        return getattr(self.main_window, "planning", None)

    def selected_result(self) -> Any:
        """The result selected in the planning Results list (None without one)."""
        planning = self._planning()
        if planning is None:
            return None
        return planning.results_panel.current()

    def refresh_sources(self) -> None:
        """Show the selected result; pick the plan file when there is no result to deploy."""
        result = self.selected_result()
        self.result_label.setText(result.title if result is not None else "(none selected)")
        self.result_radio.setEnabled(self._planning() is not None)
        if result is not None and not self.plan_edit.text().strip():
            self.result_radio.setChecked(True)
        elif result is None:
            self.file_radio.setChecked(True)

    def use_plan_file(self, path: str | Path) -> None:
        self.plan_edit.setText(str(path))
        self.file_radio.setChecked(True)

    def use_selected_result(self) -> None:
        self.result_radio.setChecked(True)

    def inputs(self) -> sources.DeployInputs:
        """The scenario and plan to deploy (InaplannerError when there is none)."""
        return self._source()()

    def _source(self) -> Callable[[], sources.DeployInputs]:
        """What to deploy, taken now, as a call that makes the inputs from it: a private copy of
        the scenario and the plan file's hash check, 4-6 s at fat-tree k=64, which then run off
        the window's thread (the open scenario is passed as its snapshot)."""
        if self.result_radio.isChecked():
            result = self.selected_result()
            return lambda: sources.from_result(result)
        path = self.plan_edit.text().strip()
        current = snapshot(self.main_window.document)
        return lambda: sources.from_plan_file(path, current)

    def options(self, dry_run: bool) -> DeployOptions:
        log = self.log_edit.text().strip()
        return DeployOptions(dry_run=dry_run, batch_size=self.batch_spin.value(),
                             parallel=self.parallel_spin.value(),
                             log_path=Path(log).expanduser() if log else None)

    def _browse_plan(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Plan to deploy", "",
                                              "inaplanner plan (*.json);;All files (*)")
        if path:
            self.use_plan_file(path)

    def _browse_testbed(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Testbed file", "",
                                              "testbed inventory (*.toml);;All files (*)")
        if path:
            self.testbed_edit.setText(path)

    def _browse_log(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Deployment log", "deploy.log",
                                              "log (*.log *.txt);;All files (*)")
        if path:
            self.log_edit.setText(path)

    # ---- runs ----------------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self.call is not None and self.call.running

    def dry_run(self) -> bool:
        """Start a dry run; False when the inputs were refused (the error is shown)."""
        return self._start(dry_run=True)

    def deploy(self) -> bool:
        """Start a deployment; False when the inputs were refused (the error is shown)."""
        return self._start(dry_run=False)

    def _start(self, dry_run: bool) -> bool:
        if self.running or self._reading is not None:
            return False
        what = "dry run" if dry_run else "deploy"
        read = self._read_inputs()
        if self._close_pending:  # closed while reading: nothing starts
            self._close_pending = False
            self.reject()
            return False
        if isinstance(read, BaseException):
            exc = read
            self._refuse(f"Cannot {what}", str(exc) if isinstance(exc, (InaplannerError, OSError))
                         else describe(exc))
            return False
        inputs, inventory = read
        options = self.options(dry_run)
        scenario, plan = inputs.scenario, inputs.plan

        def work(progress: Any, cancel: Any) -> DeployReport:
            return deploy(scenario, plan, inventory, options, progress=progress, cancel=cancel)

        self._dry_run = dry_run
        self.report = None
        self.board = ProgressBoard(list(inventory.switches), list(inventory.hosts))
        self.progress_table.setRowCount(0)
        self._refresh_board()
        self.summary_table.setRowCount(0)
        if dry_run:
            self.changes_tree.clear()
        self._log(f"{'dry run' if dry_run else 'deploy'}: plan {inputs.label} onto "
                  f"{inventory.source} ({len(inventory.switches)} switch(es), "
                  f"{len(inventory.hosts)} worker(s))")
        self._run_title = f"{'Dry run' if dry_run else 'Deploying'} {inputs.label}…"
        self._pending_stage = None
        self.busy.setRange(0, 0)  # busy until the first overall progress arrives
        self.headline.setText(self._run_title)
        if self.call is not None:
            self.call.deleteLater()  # the previous run's, done by now
        call = BackgroundCall(work, self.pool, self)
        call.progressed.connect(self._on_progress)
        call.finished.connect(self._on_finished)
        call.failed.connect(self._on_failed)
        call.ended.connect(self._on_ended)
        self.call = call
        self._set_running(True)
        self.tabs.setCurrentIndex(TAB_PROGRESS)
        call.start()
        return True

    def _read_inputs(self) -> tuple[sources.DeployInputs, Any] | BaseException:
        """The inputs and the testbed inventory, read in a file job while the window goes on (at
        fat-tree k=64 the testbed file alone takes 2.4 s); what failed, if it did."""
        make = self._source()
        testbed = self.testbed_edit.text().strip()
        job = FileJob("reading the plan and the testbed", lambda _job: (make(), sources.testbed(testbed)))
        self._wait(job, "Reading the plan and the testbed…", cancellable=False)
        return job.error if job.error is not None else job.result

    def _wait(self, job: FileJob, headline: str, cancellable: bool) -> None:
        """Run ``job`` with the dialog busy (Cancel stops it when ``cancellable``), the window's
        event loop going on meanwhile."""
        self._reading = job
        self._reading_cancellable = cancellable
        self._set_running(True)
        self.cancel_button.setEnabled(cancellable)
        self.busy.setRange(0, 0)
        self.headline.setText(headline)
        try:
            wait_for(job)
        finally:
            self._reading = None
            self._set_running(False)

    def cancel(self) -> None:
        """Ask the running deployment to stop; it rolls every switch it touched back. While the
        emulated testbed starts: stop it at its next switch."""
        if self._reading is not None and self._reading_cancellable:
            self._reading.stop()
            self.cancel_button.setEnabled(False)
            self.cancel_button.setText("Cancelling…")
            return
        if not self.running or self.call is None or self.call.cancel_requested:
            return
        self.call.cancel()
        self.cancel_button.setEnabled(False)
        self.cancel_button.setText("Cancelling…")
        self._log("cancel requested: stopping and rolling back")

    def _refuse(self, title: str, message: str) -> None:
        self.headline.setText(f"{title}: {message}")
        self._log(f"refused: {message}")
        self.main_window.show_error(title, message)

    def _on_progress(self, p: ProgressEvent) -> None:
        if not p.node:  # the run's overall progress: the bar and the headline, at the next flush
            self._pending_stage = p
            return
        self._pending_log.append(log_line(p))
        i = self.board.apply(p)
        if i is not None:
            self._dirty_rows.add(i)

    def flush(self) -> None:
        """Show the progress rows, log lines and overall progress that came in since the last
        flush."""
        if self._pending_stage is not None:
            p, self._pending_stage = self._pending_stage, None
            self.busy.setRange(0, 1000)
            self.busy.setValue(int(round((p.fraction or 0.0) * 1000)))
            self.headline.setText(f"{self._run_title} {progress_text(p.phase, p.message)}")
        if self._pending_log:
            lines, self._pending_log = self._pending_log, []
            self.log_view.appendPlainText("\n".join(lines))
        if self._dirty_rows:
            rows, self._dirty_rows = sorted(self._dirty_rows), set()
            self.progress_table.setUpdatesEnabled(False)
            for i in rows:
                self._refresh_row(i)
            self.progress_table.setUpdatesEnabled(True)

    def _on_finished(self, report: DeployReport) -> None:
        self.flush()
        self.report = report
        cancelled = self.call is not None and self.call.cancel_requested
        self.board.finish(report)
        self._refresh_board()
        self._fill_summary(report)
        text = headline(report, cancelled=cancelled)
        self.headline.setText(text)
        self._log(report.text(details=False, more=""))
        self.main_window.status(text)
        if report.dry_run and report.ok:
            self._fill_changes(report)
            self.tabs.setCurrentIndex(TAB_CHANGES)
        else:
            self.tabs.setCurrentIndex(TAB_RESULT)
        if not report.ok and not cancelled:
            self.main_window.show_error("Dry run failed" if report.dry_run else "Deployment failed",
                                   report.error)
        self.run_finished.emit(report)

    def _on_failed(self, message: str) -> None:
        self.flush()
        self.board.stop_running("failed")
        self._refresh_board()
        what = "dry run" if self._dry_run else "deploy"
        self._refuse(f"Cannot {what}", message)
        self.run_failed.emit(message)

    def _on_ended(self) -> None:
        self._set_running(False)
        self.run_ended.emit()
        if self._close_pending:
            self._close_pending = False
            self.reject()

    def _set_running(self, on: bool) -> None:
        for w in (self.dry_run_button, self.deploy_button, self.emulate_button,
                  self.result_radio, self.file_radio, self.plan_edit, self.testbed_edit,
                  self.batch_spin, self.parallel_spin, self.log_edit):
            w.setEnabled(not on)
        if not on:
            self.result_radio.setEnabled(self._planning() is not None)
        self.stop_emulated_button.setEnabled(not on and self.emulated is not None)
        self.cancel_button.setEnabled(on)
        self.cancel_button.setText("Cancel")
        self.busy.setVisible(on)
        if on:
            self._flush_timer.start()
        else:
            self._flush_timer.stop()
            self.flush()

    # ---- views ---------------------------------------------------------------------------------

    def _log(self, text: str) -> None:
        self.flush()  # keep the order of lines
        self.log_view.appendPlainText(text)

    def _refresh_row(self, i: int) -> None:
        if i >= self.progress_table.rowCount():
            self.progress_table.setRowCount(i + 1)
        r = self.board.rows[i]
        _set_row(self.progress_table, i, (r.node, r.kind, r.step, r.state_text(), r.detail))

    def _refresh_board(self) -> None:
        self._dirty_rows.clear()
        table = self.progress_table
        table.setUpdatesEnabled(False)
        table.setRowCount(len(self.board.rows))
        for i in range(len(self.board.rows)):
            self._refresh_row(i)
        fit_columns(table)
        table.setUpdatesEnabled(True)

    def _fill_summary(self, report: DeployReport) -> None:
        rows = summary_rows(report)
        table = self.summary_table
        table.setUpdatesEnabled(False)
        table.setRowCount(len(rows))
        for i, r in enumerate(rows):
            _set_row(table, i, (r.node, r.kind, r.status, r.changes, r.note))
        fit_columns(table)
        table.setUpdatesEnabled(True)

    def _fill_changes(self, report: DeployReport) -> None:
        tree = self.changes_tree
        tree.clear()
        changes = switch_changes(report)
        total = sum(sc.count(k) for sc in changes for k in CHANGE_KINDS)
        for sc in changes:
            top = QTreeWidgetItem([sc.title()] + [str(sc.count(k)) for k in CHANGE_KINDS])
            top.setData(0, Qt.ItemDataRole.UserRole, sc.switch)
            top.setToolTip(0, f"{sc.unchanged} entities already as wanted")
            for kind in CHANGE_KINDS:
                lines = sc.changes[kind]
                if not lines:
                    continue
                group = QTreeWidgetItem([f"{kind} ({len(lines)})"])
                group.setData(0, Qt.ItemDataRole.UserRole, kind)
                group.addChildren([QTreeWidgetItem([text]) for text in lines])
                for child_i in range(group.childCount()):
                    group.child(child_i).setToolTip(0, lines[child_i])
                top.addChild(group)
            tree.addTopLevelItem(top)
        if report.hosts:
            hosts = QTreeWidgetItem([f"Workers ({len(report.hosts)})"])
            hosts.addChildren([QTreeWidgetItem([h.line()]) for h in report.hosts.values()])
            tree.addTopLevelItem(hosts)
        if report.warnings:
            warn = QTreeWidgetItem([f"Warnings ({len(report.warnings)})"])
            warn.addChildren([QTreeWidgetItem([w]) for w in report.warnings])
            tree.addTopLevelItem(warn)
        if total <= EXPAND_LIMIT:
            tree.expandAll()
        else:
            for i in range(tree.topLevelItemCount()):
                tree.topLevelItem(i).setExpanded(True)

    def change_texts(self, switch: str) -> dict[str, list[str]]:
        """The changes tree's entity texts for one switch, by kind (what the user sees)."""
        out: dict[str, list[str]] = {k: [] for k in CHANGE_KINDS}
        tree = self.changes_tree
        for i in range(tree.topLevelItemCount()):
            top = tree.topLevelItem(i)
            if top.data(0, Qt.ItemDataRole.UserRole) != switch:
                continue
            for j in range(top.childCount()):
                group = top.child(j)
                kind = group.data(0, Qt.ItemDataRole.UserRole)
                out[kind] = [group.child(k).text(0) for k in range(group.childCount())]
        return out

    # ---- emulated testbed ----------------------------------------------------------------------

    def start_emulated(self) -> bool:
        """Start emulated switches for the open scenario (replacing ones started before) and use
        their testbed file. False when that failed (the error is shown) or was cancelled. The
        scenario as it is now is copied and the switches started in a file job, the window going
        on meanwhile; Cancel stops it at its next switch, and those started are stopped."""
        from inaplanner.deploy.emulated import start_emulated_testbed

        if self.running:
            return False
        self.stop_emulated()
        directory = Path(tempfile.mkdtemp(prefix="inaplanner-emulated-"))
        path = directory / "testbed.toml"
        doc = snapshot(self.main_window.document)

        def work(job: FileJob) -> Any:
            scenario = scenario_from_dict(doc)  # its own copy: the document may be edited meanwhile
            job.check()
            return start_emulated_testbed(scenario, path, check=job.check)

        # at fat-tree k=64 the copy takes 3-5 s and the 1,026 switches 1.5 s: in a job, with Cancel
        job = FileJob("starting the emulated testbed", work)
        self._wait(job, "Starting the emulated switches…", cancellable=True)
        tb = job.result
        if self._close_pending:  # closed (or the application quit) while starting: none kept
            self._close_pending = False
            if tb is not None:
                tb.stop()
            shutil.rmtree(directory, ignore_errors=True)
            self.reject()
            return False
        if tb is None:
            shutil.rmtree(directory, ignore_errors=True)
            error = job.error
            if error is None:  # cancelled: the switches started so far are stopped
                self.headline.setText("Emulated testbed not started (cancelled)")
                self._log("emulated testbed: cancelled, nothing started")
                return False
            self._refuse("Cannot start the emulated testbed", str(error) if isinstance(
                error, (InaplannerError, OSError)) else describe(error))
            return False
        self.headline.setText("")
        self.emulated = tb
        self._emulated_dir = directory
        self.testbed_edit.setText(str(path))
        from inaplanner.views.fmt import names

        ids = sorted(tb.handles)
        self.emulated_label.setText(f"{len(tb.handles)} emulated switch(es) on 127.0.0.1 "
                                    f"({names(ids)}); they stop when this dialog closes")
        self.emulated_label.setToolTip(", ".join(ids))
        self._log(f"emulated testbed: {len(tb.handles)} switch(es), testbed file {path}")
        for sid, h in tb.handles.items():
            self._log(f"  switch {sid}: P4Runtime on {h.address}")
        self._set_running(False)
        self.emulated_changed.emit()
        return True

    def stop_emulated(self) -> None:
        """Stop the emulated switches started here and remove their files."""
        if self.emulated is None:
            return
        tb, directory = self.emulated, self._emulated_dir
        self.emulated = None
        self._emulated_dir = None
        tb.stop()
        if directory is not None:
            if self.testbed_edit.text().strip() == str(directory / "testbed.toml"):
                self.testbed_edit.clear()
            shutil.rmtree(directory, ignore_errors=True)
        self.emulated_label.setText("")
        self._log("emulated testbed stopped")
        self.stop_emulated_button.setEnabled(False)
        self.emulated_changed.emit()

    # ---- closing -------------------------------------------------------------------------------

    def reject(self) -> None:  # Close, Esc and the window's close button
        if self._reading is not None:  # closes once the inputs are read (or the start stops)
            self._close_pending = True
            self.cancel()
            return
        if self.running:
            self._close_pending = True
            self.cancel()
            return
        self.stop_emulated()
        super().reject()

    def shutdown(self, wait_ms: int = 30_000) -> None:
        """Application exit: cancel a running deployment, wait for its rollback, stop emulators."""
        if self._reading is not None:
            self._close_pending = True  # an emulated testbed starting now is not kept
            self._reading.stop()
            self._reading.wait(wait_ms)
        if self.call is not None and self.call.running:
            self.call.cancel()
        self.pool.waitForDone(wait_ms)
        if self.call is not None and self.pool.activeThreadCount() == 0:
            self.call.abandon()
        self.stop_emulated()
