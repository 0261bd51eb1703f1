"""Node positions: rows by tier for Clos networks, a seeded force layout otherwise (Qt-free)."""

from __future__ import annotations

import networkx as nx
import numpy as np

from inaplanner.model import Host, Scenario, Switch

ROW_GAP = 160.0
COL_GAP = 60.0
HOST_GAP = 40.0
MAX_WIDTH = 4000.0  # hosts alone never make a row wider than this
ASPECT = 1.6  # width / height the drawing aims at (a typical window; the GUI passes its own)
MAX_ROW_GAP = 6 * ROW_GAP  # rows never spread further apart than this


def tiered_layout(sc: Scenario, aspect: float = ASPECT) -> dict[str, tuple[float, float]]:
    """Switch rows by tier (leaves at the bottom, cores on top), rows spread to a common width; the
    hosts of each leaf in a block right under it (a grid when they do not fit in one row), so a
    fat-tree k=32 is as wide as its edge-switch row, not its 8,192 hosts. The rows are spread
    vertically so the drawing is about ``aspect`` times as wide as high (the window's shape): at
    most ``MAX_ROW_GAP`` apart, so an opened pod stays compact, and what height is still missing
    goes to the gap under the top row (a fat-tree's core planes over its pods, a leaf-spine's
    spines over its racks), where the grouped view draws its bundles; a fat-tree k=64, 2,048 edge
    switches wide, is then no longer a thin band across the window. Writes ``pos``."""
    ranks = {n.id: sc.rank(n.id) for n in sc.nodes}
    rows: dict[int, list[str]] = {}
    for n in sc.nodes:
        if isinstance(n, Switch):
            rows.setdefault(ranks[n.id], []).append(n.id)
    # hosts follow the order of the first switch they attach to
    first_switch: dict[str, str] = {}
    for lk in sc.links:
        for h, s in ((lk.a, lk.b), (lk.b, lk.a)):
            if ranks.get(h) == 0 and ranks.get(s, 0) > 0:
                first_switch.setdefault(h, s)
    hosts = [n.id for n in sc.nodes if isinstance(n, Host)]
    width = max(max((len(r) for r in rows.values()), default=1) * COL_GAP, min(len(hosts) * HOST_GAP, MAX_WIDTH))
    levels = sorted(rows)
    # hosts sit in a block under their switch: one row when there is room, else a small grid
    under: dict[str, list[str]] = {}
    loose: list[str] = []
    for h in hosts:
        top = first_switch.get(h)
        (under.setdefault(top, []) if top is not None and top in ranks and ranks[top] > 0 else loose).append(h)
    slot = width / max(len(rows.get(levels[0], [])), 1) if levels else COL_GAP
    block_rows = max((_block(len(m), slot)[1] for m in under.values()), default=0)
    block_h = block_rows * HOST_GAP * 0.8
    row_gap = ROW_GAP
    if levels and aspect > 0:
        # height = (rows - 1) gaps + the hosts' offset under their leaf (0.75 of a capped gap) + blocks
        free = width / aspect - block_h
        gap = free / (len(levels) - 1 + 0.75) if len(levels) > 1 else free
        if gap > 2 * ROW_GAP and len(levels) > 1:
            gap = (free - 1.5 * ROW_GAP) / (len(levels) - 1)
        row_gap = min(max(ROW_GAP, gap), MAX_ROW_GAP)
    top_extra = 0.0
    if len(levels) > 1 and aspect > 0:
        height = (len(levels) - 1) * row_gap + 0.75 * min(row_gap, 2 * ROW_GAP) + block_h
        top_extra = max(0.0, width / aspect - height)
    pos: dict[str, tuple[float, float]] = {}
    for li, rank in enumerate(levels):
        members = rows[rank]
        gap = width / max(len(members), 1)
        y = (len(levels) - li) * row_gap + (top_extra if li < len(levels) - 1 else 0.0)
        for i, node in enumerate(members):
            pos[node] = (float((i + 0.5) * gap), float(y))
    for s, members in under.items():
        if s not in pos:
            loose.extend(members)
            continue
        per_row, _ = _block(len(members), slot)
        x0 = pos[s][0] - (per_row - 1) * HOST_GAP / 2
        for i, h in enumerate(members):
            r, c = divmod(i, per_row)
            pos[h] = (x0 + c * HOST_GAP, pos[s][1] + 0.75 * min(row_gap, 2 * ROW_GAP) + r * HOST_GAP * 0.8)
    bottom = max((y for _, y in pos.values()), default=0.0)
    for i, h in enumerate(loose):
        pos[h] = ((i + 0.5) * COL_GAP, bottom + ROW_GAP)
    _apply(sc, pos)
    return pos


def _block(n: int, slot: float) -> tuple[int, int]:
    """(per row, rows) of a leaf's block of ``n`` hosts in a slot ``slot`` wide, rows balanced."""
    if n <= 0:
        return 1, 0
    fit = max(1, min(n, int(slot // HOST_GAP)))
    rows = -(-n // fit)
    per_row = -(-n // rows)
    return per_row, rows


def force_layout(sc: Scenario, seed: int = 0) -> dict[str, tuple[float, float]]:
    """A seeded spring layout scaled to the canvas; writes ``pos`` and returns it."""
    g = sc.graph()
    if g.number_of_nodes() == 0:
        return {}
    raw = nx.spring_layout(g, seed=seed)
    scale = 80.0 * max(np.sqrt(g.number_of_nodes()), 2.0)
    pos = {n: (float(x * scale), float(y * scale)) for n, (x, y) in raw.items()}
    _apply(sc, pos)
    return pos


def auto_layout(sc: Scenario, aspect: float = ASPECT) -> dict[str, tuple[float, float]]:
    return tiered_layout(sc, aspect) if sc.is_tiered() else force_layout(sc)


def _apply(sc: Scenario, pos: dict[str, tuple[float, float]]) -> None:
    for n in sc.nodes:
        if n.id in pos:
            n.pos = pos[n.id]
