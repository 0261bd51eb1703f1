"""Hot lists: the busiest links and switches of an overlay, as table rows (no Qt).

The figures are the overlay's, i.e. the evaluator's (:mod:`inaplanner.evaluate`): nothing is
recomputed. Links are ranked by load/capacity of their busier direction (violated first), with
filters by tier (``"edge-aggregation"``, ...), task (the links its routes use) and pod (links with an
end in it); switches by aggregation load/capacity, with the fan-in used against ``max_fan_in`` and
the pipelines that aggregate.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from inaplanner.model import Scenario, Switch
from inaplanner.views.fmt import num, pct
from inaplanner.views.overlay import Overlay

LINK_COLUMNS = ("Link", "Tier", "Load", "Capacity", "Load/cap", "Flows", "Pod")
SWITCH_COLUMNS = ("Switch", "Pod", "Agg. load", "Capacity", "Load/cap", "Fan-in", "Pipelines")


def tier_name(sc: Scenario, node_id: str) -> str:
    node = sc.node(node_id)
    if isinstance(node, Switch):
        return node.tier or f"tier {sc.rank(node_id)}"
    return "host"


@dataclass(frozen=True)
class LinkRow:
    index: int
    a: str
    b: str
    tier: str
    load: float  # busier direction, background included
    capacity: float
    util: float
    flows: int
    violated: bool
    pod: str

    @property
    def name(self) -> str:
        return f"{self.a} - {self.b}"

    def cells(self) -> tuple[str, ...]:
        return (self.name, self.tier, num(self.load, 3), num(self.capacity, 3), pct(self.util, 0),
                str(self.flows), self.pod)

    def sort_keys(self) -> tuple[Any, ...]:
        return (self.name, self.tier, self.load, self.capacity, self.util, self.flows, self.pod)


@dataclass(frozen=True)
class SwitchRow:
    id: str
    pod: str
    load: float
    capacity: float | None
    util: float
    fan_in_used: int
    max_fan_in: int | None
    pipelines_used: tuple[int, ...]
    pipelines: int
    violated: bool

    @property
    def fan_in(self) -> str:
        return f"{self.fan_in_used}/{'-' if self.max_fan_in is None else self.max_fan_in}"

    def cells(self) -> tuple[str, ...]:
        cap = "line rate" if self.capacity is None else num(self.capacity, 3)
        pipes = ",".join(f"P{p}" for p in self.pipelines_used) or "-"
        return (self.id, self.pod, num(self.load, 3), cap, pct(self.util, 0) if self.capacity else "-",
                self.fan_in, f"{pipes} of {self.pipelines}")

    def sort_keys(self) -> tuple[Any, ...]:
        fan = self.fan_in_used / self.max_fan_in if self.max_fan_in else float(self.fan_in_used)
        return (self.id, self.pod, self.load, self.capacity if self.capacity is not None else float("inf"),
                self.util, fan, len(self.pipelines_used))


@dataclass(frozen=True)
class NetworkIndex:
    """What the tables need of the network itself, whatever the overlay: per node its tier and
    pod as small integer codes, per link its end indices and its tier pair. 0.9 s at fat-tree
    k=64, so it is made once per network (:func:`network_index`), ahead while a file is read."""

    of_node: dict[str, str]
    link_ends: list[tuple[str, str]]
    tier_names: list[str]
    pod_names: list[str]
    node_pod: np.ndarray
    ia: np.ndarray
    ib: np.ndarray
    link_tier: np.ndarray
    link_tier_names: list[str]


def _build_index(sc: Scenario, of_node: dict[str, str], link_ends: list[tuple[str, str]]) -> NetworkIndex:
    index = {n.id: i for i, n in enumerate(sc.nodes)}
    rank = np.array([sc.rank(n.id) if isinstance(n, Switch) else 0 for n in sc.nodes], dtype=np.int64)
    names = [tier_name(sc, n.id) for n in sc.nodes]
    tier_names = sorted(set(names))
    tcode = {t: i for i, t in enumerate(tier_names)}
    ntier = np.fromiter((tcode[t] for t in names), dtype=np.int64, count=len(names))
    pod_names = sorted(set(of_node.values()), key=_natural)
    pcode = {p: i for i, p in enumerate(pod_names)}
    node_pod = np.fromiter((pcode.get(of_node.get(n.id, ""), -1) for n in sc.nodes), dtype=np.int64,
                           count=len(sc.nodes))
    L = len(link_ends)
    ia = np.fromiter((index[a] for a, _ in link_ends), dtype=np.int64, count=L)
    ib = np.fromiter((index[b] for _, b in link_ends), dtype=np.int64, count=L)
    lo = np.where(rank[ia] <= rank[ib], ntier[ia], ntier[ib])
    hi = np.where(rank[ia] <= rank[ib], ntier[ib], ntier[ia])
    pair = lo * len(tier_names) + hi
    uniq, link_tier = np.unique(pair, return_inverse=True)
    T = len(tier_names)
    return NetworkIndex(of_node, link_ends, tier_names, pod_names, node_pod, ia, ib,
                        link_tier.reshape(-1),
                        [f"{tier_names[int(u) // T]}-{tier_names[int(u) % T]}" for u in uniq])


def network_index(sc: Scenario, of_node: dict[str, str] | None = None,
                  link_ends: list[tuple[str, str]] | None = None) -> NetworkIndex:
    """The :class:`NetworkIndex` of ``sc`` with pods ``of_node`` over ``link_ends`` (default: the
    scenario's links), kept until the network is edited: every result on it shares one (0.14 s
    at k=64 on the UI thread per result before, up to 0.7 s with a planner's process busy
    beside it)."""
    of_node = of_node or {}
    ends = link_ends if link_ends is not None else [(lk.a, lk.b) for lk in sc.links]
    held: dict[str, NetworkIndex] = sc.derived("hot lists index", dict)
    last = held.get("last")
    if (last is not None and (last.of_node is of_node or last.of_node == of_node)
            and (last.link_ends is ends or last.link_ends == ends)):
        return last
    made = _build_index(sc, of_node, ends)
    held["last"] = made
    return made


def pods_of(grouping: Any) -> dict[str, str]:
    """Node id -> pod (or rack) for the tables' pod column: groups of one node have none."""
    single = {g.id for g in grouping.groups if g.single}
    return {n: g for n, g in grouping.of_node.items() if g not in single}


class HotLists:
    """Row data of the Links and Switches tables for one overlay. ``of_node`` maps node id -> pod
    (or rack) name (:func:`pods_of` a :class:`inaplanner.views.groups.Grouping`); without it there
    is no pod column or filter."""

    def __init__(self, sc: Scenario, overlay: Overlay, of_node: dict[str, str] | None = None) -> None:
        self.scenario = sc
        self.overlay = overlay
        self.of_node = of_node or {}
        ov = overlay
        self.util = np.nan_to_num(np.asarray(ov.link_util, dtype=float).reshape(-1, 2), nan=0.0).max(axis=1)
        idx = network_index(sc, self.of_node, ov.link_ends)
        self.index = idx
        self._tier_names, self._pod_names, self._node_pod = idx.tier_names, idx.pod_names, idx.node_pod
        self._ia, self._ib = idx.ia, idx.ib
        self._link_tier, self._link_tier_names = idx.link_tier, idx.link_tier_names

    def link_tier(self, i: int) -> str:
        return self._link_tier_names[int(self._link_tier[i])]

    def _pod_of_link(self, i: int) -> str:
        a, b = self.overlay.link_ends[i]
        pa, pb = self.of_node.get(a, ""), self.of_node.get(b, "")
        if pa == pb or not pb:
            return pa
        if not pa:
            return pb
        return f"{pa} / {pb}"

    # ---- filter choices ----------------------------------------------------------------------

    def tiers(self) -> list[str]:
        return sorted(self._link_tier_names)

    def pods(self) -> list[str]:
        return list(self._pod_names)

    def tasks(self) -> list[str]:
        return list(self.overlay.tasks)

    # ---- rows --------------------------------------------------------------------------------

    def link_indices(self, tier: str | None = None, task: str | None = None, pod: str | None = None,
                     top: int | None = 50) -> np.ndarray:
        """Link indices, busiest first (violated links before the others), filtered."""
        ov = self.overlay
        keep = np.ones(ov.link_count, dtype=bool)
        if tier is not None:
            code = self._link_tier_names.index(tier) if tier in self._link_tier_names else -1
            keep &= self._link_tier == code
        if task is not None:
            ti = ov.tasks.index(task)
            used = np.zeros(ov.link_count, dtype=bool)
            used[ov.segments.link[ov.segments.task == ti]] = True
            keep &= used
        if pod is not None:
            code = self._pod_names.index(pod) if pod in self._pod_names else -2
            keep &= (self._node_pod[self._ia] == code) | (self._node_pod[self._ib] == code)
        idx = np.flatnonzero(keep)
        order = np.lexsort((idx, -self.util[idx], ~np.asarray(ov.link_violated, dtype=bool)[idx]))
        idx = idx[order]
        return idx if top is None else idx[:top]

    def link_row(self, i: int) -> LinkRow:
        ov = self.overlay
        a, b = ov.link_ends[i]
        return LinkRow(i, a, b, self.link_tier(i), float(ov.link_load[i].max()), float(ov.link_capacity[i]),
                       float(self.util[i]), int(ov.link_flows[i].sum()), bool(ov.link_violated[i]),
                       self._pod_of_link(i))

    def links(self, tier: str | None = None, task: str | None = None, pod: str | None = None,
              top: int | None = 50) -> list[LinkRow]:
        return [self.link_row(int(i)) for i in self.link_indices(tier, task, pod, top)]

    def switches(self, pod: str | None = None, top: int | None = None) -> list[SwitchRow]:
        """Programmable switches, busiest aggregation first (violated first)."""
        rows = []
        for so in self.overlay.switches.values():
            p = self.of_node.get(so.id, "")
            if pod is not None and p != pod:
                continue
            rows.append(SwitchRow(so.id, p, so.load, so.capacity, so.utilisation, so.fan_in_used, so.max_fan_in,
                                  so.pipelines_used, so.pipelines, so.violated))
        rows.sort(key=lambda r: (not r.violated, -r.util, -r.load, -r.fan_in_used, _natural(r.id)))
        return rows if top is None else rows[:top]


def _natural(s: str) -> tuple:
    import re

    return tuple((0, int(t)) if t.isdigit() else (1, t) for t in re.split(r"(\d+)", s) if t)
