"""Alerts: a link above a threshold for a while, or off the plan by more than a share."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

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


def test_a_link_carrying_its_plan_is_no_alert_and_the_largest_departure_ranks_first():
    """The issue's case: a plan fills most links to 100 % by design; one link runs at +48 % over
    its plan. Only departures from the plan alert, the +48 % link first, before links that are
    further off in share of their (small) plan but not in share of the link."""
    from inaplanner.monitor.alerts import ranked
    from inaplanner.monitor.recording import LinkInfo
    from inaplanner.monitor.table import render_table

    n = 60
    cap = np.full(n, 100.0)
    planned = np.zeros((n, 2))
    planned[:57, 0] = 100.0  # full by design
    planned[57, 0] = 50.0  # the link that will run hot: 74 observed = +48 %
    planned[58, 0] = 5.0  # 8 observed = +60 % of plan but only +3 % of the link
    planned[59, 0] = 30.0  # 20 observed: -33 % of plan, -10 % of the link
    names = {(i, 0): f"L{i}->X" for i in range(n)}
    rates = {(i, 0): 100.0 * (1 + (0.01 if i % 2 else -0.01)) for i in range(57)}
    rates[(57, 0)] = 74.0
    rates[(58, 0)] = 8.0
    rates[(59, 0)] = 20.0
    tr = AlertTracker(AlertRule(threshold=0.9, deviation=0.2, hold_s=0.0), cap, planned, names)
    tr.update(Snapshot(0.0, 0.0, rates))
    alerts = ranked(list(tr.active.values()))
    assert [a.link for a in alerts] == ["L57->X", "L59->X", "L58->X"]
    assert all(a.kind == DEVIATION for a in alerts)  # no "hot" alert on a link full by plan
    assert alerts[0].severity == 0.24 and "+48%" in alerts[0].text()
    links = {k: LinkInfo(v.split("->")[0], "X", 100.0) for k, v in names.items()}
    text = render_table(Snapshot(0.0, 0.0, rates), links, planned, 5, list(tr.active.values()))
    assert text.splitlines()[-3].startswith("ALERT deviation: L57->X")
    # without a plan, a full link is news
    tr2 = AlertTracker(AlertRule(threshold=0.9, deviation=0.2, hold_s=0.0), cap, None, names)
    tr2.update(Snapshot(0.0, 0.0, rates))
    assert len(tr2.active) == 57 and all(a.kind == HOT for a in tr2.active.values())


class ReferenceAlerts:
    """The alert tracker as it was, link by link over the snapshot's dict: the tracker on
    arrays must start, keep and clear the very same alerts, in the same order."""

    def __init__(self, rule, capacity, planned, names):
        self.rule, self.capacity, self.planned, self.names = rule, capacity, planned, names
        self._since: dict = {}
        self.active: dict = {}

    def update(self, snap):
        from inaplanner.monitor.alerts import Alert

        rule, started, seen = self.rule, [], set()
        for key, obs in snap.rates.items():
            li, d = key
            cap = float(self.capacity[li])
            plan, on_plan, conds = None, False, []
            if self.planned is not None:
                plan = float(self.planned[li, d])
                on_plan = abs(deviation_share(obs, plan, rule.min_planned)) <= rule.deviation
                conds.append((DEVIATION, plan, not on_plan))
            conds.insert(0, (HOT, cap, cap > 0 and obs > rule.threshold * cap and not on_plan))
            for kind, ref, on in conds:
                k = (kind, key)
                if not on:
                    continue
                seen.add(k)
                since = self._since.setdefault(k, snap.t)
                if snap.t - since >= rule.hold_s - 1e-9:
                    alert = Alert(kind, self.names.get(key, f"{li}/{d}"), key, since, obs, ref,
                                  cap, plan)
                    if k not in self.active:
                        started.append(alert)
                    self.active[k] = alert
        for k in list(self._since):
            if k not in seen and k[1] in snap.rates:
                self._since.pop(k, None)
                self.active.pop(k, None)
        return started


@pytest.mark.parametrize("seed", range(12))
def test_alerts_on_arrays_equal_the_link_by_link_reference(seed):
    """Brute force: random polls (links measured or not, loads around their plan, over their
    capacity, unplanned, links of capacity 0), with and without a plan, holds of 0 to 2 s;
    the started alerts and the active ones (values and order) are the reference's."""
    rng = random.Random(seed)
    n = 12
    capacity = np.array([rng.choice([0.0, 10.0, 40.0]) for _ in range(n)])
    planned = np.array([[rng.choice([0.0, 1e-7, 5.0, 10.0, 36.0]) for _ in range(2)]
                        for _ in range(n)])
    names = {(li, d): f"L{li}.{d}" for li in range(n) for d in (0, 1) if rng.random() < 0.8}
    keys = [(li, d) for li in range(n) for d in (0, 1)]
    for plan in (planned, None):
        rule = AlertRule(threshold=rng.choice([0.5, 0.9]), deviation=rng.choice([0.1, 0.2]),
                         hold_s=rng.choice([0.0, 1.0, 2.0]))
        mine, ref = AlertTracker(rule, capacity, plan, names), ReferenceAlerts(rule, capacity,
                                                                              plan, names)
        for t in range(30):
            measured = rng.sample(keys, rng.randrange(len(keys) + 1))
            rates = {k: rng.choice([0.0, 1e-7, 4.0, 5.0, 5.5, 9.5, 10.0, 37.0, 50.0])
                     for k in measured}
            snap = Snapshot(t * 0.5, 0.0, rates)
            assert mine.update(snap) == ref.update(snap)
            assert list(mine.active.items()) == list(ref.active.items())
