"""Alerts: a link above a threshold for a while, or off the plan by more than a share."""

from __future__ import annotations

import math

import numpy as np

from inaplanner.monitor.alerts import DEVIATION, HOT, AlertRule, AlertTracker, deviation_share
from inaplanner.monitor.series import Snapshot


def snap(t, **rates):
    keys = {"a": (0, 0), "b": (0, 1), "c": (1, 0)}
    return Snapshot(t, 0.0, {keys[k]: v for k, v in rates.items()})


def test_hot_link_alerts_only_after_holding_and_clears():
    names = {(0, 0): "X->Y", (0, 1): "Y->X", (1, 0): "Y->Z"}
    tr = AlertTracker(AlertRule(threshold=0.9, deviation=0.5, hold_s=2.0), np.array([10.0, 10.0]),
                      None, names)
    assert tr.update(snap(0.0, a=9.5, b=1.0)) == []
    assert tr.update(snap(1.0, a=9.6)) == []
    started = tr.update(snap(2.0, a=9.7))
    assert [(a.kind, a.link, a.since) for a in started] == [(HOT, "X->Y", 0.0)]
    assert tr.update(snap(3.0, a=9.8)) == []  # still active, not started again
    assert list(tr.active) == [(HOT, (0, 0))]
    tr.update(snap(4.0, a=5.0))
    assert tr.active == {}
    # a link that is not measured keeps its state; a dip restarts the clock
    tr.update(snap(5.0, a=9.5))
    tr.update(snap(6.0, c=1.0))
    assert tr.update(snap(7.0, a=9.5))[0].since == 5.0


def test_deviation_from_plan():
    planned = np.array([[4.0, 0.0], [2.0, 0.0]])
    tr = AlertTracker(AlertRule(threshold=2.0, deviation=0.2, hold_s=0.0), np.array([10.0, 10.0]),
                      planned, {})
    started = tr.update(snap(0.0, a=4.5, b=0.5, c=1.5))
    kinds = sorted((a.kind, a.key) for a in started)
    assert kinds == [(DEVIATION, (0, 1)), (DEVIATION, (1, 0))]  # 4.5 vs 4 is within 20 %
    assert deviation_share(1.5, 2.0) == -0.25
    assert math.isinf(deviation_share(0.5, 0.0))
    assert deviation_share(0.0, 0.0) == 0.0
