"""Semantic zoom of the canvas: which groups are drawn as boxes, which links as bundles (no Qt).

The groups themselves (pods and planes of a fat-tree, racks of a leaf-spine) come from
:func:`inaplanner.views.groups.group_network`; this module only decides, for a set of *open*
groups, what the canvas draws:

- a node of a closed group is hidden; its group is drawn as a box (a pod with one block per rack);
- a link between two shown nodes is drawn as itself;
- the other links are drawn as *bundles*: one line per pair of end points, where the end point of a
  hidden node is its group's box (links inside one closed group are not drawn: the box shows their
  worst load). A bundle is coloured by the worst load/capacity of its links and labelled
  ``max / mean``; with every group closed the bundles are exactly
  :func:`inaplanner.views.groups.bundles` (tests check it).

Everything is numpy over the scene's node and link arrays, so a fat-tree k=64 (70,656 nodes,
131,072 links) is recomputed in milliseconds when the user opens a pod.

:class:`Occupancy` is the collision test of the labels: a label is drawn only where it overlaps no
label drawn before it (highest priority first), so text never lands on text.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from inaplanner.model import Scenario
from inaplanner.views.groups import Grouping, group_network, worth_grouping

#: A closed group opens by itself when its box is at least this wide on screen (pixels).
OPEN_PIXELS = 520.0
COLLAPSIBLE = ("pod", "plane", "rack")


@dataclass
class ZoomState:
    """What to draw for one set of open groups."""

    open: np.ndarray  # (G,) bool: group drawn node by node
    node_visible: np.ndarray  # (N,) bool
    link_visible: np.ndarray  # (L,) bool: drawn as itself
    bundle_of_link: np.ndarray  # (L,) int: bundle index, -1 when drawn as itself or inside a box
    bundle_ends: np.ndarray  # (B, 2) int: end keys (node index, or N + group index)
    bundle_links: list[np.ndarray]  # link indices per bundle
    bundle_xy: np.ndarray  # (B, 4) x1 y1 x2 y2

    @property
    def bundle_count(self) -> int:
        return int(self.bundle_ends.shape[0])


class SemanticZoom:
    """Boxes and bundles of one scenario's groups over the canvas arrays (node order = scene order)."""

    def __init__(self, sc: Scenario, node_ids: list[str], node_xy: np.ndarray, link_a: np.ndarray,
                 link_b: np.ndarray, grouping: Grouping | None = None) -> None:
        self.grouping = grouping if grouping is not None else network_grouping(sc)
        g = self.grouping
        self.group_ids = [grp.id for grp in g.groups]
        gindex = {gid: i for i, gid in enumerate(self.group_ids)}
        self.n = len(node_ids)
        self.node_group = np.fromiter((gindex[g.of_node[nid]] for nid in node_ids), dtype=np.int64,
                                      count=self.n)
        self.collapsible = np.array([grp.kind in COLLAPSIBLE and len(grp.members) > 1 for grp in g.groups],
                                    dtype=bool)
        self.kind = np.array([grp.kind for grp in g.groups], dtype=object)
        self.link_a = np.asarray(link_a, dtype=np.int64)
        self.link_b = np.asarray(link_b, dtype=np.int64)
        is_switch = np.zeros(self.n, dtype=bool)
        index = {nid: i for i, nid in enumerate(node_ids)}
        for s in sc.switches():
            is_switch[index[s.id]] = True
        self.is_switch = is_switch
        # the rack of each host: its lowest-tier switch neighbour (racks of a pod are drawn as blocks)
        rank = np.zeros(self.n, dtype=np.int64)
        for s in sc.switches():
            rank[index[s.id]] = sc.rank(s.id)
        self.rank = rank
        self.rack_of = np.full(self.n, -1, dtype=np.int64)
        host_end = np.concatenate([self.link_a, self.link_b])
        sw_end = np.concatenate([self.link_b, self.link_a])
        m = ~is_switch[host_end] & is_switch[sw_end]
        h, s = host_end[m], sw_end[m]
        order = np.lexsort((rank[s], h))[::-1]  # the last write per host wins: lowest rank
        self.rack_of[h[order]] = s[order]
        lowest = int(rank[is_switch].min()) if is_switch.any() else 0
        self.rack_switches = np.flatnonzero(is_switch & (rank == lowest))
        self.set_positions(node_xy)

    # ---- geometry ----------------------------------------------------------------------------

    def set_positions(self, node_xy: np.ndarray) -> None:
        """Box of every group and block of every rack from node positions (after a layout or drag)."""
        xy = np.asarray(node_xy, dtype=float).reshape(-1, 2)
        self.node_xy = xy
        G = len(self.group_ids)
        pad_x, pad_y = 24.0, 20.0
        lo = np.full((G, 2), np.inf)
        hi = np.full((G, 2), -np.inf)
        np.minimum.at(lo, self.node_group, xy)
        np.maximum.at(hi, self.node_group, xy)
        self.boxes = np.column_stack([lo[:, 0] - pad_x, lo[:, 1] - pad_y, hi[:, 0] + pad_x, hi[:, 1] + pad_y])
        rs = self.rack_switches
        rlo = xy[rs].copy()
        rhi = xy[rs].copy()
        pos = {int(s): i for i, s in enumerate(rs.tolist())}
        hosts = np.flatnonzero(self.rack_of >= 0)
        if hosts.size:
            k = np.fromiter((pos.get(int(s), -1) for s in self.rack_of[hosts]), dtype=np.int64, count=hosts.size)
            ok = k >= 0
            np.minimum.at(rlo, k[ok], xy[hosts[ok]])
            np.maximum.at(rhi, k[ok], xy[hosts[ok]])
        self.rack_boxes = np.column_stack([rlo[:, 0] - 12, rlo[:, 1] - 10, rhi[:, 0] + 12, rhi[:, 1] + 10])
        self.rack_group = self.node_group[rs]

    def anchor(self) -> np.ndarray:
        """(G, 2) where bundles meet a closed group's box: the middle of its top edge (of its
        bottom edge for the top tier, drawn above the others; the centre in a flat network)."""
        b = self.boxes
        tiers = np.array([grp.tier for grp in self.grouping.groups], dtype=np.int64)
        top = tiers.max() if tiers.size else 0
        y = np.where(tiers >= top, b[:, 3], b[:, 1])
        if self.grouping.kind == "flat":
            y = (b[:, 1] + b[:, 3]) / 2
        return np.column_stack([(b[:, 0] + b[:, 2]) / 2, y])

    def group_at(self, x: float, y: float) -> int | None:
        """The smallest collapsible group whose box holds the point."""
        b = self.boxes
        inside = self.collapsible & (b[:, 0] <= x) & (x <= b[:, 2]) & (b[:, 1] <= y) & (y <= b[:, 3])
        idx = np.flatnonzero(inside)
        if idx.size == 0:
            return None
        area = (b[idx, 2] - b[idx, 0]) * (b[idx, 3] - b[idx, 1])
        return int(idx[np.argmin(area)])

    def auto_open(self, scale: float, pixels: float = OPEN_PIXELS) -> np.ndarray:
        """(G,) groups wide enough on screen at ``scale`` (pixels per scene unit) to open."""
        return (self.boxes[:, 2] - self.boxes[:, 0]) * scale >= pixels

    # ---- what to draw ------------------------------------------------------------------------

    def state(self, open_groups: np.ndarray | None = None) -> ZoomState:
        """Visible nodes and links, and the bundles, with ``open_groups`` (G,) bool open."""
        G = len(self.group_ids)
        opened = np.zeros(G, dtype=bool) if open_groups is None else np.asarray(open_groups, dtype=bool)
        opened = opened | ~self.collapsible
        node_visible = opened[self.node_group]
        va, vb = node_visible[self.link_a], node_visible[self.link_b]
        link_visible = va & vb
        ga, gb = self.node_group[self.link_a], self.node_group[self.link_b]
        key_a = np.where(va, self.link_a, self.n + ga)
        key_b = np.where(vb, self.link_b, self.n + gb)
        bundled = ~link_visible & (key_a != key_b)
        lo, hi = np.minimum(key_a, key_b), np.maximum(key_a, key_b)
        bundle_of_link = np.full(self.link_a.size, -1, dtype=np.int64)
        idx = np.flatnonzero(bundled)
        if idx.size:
            pair = lo[idx] * (self.n + G + 1) + hi[idx]
            uniq, inv = np.unique(pair, return_inverse=True)
            bundle_of_link[idx] = inv
            ends = np.column_stack([uniq // (self.n + G + 1), uniq % (self.n + G + 1)])
            order = np.argsort(inv, kind="stable")
            cuts = np.flatnonzero(np.diff(inv[order])) + 1
            links = np.split(idx[order], cuts)
        else:
            ends = np.zeros((0, 2), dtype=np.int64)
            links = []
        anchors = np.vstack([self.node_xy, self.anchor()]) if G else self.node_xy
        bxy = np.column_stack([anchors[ends[:, 0]], anchors[ends[:, 1]]]).reshape(-1, 4)
        return ZoomState(opened, node_visible, link_visible, bundle_of_link, ends, links, bxy)

    def bundle_util(self, st: ZoomState, util: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(max, mean) per bundle of the links' worst-direction load/capacity (NaN counts as 0)."""
        worst = np.nan_to_num(np.asarray(util, dtype=float).reshape(-1, 2), nan=0.0).max(axis=1)
        B = st.bundle_count
        mx = np.zeros(B)
        total = np.zeros(B)
        m = st.bundle_of_link >= 0
        np.maximum.at(mx, st.bundle_of_link[m], worst[m])
        np.add.at(total, st.bundle_of_link[m], worst[m])
        count = np.bincount(st.bundle_of_link[m], minlength=B)
        return mx, total / np.maximum(count, 1)

    def inner_util(self, util: np.ndarray) -> np.ndarray:
        """(G,) worst load/capacity of the links inside each group."""
        worst = np.nan_to_num(np.asarray(util, dtype=float).reshape(-1, 2), nan=0.0).max(axis=1)
        ga, gb = self.node_group[self.link_a], self.node_group[self.link_b]
        out = np.zeros(len(self.group_ids))
        same = ga == gb
        np.maximum.at(out, ga[same], worst[same])
        return out

    def box_label(self, gi: int) -> str:
        grp = self.grouping.groups[gi]
        parts = [grp.id]
        if grp.switches:
            parts.append(f"{len(grp.switches)} switch{'es' if len(grp.switches) != 1 else ''}")
        if grp.hosts:
            parts.append(f"{grp.hosts} host{'s' if grp.hosts != 1 else ''}")
        return ", ".join(parts)


def wants_grouping(sc: Scenario) -> bool:
    """Group the canvas when the network is too large to read node by node and has tiers."""
    return worth_grouping(sc) and sc.is_tiered()


def network_grouping(sc: Scenario) -> Grouping:
    """:func:`group_network` of ``sc``, made once until the network is edited."""
    return sc.derived("grouping", lambda: group_network(sc))


def network_pods(sc: Scenario) -> dict[str, str]:
    """Node id -> pod (or rack) of :func:`network_grouping`, for the tables' pod column, made
    once until the network is edited."""
    from inaplanner.views.hotlists import pods_of

    return sc.derived("pods", lambda: pods_of(network_grouping(sc)))


def prepare(sc: Scenario) -> None:
    """Make ahead what the window derives from the network alone (the canvas's grouping, the
    Links and Switches tables' index: 0.9 and 0.9 s at fat-tree k=64), so a window shows a
    scenario read on another thread without doing it on its own."""
    from inaplanner.views.hotlists import network_index

    if wants_grouping(sc):
        network_index(sc, network_pods(sc))
    else:
        network_index(sc)


def bundle_label(max_util: float, mean_util: float, links: int) -> str:
    from inaplanner.views.fmt import pct

    if links == 1:
        return pct(max_util, 0)
    return f"max {pct(max_util, 0)} / mean {pct(mean_util, 0)}"


class Occupancy:
    """Rectangles already covered by text (pixels), in a grid of buckets: ``place`` says whether a
    new rectangle overlaps none of them (and then keeps it)."""

    def __init__(self, cell: float = 64.0) -> None:
        self.cell = cell
        self.cells: dict[tuple[int, int], list[tuple[float, float, float, float]]] = {}
        self.placed = 0

    def _keys(self, x0: float, y0: float, x1: float, y1: float) -> list[tuple[int, int]]:
        c = self.cell
        return [(i, j) for i in range(int(x0 // c), int(x1 // c) + 1) for j in range(int(y0 // c), int(y1 // c) + 1)]

    def free(self, x0: float, y0: float, x1: float, y1: float) -> bool:
        for key in self._keys(x0, y0, x1, y1):
            for a0, b0, a1, b1 in self.cells.get(key, ()):
                if x0 < a1 and a0 < x1 and y0 < b1 and b0 < y1:
                    return False
        return True

    def block(self, x0: float, y0: float, x1: float, y1: float) -> None:
        """Cover a rectangle that is not a label (a node's shape): no label may go on it."""
        for key in self._keys(x0, y0, x1, y1):
            self.cells.setdefault(key, []).append((x0, y0, x1, y1))

    def place(self, x0: float, y0: float, x1: float, y1: float) -> bool:
        if not self.free(x0, y0, x1, y1):
            return False
        for key in self._keys(x0, y0, x1, y1):
            self.cells.setdefault(key, []).append((x0, y0, x1, y1))
        self.placed += 1
        return True
