"""Structure of a tiered (Clos) network, found from its links: the pods of a fat-tree and the
planes of its top tier. Used by the failure sweeps (pod and plane cases) and by the views that
group a large network (pods, racks, planes)."""

from __future__ import annotations

import itertools

import networkx as nx

from inaplanner.model import Scenario


def pods(sc: Scenario) -> list[list[str]]:
    """Groups of switches that stay connected when the top tier is removed (sorted, by first id)."""
    if not sc.is_tiered():
        return []
    top = max(sc.rank(s.id) for s in sc.switches())
    lower = [s.id for s in sc.switches() if sc.rank(s.id) < top]
    g = nx.Graph()
    g.add_nodes_from(lower)
    keep = set(lower)
    for lk in sc.links:
        if lk.a in keep and lk.b in keep:
            g.add_edge(lk.a, lk.b)
    groups = [sorted(c, key=_natural) for c in nx.connected_components(g)]
    return sorted(groups, key=lambda grp: _natural(grp[0]))


def planes(sc: Scenario) -> list[list[str]]:
    """Top-tier switches grouped by identical neighbour sets (fat-tree core planes)."""
    if not sc.is_tiered():
        return []
    top = max(sc.rank(s.id) for s in sc.switches())
    tops = {s.id for s in sc.switches() if sc.rank(s.id) == top}
    nbrs: dict[str, set[str]] = {t: set() for t in tops}  # one pass: neighbours() is O(links)
    for lk in sc.links:
        if lk.a in tops:
            nbrs[lk.a].add(lk.b)
        if lk.b in tops:
            nbrs[lk.b].add(lk.a)
    by_nbrs: dict[frozenset[str], list[str]] = {}
    for s in sc.switches():
        if s.id in tops:
            by_nbrs.setdefault(frozenset(nbrs[s.id]), []).append(s.id)
    groups = [sorted(v, key=_natural) for v in by_nbrs.values()]
    if len(groups) == 1 and len(groups[0]) > 1:  # leaf-spine: every spine is its own plane
        groups = [[s] for s in groups[0]]
    return sorted(groups, key=lambda grp: _natural(grp[0]))


def _natural(s: str) -> tuple:
    return tuple(int(t) if t.isdigit() else t for t in _split_digits(s))


def _split_digits(s: str) -> list[str]:
    return ["".join(g) for _, g in itertools.groupby(s, key=str.isdigit)]
