"""The canvas view: zoom, pan, fit, find, the drawing tools and the overlay legend."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QPoint, QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFontMetrics,
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
from inaplanner.gui.canvas.scene import CanvasScene
from inaplanner.gui.theme import LIGHT, CanvasColours, qcolor
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
        self.show_legend = True
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
        """Show only one task's flows (``"job/ps"``), or all with None."""
        self._scene.set_task_filter(task)

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
        """Zoom so the whole network is in view, beside or below the legend when one is shown
        (again when the view first gets its real size)."""
        self._fit_pending = not self.isVisible()
        rect = self._scene.content_rect()
        if rect.isEmpty():
            return
        vw = max(self.viewport().width() - 8, 50)
        vh = max(self.viewport().height() - 8, 50)
        lw, lh = self.legend_size() if (self.show_legend and self._scene.overlay is not None) else (0.0, 0.0)
        s_beside = min(max(vw - lw, 50) / rect.width(), vh / rect.height())
        s_below = min(vw / rect.width(), max(vh - lh, 50) / rect.height())
        s = min(max(s_beside, s_below), 1.5)  # a tiny network is not blown up
        if lw and s_below >= s_beside:
            target = rect.adjusted(0, -lh / s, 0, 0)
        elif lw:
            target = rect.adjusted(-lw / s, 0, 0, 0)
        else:
            target = QRectF(rect)
        self.setSceneRect(self._scene.sceneRect().united(target))
        self.setTransform(QTransform.fromScale(s, s))
        self.centerOn(target.center())

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

    def find(self, name: str) -> str | None:
        """Select and centre the node called ``name`` (exact id, else the first id containing it,
        ignoring case); returns its id or None."""
        ids = self._scene.node_ids
        text = name.strip()
        if not text:
            return None
        found = text if text in self._scene.items_by_id else None
        if found is None:
            low = text.lower()
            found = next((i for i in ids if i.lower() == low), None) or next((i for i in ids if low in i.lower()), None)
        if found is None:
            return None
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
        self.paints += 1
        super().paintEvent(event)

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
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
        super().keyPressEvent(event)

    # ---- the legend ------------------------------------------------------------------------

    def _legend_rows(self) -> tuple[list[str], list[tuple[str, str]], int]:
        ov = self._scene.overlay
        assert ov is not None
        rows = ov.legend()
        head = [ov.title, f"objective {ov.objective:.6g} ({ov.objective_kind})" + ("" if ov.feasible else ", INFEASIBLE")]
        max_tasks = 8
        task_rows = rows[5:]
        return head, rows[:5] + task_rows[:max_tasks], len(task_rows) - max_tasks

    def legend_size(self) -> tuple[float, float]:
        """Width and height (pixels, margins included) of the overlay legend."""
        head, shown, more = self._legend_rows()
        fm = QFontMetrics(self.font())
        texts = head + [t for _, t in shown] + ["aggregated flow", "raw flow"] + (["..."] if more > 0 else [])
        width = max(fm.horizontalAdvance(t) for t in texts) + 44
        return width + 20.0, (fm.height() + 3) * len(texts) + 10 + 20.0

    def drawForeground(self, painter: QPainter, rect: QRectF) -> None:  # noqa: N802
        ov = self._scene.overlay
        if ov is None or not self.show_legend:
            return
        colours = self._scene.colours
        painter.save()
        painter.resetTransform()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        painter.setFont(self.font())
        fm = painter.fontMetrics()
        line_h = fm.height() + 3
        head, shown, more = self._legend_rows()
        width, height = self.legend_size()
        box = QRectF(10, 10, width - 20, height - 20)
        painter.setPen(QPen(QColor(colours.outline), 1))
        painter.setBrush(qcolor(colours.legend_background))
        painter.drawRoundedRect(box, 5, 5)
        y = 10 + 5 + fm.ascent()
        painter.setPen(QColor(colours.label))
        for t in head:
            painter.drawText(QPointF(18, y), t)
            y += line_h
        for colour, text in shown:
            painter.setPen(QPen(QColor(colour), 4))
            painter.drawLine(QPointF(18, y - fm.ascent() / 3), QPointF(38, y - fm.ascent() / 3))
            painter.setPen(QColor(colours.label))
            painter.drawText(QPointF(44, y), text)
            y += line_h
        for style, text in ((Qt.PenStyle.SolidLine, "aggregated flow"), (Qt.PenStyle.DashLine, "raw flow")):
            painter.setPen(QPen(QColor(colours.label), 2, style))
            painter.drawLine(QPointF(18, y - fm.ascent() / 3), QPointF(38, y - fm.ascent() / 3))
            painter.setPen(QColor(colours.label))
            painter.drawText(QPointF(44, y), text)
            y += line_h
        if more > 0:
            painter.drawText(QPointF(44, y), f"... {more} more task(s)")
        painter.restore()
