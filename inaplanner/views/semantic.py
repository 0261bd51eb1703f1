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


@dataclass(frozen=True)
class _Structure:
    """What a :class:`SemanticZoom` takes from the network alone (no positions)."""

    grouping: Grouping
    group_ids: list[str]
    node_group: np.ndarray  # (N,) group number of each node
    collapsible: np.ndarray  # (G,) bool
    kind: np.ndarray  # (G,) group kinds
    is_switch: np.ndarray  # (N,) bool
    rank: np.ndarray  # (N,) tier rank of switches (0 for hosts)
    rack_of: np.ndarray  # (N,) the rack switch of each host, -1 for switches
    rack_switches: np.ndarray  # node numbers of the lowest tier's switches
    racked: np.ndarray  # hosts under one of them
    rack_number: np.ndarray  # which (index into rack_switches), per racked host


def _structure(sc: Scenario, grouping: Grouping) -> _Structure:
    arrays = network_arrays(sc)
    gindex = {grp.id: i for i, grp in enumerate(grouping.groups)}
    n = len(arrays.node_ids)
    node_group = np.fromiter((gindex[grouping.of_node[nid]] for nid in arrays.node_ids), dtype=np.int64, count=n)
    collapsible = np.array([grp.kind in COLLAPSIBLE and len(grp.members) > 1 for grp in grouping.groups], dtype=bool)
    kind = np.array([grp.kind for grp in grouping.groups], dtype=object)
    is_switch = np.asarray(arrays.is_switch, dtype=bool)
    index = arrays.node_index
    # the rack of each host: its lowest-tier switch neighbour (racks of a pod are drawn as blocks)
    rank = np.zeros(n, dtype=np.int64)
    for sw in sc.switches():
        rank[index[sw.id]] = sc.rank(sw.id)
    rack_of = np.full(n, -1, dtype=np.int64)
    host_end = np.concatenate([arrays.link_a, arrays.link_b])
    sw_end = np.concatenate([arrays.link_b, arrays.link_a])
    m = ~is_switch[host_end] & is_switch[sw_end]
    h, s = host_end[m], sw_end[m]
    order = np.lexsort((rank[s], h))[::-1]  # the last write per host wins: lowest rank
    rack_of[h[order]] = s[order]
    lowest = int(rank[is_switch].min()) if is_switch.any() else 0
    rack_switches = np.flatnonzero(is_switch & (rank == lowest))
    # hosts whose rack switch is of the lowest tier, and that switch's place in rack_switches
    number = np.full(n, -1, dtype=np.int64)
    number[rack_switches] = np.arange(rack_switches.size)
    racked = np.flatnonzero(rack_of >= 0)
    rack_number = number[rack_of[racked]]
    ok = rack_number >= 0
    return _Structure(grouping, [grp.id for grp in grouping.groups], node_group, collapsible, kind,
                      is_switch, rank, rack_of, rack_switches, racked[ok], rack_number[ok])


class SemanticZoom:
    """Boxes and bundles of one scenario's groups over the canvas arrays (node and link order =
    :func:`network_arrays`). What comes from the network alone is made once until it is edited
    (0.2 s at fat-tree k=64), ahead while a file is read (:func:`prepare`)."""

    def __init__(self, sc: Scenario, node_xy: np.ndarray, grouping: Grouping | None = None) -> None:
        if grouping is None:
            st = sc.derived("zoom structure", lambda: _structure(sc, network_grouping(sc)))
        else:
            st = _structure(sc, grouping)
        arrays = network_arrays(sc)
        self.grouping = st.grouping
        self.group_ids = st.group_ids
        self.n = len(arrays.node_ids)
        self.node_group = st.node_group
        self.collapsible = st.collapsible
        self.kind = st.kind
        self.link_a = arrays.link_a
        self.link_b = arrays.link_b
        self.is_switch = st.is_switch
        self.rank = st.rank
        self.rack_of = st.rack_of
        self.rack_switches = st.rack_switches
        self._racked = st.racked
        self._rack_number = st.rack_number
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
        hosts, k = self._racked, self._rack_number
        if hosts.size:
            np.minimum.at(rlo, k, xy[hosts])
            np.maximum.at(rhi, k, xy[hosts])
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


@dataclass(frozen=True)
class NetworkArrays:
    """The canvas's arrays of one network, in node and link order (read-only)."""

    node_ids: list[str]
    node_index: dict[str, int]
    is_switch: list[bool]
    link_a: np.ndarray  # (L,) node number of each link's first end
    link_b: np.ndarray
    capacity: np.ndarray  # (L,) Gbps
    link_ends: list[tuple[str, str]]


def network_arrays(sc: Scenario) -> NetworkArrays:
    """Node ids and numbers, link ends and capacities as arrays, made once until the network is
    edited (0.2 s at fat-tree k=64; positions are not in them, they move without an edit)."""

    def make() -> NetworkArrays:
        from inaplanner.model import Switch

        ids = [n.id for n in sc.nodes]
        index = {nid: i for i, nid in enumerate(ids)}
        links = sc.links
        ends = [(lk.a, lk.b) for lk in links]
        a = np.fromiter((index[x] for x, _ in ends), dtype=np.int64, count=len(ends))
        b = np.fromiter((index[y] for _, y in ends), dtype=np.int64, count=len(ends))
        cap = np.fromiter((lk.capacity for lk in links), dtype=float, count=len(links))
        for arr in (a, b, cap):
            arr.setflags(write=False)
        return NetworkArrays(ids, index, [isinstance(n, Switch) for n in sc.nodes], a, b, cap, ends)

    arrays: NetworkArrays = sc.derived("canvas arrays", make)
    return arrays


def prepare(sc: Scenario) -> None:
    """Make ahead what the window derives from the network alone (the canvas's arrays and
    grouping, the Links and Switches tables' index: 0.2, 0.9 and 0.9 s at fat-tree k=64), so a
    window shows a scenario read on another thread without doing it on its own."""
    from inaplanner.views.hotlists import network_index

    network_arrays(sc)
    if wants_grouping(sc):
        SemanticZoom(sc, np.zeros((len(sc.nodes), 2)))  # its network part, kept on ``sc``
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
