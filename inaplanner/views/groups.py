"""Groups of a large network, for views that cannot show every node: pods, racks and bundles.

A datacenter drawn node by node is unreadable from k=8 on. The views (the report's topology, the
canvas at fit-to-view) draw *groups* instead and links between groups as *bundles*:

- a three-tier Clos (fat-tree): a **pod** is the aggregation and edge switches that stay connected
  when the top tier is removed, with the hosts under them; the top tier is grouped into **planes**
  (core switches with the same neighbours: in a fat-tree the k/2 cores behind aggregation index i);
- a two-tier Clos (leaf-spine): a **rack** is a leaf with its hosts; spines stay single;
- any other graph: no grouping (every node is its own group).

A bundle carries the links between two groups with the worst (max) and mean load/capacity of
those links (both directions), so the drawing can colour it by the worst link and label it with
max/mean. Pure data; the colour comes from the one colour scale of :mod:`inaplanner.views.overlay`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from inaplanner.model import Scenario


@dataclass
class Group:
    id: str  # "pod 1", "plane 2", "rack L3", or a node id for a single node
    kind: str  # "pod" | "plane" | "rack" | "node"
    members: list[str]  # node ids, switches first
    tier: int  # rank of the highest member (views draw higher tiers on top)
    hosts: int = 0
    switches: list[str] = field(default_factory=list)

    @property
    def single(self) -> bool:
        return len(self.members) == 1


@dataclass
class Bundle:
    a: str  # group ids, a < b in group order
    b: str
    links: list[int]
    capacity: float  # sum over the links (one direction)
    max_util: float = 0.0
    mean_util: float = 0.0

    @property
    def label(self) -> str:
        from inaplanner.views.fmt import pct

        if len(self.links) == 1:
            return pct(self.max_util, 0)
        return f"max {pct(self.max_util, 0)} / mean {pct(self.mean_util, 0)}"


@dataclass
class Grouping:
    groups: list[Group]
    of_node: dict[str, str]  # node id -> group id
    kind: str  # "fat-tree" | "leaf-spine" | "flat"

    def group(self, gid: str) -> Group:
        return next(g for g in self.groups if g.id == gid)

    def index(self) -> dict[str, int]:
        return {g.id: i for i, g in enumerate(self.groups)}


_DIGITS = re.compile(r"(\d+)")


def _natural(s: str) -> tuple:
    return tuple(int(t) if t.isdigit() else t for t in _DIGITS.split(s) if t)


def group_network(sc: Scenario) -> Grouping:
    """Pods and planes (three tiers), racks (two tiers), or one group a node (anything else)."""
    from inaplanner.topologies.structure import planes, pods

    if not sc.is_tiered():
        return _flat(sc)
    ranks = {s.id: sc.rank(s.id) for s in sc.switches()}
    levels = sorted(set(ranks.values()))
    host_of: dict[str, list[str]] = {}
    adj: dict[str, list[str]] = {}  # host -> its switch neighbours (one pass: neighbours() is O(L))
    for lk in sc.links:
        for a, b in ((lk.a, lk.b), (lk.b, lk.a)):
            if a not in ranks and b in ranks:
                adj.setdefault(a, []).append(b)
    for h in sc.hosts():
        nbrs = adj.get(h.id, [])
        if nbrs:
            # one neighbour is the usual host: no key to work out (65,536 hosts at k=64)
            low = nbrs[0] if len(nbrs) == 1 else min(nbrs, key=lambda n: (ranks[n], _natural(n)))
            host_of.setdefault(low, []).append(h.id)
    groups: list[Group] = []
    of_node: dict[str, str] = {}

    def add(gid: str, kind: str, switches: list[str]) -> None:
        hosts = sorted((h for s in switches for h in host_of.get(s, [])), key=_natural)
        g = Group(gid, kind, [*switches, *hosts], max(ranks[s] for s in switches), len(hosts), switches)
        groups.append(g)
        for m in g.members:
            of_node[m] = gid

    if len(levels) >= 3:
        for i, grp in enumerate(planes(sc), 1):
            add(f"plane {i}", "plane", grp)
        for i, grp in enumerate(pods(sc), 1):
            add(f"pod {i}", "pod", grp)
        kind = "fat-tree"
    else:
        top = levels[-1]
        for s in sorted((s for s, r in ranks.items() if r == top), key=_natural):
            add(s, "node", [s])
        for s in sorted((s for s, r in ranks.items() if r < top), key=_natural):
            add(f"rack {s}", "rack", [s])
        kind = "leaf-spine"
    for h in sc.hosts():  # hosts with no switch neighbour
        if h.id not in of_node:
            groups.append(Group(h.id, "node", [h.id], 0, 1, []))
            of_node[h.id] = h.id
    return Grouping(groups, of_node, kind)


def _flat(sc: Scenario) -> Grouping:
    groups = [Group(n.id, "node", [n.id], sc.rank(n.id), 0 if sc.is_switch(n.id) else 1,
                    [n.id] if sc.is_switch(n.id) else []) for n in sc.nodes]
    return Grouping(groups, {n.id: n.id for n in sc.nodes}, "flat")


def bundles(sc: Scenario, grouping: Grouping, util: np.ndarray | None = None) -> list[Bundle]:
    """The links between different groups, bundled per group pair, with max and mean of the
    (L, 2) load/capacity ``util`` (both directions; NaN = not measured is skipped)."""
    order = grouping.index()
    by_pair: dict[tuple[str, str], list[int]] = {}
    for i, lk in enumerate(sc.links):
        ga, gb = grouping.of_node[lk.a], grouping.of_node[lk.b]
        if ga == gb:
            continue
        key = (ga, gb) if order[ga] <= order[gb] else (gb, ga)
        by_pair.setdefault(key, []).append(i)
    out = []
    for (a, b), idx in by_pair.items():
        cap = float(sum(sc.links[i].capacity for i in idx))
        bundle = Bundle(a, b, idx, cap)
        if util is not None and len(idx):
            u = np.asarray(util, dtype=float)[idx].reshape(-1)
            u = u[~np.isnan(u)]
            if u.size:
                bundle.max_util = float(u.max())
                bundle.mean_util = float(np.mean(np.max(np.asarray(util, dtype=float)[idx], axis=1)))
        out.append(bundle)
    out.sort(key=lambda bd: (order[bd.a], order[bd.b]))
    return out


def inner_util(sc: Scenario, grouping: Grouping, util: np.ndarray) -> dict[str, float]:
    """The worst load/capacity of the links inside each group (a pod's own fabric)."""
    out: dict[str, float] = {}
    u = np.nan_to_num(np.asarray(util, dtype=float), nan=0.0)
    for i, lk in enumerate(sc.links):
        ga, gb = grouping.of_node[lk.a], grouping.of_node[lk.b]
        if ga == gb:
            out[ga] = max(out.get(ga, 0.0), float(u[i].max()))
    return out


def roles(sc: Scenario, grouping: Grouping) -> dict[str, tuple[int, int]]:
    """Per group: (workers, parameter servers) of all jobs placed in it."""
    out: dict[str, list[int]] = {}
    for j in sc.jobs:
        for w in j.workers:
            out.setdefault(grouping.of_node[w], [0, 0])[0] += 1
        for p in j.parameter_servers:
            out.setdefault(grouping.of_node[p], [0, 0])[1] += 1
    return {k: (v[0], v[1]) for k, v in out.items()}


def worth_grouping(sc: Scenario, max_nodes: int = 60) -> bool:
    """Is the network too large to draw node by node in a page-sized picture?"""
    return len(sc.nodes) > max_nodes


__all__: Sequence[str] = ("Bundle", "Group", "Grouping", "bundles", "group_network", "inner_util",
                          "roles", "worth_grouping")
