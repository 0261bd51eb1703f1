"""The results list (planner, scenario, objective, bound, gap, status, seconds) and the task filter
that the canvas overlay follows."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QItemSelectionModel,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    Signal,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from inaplanner.errors import InaplannerError
from inaplanner.io.native import save_plan
from inaplanner.views.fmt import fixed, num, pct
from inaplanner.views.runs import PlanResult

COLUMNS = ("#", "Planner", "Scenario", "Objective", "Bound", "Gap", "Status", "Seconds")

Index = QModelIndex | QPersistentModelIndex


def _gap(g: float | None) -> str:
    return "inf" if g is not None and math.isinf(g) else pct(g, 2)


class ResultsModel(QAbstractTableModel):
    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.results: list[PlanResult] = []

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt signature
        return 0 if parent.isValid() else len(self.results)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return COLUMNS[section]
        return None

    def cell(self, r: PlanResult, column: int) -> str:
        return (
            str(r.id),
            r.planner,
            r.label,
            num(r.objective),
            num(r.bound),
            _gap(r.gap),
            r.status,
            fixed(r.seconds, 2),
        )[column]

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        r = self.results[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return self.cell(r, index.column())
        if role == Qt.ItemDataRole.ToolTipRole:
            ev = r.evaluation
            lines = [f"{r.title}: objective {num(ev.objective)} ({ev.objective_kind})",
                     f"params: {r.params}", f"solver: {r.plan.planner.solver or '-'}"]
            if r.stopped:
                lines.append(f"stopped: {r.stopped}")
            lines += ev.errors[:5] + [str(v) for v in ev.violations[:5]]
            return "\n".join(lines)
        if role == Qt.ItemDataRole.TextAlignmentRole and index.column() in (0, 3, 4, 5, 7):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def add(self, result: PlanResult) -> None:
        n = len(self.results)
        self.beginInsertRows(QModelIndex(), n, n)
        self.results.append(result)
        self.endInsertRows()

    def remove(self, rows: list[int]) -> None:
        for row in sorted(set(rows), reverse=True):
            self.beginRemoveRows(QModelIndex(), row, row)
            del self.results[row]
            self.endRemoveRows()


class ResultsPanel(QWidget):
    """Results table plus a task filter. ``current_changed(result | None)`` when the current row
    changes, ``selection_changed(list)`` for the compare view, ``task_filter_changed(str | None)``."""

    current_changed = Signal(object)
    selection_changed = Signal(list)
    task_filter_changed = Signal(object)
    results_changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = ResultsModel(self)
        self.view = QTableView()
        self.view.setModel(self.model)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.view.verticalHeader().setVisible(False)
        self.view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.view.horizontalHeader().setStretchLastSection(True)
        self.task_combo = QComboBox()
        self.task_combo.setObjectName("task_filter")
        self.task_combo.setToolTip("Show one task's flows on the canvas, or all")
        self.task_combo.addItem("All tasks", None)
        self.remove_button = QPushButton("Remove")
        self.remove_button.setToolTip("Remove the selected results (Delete)")
        self.save_button = QPushButton("Save plan...")
        self.save_button.setToolTip("Save the current result's plan as an inaplanner plan file")
        self.clear_overlay_button = QPushButton("Clear overlay")
        self.clear_overlay_button.setToolTip("Show the plain scenario on the canvas")
        self.pin_check = QCheckBox("Pin")
        self.pin_check.setToolTip("Keep the canvas on the selected result: a finished run does not "
                                  "replace it (unpinned, each finished run is painted at once)")
        row = QHBoxLayout()
        row.addWidget(QLabel("Task"))
        row.addWidget(self.task_combo, 1)
        row.addWidget(self.remove_button)
        row.addWidget(self.save_button)
        row.addWidget(self.clear_overlay_button)
        row.addWidget(self.pin_check)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(row)
        layout.addWidget(self.view)
        self.view.selectionModel().currentRowChanged.connect(self._on_current)
        self.view.selectionModel().selectionChanged.connect(lambda *_: self.selection_changed.emit(self.selected()))
        self.task_combo.currentIndexChanged.connect(lambda *_: self.task_filter_changed.emit(self.task_filter()))
        self.remove_button.clicked.connect(self.remove_selected)
        self.save_button.clicked.connect(self._save_clicked)
        self.show_error: Callable[[str, str], None] = lambda title, msg: None

    def save_current(self, path: str) -> None:
        """Write the current result's plan to ``path`` (atomic; InaplannerError on failure)."""
        result = self.current()
        if result is None:
            raise InaplannerError("select a result first")
        save_plan(result.plan, path)

    def _save_clicked(self) -> None:
        result = self.current()
        if result is None:
            self.show_error("Cannot save the plan", "select a result first")
            return
        path, _ = QFileDialog.getSaveFileName(
            self, "Save plan", f"{result.planner}-{result.id}.plan.json", "inaplanner plan (*.json)"
        )
        if path:
            try:
                self.save_current(path)
            except (InaplannerError, OSError) as exc:
                self.show_error("Cannot save the plan", str(exc))

    @property
    def results(self) -> list[PlanResult]:
        return self.model.results

    def add(self, result: PlanResult) -> None:
        """A finished run: listed, and made the current row (so the canvas paints it at once)
        unless the user pinned the result shown."""
        self.model.add(result)
        self._refresh_tasks()
        self.results_changed.emit()
        if not (self.pin_check.isChecked() and self.current() is not None):
            self.select(result)

    @property
    def pinned(self) -> bool:
        return self.pin_check.isChecked()

    def set_pinned(self, on: bool) -> None:
        self.pin_check.setChecked(on)

    def current(self) -> PlanResult | None:
        idx = self.view.selectionModel().currentIndex()
        return self.model.results[idx.row()] if idx.isValid() else None

    def select(self, result: PlanResult) -> None:
        """Make ``result`` the current row (painting it again when it already is)."""
        row = self.model.results.index(result)
        if self.view.selectionModel().currentIndex().row() == row:
            self.current_changed.emit(result)
            return
        self.view.selectionModel().setCurrentIndex(
            self.model.index(row, 0),
            QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows,
        )

    def selected(self) -> list[PlanResult]:
        rows = sorted({i.row() for i in self.view.selectionModel().selectedRows()})
        return [self.model.results[r] for r in rows]

    def remove_selected(self) -> None:
        rows = [i.row() for i in self.view.selectionModel().selectedRows()]
        if rows:
            self.model.remove(rows)
            self._refresh_tasks()
            self.results_changed.emit()
            self.current_changed.emit(self.current())

    def task_filter(self) -> str | None:
        return self.task_combo.currentData()

    def set_task_filter(self, task: str | None) -> None:
        i = self.task_combo.findData(task)
        if i < 0:
            raise ValueError(f"no task {task!r} in the results")
        self.task_combo.setCurrentIndex(i)

    def _refresh_tasks(self) -> None:
        """The filter offers every task of every result's scenario."""
        current = self.task_filter()
        tasks: list[str] = []
        for r in self.model.results:
            for t in r.evaluation.tasks:
                if str(t) not in tasks:
                    tasks.append(str(t))
        self.task_combo.blockSignals(True)
        self.task_combo.clear()
        self.task_combo.addItem("All tasks", None)
        for t in tasks:
            self.task_combo.addItem(t, t)
        i = self.task_combo.findData(current)
        self.task_combo.setCurrentIndex(max(i, 0))
        self.task_combo.blockSignals(False)
        if self.task_filter() != current:
            self.task_filter_changed.emit(self.task_filter())

    def _on_current(self, current: QModelIndex, _previous: QModelIndex) -> None:
        self.current_changed.emit(self.model.results[current.row()] if current.isValid() else None)
