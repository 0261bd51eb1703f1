"""The canvas view: zoom, pan, fit, find, the drawing tools, semantic zoom (pods open as the view
zooms in or on a double-click), task focus and the overlay legend (a strip under the drawing)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QPoint, QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QImage,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPen,
    QTransform,
    QWheelEvent,
)
from PySide6.QtWidgets import QGraphicsLineItem, QGraphicsView, QWidget

from inaplanner.errors import InaplannerError
from inaplanner.gui.canvas import geometry as geo
from inaplanner.gui.canvas.items import LinkItem, NodeItem
from inaplanner.gui.canvas.legend import LegendBar
from inaplanner.gui.canvas.scene import CanvasScene
from inaplanner.gui.theme import LIGHT, CanvasColours
from inaplanner.model.document import ScenarioDocument
from inaplanner.views.overlay import Overlay

if TYPE_CHECKING:
    from inaplanner.gui.editor import Editor

TOOLS = ("select", "pan", "host", "switch", "programmable", "link")
MIN_SCALE = 1e-4
MAX_SCALE = 8.0


class Canvas(QGraphicsView):
    """The network drawing. ``set_overlay`` paints an evaluated plan over it."""

    tool_changed = Signal(str)
    selection_changed = Signal()
    overlay_changed = Signal(object)
    task_focus_changed = Signal(object)  # the focused task ("job/ps") or None
    groups_changed = Signal()
    error = Signal(str, str)  # title, message (the window shows it)

    def __init__(
        self,
        document: ScenarioDocument,
        editor: Editor | None = None,
        colours: CanvasColours = LIGHT,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._scene = CanvasScene(document, colours, self)
        self.setScene(self._scene)
        self.editor = editor
        self.tool = "select"
        self._show_legend = True
        self.legend_bar = LegendBar(self)
        self._link_from: str | None = None
        self._rubber_line: QGraphicsLineItem | None = None
        self._pan_from: QPoint | None = None
        self._fit_pending = False
        self.paints = 0  # viewport paints so far (benchmarks count them)
        self.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        self.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.SmartViewportUpdate)
        self.setOptimizationFlag(QGraphicsView.OptimizationFlag.DontAdjustForAntialiasing, True)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.setResizeAnchor(QGraphicsView.ViewportAnchor.AnchorViewCenter)
        self.setDragMode(QGraphicsView.DragMode.RubberBandDrag)
        self.setMouseTracking(True)
        self.setAcceptDrops(False)  # files dropped go to the window
        self._scene.selectionChanged.connect(self.selection_changed)
        self._scene.link_selection_changed.connect(self.selection_changed)
        self._scene.nodes_dragged.connect(self._on_dragged)
        self._scene.overlay_changed.connect(self._on_overlay_changed)
        self._scene.groups_changed.connect(self.groups_changed)
        self._scene.sceneRectChanged.connect(self._scene_rect_changed)

    # ---- the public API ------------------------------------------------------------------------

    def canvas_scene(self) -> CanvasScene:
        return self._scene

    @property
    def document(self) -> ScenarioDocument:
        return self._scene.document

    @property
    def overlay(self) -> Overlay | None:
        return self._scene.overlay

    def set_overlay(self, overlay: Overlay | None) -> None:
        """Paint an overlay from :func:`inaplanner.views.overlay.overlay_from_evaluation` (None clears)."""
        self._scene.set_overlay(overlay)

    def set_task_filter(self, task: str | None) -> None:
        """Focus one task (``"job/ps"``): its aggregation tree drawn, everything else dimmed; None
        shows all tasks (per-link flow counts)."""
        self._scene.set_task_filter(task)
        self.task_focus_changed.emit(self._scene.focused_task())

    def step_task(self, step: int = 1) -> str | None:
        """Focus the next task (T) or the previous one (Shift+T); past the last: all tasks."""
        task = self._scene.step_task(step)
        self.task_focus_changed.emit(task)
        return task

    def focused_task(self) -> str | None:
        return self._scene.focused_task()

    @property
    def show_legend(self) -> bool:
        return self._show_legend

    @show_legend.setter
    def show_legend(self, on: bool) -> None:
        self._show_legend = bool(on)
        self._place_legend()

    def _place_legend(self) -> None:
        bar = self.legend_bar
        bar.set_overlay(self._scene.overlay, self._show_legend)
        h = bar.height() if bar.isVisibleTo(self) else 0
        self.setViewportMargins(0, 0, 0, h)
        vg = self.viewport().geometry()  # right under the drawing, above the scroll bar
        bar.setGeometry(vg.left(), vg.bottom() + 1, vg.width(), h)

    def open_groups(self) -> list[str]:
        """Pods (racks, planes) drawn node by node now."""
        return self._scene.open_groups()

    def closed_groups(self) -> list[str]:
        """Pods (racks, planes) drawn as boxes now."""
        return self._scene.closed_groups()

    def toggle_group(self, gid: str) -> None:
        self._scene.toggle_group(gid)

    def link_item(self, index: int) -> LinkItem:
        return self._scene.link_item(index)

    def node_item(self, node_id: str) -> NodeItem:
        return self._scene.node_item(node_id)

    def set_colours(self, colours: CanvasColours) -> None:
        self._scene.set_colours(colours)
        self.viewport().update()

    def shutdown(self) -> None:
        """The window closed: stop following the document, and let the scene emit nothing more
        (Qt emits ``selectionChanged`` while it deletes a scene, when the slots' owners may be
        half deleted already)."""
        self._scene.detach()
        self._scene.blockSignals(True)
        self.blockSignals(True)

    def scale_factor(self) -> float:
        return self.transform().m11()

    def lod(self) -> str:
        return geo.lod_level(self.scale_factor())

    def fit(self) -> None:
        """Zoom so the whole network is in view (again when the view first gets its real size);
        pods too small to read at that zoom are drawn as boxes."""
        self._fit_pending = not self.isVisible()
        rect = self._scene.content_rect()
        if rect.isEmpty():
            return
        vw = max(self.viewport().width() - 8, 50)
        vh = max(self.viewport().height() - 8, 50)
        s = min(vw / rect.width(), vh / rect.height(), 1.5)  # a tiny network is not blown up
        self.setSceneRect(self._scene.sceneRect().united(rect))
        self.setTransform(QTransform.fromScale(s, s))
        self.centerOn(rect.center())
        self._scene.set_view_scale(s)

    def _scene_rect_changed(self, rect: QRectF) -> None:
        # the view's rectangle only grows (a shrinking one would make the view jump mid-drag)
        self.setSceneRect(self.sceneRect().united(rect))

    def zoom_by(self, factor: float, anchor: QPointF | None = None) -> None:
        s = self.scale_factor()
        factor = min(max(factor, MIN_SCALE / s), MAX_SCALE / s)
        if anchor is not None:
            old = self.transformationAnchor()
            self.setTransformationAnchor(QGraphicsView.ViewportAnchor.NoAnchor)
            before = self.mapToScene(anchor.toPoint())
            self.scale(factor, factor)
            after = self.mapToScene(anchor.toPoint())
            delta = after - before
            self.translate(delta.x(), delta.y())
            self.setTransformationAnchor(old)
        else:
            self.scale(factor, factor)
        self._scene.set_view_scale(self.scale_factor())

    def find(self, name: str) -> str | None:
        """Select and centre the node called ``name`` (exact id, else the first id containing it,
        ignoring case); returns its id or None."""
        ids = self._scene.node_ids
        text = name.strip()
        if not text:
            return None
        found = text if text in self._scene.node_index else None
        if found is None:
            low = text.lower()
            found = next((i for i in ids if i.lower() == low), None) or next((i for i in ids if low in i.lower()), None)
        if found is None:
            return None
        self._scene.reveal([found])
        self._scene.select([found])
        if self.scale_factor() < geo.NEAR:
            self.zoom_by(1.0 / self.scale_factor())
        self.centerOn(self._scene.node_item(found))
        return found

    def selected_nodes(self) -> list[str]:
        return self._scene.selected_node_ids()

    def selected_links(self) -> list[int]:
        return sorted(self._scene.selected_links)

    def select(self, nodes: list[str] = (), links: list[int] = (), add: bool = False) -> None:
        self._scene.select(list(nodes), list(links), add)

    def set_tool(self, tool: str) -> None:
        if tool not in TOOLS:
            raise ValueError(f"unknown tool {tool!r}")
        self.tool = tool
        self.setDragMode(
            QGraphicsView.DragMode.ScrollHandDrag
            if tool == "pan"
            else QGraphicsView.DragMode.RubberBandDrag
            if tool == "select"
            else QGraphicsView.DragMode.NoDrag
        )
        cursor = Qt.CursorShape.CrossCursor if tool in ("host", "switch", "programmable", "link") else Qt.CursorShape.ArrowCursor
        self.viewport().setCursor(cursor)
        self.tool_changed.emit(tool)

    def render_image(self, size: QSize | None = None) -> QImage:
        """The viewport as an image (what the user sees), e.g. for screenshots."""
        return self.viewport().grab().toImage() if size is None else self.grab().scaled(size).toImage()

    # ---- reactions -------------------------------------------------------------------------

    def _guard(self, title: str, fn: Callable[[], object]) -> object | None:
        try:
            return fn()
        except InaplannerError as exc:
            self.error.emit(title, str(exc))
            return None

    def _on_dragged(self, positions: dict) -> None:
        if self.editor is None:
            return
        self._guard("Cannot move", lambda: self.editor.move_nodes(positions))

    def _on_overlay_changed(self, overlay: object) -> None:
        self._place_legend()
        self.viewport().update()
        self.overlay_changed.emit(overlay)

    # ---- mouse and keys --------------------------------------------------------------------

    def _node_at(self, pos: QPoint) -> NodeItem | None:
        for item in self.items(pos):
            if isinstance(item, NodeItem):
                return item
        return None

    def paintEvent(self, event) -> None:  # noqa: N802
        self._scene.set_simple(self.scale_factor() < geo.SIMPLE)
        self._scene.set_view_scale(self.scale_factor())
        self.paints += 1
        super().paintEvent(event)

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._place_legend()
        if self._fit_pending and self.isVisible():
            self.fit()

    def wheelEvent(self, event: QWheelEvent) -> None:  # noqa: N802
        delta = event.angleDelta().y()
        if delta == 0:
            return super().wheelEvent(event)
        self.zoom_by(math.pow(1.0015, delta), event.position())
        event.accept()

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if event.button() == Qt.MouseButton.MiddleButton:
            self._pan_from = event.position().toPoint()
            self.viewport().setCursor(Qt.CursorShape.ClosedHandCursor)
            event.accept()
            return
        if event.button() == Qt.MouseButton.LeftButton and self.tool in ("host", "switch", "programmable"):
            if self._node_at(event.position().toPoint()) is None and self.editor is not None:
                p = self.mapToScene(event.position().toPoint())
                if self._scene.snap_to_grid:
                    g = self._scene.grid
                    p = QPointF(round(p.x() / g) * g, round(p.y() / g) * g)
                self._guard("Cannot add", lambda: self.editor.add_node(self.tool, (p.x(), p.y())))
                event.accept()
                return
        if event.button() == Qt.MouseButton.LeftButton and self.tool == "link":
            node = self._node_at(event.position().toPoint())
            if node is not None:
                self._link_from = node.node_id
                start = node.pos()
                self._rubber_line = QGraphicsLineItem(start.x(), start.y(), start.x(), start.y())
                pen = QPen(QColor(self._scene.colours.link_selected), 2.0, Qt.PenStyle.DashLine)
                pen.setCosmetic(True)
                self._rubber_line.setPen(pen)
                self._rubber_line.setZValue(50)
                self._scene.addItem(self._rubber_line)
            event.accept()
            return
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if self._pan_from is not None:
            d = event.position().toPoint() - self._pan_from
            self._pan_from = event.position().toPoint()
            self.horizontalScrollBar().setValue(self.horizontalScrollBar().value() - d.x())
            self.verticalScrollBar().setValue(self.verticalScrollBar().value() - d.y())
            event.accept()
            return
        if self._rubber_line is not None:
            line = self._rubber_line.line()
            p = self.mapToScene(event.position().toPoint())
            line.setP2(p)
            self._rubber_line.setLine(line)
            event.accept()
            return
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if event.button() == Qt.MouseButton.MiddleButton and self._pan_from is not None:
            self._pan_from = None
            self.set_tool(self.tool)
            event.accept()
            return
        if self.tool == "link" and event.button() == Qt.MouseButton.LeftButton:
            start = self._link_from
            self._link_from = None
            if self._rubber_line is not None:
                self._scene.removeItem(self._rubber_line)
                self._rubber_line = None
            end = self._node_at(event.position().toPoint())
            if start is not None and end is not None and end.node_id != start and self.editor is not None:
                self._guard("Cannot link", lambda: self.editor.connect(start, end.node_id))
            event.accept()
            return
        super().mouseReleaseEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        if event.key() == Qt.Key.Key_Escape:
            self.set_tool("select")
            self._scene.select([])
            event.accept()
            return
        if event.key() == Qt.Key.Key_T and not event.modifiers() & ~Qt.KeyboardModifier.ShiftModifier:
            self.step_task(-1 if event.modifiers() & Qt.KeyboardModifier.ShiftModifier else 1)
            event.accept()
            return
        super().keyPressEvent(event)
