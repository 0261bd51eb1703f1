"""Graphics items of the canvas.

Nodes are real items (``NodeItem``: selectable, movable, painted by Qt's C++ path item, so ten
thousand of them repaint fast; zoomed far out they switch to a plain box). Links, task flows and
text labels are each ONE layer item that paints everything at once: links bucketed by pen into a
few ``QPainterPath`` objects built from numpy arrays and cut into tiles so a paint draws only what it
can see; labels only for what is on screen and only when the level of detail allows. ``LinkItem`` is
a light handle on one link of the layer (pen, label, tooltip) for code and tests.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontMetricsF,
    QPainter,
    QPainterPath,
    QPen,
    QPolygonF,
)
from PySide6.QtWidgets import QGraphicsItem, QGraphicsPathItem, QStyleOptionGraphicsItem, QWidget

from inaplanner.gui.canvas import geometry as geo
from inaplanner.gui.theme import qcolor
from inaplanner.views.overlay import COLOURS, colour_class, width_for
from inaplanner.views.semantic import Occupancy, bundle_label

if TYPE_CHECKING:
    from inaplanner.gui.protocols import SceneControl

NODE_Z = 10.0
LINK_Z = 0.0
GROUP_Z = 0.5
THIN_BUNDLES = 400  # more bundles than this are drawn 1 px wide (and without antialiasing): thicker, they paint the canvas over
LABEL_ALONG = (0.35, 0.5, 0.65, 0.2, 0.8)  # where along a bundle its label may go, first choice first
DIM_SHARE = 0.25  # links and bundles off the focused task's tree: this much link colour on the background


def dimmed_colour(colours) -> QColor:
    """The pale, opaque colour of what is off the focused task's tree (opaque: alpha blending of
    thousands of antialiased lines costs several times more)."""
    a, b = QColor(colours.link), QColor(colours.background)
    return QColor.fromRgbF(*(DIM_SHARE * x + (1 - DIM_SHARE) * y
                             for x, y in zip(a.getRgbF()[:3], b.getRgbF()[:3], strict=True)))
FLOW_Z = 1.0
LABEL_Z = 20.0
FLOW_SPACING = 5.0  # scene units between parallel task flows
TILE_LINKS = 1024  # segments per tile: a paint draws only the tiles it can see


# ---- node shapes -------------------------------------------------------------------------------


@cache
def node_shape(kind: str, pipelines: int = 0) -> QPainterPath:
    """The outline of a node: a host box, a switch slab with arrows, and for a programmable switch
    one small mark per pipeline under the slab."""
    path = QPainterPath()
    if kind == "host":
        path.addRoundedRect(QRectF(-11, -8, 22, 16), 3, 3)
        path.moveTo(-6, 4)
        path.lineTo(6, 4)
        return path
    path.addRoundedRect(QRectF(-16, -9, 32, 18), 4, 4)
    for y, sign in ((-3.0, 1.0), (3.0, -1.0)):
        a, b = -9.0 * sign, 9.0 * sign
        path.moveTo(a, y)
        path.lineTo(b, y)
        path.moveTo(b - 3 * sign, y - 2.5)
        path.lineTo(b, y)
        path.lineTo(b - 3 * sign, y + 2.5)
    if pipelines > 0:
        n = min(pipelines, 8)
        w = 5.0
        gap = 2.0
        total = n * w + (n - 1) * gap
        for i in range(n):
            path.addRect(QRectF(-total / 2 + i * (w + gap), 11.0, w, 4.0))
    return path


NODE_FLAGS = QGraphicsItem.GraphicsItemFlag.ItemIsSelectable | QGraphicsItem.GraphicsItemFlag.ItemIsMovable


def _cosmetic(colour: str | QColor, width: float, style: Qt.PenStyle = Qt.PenStyle.SolidLine) -> QPen:
    """A pen of constant pixel width with flat caps. Flat (not round) caps keep Qt's raster engine
    on its line rasteriser: a round-capped pen wider than one pixel goes through the general path
    stroker, 10-100x slower on thousands of segments (worse antialiased); segment ends sit under
    the node shapes, so the caps are never seen."""
    pen = QPen(QColor(colour), width, style)
    pen.setCosmetic(True)
    pen.setCapStyle(Qt.PenCapStyle.FlatCap)
    return pen


class NodeItem(QGraphicsPathItem):
    """One host or switch. Its tooltip comes from the scene (current figures, overlay included).
    Moves are followed by the scene (mouse events), so no Python runs per item change."""

    def __init__(self, ctl: SceneControl, node_id: str, pos: tuple[float, float]) -> None:
        super().__init__()
        self._ctl = ctl
        self.node_id = node_id
        self.setZValue(NODE_Z)
        self.setPos(pos[0], pos[1])
        self.setFlags(NODE_FLAGS)
        self.kind = ""
        self.pipelines = 0
        self.simple = False

    def style(self, kind: str, pipelines: int, brush: QBrush, pen: QPen) -> None:
        """Shape, fill and outline."""
        if kind != self.kind or pipelines != self.pipelines or self.path().isEmpty():
            shape_kind = "host" if kind in ("host", "ps") else "switch"
            self.setPath(node_shape(shape_kind, pipelines))
        self.kind = kind
        self.pipelines = pipelines
        self.setBrush(brush)
        self.setPen(pen)

    def set_simple(self, simple: bool) -> None:
        """Zoomed far out the dots layer draws every node at once; the item paints nothing but
        stays selectable and movable."""
        if simple != self.simple:
            self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemHasNoContents, simple)
            self.simple = simple

    def toolTip(self) -> str:  # noqa: N802 (Qt naming)
        return self._ctl.node_tooltip(self.node_id)

    def label_text(self) -> str:
        return self._ctl.node_label(self.node_id)


# ---- tiles of segments -------------------------------------------------------------------------


Tile = tuple[QRectF, QPainterPath, np.ndarray]  # bounding box, path, the segments in it


def tiled_paths(seg: np.ndarray) -> list[Tile]:
    """Cut segments into tiles of neighbours (by the x of their middle; long segments apart) and
    build one path per tile with its bounding box (the segments are kept for clipping)."""
    n = seg.shape[0]
    if n == 0:
        return []
    x0 = np.minimum(seg[:, 0], seg[:, 2])
    x1 = np.maximum(seg[:, 0], seg[:, 2])
    width = float(x1.max() - x0.min()) or 1.0
    long = (x1 - x0) > width / 16
    mid = (x0 + x1) / 2
    order = np.lexsort((mid, long))
    tiles = []
    for start in range(0, n, TILE_LINKS):
        part = np.ascontiguousarray(seg[order[start:start + TILE_LINKS]], dtype=np.float64)
        lo_x = float(np.minimum(part[:, 0], part[:, 2]).min())
        hi_x = float(np.maximum(part[:, 0], part[:, 2]).max())
        lo_y = float(np.minimum(part[:, 1], part[:, 3]).min())
        hi_y = float(np.maximum(part[:, 1], part[:, 3]).max())
        tiles.append((QRectF(lo_x, lo_y, hi_x - lo_x, hi_y - lo_y), geo.segments_path(part), part))
    return tiles


def _touches(rect: QRectF, view: QRectF) -> bool:
    """Closed-interval overlap (a horizontal or vertical tile has zero width or height)."""
    return (rect.left() <= view.right() and rect.right() >= view.left()
            and rect.top() <= view.bottom() and rect.bottom() >= view.top())


def _inside(rect: QRectF, view: QRectF) -> bool:
    return (rect.left() >= view.left() and rect.right() <= view.right()
            and rect.top() >= view.top() and rect.bottom() <= view.bottom())


def dash_period(pen: QPen, scale: float) -> float:
    """Scene length of one repeat of a cosmetic pen's dash pattern (0 for a solid pen)."""
    if pen.style() == Qt.PenStyle.SolidLine:
        return 0.0
    width = pen.widthF() or 1.0
    return sum(pen.dashPattern()) * width / max(scale, 1e-12)


def draw_tiles(painter: QPainter, buckets: list, exposed: QRectF, margin: float, scale: float = 1.0) -> None:
    """Draw (pen, tiles) buckets: tiles outside the exposed rectangle are skipped, tiles inside it
    drawn from their ready path, and tiles across its edge clipped to it first. Zoomed in, a
    link across the network is thousands of pixels long; Qt would stroke (and dash) all of it
    only to throw most away, so the part on screen is cut out here (dashes kept in phase)."""
    view = exposed.adjusted(-margin, -margin, margin, margin)
    rect = (view.left(), view.top(), view.width(), view.height())
    painter.setBrush(Qt.BrushStyle.NoBrush)
    for pen, tiles in buckets:
        painter.setPen(pen)
        period = None
        for box, path, seg in tiles:
            if not _touches(box, view):
                continue
            if _inside(box, view):
                painter.drawPath(path)
                continue
            if period is None:
                period = dash_period(pen, scale)
            part = geo.clip_segments(seg, rect, period)
            if part.shape[0]:
                painter.drawPath(geo.segments_path(part))


# ---- layers ------------------------------------------------------------------------------------


def _small_unique(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(key, return_inverse=True)`` for small non-negative integer keys, in linear time
    (a count per value instead of a sort: the pen keys of 200,000 links in a millisecond)."""
    present = np.bincount(key) > 0
    uniq = np.flatnonzero(present)
    lookup = np.cumsum(present) - 1
    return uniq, lookup[key]


class _Layer(QGraphicsItem):
    """An item covering the scene that paints many things at once and never takes the mouse."""

    def __init__(self, ctl: SceneControl, z: float) -> None:
        super().__init__()
        self._ctl = ctl
        self.setZValue(z)
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
        self.setAcceptHoverEvents(False)
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemUsesExtendedStyleOption, True)
        self._rect = QRectF()

    def set_rect(self, rect: QRectF) -> None:
        if rect != self._rect:
            self.prepareGeometryChange()
            self._rect = QRectF(rect)

    def boundingRect(self) -> QRectF:  # noqa: N802
        return self._rect

    def shape(self) -> QPainterPath:
        return QPainterPath()  # never under the mouse


class LinkLayer(_Layer):
    """Every link, drawn as a few paths: one per (colour, width) bucket, then the selected links."""

    def __init__(self, ctl: SceneControl) -> None:
        super().__init__(ctl, LINK_Z)
        self._buckets: list[tuple[QPen, list[Tile]]] = []
        self.colour_key = np.zeros(0, dtype=np.int64)  # per link: index into self._pens
        self._pens: list[QPen] = []
        self.dirty = True

    def invalidate(self) -> None:
        self.dirty = True
        self.update()

    def bucket_count(self) -> int:
        if self.dirty:
            self.rebuild()
        return len(self._buckets)

    def pen_for(self, index: int) -> QPen:
        if self.dirty:
            self.rebuild()
        if index in self._ctl.selected_links:
            return self._selected_pen(index)
        return QPen(self._pens[int(self.colour_key[index])])

    def _selected_pen(self, index: int) -> QPen:
        base = self._pens[int(self.colour_key[index])] if self._pens else _cosmetic("#000", 1.0)
        return _cosmetic(self._ctl.colours.link_selected, base.widthF() + 2.0)

    def rebuild(self) -> None:
        """Regroup links into pen buckets (after a geometry, overlay, theme or selection change)."""
        ctl = self._ctl
        seg = ctl.link_segments
        n = seg.shape[0]
        ov = ctl.overlay
        if ov is not None and ov.link_count == n:
            cls = ov.link_class
            widths = ov.link_width
            colours = list(COLOURS)
        else:
            cls = np.zeros(n, dtype=np.int64)
            widths = width_for(ctl.link_capacity) if n else np.zeros(0)
            colours = [ctl.colours.link]
        wkey = np.round(np.asarray(widths) * 2).astype(np.int64) if n else np.zeros(0, dtype=np.int64)
        key = cls * 100 + wkey
        focus = getattr(ctl, "focus_links", None)
        dim = len(colours)
        if focus is not None and focus.shape[0] == n:
            colours = [*colours, dimmed_colour(ctl.colours)]
            key = np.where(focus, key, dim * 100 + 2)
        uniq, inverse = _small_unique(key) if n else (np.zeros(0, dtype=np.int64), key)
        self._pens = [_cosmetic(colours[int(k) // 100], (int(k) % 100) / 2.0) for k in uniq]
        self.colour_key = inverse.reshape(-1)
        rank = np.where(uniq // 100 == dim, -1, uniq // 100)
        order = np.argsort(rank, kind="stable")  # dimmed, idle first, violated last (on top)
        visible = getattr(ctl, "link_visible", None)
        shown = np.ones(n, dtype=bool) if visible is None or visible.shape[0] != n else visible
        buckets = []
        for b in order:
            buckets.append((self._pens[int(b)], tiled_paths(seg[(self.colour_key == b) & shown])))
        sel = sorted(i for i in ctl.selected_links if i < n and shown[i])
        if sel:
            width = max(self._pens[int(self.colour_key[i])].widthF() for i in sel) + 2.0
            buckets.append((_cosmetic(ctl.colours.link_selected, width), tiled_paths(seg[sel])))
        self._buckets = buckets
        self.dirty = False

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None) -> None:
        if self.dirty:
            self.rebuild()
        scale = painter.worldTransform().m11()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, geo.lod_level(scale) == "near")
        draw_tiles(painter, self._buckets, option.exposedRect, 8.0 / max(scale, 1e-9), scale)


class NodeDotsLayer(_Layer):
    """Zoomed far out: every node as one thick stroke as wide as the node (at least 2 pixels
    high), a few paths bucketed by colour (the outline colour when it says something: overlay,
    job highlight, selection); selected nodes on top."""

    def __init__(self, ctl: SceneControl) -> None:
        super().__init__(ctl, NODE_Z - 0.5)
        self._buckets: list[tuple[QColor, float, QPainterPath]] = []
        self.dirty = True
        self.setVisible(False)

    def invalidate(self) -> None:
        self.dirty = True
        if self.isVisible():
            self.update()

    def rebuild(self) -> None:
        ctl = self._ctl
        xy = ctl.node_xy
        colours = list(ctl.node_colour)
        selected = [ctl.node_index[n] for n in ctl.selected_node_ids() if n in ctl.node_index]
        for k in selected:
            colours[k] = ctl.colours.link_selected
        names = sorted(set(colours), key=lambda c: c == ctl.colours.link_selected)  # selection on top
        code = {c: i for i, c in enumerate(names)}
        codes = np.fromiter((code[c] for c in colours), dtype=np.int64, count=len(colours))
        st = getattr(ctl, "zstate", None)
        shown = st.node_visible if st is not None and st.node_visible.shape[0] == len(colours) else None
        self._buckets = []
        for colour in names:
            idx = np.flatnonzero((codes == code[colour]) if shown is None else (codes == code[colour]) & shown)
            half = np.where(np.asarray(ctl.node_is_switch, dtype=bool)[idx], 16.0, 11.0)
            x, y = xy[idx, 0], xy[idx, 1]
            seg = np.column_stack([x - half, y, x + half, y])
            self._buckets.append((QColor(colour), 18.0, geo.segments_path(seg)))
        self.dirty = False

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None) -> None:
        if self.dirty:
            self.rebuild()
        scale = painter.worldTransform().m11()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        for colour, height, path in self._buckets:
            pen = QPen(colour, max(2.0, height * scale))
            pen.setCosmetic(True)
            pen.setCapStyle(Qt.PenCapStyle.SquareCap)
            painter.setPen(pen)
            painter.drawPath(path)


class FlowLayer(_Layer):
    """The focused task's flows beside their links: solid where the data is aggregated, dashed
    where raw (GRID Fig. 1 style), in the task's colour, with direction arrows when zoomed in. With
    all tasks shown no flow is drawn (the link labels count them): every task's flows at once are
    unreadable beyond a toy network."""

    def __init__(self, ctl: SceneControl) -> None:
        super().__init__(ctl, FLOW_Z)
        self._buckets: list[tuple[QPen, list[Tile]]] = []
        self._arrows: list[tuple[QColor, np.ndarray]] = []  # colour, rows x1 y1 x2 y2 (oriented)
        self.dirty = True

    def invalidate(self) -> None:
        self.dirty = True
        self.update()

    def segment_count(self) -> int:
        if self.dirty:
            self.rebuild()
        return sum(a.shape[0] for _, a in self._arrows)

    def rebuild(self) -> None:
        ctl = self._ctl
        ov = ctl.overlay
        self._buckets = []
        self._arrows = []
        self.dirty = False
        if ov is None or ov.link_count != ctl.link_segments.shape[0] or len(ov.segments) == 0:
            return
        if ov.task_filter is None or ov.task_filter not in ov.tasks:
            return
        seg_all = ctl.link_segments
        visible = getattr(ctl, "link_visible", None)
        for slot, ti in enumerate(ov.visible_tasks()):
            part = ov.segments.of_task(ti)
            if visible is not None and visible.shape[0] == seg_all.shape[0]:
                keep = visible[part.link]
                part = type(part)(part.task[keep], part.link[keep], part.direction[keep], part.aggregated[keep])
            if len(part) == 0:
                continue
            base = seg_all[part.link]
            rev = part.direction == 1
            oriented = base.copy()
            oriented[rev] = base[rev][:, [2, 3, 0, 1]]
            lane = (slot % 6) + 1.0
            for aggregated in (True, False):
                m = part.aggregated == aggregated
                if not m.any():
                    continue
                offset = FLOW_SPACING * (lane + (0.0 if aggregated else 0.5))
                rows = geo.offset_segments(oriented[m], np.full(int(m.sum()), offset))
                style = Qt.PenStyle.SolidLine if aggregated else Qt.PenStyle.DashLine
                pen = _cosmetic(ov.task_colours[ti], 2.0 if aggregated else 1.6, style)
                self._buckets.append((pen, tiled_paths(rows)))
                self._arrows.append((QColor(ov.task_colours[ti]), rows))

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None) -> None:
        if self.dirty:
            self.rebuild()
        if not self._buckets:
            return
        tr = painter.worldTransform()
        lod = geo.lod_level(tr.m11())
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, lod == "near")
        draw_tiles(painter, self._buckets, option.exposedRect, 8.0 / max(tr.m11(), 1e-9), tr.m11())
        if lod == "far":
            return
        exposed = option.exposedRect
        rect = (exposed.left(), exposed.top(), exposed.width(), exposed.height())
        painter.save()
        painter.resetTransform()
        painter.setPen(Qt.PenStyle.NoPen)
        budget = geo.MAX_LABELS
        for colour, rows in self._arrows:
            if budget <= 0:
                break
            mx = rows[:, 0] + 0.6 * (rows[:, 2] - rows[:, 0])
            my = rows[:, 1] + 0.6 * (rows[:, 3] - rows[:, 1])
            pick = geo.pick_labels(mx, my, rect, budget)
            budget -= pick.size
            painter.setBrush(colour)
            for i in pick.tolist():
                tip = tr.map(QPointF(mx[i], my[i]))
                d = tr.map(QPointF(rows[i, 2], rows[i, 3])) - tr.map(QPointF(rows[i, 0], rows[i, 1]))
                length = (d.x() ** 2 + d.y() ** 2) ** 0.5
                if length < 12:
                    continue
                ux, uy = d.x() / length, d.y() / length
                back = QPointF(tip.x() - 7 * ux, tip.y() - 7 * uy)
                painter.drawPolygon(
                    QPolygonF([tip, QPointF(back.x() - 3.5 * uy, back.y() + 3.5 * ux),
                               QPointF(back.x() + 3.5 * uy, back.y() - 3.5 * ux)])
                )
        painter.restore()


class GroupLayer(_Layer):
    """Semantic zoom: closed pods (racks, planes) as boxes with one block per rack, open ones as a
    light frame, and the links between closed groups as bundles coloured by their worst link."""

    def __init__(self, ctl: SceneControl) -> None:
        super().__init__(ctl, GROUP_Z)
        self._bundles: list[tuple[QPen, list[Tile]]] = []
        self.bundle_colour: list[str] = []  # per bundle, as painted (tests read it)
        self.dirty = True

    def invalidate(self) -> None:
        self.dirty = True
        self.update()

    def rebuild(self) -> None:
        ctl = self._ctl
        st = getattr(ctl, "zstate", None)
        z = getattr(ctl, "zoom", None)
        self._bundles = []
        self.bundle_colour = []
        self.dirty = False
        if st is None or z is None or st.bundle_count == 0:
            return
        ov = ctl.overlay
        count = np.array([len(x) for x in st.bundle_links], dtype=float)
        width = np.clip(1.0 + np.round(np.log2(np.maximum(count, 1.0))) / 2.0, 1.0, 5.0)
        if st.bundle_count > THIN_BUNDLES:  # k=64 at fit: 2,048 bundles over 64 pods 15 px wide
            width = np.ones_like(width)
        if ov is not None and ov.link_count == ctl.link_segments.shape[0]:
            mx, _mean = ctl.bundle_stats()
            bad = np.zeros(st.bundle_count, dtype=bool)
            m = st.bundle_of_link >= 0
            np.logical_or.at(bad, st.bundle_of_link[m], ov.link_violated[m])
            cls = colour_class(mx, bad)
            colours: list = list(COLOURS)
        else:
            cls = np.zeros(st.bundle_count, dtype=np.int64)
            colours = [ctl.colours.link]
        focus = getattr(ctl, "focus_links", None)
        dim = len(colours)
        if focus is not None:
            on = np.zeros(st.bundle_count, dtype=bool)
            m = st.bundle_of_link >= 0
            np.logical_or.at(on, st.bundle_of_link[m], focus[m])
            colours = [*colours, dimmed_colour(ctl.colours)]
            cls = np.where(on, cls, dim)
        self.bundle_colour = [QColor(colours[int(c)]).name() for c in cls]
        key = cls * 100 + np.round(width * 2).astype(np.int64)
        uniq = np.unique(key)
        rank = np.where(uniq // 100 == dim, -1, uniq // 100)
        for k in uniq[np.argsort(rank, kind="stable")]:
            pen = _cosmetic(colours[int(k) // 100], (int(k) % 100) / 2.0)
            self._bundles.append((pen, tiled_paths(st.bundle_xy[key == k])))

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None) -> None:
        ctl = self._ctl
        st = getattr(ctl, "zstate", None)
        z = getattr(ctl, "zoom", None)
        if st is None or z is None:
            return
        if self.dirty:
            self.rebuild()
        scale = painter.worldTransform().m11()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, st.bundle_count <= THIN_BUNDLES)
        draw_tiles(painter, self._bundles, option.exposedRect, 8.0 / max(scale, 1e-9), scale)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        c = ctl.colours
        ov = ctl.overlay
        inner = ctl.inner_stats() if ov is not None and ov.link_count == ctl.link_segments.shape[0] else None
        exposed = option.exposedRect
        fill = QColor(c.switch)
        frame = _cosmetic(c.outline, 1.0, Qt.PenStyle.DashLine)
        boxes = z.boxes
        for gi in np.flatnonzero(z.collapsible).tolist():
            x0, y0, x1, y1 = boxes[gi]
            rect = QRectF(x0, y0, x1 - x0, y1 - y0)
            if not _touches(rect, exposed):
                continue
            if st.open[gi]:
                painter.setPen(frame)
                painter.setBrush(Qt.BrushStyle.NoBrush)
                painter.drawRect(rect)
                continue
            outline = c.outline if inner is None else COLOURS[int(colour_class(np.array([inner[gi]]), np.array([False]))[0])]
            painter.setPen(_cosmetic(outline, 2.5 if inner is not None else 1.2))
            painter.setBrush(fill)
            painter.drawRoundedRect(rect, 6.0 / max(scale, 1e-9) if scale < 1 else 6.0, 6.0 / max(scale, 1e-9) if scale < 1 else 6.0)
        # racks of closed pods: one block each
        if z.rack_boxes.shape[0]:
            closed = ~st.open[z.rack_group] & (z.kind[z.rack_group] == "pod")
            if closed.any():
                painter.setPen(_cosmetic(c.outline, 1.0))
                painter.setBrush(QColor(c.host))
                for x0, y0, x1, y1 in z.rack_boxes[closed].tolist():
                    r = QRectF(x0, y0, x1 - x0, y1 - y0)
                    if _touches(r, exposed):
                        painter.drawRect(r)


class LabelLayer(_Layer):
    """Text drawn at a constant pixel size: group and bundle labels, switch aggregation badges,
    node names, link ``load/capacity`` labels and port numbers, as the level of detail allows and
    only where they fit: a label overlapping one drawn before it (higher priority) is dropped."""

    def __init__(self, ctl: SceneControl) -> None:
        super().__init__(ctl, LABEL_Z)
        self.font = QFont()
        self.font.setPointSizeF(8.0)
        self.bold = QFont(self.font)
        self.bold.setBold(True)
        self.small = QFont(self.font)
        self.small.setPointSizeF(6.5)
        self.drawn = 0  # labels drawn by the last paint (tests and the benchmark read it)
        self.dropped = 0  # labels left out because they would overlap another
        self.boxes: list[tuple[float, float, float, float]] = []  # pixel rectangles drawn (tests)

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None) -> None:
        ctl = self._ctl
        tr = painter.worldTransform()
        scale = tr.m11()
        lod = geo.lod_level(scale)
        self.drawn = 0
        self.dropped = 0
        self.boxes = []
        if not ctl.node_ids:
            return
        exposed = option.exposedRect
        rect = (exposed.left(), exposed.top(), exposed.width(), exposed.height())
        colours = ctl.colours
        painter.save()
        painter.resetTransform()
        painter.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
        painter.setFont(self.font)
        fm = QFontMetricsF(self.font)
        fmb = QFontMetricsF(self.bold)
        occ = Occupancy()
        background = qcolor(colours.label_background)

        def place(box: QRectF) -> bool:
            if occ.place(box.left(), box.top(), box.right(), box.bottom()):
                self.drawn += 1
                self.boxes.append((box.left(), box.top(), box.right(), box.bottom()))
                return True
            self.dropped += 1
            return False

        def plate(box: QRectF, text: str, colour: QColor | None = None) -> None:
            """A label on the background colour, in a box ``place`` accepted."""
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(background)
            painter.drawRect(box)
            painter.setPen(colour if colour is not None else QColor(colours.label))
            painter.drawText(box, Qt.AlignmentFlag.AlignCenter, text)

        xy = ctl.node_xy
        ov = ctl.overlay
        st = getattr(ctl, "zstate", None)
        z = getattr(ctl, "zoom", None)
        visible = st.node_visible if st is not None else None
        # 1. group boxes: their names where the box is wide enough
        if z is not None and st is not None:
            painter.setFont(self.bold)
            for gi in np.flatnonzero(z.collapsible).tolist():
                x0, y0, x1, y1 = z.boxes[gi]
                a, b = tr.map(QPointF(x0, y0)), tr.map(QPointF(x1, y1))
                text = z.group_ids[gi]
                w = fmb.horizontalAdvance(text)
                if b.x() - a.x() < w + 4:
                    continue
                if st.open[gi]:
                    box = QRectF(a.x() + 2, a.y() - fmb.height() - 1, w + 4, fmb.height())
                else:
                    box = QRectF((a.x() + b.x()) / 2 - w / 2 - 2, a.y() + 3, w + 4, fmb.height())
                if place(box):
                    plate(box, text)
            painter.setFont(self.font)
            # bundle labels (max / mean), worst first
            if ov is not None and ov.link_count == ctl.link_segments.shape[0] and st.bundle_count:
                mx, mean = ctl.bundle_stats()
                bxy = st.bundle_xy
                mid_x = bxy[:, 0] + 0.35 * (bxy[:, 2] - bxy[:, 0])
                mid_y = bxy[:, 1] + 0.35 * (bxy[:, 3] - bxy[:, 1])
                pick = geo.pick_labels(mid_x, mid_y, rect, 400)
                pick = pick[np.argsort(-mx[pick], kind="stable")]
                fl = getattr(ctl, "focus_links", None)
                if fl is not None:  # a focused task: only the bundles its flows use
                    on = np.zeros(st.bundle_count, dtype=bool)
                    m = st.bundle_of_link >= 0
                    np.logical_or.at(on, st.bundle_of_link[m], fl[m])
                    pick = pick[on[pick]]
                for b in pick.tolist():
                    if mx[b] <= 0:
                        continue
                    text = bundle_label(float(mx[b]), float(mean[b]), len(st.bundle_links[b]))
                    w = fm.horizontalAdvance(text)
                    # along the bundle, where no label is yet: many bundles leave one row of
                    # boxes (a fat-tree's planes), so one fixed point would put their labels in a line
                    for t in LABEL_ALONG:
                        p = tr.map(QPointF(bxy[b, 0] + t * (bxy[b, 2] - bxy[b, 0]),
                                           bxy[b, 1] + t * (bxy[b, 3] - bxy[b, 1])))
                        box = QRectF(p.x() - w / 2 - 2, p.y() - fm.height() / 2, w + 4, fm.height())
                        if place(box):
                            plate(box, text)
                            break
        far_names = False  # zoomed far out on a grouped network: the few single switches get names
        if lod == "far":
            is_sw = np.asarray(ctl.node_is_switch, dtype=bool)
            few = np.flatnonzero(visible & is_sw) if visible is not None else np.zeros(0, dtype=np.int64)
            few = few[geo.in_rect(xy[few, 0], xy[few, 1], rect)] if few.size <= 5000 else few
            if few.size == 0 or few.size > 100:
                painter.restore()
                return
            far_names = True
        budget = geo.MAX_LABELS
        focus_sw = getattr(ctl, "focus_switches", set())
        focus_links = getattr(ctl, "focus_links", None)
        # 2. switch aggregation badges from the overlay (with a focused task: its merge switches)
        if ov is not None and ov.switches and not far_names:
            ids = [s for s in ov.switches if s in ctl.node_index and (focus_links is None or s in focus_sw)]
            k = np.fromiter((ctl.node_index[s] for s in ids), dtype=np.int64, count=len(ids))
            if visible is not None and k.size:
                keep = visible[k]
                ids = [s for s, ok in zip(ids, keep.tolist(), strict=True) if ok]
                k = k[keep]
            inside = geo.pick_labels(xy[k, 0], xy[k, 1], rect, budget) if k.size else k
            painter.setFont(self.bold)
            for j in inside.tolist():
                so = ov.switches[ids[j]]
                p = tr.map(QPointF(xy[k[j], 0], xy[k[j], 1]))
                text = f"{so.label}  {so.pipelines_label}"
                if focus_links is not None and ov.task_filter in ov.tasks:  # the focused task's merge
                    text = ov.merge_label(ov.tasks.index(ov.task_filter), ids[j]) or text
                w = fmb.horizontalAdvance(text)
                box = QRectF(p.x() - w / 2 - 3, p.y() - 12 * min(scale, 1.5) - fmb.height() - 6, w + 6, fmb.height() + 2)
                if not place(box):
                    continue
                painter.setBrush(qcolor(colours.label_background))
                painter.setPen(QPen(QColor(so.colour), 1.5))
                painter.drawRoundedRect(box, 3, 3)
                painter.setPen(QColor(so.colour if so.violated else colours.label))
                painter.drawText(box, Qt.AlignmentFlag.AlignCenter, text)
            painter.setFont(self.font)
        # 3. node names: switches first, then hosts; no name over another node's shape
        idx = geo.pick_labels(xy[:, 0], xy[:, 1], rect, budget)
        if visible is not None:
            idx = idx[visible[idx]]
        is_switch = np.asarray(ctl.node_is_switch, dtype=bool)
        for i in idx.tolist():
            p = tr.map(QPointF(xy[i, 0], xy[i, 1]))
            hw, hh = (16.0, 15.5) if is_switch[i] else (11.0, 8.0)  # shape, pipeline marks included
            occ.block(p.x() - hw * scale, p.y() - 9.0 * scale if is_switch[i] else p.y() - hh * scale,
                      p.x() + hw * scale, p.y() + hh * scale)
        if (lod == "mid" and idx.size > 200) or far_names:
            idx = idx[is_switch[idx]]
        idx = np.concatenate([idx[is_switch[idx]], idx[~is_switch[idx]]]) if idx.size else idx
        painter.setPen(QColor(colours.label))
        ascent = fm.ascent()
        for i in idx.tolist():
            nid = ctl.node_ids[i]
            p = tr.map(QPointF(xy[i, 0], xy[i, 1]))
            dy = (15.5 if ctl.node_is_switch[i] else 8.0) * scale + 2.0  # just under the shape
            w = fm.horizontalAdvance(nid)
            box = QRectF(p.x() - w / 2, p.y() + dy, w, fm.height())
            if place(box):
                painter.drawText(QPointF(box.left(), box.top() + ascent), nid)
        # 4. link labels: load/capacity (and flow count with all tasks shown), busiest first
        seg = ctl.link_segments
        if ov is not None and ov.link_count == seg.shape[0] and seg.shape[0] and not far_names:
            mx = (seg[:, 0] + seg[:, 2]) / 2
            my = (seg[:, 1] + seg[:, 3]) / 2
            pick = geo.pick_labels(mx, my, rect, budget)
            lv = getattr(ctl, "link_visible", None)
            if lv is not None:
                pick = pick[lv[pick]]
            if focus_links is not None:
                pick = pick[focus_links[pick]]
            util = np.nan_to_num(ov.link_util[pick]).max(axis=1) if pick.size else np.zeros(0)
            if lod != "near" or scale < 2.0:  # idle links get "0/capacity" only when zoomed right in
                loaded = ov.link_load[pick].max(axis=1) > 0 if pick.size else np.zeros(0, dtype=bool)
                pick, util = pick[loaded], util[loaded]
            pick = pick[np.argsort(-util, kind="stable")]
            all_tasks = ov.task_filter is None and bool(ov.tasks)
            for i in pick.tolist():
                text = ov.link_label(i)
                if all_tasks:
                    n_flows = int(ov.link_flows[i].sum())
                    if n_flows:
                        text += f" · {n_flows} flow{'s' if n_flows != 1 else ''}"
                p = tr.map(QPointF(mx[i], my[i]))
                violated = bool(ov.link_violated[i])
                f = self.bold if violated else self.font
                w = (fmb if violated else fm).horizontalAdvance(text)
                box = QRectF(p.x() - w / 2 - 2, p.y() - fm.height() / 2, w + 4, fm.height())
                if not place(box):
                    continue
                painter.setFont(f)
                plate(box, text, QColor(COLOURS[int(ov.link_class[i])] if violated else colours.label))
            painter.setFont(self.font)
        # 5. port numbers at switch ends, near zoom only
        if lod == "near" and seg.shape[0]:
            painter.setPen(QColor(colours.label))
            painter.setFont(self.small)
            fms = QFontMetricsF(self.small)
            ends = ctl.port_labels()
            if ends.shape[0]:
                pick = geo.pick_labels(ends[:, 0], ends[:, 1], rect, geo.MAX_LABELS)
                for i in pick.tolist():
                    p = tr.map(QPointF(ends[i, 0], ends[i, 1]))
                    text = str(int(ends[i, 2]))
                    w = fms.horizontalAdvance(text)
                    box = QRectF(p.x() - w / 2, p.y() - fms.height() / 2, w, fms.height())
                    if place(box):
                        painter.drawText(QPointF(box.left(), box.top() + fms.ascent()), text)
        painter.restore()


class LinkItem:
    """A handle on one link of the canvas: its pen, label and tooltip as painted now."""

    def __init__(self, ctl: SceneControl, index: int) -> None:
        self._ctl = ctl
        self.index = index

    def pen(self) -> QPen:
        return self._ctl.link_layer.pen_for(self.index)

    def colour(self) -> str:
        return self.pen().color().name()

    def label_text(self) -> str:
        return self._ctl.link_label(self.index)

    def toolTip(self) -> str:  # noqa: N802
        return self._ctl.link_tooltip(self.index)

    def line(self) -> QLineF:
        s = self._ctl.link_segments[self.index]
        return QLineF(float(s[0]), float(s[1]), float(s[2]), float(s[3]))

    def isSelected(self) -> bool:  # noqa: N802
        return self.index in self._ctl.selected_links

    def is_violated(self) -> bool:
        ov = self._ctl.overlay
        return bool(ov is not None and ov.link_violated[self.index])
