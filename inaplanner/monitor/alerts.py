"""Alerts on observed link loads (pure): a link that stays above a share of its capacity, or
deviates from the plan by more than a set share, for at least ``hold_s`` seconds."""

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

    def text(self) -> str:
        if self.kind == HOT:
            share = self.observed / self.reference if self.reference > 0 else math.inf
            return (f"{self.link} above threshold: {self.observed:.4g}/{self.reference:.4g} Gbps "
                    f"({share:.0%}) since t={self.since:.1f}s")
        ref = self.reference
        off = (self.observed - ref) / ref if ref > 0 else math.inf
        return (f"{self.link} deviates from plan: observed {self.observed:.4g} vs planned "
                f"{ref:.4g} Gbps ({off:+.0%}) since t={self.since:.1f}s")


def deviation_share(observed: float, planned: float, min_planned: float = 1e-6) -> float:
    """(observed - planned) / planned; an unplanned link that carries traffic is +inf."""
    if planned <= min_planned:
        return 0.0 if observed <= min_planned else math.inf
    return (observed - planned) / planned


class AlertTracker:
    """Feed it snapshots in time order; :attr:`active` holds the alerts in force."""

    def __init__(self, rule: AlertRule, capacity: np.ndarray, planned: np.ndarray | None,
                 names: dict[tuple[int, int], str]) -> None:
        self.rule = rule
        self.capacity = capacity  # (L,)
        self.planned = planned  # (L, 2) or None
        self.names = names
        self._since: dict[tuple[str, tuple[int, int]], float] = {}
        self.active: dict[tuple[str, tuple[int, int]], Alert] = {}

    def update(self, snap: Snapshot) -> list[Alert]:
        """Apply one snapshot; returns the alerts that started with it."""
        rule = self.rule
        started: list[Alert] = []
        seen: set[tuple[str, tuple[int, int]]] = set()
        for key, obs in snap.rates.items():
            li, d = key
            cap = float(self.capacity[li])
            conds = [(HOT, cap, cap > 0 and obs > rule.threshold * cap)]
            if self.planned is not None:
                plan = float(self.planned[li, d])
                dev = deviation_share(obs, plan, rule.min_planned)
                conds.append((DEVIATION, plan, abs(dev) > rule.deviation))
            for kind, ref, on in conds:
                k = (kind, key)
                if not on:
                    continue
                seen.add(k)
                since = self._since.setdefault(k, snap.t)
                if snap.t - since >= rule.hold_s - 1e-9:
                    alert = Alert(kind, self.names.get(key, f"{li}/{d}"), key, since, obs, ref)
                    if k not in self.active:
                        started.append(alert)
                    self.active[k] = alert
        # a measured link whose condition is off clears; unmeasured links keep their state
        for k in list(self._since):
            if k not in seen and k[1] in snap.rates:
                self._since.pop(k, None)
                self.active.pop(k, None)
        return started
