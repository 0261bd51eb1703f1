"""Qt-free parts of the canvas at scale: semantic zoom (boxes and bundles), label collisions, the
hot lists and the window-shaped tiered layout."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from inaplanner.evaluate import evaluate
from inaplanner.topologies import fat_tree
from inaplanner.topologies.layout import MAX_ROW_GAP, tiered_layout
from inaplanner.views.groups import bundles
from inaplanner.views.hotlists import HotLists
from inaplanner.views.overlay import overlay_from_evaluation
from inaplanner.views.semantic import Occupancy, SemanticZoom


def _zoom(sc):
    xy = np.array([n.pos for n in sc.nodes], dtype=float)
    return SemanticZoom(sc, xy)


def test_closed_groups_bundle_like_the_grouping(ft8, ft8_plan):
    sc = ft8
    z = _zoom(sc)
    st = z.state()  # every pod and plane closed
    assert not st.node_visible.any() and not st.link_visible.any()
    util = np.asarray(evaluate(sc, ft8_plan).link_utilisation, dtype=float).reshape(-1, 2)
    mx, mean = z.bundle_util(st, util)
    ref = bundles(sc, z.grouping, util)
    assert st.bundle_count == len(ref) == 8 * 4  # every pod to every core plane
    got = sorted(zip(np.round(mx, 9), np.round(mean, 9), [len(x) for x in st.bundle_links], strict=True))
    want = sorted((round(b.max_util, 9), round(b.mean_util, 9), len(b.links)) for b in ref)
    assert got == want
    # opening pod 1 shows its 8 switches and 16 hosts and their links; its uplinks become
    # bundles from each aggregation switch to a plane box
    opened = np.array([g == "pod 1" for g in z.group_ids])
    st1 = z.state(opened)
    pod1 = z.grouping.group("pod 1")
    shown = {sc.nodes[i].id for i in np.flatnonzero(st1.node_visible)}
    assert shown == set(pod1.members) and len(shown) == 8 + 16
    inside = [i for i, lk in enumerate(sc.links) if lk.a in shown and lk.b in shown]
    assert set(np.flatnonzero(st1.link_visible)) == set(inside)
    assert st1.bundle_count == 4 + 7 * 4  # 4 aggregation switches to their plane, 7 closed pods x 4
    # a point in a box names its group
    x0, y0, x1, y1 = z.boxes[z.group_ids.index("pod 3")]
    assert z.group_ids[z.group_at((x0 + x1) / 2, (y0 + y1) / 2)] == "pod 3"


def test_occupancy_refuses_overlaps():
    occ = Occupancy(cell=10)
    assert occ.place(0, 0, 30, 10)
    assert not occ.place(29, 9, 40, 20)  # corner overlap across cells
    assert occ.place(30, 0, 50, 10)  # touching is fine
    assert not occ.free(5, 5, 6, 6)
    # brute force agrees on random rectangles
    rng = np.random.default_rng(3)
    kept = []
    occ = Occupancy(cell=16)
    for _ in range(300):
        x, y, w, h = rng.uniform(0, 200), rng.uniform(0, 200), rng.uniform(1, 40), rng.uniform(1, 12)
        overlaps = any(x < b[2] and b[0] < x + w and y < b[3] and b[1] < y + h for b in kept)
        assert occ.place(x, y, x + w, y + h) == (not overlaps)
        if not overlaps:
            kept.append((x, y, x + w, y + h))


def test_tiered_layout_follows_the_window_shape():
    sc = fat_tree(8)
    for aspect in (1.6, 2.2):  # (rows never spread past MAX_ROW_GAP)
        pos = tiered_layout(sc, aspect)
        xy = np.array(list(pos.values()))
        w, h = np.ptp(xy[:, 0]), np.ptp(xy[:, 1])
        assert w / h == pytest.approx(aspect, rel=0.25)
    # a wide fat-tree keeps the window's shape too: the rows of a pod stay at most MAX_ROW_GAP
    # apart and the height still missing goes under the core row (before: a band 7 times too flat)
    wide = fat_tree(16)
    pos = tiered_layout(wide, 1.6)
    xy = np.array(list(pos.values()))
    assert np.ptp(xy[:, 0]) / np.ptp(xy[:, 1]) == pytest.approx(1.6, rel=0.05)
    row_y = sorted({pos[s.id][1] for s in wide.switches()})
    assert len(row_y) == 3
    assert row_y[2] - row_y[1] <= MAX_ROW_GAP < row_y[1] - row_y[0]
    # hosts sit under their edge switch, within its slot
    pos = tiered_layout(sc)
    for lk in sc.links:
        host, sw = (lk.a, lk.b) if sc.rank(lk.a) == 0 and not sc.is_switch(lk.a) else (lk.b, lk.a)
        if not sc.is_switch(host) and sc.is_switch(sw):
            assert pos[host][1] > pos[sw][1] and abs(pos[host][0] - pos[sw][0]) < 60


def test_hot_lists_rank_and_filter(ft8, ft8_plan):
    ev = evaluate(ft8, ft8_plan)
    ov = overlay_from_evaluation(ev)
    z = _zoom(ft8)
    hot = HotLists(ft8, ov, {n: g for n, g in z.grouping.of_node.items() if not z.grouping.group(g).single})
    rows = hot.links(top=20)
    assert len(rows) == 20
    util = [r.util for r in rows]
    assert util == sorted(util, reverse=True) and util[0] == pytest.approx(float(np.nanmax(ev.link_utilisation)))
    task = ov.tasks[1]
    used = set(ov.segments.link[ov.segments.task == 1].tolist())
    assert {r.index for r in hot.links(task=task, top=None)} == used
    assert set(hot.tiers()) >= {"host-edge", "edge-aggregation", "aggregation-core"} or len(hot.tiers()) >= 3
    tier = hot.tiers()[0]
    assert all(r.tier == tier for r in hot.links(tier=tier, top=None))
    assert all("pod 2" in r.pod for r in hot.links(pod="pod 2", top=None))
    sw = hot.switches()
    rows_ev = {r["switch"]: r for r in ev.switch_rows()}
    assert {r.id for r in sw} == set(rows_ev)
    for r in sw:
        assert r.fan_in_used == rows_ev[r.id]["fan_in_used"] and r.max_fan_in == rows_ev[r.id]["max_fan_in"]
    assert [r.util for r in sw] == sorted((r.util for r in sw), reverse=True)
    # a new result on the same network reuses the network's index (0.9 s at k=64): the same rows
    # as one built afresh (on a copy); other pods, or an edit (touch), make it build its own
    of_node = hot.of_node
    again = HotLists(ft8, overlay_from_evaluation(ev), dict(of_node))
    fresh = HotLists(copy.deepcopy(ft8), overlay_from_evaluation(ev), dict(of_node))
    assert again.index is hot.index and fresh.index is not hot.index
    assert [r.cells() for r in again.links(top=None)] == [r.cells() for r in fresh.links(top=None)]
    assert [r.cells() for r in again.switches()] == [r.cells() for r in fresh.switches()]
    assert HotLists(ft8, overlay_from_evaluation(ev)).index is not hot.index  # no pods
    tier_switch = next(s for s in ft8.switches() if s.tier == "edge")
    tier_switch.tier = "leaf"
    ft8.touch()
    edited = HotLists(ft8, overlay_from_evaluation(ev), dict(of_node))
    assert edited.index is not hot.index and "host-leaf" in edited.tiers()
    tier_switch.tier = "edge"
    ft8.touch()
