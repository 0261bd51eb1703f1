"""Node positions: rows by tier for Clos networks, a seeded force layout otherwise (Qt-free)."""

from __future__ import annotations

import networkx as nx
import numpy as np

from inaplanner.model import Host, Scenario, Switch

ROW_GAP = 160.0
COL_GAP = 60.0


def tiered_layout(sc: Scenario) -> dict[str, tuple[float, float]]:
    """Hosts on the bottom row, then leaves, aggregation, spines/cores above. Each host sits under its
    switch, switches of a row keep their order; rows are centred. Writes ``pos`` and returns it."""
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
    low = min(rows) if rows else 1
    order = {s: i for i, s in enumerate(rows.get(low, []))}
    hosts = [n.id for n in sc.nodes if isinstance(n, Host)]
    hosts.sort(key=lambda h: order.get(first_switch.get(h, ""), len(order)))
    rows[0] = hosts
    width = max(len(r) for r in rows.values()) * COL_GAP if rows else 0.0
    levels = sorted(rows)
    pos: dict[str, tuple[float, float]] = {}
    for li, rank in enumerate(levels):
        members = rows[rank]
        gap = width / max(len(members), 1)
        for i, node in enumerate(members):
            pos[node] = (float((i + 0.5) * gap), float((len(levels) - 1 - li) * ROW_GAP))
    _apply(sc, pos)
    return pos


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


def auto_layout(sc: Scenario) -> dict[str, tuple[float, float]]:
    return tiered_layout(sc) if sc.is_tiered() else force_layout(sc)


def _apply(sc: Scenario, pos: dict[str, tuple[float, float]]) -> None:
    for n in sc.nodes:
        if n.id in pos:
            n.pos = pos[n.id]
