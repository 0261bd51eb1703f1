"""The scene: listens to the :class:`ScenarioDocument` and mirrors it in graphics items.

It owns no data of its own beyond what it draws: node items keyed by id, numpy arrays of node
positions and link end points (fed to the layers), the link selection, the job highlight and the
current overlay. A node's item is made the first time the node is shown (or asked for with
:meth:`CanvasScene.node_item`): a fat-tree k=64 opens with its 70,656 nodes in closed pods, and
making and indexing an item for each held the window for 1.3 s. Edits never happen here: a
finished drag is reported with ``nodes_dragged`` and the controller turns it into an undoable
command.
"""

from __future__ import annotations

import numpy as np
import shiboken6
from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QPen, QTransform
from PySide6.QtWidgets import (
    QGraphicsScene,
    QGraphicsSceneHelpEvent,
    QGraphicsSceneMouseEvent,
    QToolTip,
)

from inaplanner.errors import InaplannerError
from inaplanner.gui.canvas import geometry as geo
from inaplanner.gui.canvas.items import (
    FlowLayer,
    GroupLayer,
    LabelLayer,
    LinkItem,
    LinkLayer,
    NodeDotsLayer,
    NodeItem,
)
from inaplanner.gui.theme import LIGHT, CanvasColours
from inaplanner.model import Switch
from inaplanner.model.document import DocEvent, ScenarioDocument
from inaplanner.views.overlay import Overlay, fmt
from inaplanner.views.semantic import SemanticZoom, ZoomState, network_arrays, wants_grouping

MARGIN = 120.0
HIT_PIXELS = 6.0  # how close (pixels) a click must be to pick a link


class CanvasScene(QGraphicsScene):
    """Graphics mirror of a document."""

    nodes_dragged = Signal(dict)  # {node id: (x, y)} after the user dragged nodes
    link_selection_changed = Signal()
    overlay_changed = Signal(object)  # the new Overlay or None
    groups_changed = Signal()  # a pod (rack, plane) opened or closed

    def __init__(self, document: ScenarioDocument, colours: CanvasColours = LIGHT, parent=None) -> None:
        super().__init__(parent)
        self.document = document
        self.colours = colours
        self.overlay: Overlay | None = None
        self.snap_to_grid = False
        self.grid = 20.0
        self.selected_links: set[int] = set()
        self.highlighted: dict[str, str] = {}  # node id -> colour (job highlight)
        self.items_by_id: dict[str, NodeItem] = {}  # the nodes shown so far (made when first shown)
        self.node_ids: list[str] = []
        self.node_index: dict[str, int] = {}
        self.node_is_switch: list[bool] = []
        self.node_xy = np.zeros((0, 2))
        self.link_a = np.zeros(0, dtype=np.int64)
        self.link_b = np.zeros(0, dtype=np.int64)
        self.link_segments = np.zeros((0, 4))
        self.link_capacity = np.zeros(0)
        self.link_ends: list[tuple[str, str]] = []
        self.node_colour: list[str] = []  # what the far-zoom dots layer paints each node with
        self._ports: np.ndarray | None = None
        self._syncing = False
        self._pressed = False
        self.simple = False
        self._ps_ids: set[str] = set()
        # semantic zoom (large tiered networks): groups drawn as boxes, links between them bundled
        self.zoom: SemanticZoom | None = None
        self.zstate: ZoomState | None = None
        self.link_visible: np.ndarray | None = None  # None: every link drawn as itself
        self.user_open: set[str] = set()
        self.user_closed: set[str] = set()
        self.view_scale = 1.0
        self._auto: np.ndarray | None = None  # groups open by the zoom alone, at the last scale
        self._bundle_cache: tuple | None = None
        self._stale_style: set[str] = set()  # hidden nodes whose style is out of date
        self._inner_cache: tuple | None = None
        self.grouping_enabled = True
        # task focus: links and switches of the focused task's tree (None: all tasks)
        self.focus_links: np.ndarray | None = None
        self.focus_switches: set[str] = set()
        self.setItemIndexMethod(QGraphicsScene.ItemIndexMethod.BspTreeIndex)
        self.setBackgroundBrush(QColor(colours.background))
        self.link_layer = LinkLayer(self)
        self.flow_layer = FlowLayer(self)
        self.label_layer = LabelLayer(self)
        self.dots_layer = NodeDotsLayer(self)
        self.group_layer = GroupLayer(self)
        for layer in self._layers():
            self.addItem(layer)
        self.selectionChanged.connect(self._selection_changed)
        unsubscribe = document.subscribe(self._on_event)
        self._unsubscribe = unsubscribe
        self.destroyed.connect(lambda *_: unsubscribe())
        self.rebuild()

    def _layers(self) -> tuple:
        return (self.link_layer, self.flow_layer, self.label_layer, self.dots_layer, self.group_layer)

    def _selection_changed(self) -> None:
        # Qt emits selectionChanged while it tears the scene down, after the layers are deleted
        if shiboken6.isValid(self.dots_layer):
            self.dots_layer.invalidate()

    # ---- building ----------------------------------------------------------------------------

    def detach(self) -> None:
        self._unsubscribe()

    def rebuild(self) -> None:
        """Throw every node item away and build the scene again from the document."""
        self._syncing = True
        try:
            for item in self.items_by_id.values():
                self.removeItem(item)
            self.items_by_id = {}
            sc = self.document.scenario
            n = len(sc.nodes)
            # a fixed BSP depth: Qt's automatic choice re-partitions as items come and go
            self.setBspTreeDepth(int(min(12, max(4, np.ceil(np.log2(max(n, 1)) / 1.5)))))
            self.selected_links.clear()
        finally:
            self._syncing = False
        self._ps_ids = self._roles()[1]
        self._stale_style.clear()
        self._refresh_arrays()  # makes (and styles) the items of the nodes shown

    def _add_item(self, k: int) -> NodeItem:
        """Make the item of node number ``k`` at the scene's position of it (styled by the caller)."""
        nid = self.node_ids[k]
        item = NodeItem(self, nid, (float(self.node_xy[k, 0]), float(self.node_xy[k, 1])))
        if self.simple:
            item.set_simple(True)
        self.items_by_id[nid] = item
        self.addItem(item)
        return item

    def _show(self, ks: list[int], visible: np.ndarray | None) -> None:
        """Show or hide the items of these node numbers (``visible`` None: all shown), making
        the missing items of shown nodes, and style those made now or styled while hidden."""
        restyle: list[str] = []
        ids = self.node_ids
        items = self.items_by_id
        stale = self._stale_style
        self._syncing = True
        try:
            for k in ks:
                on = True if visible is None else bool(visible[k])
                item = items.get(ids[k])
                if item is None:
                    if on:
                        self._add_item(k)
                        restyle.append(ids[k])
                    continue
                if item.isVisible() != on:
                    item.setVisible(on)
                if on:
                    if ids[k] in stale:
                        stale.discard(ids[k])
                        restyle.append(ids[k])
                elif item.isSelected():
                    item.setSelected(False)
        finally:
            self._syncing = False
        if restyle:
            self.restyle_nodes(restyle)

    def _refresh_arrays(self) -> None:
        """Node positions and link end points as arrays, from the document."""
        sc = self.document.scenario
        arrays = network_arrays(sc)  # made while the file was read, or now after an edit
        self.node_ids = arrays.node_ids
        self.node_index = arrays.node_index
        self.node_is_switch = arrays.is_switch
        xy = np.array([n.pos if n.pos is not None else (0.0, 0.0) for n in sc.nodes], dtype=float)
        self.node_xy = xy.reshape(-1, 2)
        self.link_a = arrays.link_a
        self.link_b = arrays.link_b
        self.link_capacity = arrays.capacity
        self.link_ends = arrays.link_ends
        if len(self.node_colour) != len(self.node_ids):
            self.node_colour = [self.colours.outline] * len(self.node_ids)
        self._build_zoom()
        self._update_segments()

    # ---- semantic zoom -----------------------------------------------------------------------

    def _build_zoom(self) -> None:
        sc = self.document.scenario
        self.zoom = None
        if self.grouping_enabled and wants_grouping(sc):
            try:
                self.zoom = SemanticZoom(sc, self.node_xy)
            except Exception:  # an odd network the grouping cannot handle: draw it node by node
                self.zoom = None
        if self.zoom is None:
            self.user_open.clear()
            self.user_closed.clear()
        self._auto = None
        self._apply_zoom(force=True)

    def set_grouping(self, on: bool) -> None:
        """Group large tiered networks into pods/racks (default) or draw every node."""
        if on != self.grouping_enabled:
            self.grouping_enabled = on
            self._build_zoom()
            self._update_segments()

    def open_mask(self) -> np.ndarray | None:
        z = self.zoom
        if z is None:
            return None
        ids = z.group_ids
        mask = z.auto_open(self.view_scale)
        for i, gid in enumerate(ids):
            if gid in self.user_open:
                mask[i] = True
            elif gid in self.user_closed:
                mask[i] = False
        return mask

    def open_groups(self) -> list[str]:
        """Ids of the collapsible groups drawn node by node now."""
        z, st = self.zoom, self.zstate
        if z is None or st is None:
            return []
        return [g for i, g in enumerate(z.group_ids) if z.collapsible[i] and st.open[i]]

    def closed_groups(self) -> list[str]:
        z, st = self.zoom, self.zstate
        if z is None or st is None:
            return []
        return [g for i, g in enumerate(z.group_ids) if z.collapsible[i] and not st.open[i]]

    def set_view_scale(self, scale: float) -> None:
        """The view zoomed: groups wide enough on screen open, the others close."""
        self.view_scale = scale
        if self.zoom is not None:
            auto = self.zoom.auto_open(scale)
            if self._auto is not None and auto.shape == self._auto.shape:
                # a group crossing the zoom threshold follows the zoom again; the others keep what
                # the user chose (zooming to an opened pod at k=64 opens its 32 planes by width,
                # and that used to close the pod again)
                for i in np.flatnonzero(auto != self._auto).tolist():
                    self.user_open.discard(self.zoom.group_ids[i])
                    self.user_closed.discard(self.zoom.group_ids[i])
            self._auto = auto
            self._apply_zoom()

    def toggle_group(self, gid: str) -> None:
        """Open a closed group, close an open one (double-click)."""
        z = self.zoom
        if z is None or gid not in z.group_ids:
            return
        i = z.group_ids.index(gid)
        is_open = self.zstate is not None and bool(self.zstate.open[i])
        if is_open:
            self.user_open.discard(gid)
            self.user_closed.add(gid)
        else:
            self.user_closed.discard(gid)
            self.user_open.add(gid)
        self._apply_zoom()

    def open_group(self, gid: str, on: bool = True) -> None:
        z = self.zoom
        if z is None or gid not in z.group_ids:
            return
        i = z.group_ids.index(gid)
        if self.zstate is not None and bool(self.zstate.open[i]) != on:
            self.toggle_group(gid)

    def group_of(self, node_id: str) -> str | None:
        z = self.zoom
        k = self.node_index.get(node_id)
        if z is None or k is None:
            return None
        return z.group_ids[int(z.node_group[k])]

    def reveal(self, node_ids: list[str]) -> None:
        """Open the groups holding these nodes (a selection from a table or Find)."""
        z = self.zoom
        if z is None or self.zstate is None:
            return
        changed = False
        for nid in node_ids:
            k = self.node_index.get(nid)
            if k is None:
                continue
            gi = int(z.node_group[k])
            if not self.zstate.open[gi]:
                self.user_open.add(z.group_ids[gi])
                self.user_closed.discard(z.group_ids[gi])
                changed = True
        if changed:
            self._apply_zoom()

    def _apply_zoom(self, force: bool = False) -> None:
        z = self.zoom
        if z is None:
            changed = self.zstate is not None or force
            self.zstate = None
            self.link_visible = None
            if changed:
                self._show(list(range(len(self.node_ids))), None)
                self._zoom_changed()
            return
        mask = self.open_mask()
        if not force and self.zstate is not None and np.array_equal(mask | ~z.collapsible, self.zstate.open):
            return
        before = self.zstate.node_visible if self.zstate is not None else None
        st = z.state(mask)
        self.zstate = st
        self.link_visible = st.link_visible
        vis = st.node_visible
        # forced (the network changed): every node, since a node's number may now be another's
        same = not force and before is not None and before.shape == vis.shape
        flip = np.flatnonzero(vis != before) if same else np.arange(vis.size)
        self._show(flip.tolist(), vis)
        self._zoom_changed()

    def bundle_stats(self) -> tuple[np.ndarray, np.ndarray]:
        """(max, mean) load/capacity per bundle of the current overlay (cached per state)."""
        c = self._bundle_cache
        if c is None or c[0] is not self.zstate or c[1] is not self.overlay:
            assert self.zoom is not None and self.zstate is not None and self.overlay is not None
            c = self._bundle_cache = (self.zstate, self.overlay, self.zoom.bundle_util(self.zstate, self.overlay.link_util))
        return c[2]

    def inner_stats(self) -> np.ndarray:
        """Worst load/capacity inside each group for the current overlay (cached)."""
        c = self._inner_cache
        if c is None or c[0] is not self.zoom or c[1] is not self.overlay:
            assert self.zoom is not None and self.overlay is not None
            c = self._inner_cache = (self.zoom, self.overlay, self.zoom.inner_util(self.overlay.link_util))
        return c[2]

    def _zoom_changed(self) -> None:
        self.link_layer.invalidate()
        self.flow_layer.invalidate()
        self.dots_layer.invalidate()
        self.group_layer.invalidate()
        self.label_layer.update()
        self.groups_changed.emit()

    def _update_segments(self, grow: bool = False) -> None:
        xy = self.node_xy
        self.link_segments = np.column_stack([xy[self.link_a], xy[self.link_b]]).reshape(-1, 4)
        self._ports = None
        if self.zoom is not None:
            self.zoom.set_positions(self.node_xy)
            if self.zstate is not None:
                self.zstate = self.zoom.state(self.zstate.open)
        self._update_rect(grow)
        self.link_layer.invalidate()
        self.flow_layer.invalidate()
        self.dots_layer.invalidate()
        self.group_layer.invalidate()
        self.label_layer.update()

    def _update_rect(self, grow: bool = False) -> None:
        if self.node_xy.shape[0]:
            lo = self.node_xy.min(axis=0)
            hi = self.node_xy.max(axis=0)
            rect = QRectF(lo[0] - MARGIN, lo[1] - MARGIN, hi[0] - lo[0] + 2 * MARGIN, hi[1] - lo[1] + 2 * MARGIN)
        else:
            rect = QRectF(-400, -300, 800, 600)
        for layer in self._layers():
            layer.set_rect(rect)
        self.setSceneRect(rect.united(self.sceneRect()) if grow else rect)

    def content_rect(self) -> QRectF:
        """The rectangle holding every node (plus a margin)."""
        return self.link_layer.boundingRect()

    # ---- styling -----------------------------------------------------------------------------

    def set_colours(self, colours: CanvasColours) -> None:
        self.colours = colours
        self.setBackgroundBrush(QColor(colours.background))
        self.restyle_nodes()
        self.link_layer.invalidate()
        self.update()

    def _roles(self) -> tuple[set[str], set[str]]:
        workers: set[str] = set()
        pss: set[str] = set()
        for j in self.document.scenario.jobs:
            workers.update(j.workers)
            pss.update(j.parameter_servers)
        return workers, pss

    def restyle_nodes(self, ids: list[str] | set[str] | None = None) -> None:
        """Shape, fill and outline of node items from the document, overlay and job highlight."""
        sc = self.document.scenario
        c = self.colours
        pss = self._ps_ids
        brushes = {
            "host": QBrush(QColor(c.host)),
            "ps": QBrush(QColor(c.ps)),
            "switch": QBrush(QColor(c.switch)),
            "programmable": QBrush(QColor(c.programmable)),
        }
        plain = QPen(QColor(c.outline), 1.2)
        plain.setCosmetic(True)
        dot_colours = {k: b.color().darker(135).name() for k, b in brushes.items()}
        if len(self.node_colour) != len(self.node_ids):
            self.node_colour = [c.outline] * len(self.node_ids)
        ov = self.overlay
        hidden = self.zstate.node_visible if self.zstate is not None else None
        index = self.node_index
        for nid in ids if ids is not None else self.node_ids:
            item = self.items_by_id.get(nid)
            if item is None:
                continue
            if hidden is not None and nid in index and not hidden[index[nid]]:
                self._stale_style.add(nid)  # in a closed pod: styled when it is shown
                continue
            node = sc.node(nid)
            if isinstance(node, Switch):
                kind = "programmable" if node.programmable else "switch"
                pipes = node.pipelines if node.programmable else 0
            else:
                kind = "ps" if nid in pss else "host"
                pipes = 0
            pen = plain
            so = ov.switch(nid) if ov is not None else None
            if so is not None:
                pen = QPen(QColor(so.colour), 3.0)
                pen.setCosmetic(True)
            if nid in self.highlighted:
                pen = QPen(QColor(self.highlighted[nid]), 3.5)
                pen.setCosmetic(True)
            item.style(kind, pipes, brushes[kind], pen)
            k = self.node_index.get(nid)
            if k is not None:
                self.node_colour[k] = pen.color().name() if pen is not plain else dot_colours[kind]
        self.dots_layer.invalidate()

    # ---- document events ---------------------------------------------------------------------

    def _on_event(self, ev: DocEvent) -> None:
        kind = ev.kind
        if kind == "reset":
            self.clear_overlay()
            self.highlighted.clear()
            # another network: its pods start closed, and the view's fit (or its next paint)
            # opens those its zoom shows; at the old network's zoom a k=64 file opened all of
            # them, and its 70,656 node items were made only to be hidden by the fit
            self.view_scale = 0.0
            self.rebuild()
            return
        if kind == "nodes_moved":
            self._sync_positions(ev.ids)
            return
        if kind in ("node_added", "node_removed", "link_added", "link_removed"):
            self._sync_structure()
            self.clear_overlay()
            return
        if kind == "node_changed":
            if len(ev.ids) == 2 and ev.ids[0] in self.node_index and ev.ids[1] not in self.node_index:
                old, new = ev.ids  # a rename
                item = self.items_by_id.pop(old, None)
                if item is not None:
                    item.node_id = new
                    self.items_by_id[new] = item
                if old in self._stale_style:
                    self._stale_style.discard(old)
                    self._stale_style.add(new)
                if old in self.highlighted:
                    self.highlighted[new] = self.highlighted.pop(old)
                self._refresh_arrays()
            self.clear_overlay()
            self.restyle_nodes([i for i in ev.ids if i in self.items_by_id])
            self.label_layer.update()
            return
        if kind == "link_changed":
            self.link_capacity = np.fromiter(
                (lk.capacity for lk in self.document.scenario.links), dtype=float, count=len(self.document.scenario.links)
            )
            self._ports = None
            self.clear_overlay()
            self.link_layer.invalidate()
            self.label_layer.update()
            return
        if kind == "job_changed":
            self.clear_overlay()
            before = self._ps_ids
            self._ps_ids = self._roles()[1]
            self.restyle_nodes(before ^ self._ps_ids)

    def _sync_structure(self) -> None:
        """Remove the items of removed nodes; the arrays follow the document, and the items of
        added nodes are made when they are shown (keyed by id; cheap for big scenes)."""
        sc = self.document.scenario
        want = {n.id for n in sc.nodes}
        self._syncing = True
        try:
            for nid in [i for i in self.items_by_id if i not in want]:
                self.removeItem(self.items_by_id.pop(nid))
                self.highlighted.pop(nid, None)
                self._stale_style.discard(nid)
        finally:
            self._syncing = False
        self.selected_links.clear()
        self.link_selection_changed.emit()
        self._refresh_arrays()

    def _sync_positions(self, ids: tuple[str, ...]) -> None:
        sc = self.document.scenario
        self._syncing = True
        try:
            for nid in ids:
                item = self.items_by_id.get(nid)
                node = sc.node(nid)
                if item is not None and node.pos is not None:
                    if item.pos() != QPointF(*node.pos):
                        item.setPos(node.pos[0], node.pos[1])
                    self.node_xy[self.node_index[nid]] = node.pos
        finally:
            self._syncing = False
        self._update_segments()

    def _follow_drag(self) -> None:
        """Selected node items moved under the mouse: snap them and let their links follow."""
        moved = False
        g = self.grid
        for item in self.selectedItems():
            if not isinstance(item, NodeItem):
                continue
            p = item.pos()
            if self.snap_to_grid:
                q = QPointF(round(p.x() / g) * g, round(p.y() / g) * g)
                if q != p:
                    item.setPos(q)
                    p = q
            k = self.node_index.get(item.node_id)
            if k is not None and (self.node_xy[k, 0] != p.x() or self.node_xy[k, 1] != p.y()):
                self.node_xy[k] = (p.x(), p.y())
                moved = True
        if moved:
            self._update_segments(grow=True)

    def set_simple(self, simple: bool) -> None:
        """Zoomed far out, one layer draws every node as a box (a fraction of the painting work);
        the node items stay for selection and dragging but paint nothing."""
        if simple == self.simple:
            return
        self.simple = simple
        for item in self.items_by_id.values():
            item.set_simple(simple)
        self.dots_layer.setVisible(simple)
        self.dots_layer.invalidate()

    # ---- overlay -----------------------------------------------------------------------------

    def set_overlay(self, overlay: Overlay | None) -> None:
        if overlay is not None:
            ends = self.link_ends
            if overlay.link_count != len(ends) or overlay.link_ends != ends:
                raise InaplannerError(
                    "the overlay was made for another version of the scenario (its links differ); "
                    "evaluate the plan again"
                )
        before = set(self.overlay.switches) if self.overlay is not None else set()
        self.overlay = overlay
        self._update_focus()
        self.link_layer.invalidate()
        self.flow_layer.invalidate()
        self.group_layer.invalidate()
        self.restyle_nodes(before | (set(overlay.switches) if overlay is not None else set()))
        self.label_layer.update()
        self.update()
        self.overlay_changed.emit(overlay)

    def clear_overlay(self) -> None:
        if self.overlay is not None:
            self.set_overlay(None)

    def set_task_filter(self, task: str | None) -> None:
        if self.overlay is None:
            return
        self.overlay = self.overlay.with_filter(task)
        self._update_focus()
        self.link_layer.invalidate()
        self.flow_layer.invalidate()
        self.group_layer.invalidate()
        self.label_layer.update()
        self.overlay_changed.emit(self.overlay)

    def focused_task(self) -> str | None:
        ov = self.overlay
        return ov.task_filter if ov is not None and ov.task_filter in ov.tasks else None

    def step_task(self, step: int = 1) -> str | None:
        """Focus the next (``step`` 1) or previous (-1) task; after the last one: all tasks."""
        ov = self.overlay
        if ov is None or not ov.tasks:
            return None
        order: list[str | None] = [None, *ov.tasks]
        cur = order.index(self.focused_task())
        task = order[(cur + step) % len(order)]
        self.set_task_filter(task)
        return task

    def _update_focus(self) -> None:
        """Links and merge switches of the focused task (everything else is drawn dimmed)."""
        ov = self.overlay
        self.focus_links = None
        self.focus_switches = set()
        task = self.focused_task()
        if ov is None or task is None:
            return
        part = ov.segments.of_task(ov.tasks.index(task))
        mask = np.zeros(ov.link_count, dtype=bool)
        mask[part.link] = True
        self.focus_links = mask
        # where the task's flows merge: a node where raw data comes in and aggregated data leaves
        ends = self.link_ends
        starts_agg: set[str] = set()
        ends_raw: set[str] = set()
        for li, d, agg in zip(part.link.tolist(), part.direction.tolist(), part.aggregated.tolist(), strict=True):
            a, b = ends[li] if d == 0 else ends[li][::-1]
            (starts_agg if agg else ends_raw).add(a if agg else b)
        self.focus_switches = {s for s in starts_agg & ends_raw if s in ov.switches}
        ti = ov.tasks.index(task)
        if ov.merges.get(ti):  # the evaluator's aggregates: exact, pipelines included
            self.focus_switches = set(ov.merges[ti])

    # ---- selection ---------------------------------------------------------------------------

    def selected_node_ids(self) -> list[str]:
        return [i.node_id for i in self.selectedItems() if isinstance(i, NodeItem)]

    def select(self, node_ids: list[str] = (), links: list[int] = (), add: bool = False) -> None:
        if not add:
            self.clearSelection()
            self.selected_links.clear()
        for nid in node_ids:
            item = self.items_by_id.get(nid)
            if item is not None:
                item.setSelected(True)
        self.selected_links.update(int(i) for i in links)
        self.link_layer.invalidate()
        self.link_selection_changed.emit()

    def toggle_link(self, index: int, add: bool) -> None:
        if not add:
            self.clearSelection()
            self.selected_links = {index}
        elif index in self.selected_links:
            self.selected_links.discard(index)
        else:
            self.selected_links.add(index)
        self.link_layer.invalidate()
        self.link_selection_changed.emit()

    def clear_link_selection(self) -> None:
        if self.selected_links:
            self.selected_links.clear()
            self.link_layer.invalidate()
            self.link_selection_changed.emit()

    def highlight(self, colours: dict[str, str]) -> None:
        """Outline these nodes (id -> colour), e.g. a job's workers and PSs; {} clears."""
        before = set(self.highlighted)
        self.highlighted = dict(colours)
        self.restyle_nodes(sorted(before | set(colours)))

    # ---- lookups for items, tooltips and tests -----------------------------------------------

    def node_item(self, node_id: str) -> NodeItem:
        """The node's item, made now if the node was never shown (hidden if it is not)."""
        item = self.items_by_id.get(node_id)
        if item is None:
            k = self.node_index[node_id]  # KeyError: no such node
            item = self._add_item(k)
            shown = self.zstate is None or bool(self.zstate.node_visible[k])
            if not shown:
                item.setVisible(False)
            self.restyle_nodes([node_id])
        return item

    def link_item(self, index: int) -> LinkItem:
        if not 0 <= index < self.link_segments.shape[0]:
            raise IndexError(f"no link number {index}")
        return LinkItem(self, index)

    def link_at(self, pos: QPointF, scale: float) -> int | None:
        tol = HIT_PIXELS / max(scale, 1e-6)
        if self.link_visible is None:
            return geo.nearest_segment(pos.x(), pos.y(), self.link_segments, tol)
        idx = np.flatnonzero(self.link_visible)
        hit = geo.nearest_segment(pos.x(), pos.y(), self.link_segments[idx], tol)
        return None if hit is None else int(idx[hit])

    def bundle_at(self, pos: QPointF, scale: float) -> int | None:
        st = self.zstate
        if st is None or st.bundle_count == 0:
            return None
        return geo.nearest_segment(pos.x(), pos.y(), st.bundle_xy, HIT_PIXELS / max(scale, 1e-6))

    def bundle_tooltip(self, b: int) -> str:
        z, st = self.zoom, self.zstate
        assert z is not None and st is not None
        names = []
        for key in st.bundle_ends[b].tolist():
            names.append(self.node_ids[key] if key < z.n else z.group_ids[key - z.n])
        links = st.bundle_links[b]
        cap = float(self.link_capacity[links].sum())
        rows = [f"{len(links)} link(s) {names[0]} - {names[1]}, {fmt(cap)} Gbps in all"]
        if self.overlay is not None:
            mx, mean = z.bundle_util(st, self.overlay.link_util)
            rows.append(f"load/capacity: max {mx[b] * 100:.0f} %, mean {mean[b] * 100:.0f} %")
            worst = int(links[np.argmax(np.nan_to_num(self.overlay.link_util[links]).max(axis=1))])
            rows.append(f"worst link {' - '.join(self.link_ends[worst])}")
        rows.append("double-click a box to open it")
        return "\n".join(rows)

    def box_tooltip(self, gi: int) -> str:
        z = self.zoom
        assert z is not None
        rows = [z.box_label(gi)]
        if self.overlay is not None:
            inner = z.inner_util(self.overlay.link_util)[gi]
            rows.append(f"worst link inside: {inner * 100:.0f} % of capacity")
        rows.append("double-click to " + ("close" if self.zstate is not None and self.zstate.open[gi] else "open"))
        return "\n".join(rows)

    def node_label(self, node_id: str) -> str:
        so = self.overlay.switch(node_id) if self.overlay is not None else None
        if so is not None:
            return f"{node_id}\n{so.label} {so.pipelines_label}"
        return node_id

    def node_tooltip(self, node_id: str) -> str:
        sc = self.document.scenario
        node = sc.node(node_id)
        rows: list[str] = []
        if isinstance(node, Switch):
            head = f"switch {node.id}" + (f" ({node.tier})" if node.tier else "")
            rows.append(head)
            if node.programmable:
                cap = "line rate" if node.aggregation_capacity is None else f"{fmt(node.aggregation_capacity)} Gbps"
                rows.append(f"programmable, {node.pipelines} pipeline(s), aggregation capacity {cap}")
                if node.aggregators is not None:
                    rows.append(f"{node.aggregators} aggregator slots per pipeline")
                rows.append(f"max fan-in {node.fan_in_limit}" + (" (default)" if node.max_fan_in is None else ""))
                if node.target:
                    rows.append(f"target {node.target}")
            ports = sc.switch_ports(node.id)
            if ports:
                rows.append(f"ports {', '.join(str(p) for p in ports)}")
        else:
            roles = []
            for j in sc.jobs:
                if node.id in j.workers:
                    roles.append(f"worker of {j.id}")
                if node.id in j.parameter_servers:
                    roles.append(f"PS of {j.id}")
            rows.append(f"host {node.id}" + (f": {', '.join(roles)}" if roles else ""))
        if self.overlay is not None:
            so = self.overlay.switch(node_id)
            if so is not None:
                rows.append(so.tooltip)
            for ti, role in self.overlay.roles.get(node_id, []):
                rows.append(f"{role} of task {self.overlay.tasks[ti]} at {fmt(self.overlay.task_rates[ti])} Gbps")
        return "\n".join(rows)

    def link_label(self, index: int) -> str:
        if self.overlay is not None:
            return self.overlay.link_label(index)
        return fmt(float(self.link_capacity[index]))

    def link_tooltip(self, index: int) -> str:
        if self.overlay is not None:
            return self.overlay.link(index).tooltip
        lk = self.document.scenario.links[index]
        ports = []
        for end, port in ((lk.a, lk.a_port), (lk.b, lk.b_port)):
            if port is not None:
                ports.append(f"{end} port {port}")
        bg = "" if lk.background == (0.0, 0.0) else f", background {fmt(lk.background[0])}/{fmt(lk.background[1])}"
        return f"link {lk.a} - {lk.b}: {fmt(lk.capacity)} Gbps{bg}" + (f"\n{', '.join(ports)}" if ports else "")

    def port_labels(self) -> np.ndarray:
        """Rows (x, y, port) placing each switch port number a little way along its link."""
        if self._ports is None:
            sc = self.document.scenario
            rows = []
            seg = self.link_segments
            for i, lk in enumerate(sc.links):
                for port, (x0, y0, x1, y1) in (
                    (lk.a_port, seg[i]),
                    (lk.b_port, seg[i][[2, 3, 0, 1]]),
                ):
                    if port is None:
                        continue
                    d = float(np.hypot(x1 - x0, y1 - y0)) or 1.0
                    t = min(26.0 / d, 0.45)
                    rows.append((x0 + t * (x1 - x0), y0 + t * (y1 - y0), port))
            self._ports = np.array(rows, dtype=float).reshape(-1, 3)
        return self._ports

    # ---- mouse -------------------------------------------------------------------------------

    def _view_scale(self, event) -> float:
        w = event.widget()
        view = w.parent() if w is not None else None
        return view.transform().m11() if view is not None and hasattr(view, "transform") else 1.0

    def mousePressEvent(self, event: QGraphicsSceneMouseEvent) -> None:  # noqa: N802
        if event.button() == Qt.MouseButton.LeftButton:
            scale = self._view_scale(event)
            item = self.itemAt(event.scenePos(), QTransform.fromScale(scale, scale))
            if not isinstance(item, NodeItem):
                hit = self.link_at(event.scenePos(), scale)
                add = bool(event.modifiers() & Qt.KeyboardModifier.ControlModifier)
                if hit is not None:
                    self.toggle_link(hit, add)
                    event.accept()
                    return
                if not add:
                    self.clear_link_selection()
            self._pressed = True
        super().mousePressEvent(event)

    def mouseDoubleClickEvent(self, event: QGraphicsSceneMouseEvent) -> None:  # noqa: N802
        """Double-click in a pod (rack, plane) box opens it; in an open one's frame, away from its
        nodes, closes it."""
        if event.button() == Qt.MouseButton.LeftButton and self.zoom is not None:
            scale = self._view_scale(event)
            item = self.itemAt(event.scenePos(), QTransform.fromScale(scale, scale))
            if not isinstance(item, NodeItem):
                gi = self.zoom.group_at(event.scenePos().x(), event.scenePos().y())
                if gi is not None:
                    self.toggle_group(self.zoom.group_ids[gi])
                    event.accept()
                    return
        super().mouseDoubleClickEvent(event)

    def mouseMoveEvent(self, event: QGraphicsSceneMouseEvent) -> None:  # noqa: N802
        super().mouseMoveEvent(event)
        if self._pressed and event.buttons() & Qt.MouseButton.LeftButton:
            self._follow_drag()

    def mouseReleaseEvent(self, event: QGraphicsSceneMouseEvent) -> None:  # noqa: N802
        super().mouseReleaseEvent(event)
        if event.button() != Qt.MouseButton.LeftButton or not self._pressed:
            return
        self._follow_drag()
        sc = self.document.scenario
        moved: dict[str, tuple[float, float]] = {}
        for item in self.selectedItems():
            if isinstance(item, NodeItem):
                p = item.pos()
                node = sc.node(item.node_id)
                if node.pos is None or (abs(node.pos[0] - p.x()) > 1e-9 or abs(node.pos[1] - p.y()) > 1e-9):
                    moved[item.node_id] = (p.x(), p.y())
        self._pressed = False
        if moved:
            self.nodes_dragged.emit(moved)

    def helpEvent(self, event: QGraphicsSceneHelpEvent) -> None:  # noqa: N802
        scale = 1.0
        w = event.widget()
        if w is not None and w.parent() is not None and hasattr(w.parent(), "transform"):
            scale = w.parent().transform().m11()
        item = self.itemAt(event.scenePos(), QTransform.fromScale(scale, scale))
        text = ""
        if isinstance(item, NodeItem):
            text = item.toolTip()
        else:
            hit = self.link_at(event.scenePos(), scale)
            if hit is not None:
                text = self.link_tooltip(hit)
            elif self.zoom is not None:
                b = self.bundle_at(event.scenePos(), scale)
                gi = self.zoom.group_at(event.scenePos().x(), event.scenePos().y())
                if b is not None:
                    text = self.bundle_tooltip(b)
                elif gi is not None:
                    text = self.box_tooltip(gi)
        if text:
            QToolTip.showText(event.screenPos(), text, w)
        else:
            QToolTip.hideText()
        event.setAccepted(bool(text))
