"""The "Links" and "Switches" hot-list docks: the busiest links and switches of the overlay shown on
the canvas, filterable and sortable, linked to the canvas selection both ways (row data from the
Qt-free :class:`inaplanner.views.hotlists.HotLists`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QItemSelectionModel, Qt, QTimer
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from inaplanner.views.hotlists import LINK_COLUMNS, SWITCH_COLUMNS, HotLists
from inaplanner.views.overlay import OVER_COLOUR
from inaplanner.views.semantic import network_pods

if TYPE_CHECKING:
    from inaplanner.gui.canvas.view import Canvas

KEY = Qt.ItemDataRole.UserRole + 1  # sort key of a cell
ID = Qt.ItemDataRole.UserRole + 2  # link index or switch id of a row


class _Cell(QTableWidgetItem):
    """A cell sorting by its numeric (or natural) key rather than its text."""

    def __lt__(self, other: QTableWidgetItem) -> bool:  # noqa: D105
        a, b = self.data(KEY), other.data(KEY)
        try:
            return a < b
        except TypeError:
            return str(a) < str(b)


def _table(columns: tuple[str, ...]) -> QTableWidget:
    t = QTableWidget(0, len(columns))
    t.setHorizontalHeaderLabels(list(columns))
    t.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    t.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
    t.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    t.verticalHeader().setVisible(False)
    # sized once per fill (ResizeToContents would measure a whole column again on every cell set)
    t.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    t.horizontalHeader().setStretchLastSection(True)
    t.setSortingEnabled(True)
    return t


def _fill(table: QTableWidget, rows: list[Any], ident: Any) -> None:
    table.setSortingEnabled(False)
    table.blockSignals(True)
    table.clearContents()
    table.setRowCount(len(rows))
    for r, row in enumerate(rows):
        for c, (text, key) in enumerate(zip(row.cells(), row.sort_keys(), strict=True)):
            item = _Cell(text)
            item.setData(KEY, key)
            item.setData(ID, ident(row))
            if c in (2, 3, 4, 5) and table.columnCount() > 5:
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            if row.violated:
                item.setForeground(QColor(OVER_COLOUR))
            table.setItem(r, c, item)
    table.blockSignals(False)
    table.setSortingEnabled(True)
    table.resizeColumnsToContents()


class HotListPanel(QWidget):
    """One hot list (``kind`` "links" or "switches") following a canvas."""

    _cache: tuple[Any, HotLists] | None = None  # the last overlay's rows, shared by both panels

    def __init__(self, canvas: Canvas, kind: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.canvas = canvas
        self.kind = kind
        self.model: HotLists | None = None
        self._pending: tuple[Any] | None = None  # an overlay not turned into rows yet
        self._syncing = False
        self.tier = QComboBox()
        self.task = QComboBox()
        self.pod = QComboBox()
        self.top = QSpinBox()
        self.top.setRange(5, 100000)
        self.top.setValue(50)
        self.top.setToolTip("How many rows: the busiest first")
        self.note = QLabel("Run a planner or open a plan: the busiest links and switches are listed here.")
        self.note.setWordWrap(True)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        if kind == "links":
            for label, combo, tip in (("Tier", self.tier, "Only links of this tier"),
                                      ("Task", self.task, "Only links a task's flows use"),
                                      ("Pod", self.pod, "Only links with an end in this pod (rack)")):
                combo.setToolTip(tip)
                row.addWidget(QLabel(label))
                row.addWidget(combo, 1)
        else:
            self.pod.setToolTip("Only switches of this pod (rack)")
            row.addWidget(QLabel("Pod"))
            row.addWidget(self.pod, 1)
        row.addWidget(QLabel("Top"))
        row.addWidget(self.top)
        self.table = _table(LINK_COLUMNS if kind == "links" else SWITCH_COLUMNS)
        # busiest first until the user sorts by another column
        self.table.horizontalHeader().setSortIndicator(4, Qt.SortOrder.DescendingOrder)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(row)
        layout.addWidget(self.note)
        layout.addWidget(self.table, 1)
        for combo in (self.tier, self.task, self.pod):
            combo.currentIndexChanged.connect(lambda *_: self.refresh())
        self.top.valueChanged.connect(lambda *_: self.refresh())
        self.table.itemSelectionChanged.connect(self._to_canvas)
        canvas.overlay_changed.connect(self.set_overlay)
        canvas.selection_changed.connect(self._from_canvas)
        self.set_overlay(canvas.overlay)

    # ---- data --------------------------------------------------------------------------------

    def set_overlay(self, overlay: Any) -> None:
        """A new overlay: the rows are rebuilt when the table is on screen (or asked for), so a
        repaint of the canvas never waits for a hidden table."""
        self._pending = (overlay,)
        if self.isVisible():
            QTimer.singleShot(0, self._ensure)

    def _ensure(self) -> None:
        if self._pending is None:
            return
        (overlay,) = self._pending
        self._pending = None
        self._build(overlay)

    def showEvent(self, event: Any) -> None:  # noqa: N802
        super().showEvent(event)
        self._ensure()

    def _build(self, overlay: Any) -> None:
        if overlay is None:
            self.model = None
        else:
            scene = self.canvas.canvas_scene()
            sc = self.canvas.document.scenario
            of_node = network_pods(sc) if scene.zoom is not None else None
            cached = HotListPanel._cache
            if cached is not None and cached[0] is overlay:  # the other panel built it already
                self.model = cached[1]
            else:
                self.model = HotLists(sc, overlay, of_node)
                HotListPanel._cache = (overlay, self.model)
        self._refill_filters()
        self.refresh()

    def _refill_filters(self) -> None:
        m = self.model
        for combo, values, everything in ((self.tier, m.tiers() if m else [], "All tiers"),
                                          (self.task, m.tasks() if m else [], "All tasks"),
                                          (self.pod, m.pods() if m else [], "All pods")):
            current = combo.currentData()
            combo.blockSignals(True)
            combo.clear()
            combo.addItem(everything, None)
            for v in values:
                combo.addItem(v, v)
            i = combo.findData(current)
            combo.setCurrentIndex(max(i, 0))
            combo.blockSignals(False)
        self.pod.setEnabled(bool(m and m.pods()))

    def rows(self) -> list[Any]:
        self._ensure()
        m = self.model
        if m is None:
            return []
        if self.kind == "links":
            return m.links(self.tier.currentData(), self.task.currentData(), self.pod.currentData(), self.top.value())
        return m.switches(self.pod.currentData(), self.top.value())

    def refresh(self) -> None:
        rows = self.rows()
        self.note.setVisible(self.model is None)
        if self.kind == "links":
            _fill(self.table, rows, lambda r: r.index)
        else:
            _fill(self.table, rows, lambda r: r.id)
        self._from_canvas()

    # ---- selection, both ways ------------------------------------------------------------------

    def row_ids(self) -> list[Any]:
        self._ensure()
        return [self.table.item(r, 0).data(ID) for r in range(self.table.rowCount())]

    def select_row(self, row: int) -> None:
        """Select one row, as a click would (whatever keyboard modifiers Qt believes are held)."""
        self._ensure()
        index = self.table.model().index(row, 0)
        flags = QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
        self.table.selectionModel().setCurrentIndex(index, flags)

    def _to_canvas(self) -> None:
        if self._syncing:
            return
        ids = [self.table.item(i.row(), 0).data(ID) for i in self.table.selectionModel().selectedRows()]
        if not ids:
            return
        scene = self.canvas.canvas_scene()
        self._syncing = True
        try:
            if self.kind == "links":
                ends = [n for i in ids for n in scene.link_ends[int(i)]]
                scene.reveal(ends)
                self.canvas.select(links=[int(i) for i in ids])
                line = scene.link_item(int(ids[0])).line()
                self.canvas.centerOn(line.center())
            else:
                scene.reveal([str(i) for i in ids])
                self.canvas.select(nodes=[str(i) for i in ids])
                self.canvas.centerOn(scene.node_item(str(ids[0])))
        finally:
            self._syncing = False

    def _from_canvas(self) -> None:
        if self._syncing or self._pending is not None:
            return
        chosen = set(self.canvas.selected_links() if self.kind == "links" else self.canvas.selected_nodes())
        self._syncing = True
        try:
            self.table.blockSignals(True)
            self.table.clearSelection()
            first = None
            for r in range(self.table.rowCount()):
                if self.table.item(r, 0).data(ID) in chosen:
                    for c in range(self.table.columnCount()):
                        self.table.item(r, c).setSelected(True)
                    first = r if first is None else first
            if first is not None:
                self.table.scrollToItem(self.table.item(first, 0))
            self.table.blockSignals(False)
        finally:
            self._syncing = False


def install(window: Any) -> tuple[HotListPanel, HotListPanel]:
    """The Links and Switches docks, tabbed under the window's right-hand docks."""
    links = HotListPanel(window.canvas, "links")
    switches = HotListPanel(window.canvas, "switches")
    window.links_dock = window.add_dock("Links", links)
    window.switches_dock = window.add_dock("Switches", switches)
    window.tabifyDockWidget(window.history_dock, window.links_dock)
    window.tabifyDockWidget(window.links_dock, window.switches_dock)
    window.inspector_dock.raise_()
    window.links_panel = links
    window.switches_panel = switches
    return links, switches
