"""Side-by-side diff of two results: the links whose load changed and the routes that moved."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from inaplanner.errors import InaplannerError
from inaplanner.views.diffing import diff_results
from inaplanner.views.fmt import delta, num
from inaplanner.views.plan_diff import PlanDiff
from inaplanner.views.runs import PlanResult


def _fmt(x: float | None) -> str:
    return num(x)


def _path(p: tuple[str, ...], merges: tuple[str, ...]) -> str:
    """A path with merge switches in brackets, as the report's diff writes it."""
    return " - ".join(f"[{n}]" if n in merges else n for n in p) if p else "-"


Index = QModelIndex | QPersistentModelIndex

#: Tables with more rows than this are not sized to their contents (that reads every row).
SIZE_TO_CONTENTS_ROWS = 200


class RowsModel(QAbstractTableModel):
    """Read-only rows of text: a diff of a big network has tens of thousands of rows, which a
    model serves lazily where QTableWidget items would take a second to build. A row's text is
    made when Qt first asks for it (``cells(item)``): formatting the 13,000 changed links of two
    fat-tree k=64 plans up front held the window 0.4 s."""

    def __init__(self, headers: list[str], parent: Any = None) -> None:
        super().__init__(parent)
        self.headers = headers
        self.items: Sequence[Any] = []
        self.cells: Callable[[Any], list[str]] = list
        self._made: dict[int, list[str]] = {}

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt signature
        return 0 if parent.isValid() else len(self.items)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.headers)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return self.headers[section]
        return None

    def row(self, i: int) -> list[str]:
        made = self._made.get(i)
        if made is None:
            made = self._made[i] = self.cells(self.items[i])
        return made

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if index.isValid() and role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            return self.row(index.row())[index.column()]
        return None

    def set_rows(self, items: Sequence[Any], cells: Callable[[Any], list[str]] = list) -> None:
        """Show one row per item, its cells' text made by ``cells`` when first shown."""
        self.beginResetModel()
        self.items = items
        self.cells = cells
        self._made = {}
        self.endResetModel()


class RowsTable(QTableView):
    """A table view over a :class:`RowsModel`; ``text(row, column)`` reads a cell."""

    def __init__(self, headers: list[str]) -> None:
        super().__init__()
        self.rows_model = RowsModel(headers, self)
        self.setModel(self.rows_model)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.verticalHeader().setVisible(False)
        self.horizontalHeader().setStretchLastSection(True)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)

    def set_rows(self, items: Sequence[Any], cells: Callable[[Any], list[str]] = list) -> None:
        self.rows_model.set_rows(items, cells)
        if len(items) <= SIZE_TO_CONTENTS_ROWS:
            self.resizeColumnsToContents()

    def rowCount(self) -> int:  # noqa: N802 - mirrors QTableWidget
        return self.rows_model.rowCount()

    def text(self, row: int, column: int) -> str:
        return self.rows_model.row(row)[column]


def _link_cells(c: Any) -> list[str]:
    return [c.link, _fmt(c.load_a), _fmt(c.load_b), delta(c.load_a, c.load_b), _fmt(c.capacity)]


def _route_cells(c: Any) -> list[str]:
    return [c.task, c.worker, c.kind, _path(c.path_a, c.merges_a), _path(c.path_b, c.merges_b)]


class DiffView(QWidget):
    """Pick result A and B (or call ``set_pair``); ``diff`` holds the last computed PlanDiff."""

    def __init__(self, parent: QWidget | None = None, choosable: bool = True) -> None:
        super().__init__(parent)
        self.results: list[PlanResult] = []
        self.diff: PlanDiff | None = None
        self.combo_a = QComboBox()
        self.combo_a.setToolTip("Baseline result")
        self.combo_b = QComboBox()
        self.combo_b.setToolTip("Result compared with the baseline")
        self.summary = QLabel("Pick two results")
        self.summary.setWordWrap(True)
        self.links_table = RowsTable(["Link", "Load A", "Load B", "Change", "Capacity"])
        self.routes_table = RowsTable(["Task", "Worker", "Change", "Path A", "Path B"])
        row = QHBoxLayout()
        row.addWidget(QLabel("A"))
        row.addWidget(self.combo_a, 1)
        row.addWidget(QLabel("B"))
        row.addWidget(self.combo_b, 1)
        split = QSplitter()
        split.addWidget(self.links_table)
        split.addWidget(self.routes_table)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        if choosable:
            layout.addLayout(row)
        layout.addWidget(self.summary)
        layout.addWidget(split, 1)
        self._picked = [False, False]
        self.combo_a.activated.connect(lambda _i: self._pick(0))
        self.combo_b.activated.connect(lambda _i: self._pick(1))
        self.combo_a.currentIndexChanged.connect(self._on_combo)
        self.combo_b.currentIndexChanged.connect(self._on_combo)

    def _pick(self, which: int) -> None:
        self._picked[which] = True

    def set_results(self, results: Sequence[PlanResult]) -> None:
        """Offer ``results``; A and B are the first and the last of them unless the user picked
        them."""
        keep = (self._chosen(self.combo_a) if self._picked[0] else None,
                self._chosen(self.combo_b) if self._picked[1] else None)
        self.results = list(results)
        for combo in (self.combo_a, self.combo_b):
            combo.blockSignals(True)
            combo.clear()
            for r in self.results:
                combo.addItem(r.title, r.id)
            combo.blockSignals(False)
        ids = [r.id for r in self.results]
        a = keep[0] if keep[0] in ids else (ids[0] if ids else None)
        b = keep[1] if keep[1] in ids else (ids[-1] if ids else None)
        for combo, r in ((self.combo_a, a), (self.combo_b, b)):
            combo.blockSignals(True)
            combo.setCurrentIndex(ids.index(r) if r is not None else -1)
            combo.blockSignals(False)
        self._on_combo()

    def _chosen(self, combo: QComboBox) -> int | None:
        return combo.currentData()

    def _on_combo(self, *_: object) -> None:
        by_id = {r.id: r for r in self.results}
        a, b = by_id.get(self._chosen(self.combo_a)), by_id.get(self._chosen(self.combo_b))
        if a is None or b is None:
            self.show_diff(None, None)
        else:
            self.show_diff(a, b)

    def set_pair(self, a: PlanResult, b: PlanResult, diff: PlanDiff | None = None) -> PlanDiff | None:
        """Show the diff of ``a`` -> ``b`` (adding them to the choices when needed)."""
        for r in (a, b):
            if r not in self.results:
                self.results.append(r)
                for combo in (self.combo_a, self.combo_b):
                    combo.blockSignals(True)
                    combo.addItem(r.title, r.id)
                    combo.blockSignals(False)
        for combo, r in ((self.combo_a, a), (self.combo_b, b)):
            combo.blockSignals(True)
            combo.setCurrentIndex(combo.findData(r.id))
            combo.blockSignals(False)
        self.show_diff(a, b, diff)
        return self.diff

    def show_diff(self, a: PlanResult | None, b: PlanResult | None, diff: PlanDiff | None = None) -> None:
        """Compute and show the diff of ``a`` -> ``b`` (``[X]`` marks a merge at switch X)."""
        self.diff = None
        if a is None or b is None:
            self.summary.setText("Pick two results")
            self.links_table.set_rows([])
            self.routes_table.set_rows([])
            return
        try:
            d = diff if diff is not None else diff_results(a, b)
        except InaplannerError as exc:
            self.summary.setText(str(exc))
            self.links_table.set_rows([])
            self.routes_table.set_rows([])
            return
        self.diff = d
        if d.is_empty():
            text = f"{a.title} and {b.title}: same routes, merges, rates and link loads."
        else:
            rates = ", ".join(f"{c.task} {_fmt(c.rate_a)} -> {_fmt(c.rate_b)}" for c in d.rate_changes[:6])
            extra = [f"tasks added: {', '.join(d.tasks_added)}"] if d.tasks_added else []
            extra += [f"tasks removed: {', '.join(d.tasks_removed)}"] if d.tasks_removed else []
            text = "; ".join([
                f"objective {d.objective_a:.6g} -> {d.objective_b:.6g} ({delta(d.objective_a, d.objective_b)})",
                f"{len(d.link_deltas)} directed links changed load",
                f"{len(d.routes_moved)} routes moved, {len(d.merges_changed)} merge elsewhere",
                f"rates: {rates}" if rates else "no rate changed",
                *extra,
            ])
        self.summary.setText(text)
        self.links_table.set_rows(d.link_deltas, _link_cells)
        self.routes_table.set_rows([*d.routes_moved, *d.merges_changed], _route_cells)
