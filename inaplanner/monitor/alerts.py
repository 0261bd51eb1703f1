"""Alerts on observed link loads (pure): a link that stays above a share of its capacity, or
deviates from the plan by more than a set share, for at least ``hold_s`` seconds.

What matters to an operator is what the plan did not put there. With a plan, a link that carries
what the plan put on it (within ``deviation`` of the planned load) is never an alert, however full
it is: plans fill links to capacity by design. Alerts are ranked (:func:`ranked`) by
:attr:`Alert.severity`: how far the observed load is from the planned one, relative to the link's
capacity, and how far it is over capacity; so the link at +48 % over plan comes before a dozen
links a few percent off.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from inaplanner.monitor.series import Snapshot

HOT = "hot"
DEVIATION = "deviation"


@dataclass(frozen=True)
class AlertRule:
    threshold: float = 0.9  # load / capacity
    deviation: float = 0.2  # |observed - planned| / planned
    hold_s: float = 3.0  # how long the condition must last
    min_planned: float = 1e-6  # below this (Gbps) a link counts as unplanned

    def __post_init__(self) -> None:
        if not self.threshold > 0 or not self.deviation > 0 or self.hold_s < 0:
            raise ValueError("alert threshold and deviation must be > 0, hold >= 0")


@dataclass(frozen=True)
class Alert:
    kind: str  # "hot" or "deviation"
    link: str  # "src->dst"
    key: tuple[int, int]
    since: float  # snapshot time the condition began
    observed: float
    reference: float  # capacity (hot) or planned load (deviation)
    capacity: float = 0.0
    planned: float | None = None

    @property
    def severity(self) -> float:
        """The ranking key: |observed - planned| / capacity (the load the plan did not expect, as
        a share of the link), plus how far the load is over capacity; without a plan, the load
        over the threshold's reference as a share of capacity. Larger is worse."""
        cap = self.capacity if self.capacity > 0 else (self.reference if self.kind == HOT else 0.0)
        if cap <= 0:
            return math.inf if self.observed > 0 else 0.0
        over = max(0.0, self.observed - cap) / cap
        if self.planned is not None:
            return abs(self.observed - self.planned) / cap + over
        return self.observed / cap + over

    def text(self) -> str:
        if self.kind == HOT:
            share = self.observed / self.reference if self.reference > 0 else math.inf
            return (f"{self.link} above threshold: {self.observed:.4g}/{self.reference:.4g} Gbps "
                    f"({share:.0%}) since t={self.since:.1f}s")
        ref = self.reference
        off = (self.observed - ref) / ref if ref > 0 else math.inf
        of_cap = ""
        if self.capacity > 0:
            of_cap = f", {(self.observed - ref) / self.capacity:+.0%} of capacity"
        return (f"{self.link} deviates from plan: observed {self.observed:.4g} vs planned "
                f"{ref:.4g} Gbps ({off:+.0%}{of_cap}) since t={self.since:.1f}s")


def ranked(alerts: list[Alert] | tuple[Alert, ...]) -> list[Alert]:
    """``alerts`` most severe first (ties: earlier start, then link name)."""
    return sorted(alerts, key=lambda a: (-a.severity, a.since, a.link, a.kind))


def deviation_share(observed: float, planned: float, min_planned: float = 1e-6) -> float:
    """(observed - planned) / planned; an unplanned link that carries traffic is +inf."""
    if planned <= min_planned:
        return 0.0 if observed <= min_planned else math.inf
    return (observed - planned) / planned


class AlertTracker:
    """Feed it snapshots in time order; :attr:`active` holds the alerts in force.

    Every measured link is checked at every snapshot, on arrays (:meth:`Snapshot.arrays`): at
    fat-tree k=64 a Python step per link took 0.2 to 0.4 s a poll. Only the links whose condition
    has held long enough become :class:`Alert` objects."""

    def __init__(self, rule: AlertRule, capacity: np.ndarray, planned: np.ndarray | None,
                 names: dict[tuple[int, int], str]) -> None:
        self.rule = rule
        self.capacity = capacity  # (L,)
        self.planned = planned  # (L, 2) or None
        self.names = names
        # per kind, (L, 2): the snapshot time each condition began (NaN: it does not hold)
        self._since = {kind: np.full((len(capacity), 2), np.nan) for kind in (HOT, DEVIATION)}
        self.active: dict[tuple[str, tuple[int, int]], Alert] = {}

    def update(self, snap: Snapshot) -> list[Alert]:
        """Apply one snapshot; returns the alerts that started with it."""
        rule = self.rule
        li, d, obs = snap.arrays()
        cap = np.asarray(self.capacity, dtype=float)[li]
        plan: np.ndarray | None = None
        on_plan = np.zeros(obs.size, dtype=bool)
        on = {}
        if self.planned is not None:
            plan = np.asarray(self.planned, dtype=float)[li, d]
            on_plan = np.abs(deviation_shares(obs, plan, rule.min_planned)) <= rule.deviation
            on[DEVIATION] = ~on_plan
        # a full link is news only when the plan did not fill it
        on[HOT] = (cap > 0) & (obs > rule.threshold * cap) & ~on_plan
        held_at, held_kind, held_since = [], [], []
        for code, kind in enumerate((HOT, DEVIATION)):
            if kind not in on:
                continue
            table = self._since[kind]
            since = table[li, d]
            now_on = on[kind]
            # a measured link whose condition is off clears; unmeasured links keep their state
            cleared = np.flatnonzero(~now_on & ~np.isnan(since))
            for i in cleared.tolist():
                self.active.pop((kind, (int(li[i]), int(d[i]))), None)
            table[li[cleared], d[cleared]] = np.nan
            since = np.where(now_on & np.isnan(since), snap.t, since)
            table[li[now_on], d[now_on]] = since[now_on]
            held = np.flatnonzero(now_on & (snap.t - since >= rule.hold_s - 1e-9))
            held_at.append(held)
            held_kind.append(np.full(held.size, code))
            held_since.append(since[held])
        at = np.concatenate(held_at)
        kinds = np.concatenate(held_kind)
        since_of = np.concatenate(held_since)
        order = np.lexsort((kinds, at))  # in the order of the rates, "hot" first for a link
        started: list[Alert] = []
        for i, code, since in zip(at[order].tolist(), kinds[order].tolist(),
                                  since_of[order].tolist(), strict=True):
            kind = (HOT, DEVIATION)[code]
            key = (int(li[i]), int(d[i]))
            c = float(cap[i])
            p = None if plan is None else float(plan[i])
            alert = Alert(kind, self.names.get(key, f"{key[0]}/{key[1]}"), key, since,
                          float(obs[i]), c if kind == HOT else p, c, p)
            k = (kind, key)
            if k not in self.active:
                started.append(alert)
            self.active[k] = alert
        return started


def deviation_shares(observed: np.ndarray, planned: np.ndarray,
                     min_planned: float = 1e-6) -> np.ndarray:
    """:func:`deviation_share` of many links at once."""
    with np.errstate(divide="ignore", invalid="ignore"):
        share = (observed - planned) / planned
    unplanned = np.where(observed <= min_planned, 0.0, math.inf)
    return np.where(planned <= min_planned, unplanned, share)
