"""The what-if panel: collect changes (fail a link or a switch, change a capacity, add or remove a
job), re-run the chosen planners on a what-if copy, compare each with its baseline plan, and apply
the changes to the real scenario only when asked (one undoable step)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from inaplanner.errors import InaplannerError
from inaplanner.gui.planning.diffview import DiffView
from inaplanner.gui.planning.workers import PlannerRun
from inaplanner.model import Job, Scenario
from inaplanner.views.diffing import diff_results
from inaplanner.views.fmt import delta, num
from inaplanner.views.runs import PlanResult
from inaplanner.views.whatif import (
    AddJob,
    Change,
    FailLink,
    FailSwitch,
    RemoveJob,
    SetCapacity,
    check_changes,
    what_if,
)

KINDS = ("Fail link", "Fail switch", "Set link capacity", "Add job", "Remove job")


class Runner(Protocol):
    """What the panel needs from the planning controller."""

    def planner_names(self) -> list[str]: ...

    def submit(self, planner: str, label: str = "baseline", changes: tuple[Change, ...] = ()) -> PlannerRun: ...

    def results(self) -> list[PlanResult]: ...

    def scenario_version(self) -> Any: ...


@dataclass
class Pair:
    """One planner in a what-if round: its baseline result and its what-if result (when done)."""

    planner: str
    version: Any
    baseline: PlanResult | None = None
    what_if: PlanResult | None = None
    failed: str | None = None
    _diff: Any = None

    def diff(self) -> Any:
        """The report diff baseline -> what-if (computed once), or None while one is missing."""
        if self.baseline is None or self.what_if is None:
            return None
        if self._diff is None:
            self._diff = diff_results(self.baseline, self.what_if)
        return self._diff


def _names(text: str) -> list[str]:
    return [t.strip() for t in text.replace(";", ",").split(",") if t.strip()]


class WhatIfPanel(QWidget):
    """``apply(scenario, description)`` is called with the changed copy when the user applies."""

    round_done = Signal()

    def __init__(
        self,
        scenario: Callable[[], Scenario],
        runner: Runner,
        apply: Callable[[Scenario, str], None],
        show_error: Callable[[str, str], None],
        parent: QWidget | None = None,
        selection: Callable[[], tuple[list[str], list[int]]] | None = None,
    ) -> None:
        super().__init__(parent)
        self._selection = selection
        self._dirty = False
        self._scenario = scenario
        self._runner = runner
        self._apply = apply
        self._show_error = show_error
        self.changes: list[Change] = []
        self._link_ends: list[tuple[str, str]] = []
        self.pairs: list[Pair] = []
        self._round = 0
        self._waiting: dict[int, tuple[Pair, str]] = {}  # run id -> (pair, "baseline" | "what_if")

        # change editors
        self.kind_combo = QComboBox()
        self.kind_combo.addItems(list(KINDS))
        self.kind_combo.setToolTip("Kind of change to add to the what-if copy")
        self.stack = QStackedWidget()
        self.fail_link_combo = QComboBox()
        self.fail_switch_combo = QComboBox()
        self.capacity_link_combo = QComboBox()
        self.capacity_spin = QDoubleSpinBox()
        self.capacity_spin.setRange(0.0, 1e9)
        self.capacity_spin.setDecimals(3)
        self.capacity_spin.setSuffix(" Gbps")
        self.job_id_edit = QLineEdit()
        self.job_workers_edit = QLineEdit()
        self.job_workers_edit.setPlaceholderText("W1, W2, ...")
        self.job_ps_edit = QLineEdit()
        self.job_ps_edit.setPlaceholderText("PS1, ...")
        self.job_model_spin = QDoubleSpinBox()
        self.job_model_spin.setRange(0.001, 1e7)
        self.job_model_spin.setValue(100.0)
        self.job_model_spin.setSuffix(" MB")
        self.job_weight_spin = QDoubleSpinBox()
        self.job_weight_spin.setRange(0.001, 1e6)
        self.job_weight_spin.setValue(1.0)
        self.remove_job_combo = QComboBox()
        for rows in (
            [("Link", self.fail_link_combo)],
            [("Switch", self.fail_switch_combo)],
            [("Link", self.capacity_link_combo), ("Capacity", self.capacity_spin)],
            [("Job id", self.job_id_edit), ("Workers", self.job_workers_edit), ("PSs", self.job_ps_edit),
             ("Model", self.job_model_spin), ("Weight", self.job_weight_spin)],
            [("Job", self.remove_job_combo)],
        ):
            page = QWidget()
            # two label-field pairs a row: the tallest page (a new job) stays three rows high
            grid = QGridLayout(page)
            grid.setContentsMargins(0, 0, 0, 0)
            for i, (label, w) in enumerate(rows):
                r, c = divmod(i, 2) if len(rows) > 2 else (i, 0)
                grid.addWidget(QLabel(label), r, 2 * c)
                grid.addWidget(w, r, 2 * c + 1)
            grid.setColumnStretch(1, 1)
            grid.setColumnStretch(3, 1)
            self.stack.addWidget(page)
        for combo in (self.fail_link_combo, self.capacity_link_combo, self.fail_switch_combo):
            # big networks have thousands of links: type to find one
            combo.setEditable(True)
            combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
            combo.completer().setFilterMode(Qt.MatchFlag.MatchContains)
            combo.completer().setCompletionMode(combo.completer().CompletionMode.PopupCompletion)
        self.add_button = QPushButton("Add change")
        self.add_button.setToolTip("Add this change to the what-if copy (the scenario is not touched)")
        self.fail_selected_button = QPushButton("Fail selected")
        self.fail_selected_button.setToolTip("Fail the links and switches selected on the canvas")
        self.fail_selected_button.setVisible(selection is not None)
        self.changes_list = QListWidget()
        self.remove_change_button = QPushButton("Remove change")
        self.clear_button = QPushButton("Clear")

        # planners and run
        self.planners_list = QListWidget()
        self.planners_list.setToolTip("Planners to re-run on the what-if copy")
        self.baseline_check = QCheckBox("Run the baseline too when it is missing")
        self.baseline_check.setChecked(True)
        self.run_button = QPushButton("Run what-if")
        self.run_button.setToolTip("Re-run the checked planners on the changed copy")
        self.apply_button = QPushButton("Apply to scenario")
        self.apply_button.setToolTip("Make the changes in the real scenario (undoable)")

        # outcome
        self.table = QTableWidget(0, 6)
        self.table.setHorizontalHeaderLabels(
            ["Planner", "Baseline", "What-if", "Change", "Links changed", "Routes moved"]
        )
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.verticalHeader().setVisible(False)
        self.diff_view = DiffView(choosable=False)

        # three columns: the changes | the planners | the outcome (fits a bottom dock)
        # "Run what-if" and "Apply" sit in the top row: in view however short the dock is
        changes_col = QVBoxLayout()
        row = QHBoxLayout()
        row.addWidget(self.kind_combo, 1)
        row.addWidget(self.add_button)
        row.addWidget(self.fail_selected_button)
        changes_col.addLayout(row)
        changes_col.addWidget(self.stack)
        self.changes_list.setMinimumHeight(40)
        list_row = QHBoxLayout()
        list_row.addWidget(self.changes_list, 1)
        side = QVBoxLayout()
        side.addWidget(self.remove_change_button)
        side.addWidget(self.clear_button)
        side.addStretch(1)
        list_row.addLayout(side)
        changes_col.addLayout(list_row, 1)
        planners_col = QVBoxLayout()
        top = QHBoxLayout()
        top.addWidget(self.run_button)
        top.addWidget(self.apply_button)
        planners_col.addLayout(top)
        planners_col.addWidget(QLabel("Re-run"))
        self.planners_list.setMinimumHeight(40)
        planners_col.addWidget(self.planners_list, 1)
        planners_col.addWidget(self.baseline_check)
        outcome = QSplitter(Qt.Orientation.Vertical)
        outcome.addWidget(self.table)
        outcome.addWidget(self.diff_view)
        split = QSplitter()
        for col in (changes_col, planners_col):
            col.setContentsMargins(0, 0, 0, 0)
            w = QWidget()
            w.setLayout(col)
            split.addWidget(w)
        split.addWidget(outcome)
        split.setStretchFactor(0, 2)
        split.setStretchFactor(1, 1)
        split.setStretchFactor(2, 4)
        self.changes_list.setToolTip("Changes to the what-if copy, applied in this order")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(split)

        self.kind_combo.currentIndexChanged.connect(self.stack.setCurrentIndex)
        self.capacity_link_combo.currentIndexChanged.connect(self._capacity_link_changed)
        self.add_button.clicked.connect(self._add_clicked)
        self.fail_selected_button.clicked.connect(self._fail_selected_clicked)
        self.remove_change_button.clicked.connect(self._remove_change)
        self.clear_button.clicked.connect(self.clear_changes)
        self.run_button.clicked.connect(self._run_clicked)
        self.apply_button.clicked.connect(self._apply_clicked)
        self.table.currentCellChanged.connect(lambda row, *_: self._show_pair(row))
        self.refresh()

    # ---- scenario-dependent choices -------------------------------------------------------------

    def refresh_when_shown(self) -> None:
        """Refresh now when the panel is on screen, else when it is shown next (a big network's
        link list is not rebuilt for every edit)."""
        if self.isVisible():
            self.refresh()
        else:
            self._dirty = True

    def showEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        if self._dirty:
            self.refresh()
        super().showEvent(event)
        self._fit_dock()

    def _fit_dock(self) -> None:
        """Shown in a dock of a main window: make the dock tall enough for the change list and the
        buttons (at most half the window), so nothing is hidden on a 1280x800 screen."""
        from PySide6.QtWidgets import QDockWidget, QMainWindow

        dock = self.parentWidget()
        while dock is not None and not isinstance(dock, QDockWidget):
            dock = dock.parentWidget()
        win = dock.parentWidget() if dock is not None else None
        if not isinstance(win, QMainWindow) or dock.isFloating():
            return
        need = self.minimumSizeHint().height() + 60  # the dock's title and the tab bar
        if dock.height() < need:
            win.resizeDocks([dock], [min(need, win.height() // 2)], Qt.Orientation.Vertical)

    def refresh(self) -> None:
        """Re-read links, switches, jobs and planners (after the scenario or the registry changed)."""
        self._dirty = False
        sc = self._scenario()
        old_ends = self._link_ends
        self._link_ends = [(lk.a, lk.b) for lk in sc.links]
        for combo in (self.fail_link_combo, self.capacity_link_combo):
            keep = old_ends[combo.currentIndex()] if 0 <= combo.currentIndex() < len(old_ends) else None
            combo.blockSignals(True)
            combo.clear()
            for lk in sc.links:
                combo.addItem(f"{lk.a} - {lk.b} ({lk.capacity:g} Gbps)")
            combo.setCurrentIndex(self._link_ends.index(keep) if keep in self._link_ends else 0)
            combo.blockSignals(False)
        self._capacity_link_changed()
        keep = self.fail_switch_combo.currentData()
        self.fail_switch_combo.clear()
        for s in sc.switches():
            self.fail_switch_combo.addItem(s.id, s.id)
        self.fail_switch_combo.setCurrentIndex(max(self.fail_switch_combo.findData(keep), 0))
        keep = self.remove_job_combo.currentData()
        self.remove_job_combo.clear()
        for j in sc.jobs:
            self.remove_job_combo.addItem(j.id, j.id)
        self.remove_job_combo.setCurrentIndex(max(self.remove_job_combo.findData(keep), 0))
        if not self.job_id_edit.text():
            ids = {j.id for j in sc.jobs}
            n = len(sc.jobs)
            while f"job{n}" in ids:
                n += 1
            self.job_id_edit.setText(f"job{n}")
        checked = set(self.checked_planners())
        self.planners_list.clear()
        for name in self._runner.planner_names():
            item = QListWidgetItem(name)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if name in checked else Qt.CheckState.Unchecked)
            self.planners_list.addItem(item)

    def link_choice(self, combo: QComboBox) -> tuple[str, str] | None:
        """The (a, b) ends of the link chosen in one of the link combos."""
        i = combo.currentIndex()
        return self._link_ends[i] if 0 <= i < len(self._link_ends) else None

    def choose_link(self, combo: QComboBox, a: str, b: str) -> None:
        for i, ends in enumerate(self._link_ends):
            if ends in ((a, b), (b, a)):
                combo.setCurrentIndex(i)
                return
        raise InaplannerError(f"no link {a} - {b}")

    def _capacity_link_changed(self, *_: Any) -> None:
        ends = self.link_choice(self.capacity_link_combo)
        if ends is None:
            return
        lk = self._scenario().link_between(*ends)
        if lk is not None:
            self.capacity_spin.setValue(lk.capacity)

    def checked_planners(self) -> list[str]:
        out = []
        for i in range(self.planners_list.count()):
            item = self.planners_list.item(i)
            if item.checkState() == Qt.CheckState.Checked:
                out.append(item.text())
        return out

    def set_checked_planners(self, names: list[str]) -> None:
        for i in range(self.planners_list.count()):
            item = self.planners_list.item(i)
            item.setCheckState(Qt.CheckState.Checked if item.text() in names else Qt.CheckState.Unchecked)

    # ---- changes ------------------------------------------------------------------------------

    def change_from_form(self) -> Change:
        kind = self.kind_combo.currentText()
        if kind == "Fail link":
            ends = self.link_choice(self.fail_link_combo)
            if ends is None:
                raise InaplannerError("the scenario has no links")
            return FailLink(*ends)
        if kind == "Fail switch":
            sid = self.fail_switch_combo.currentData()
            if sid is None:
                raise InaplannerError("the scenario has no switches")
            return FailSwitch(sid)
        if kind == "Set link capacity":
            ends = self.link_choice(self.capacity_link_combo)
            if ends is None:
                raise InaplannerError("the scenario has no links")
            return SetCapacity(ends[0], ends[1], self.capacity_spin.value())
        if kind == "Add job":
            job_id = self.job_id_edit.text().strip()
            if not job_id:
                raise InaplannerError("the new job needs an id")
            return AddJob(Job(job_id, _names(self.job_workers_edit.text()), _names(self.job_ps_edit.text()),
                              model_mb=self.job_model_spin.value(), weight=self.job_weight_spin.value()))
        job = self.remove_job_combo.currentData()
        if job is None:
            raise InaplannerError("the scenario has no jobs")
        return RemoveJob(job)

    def add_change(self, change: Change) -> None:
        """Add ``change`` after a quick check that it fits the scenario after the earlier changes
        (the full validation runs with the what-if copy, off the UI thread)."""
        check_changes(self._scenario(), [*self.changes, change])  # raises with the reason
        self.changes.append(change)
        self.changes_list.addItem(change.describe())

    def _add_clicked(self) -> None:
        try:
            self.add_change(self.change_from_form())
        except InaplannerError as exc:
            self._show_error("Cannot add the change", str(exc))

    def fail_selected(self) -> list[Change]:
        """Add a failure for every switch and link selected on the canvas; returns them."""
        if self._selection is None:
            return []
        sc = self._scenario()
        nodes, links = self._selection()
        added: list[Change] = []
        failed_switches = [n for n in nodes if sc.has_node(n) and sc.is_switch(n)]
        for sid in failed_switches:
            change: Change = FailSwitch(sid)
            self.add_change(change)
            added.append(change)
        for i in links:
            lk = sc.links[i]
            if lk.a in failed_switches or lk.b in failed_switches:
                continue  # gone with its switch
            change = FailLink(lk.a, lk.b)
            self.add_change(change)
            added.append(change)
        if not added:
            raise InaplannerError("select links or switches on the canvas first")
        return added

    def _fail_selected_clicked(self) -> None:
        try:
            self.fail_selected()
        except InaplannerError as exc:
            self._show_error("Cannot add the change", str(exc))

    def _remove_change(self) -> None:
        row = self.changes_list.currentRow()
        if 0 <= row < len(self.changes):
            del self.changes[row]
            self.changes_list.takeItem(row)

    def clear_changes(self) -> None:
        self.changes.clear()
        self.changes_list.clear()

    # ---- running ------------------------------------------------------------------------------

    def run(self, planners: list[str] | None = None) -> list[PlannerRun]:
        """Queue the what-if runs (and missing baselines) for ``planners`` (default: the checked
        ones). The scenario itself is only read."""
        planners = self.checked_planners() if planners is None else planners
        if not planners:
            raise InaplannerError("check at least one planner to run")
        if not self.changes:
            raise InaplannerError("add at least one change first")
        check_changes(self._scenario(), self.changes)
        version = self._runner.scenario_version()
        self._round += 1
        label = f"what-if {self._round}"
        self.pairs = []
        self._waiting.clear()
        runs = []
        for name in planners:
            pair = Pair(name, version)
            pair.baseline = self._baseline_for(name, version)
            self.pairs.append(pair)
            if pair.baseline is None and self.baseline_check.isChecked():
                run = self._runner.submit(name)
                self._watch(run, pair, "baseline")
                runs.append(run)
            run = self._runner.submit(name, label, tuple(self.changes))
            self._watch(run, pair, "what_if")
            runs.append(run)
        self._fill_table()
        return runs

    def _baseline_for(self, planner: str, version: Any) -> PlanResult | None:
        """The latest plain result of ``planner`` on the scenario as it is now."""
        for r in reversed(self._runner.results()):
            if r.planner == planner and not r.changes and r.version == version:
                return r
        return None

    def _watch(self, run: PlannerRun, pair: Pair, role: str) -> None:
        self._waiting[run.request.id] = (pair, role)
        run.finished.connect(lambda result, p=pair, k=role: self._on_result(p, k, result))
        run.failed.connect(lambda msg, p=pair, k=role: self._on_failed(p, k, msg))
        run.cancelled.connect(lambda p=pair, k=role: self._on_failed(p, k, "cancelled"))
        run.ended.connect(self._on_ended)

    def _on_result(self, pair: Pair, role: str, result: PlanResult) -> None:
        setattr(pair, role, result)
        self._fill_table()

    def _on_failed(self, pair: Pair, role: str, message: str) -> None:
        pair.failed = f"{role.replace('_', '-')}: {message}"
        self._fill_table()

    def _on_ended(self, run: PlannerRun) -> None:
        self._waiting.pop(run.request.id, None)
        if not self._waiting:
            self.round_done.emit()

    def _run_clicked(self) -> None:
        try:
            self.run()
        except InaplannerError as exc:
            self._show_error("Cannot run the what-if", str(exc))

    def _fill_table(self) -> None:
        self.table.setRowCount(len(self.pairs))
        for i, p in enumerate(self.pairs):
            base = "-" if p.baseline is None else num(p.baseline.objective)
            new = "-" if p.what_if is None else num(p.what_if.objective)
            change = links = moved = ""
            if p.baseline is not None and p.what_if is not None:
                try:
                    d = p.diff()
                except InaplannerError as exc:
                    change = str(exc)
                else:
                    change = delta(d.objective_a, d.objective_b)
                    links = str(len(d.link_deltas))
                    moved = str(len(d.routes_moved))
            elif p.failed:
                change = p.failed
            elif p.baseline is None and not self.baseline_check.isChecked():
                change = "no baseline"
            else:
                change = "running"
            for j, text in enumerate((p.planner, base, new, change, links, moved)):
                self.table.setItem(i, j, QTableWidgetItem(text))
        self.table.resizeColumnsToContents()
        if self.pairs and self.table.currentRow() < 0:
            self.table.setCurrentCell(0, 0)
        else:
            self._show_pair(self.table.currentRow())

    def _show_pair(self, row: int) -> None:
        if 0 <= row < len(self.pairs):
            p = self.pairs[row]
            if p.baseline is not None and p.what_if is not None:
                try:
                    diff = p.diff()
                except InaplannerError:
                    diff = None  # the view shows the reason
                self.diff_view.set_pair(p.baseline, p.what_if, diff)
                return
        self.diff_view.show_diff(None, None)

    # ---- applying -----------------------------------------------------------------------------

    def apply_changes(self) -> Scenario:
        """Build the changed scenario from the current one and hand it to ``apply``; then the
        change list is cleared."""
        if not self.changes:
            raise InaplannerError("there are no changes to apply")
        changed = what_if(self._scenario(), self.changes)
        text = "What-if: " + "; ".join(c.describe() for c in self.changes)
        self._apply(changed, text)
        self.clear_changes()
        self.refresh()
        return changed

    def _apply_clicked(self) -> None:
        try:
            self.apply_changes()
        except InaplannerError as exc:
            self._show_error("Cannot apply the changes", str(exc))
