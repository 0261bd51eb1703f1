"""What the Monitor mode shows, as plain data (no Qt): the observed-load overlay for the canvas,
per-link planned vs observed rows, the time series of each directed link, and the alerts.

The overlay is the canvas overlay type (:class:`inaplanner.views.overlay.Overlay`) filled with
observed loads, coloured with the planner overlay's scale (idle grey, green-to-yellow ramp below
80 %, orange to 100 %, red above); a link not measured in the last poll is drawn idle and labelled
``-``. Its tooltips put planned and observed side by side.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from inaplanner.model import Plan, Scenario
from inaplanner.monitor.alerts import Alert, AlertRule, AlertTracker, deviation_share
from inaplanner.monitor.series import Snapshot, planned_loads, polls_kept
from inaplanner.monitor.table import most_loaded
from inaplanner.progress import Progress
from inaplanner.views.overlay import (
    FULL,
    FlowSegments,
    LinkOverlay,
    Overlay,
    colour_class,
    fmt,
    width_for,
)

if TYPE_CHECKING:
    from inaplanner.monitor.recording import Recording

TOL = 1e-9


@dataclass(frozen=True)
class ObservedLink(LinkOverlay):
    """A link of the monitor overlay: observed figures plus the plan's, for the tooltip."""

    planned: tuple[float, float] | None = None

    @property
    def tooltip(self) -> str:
        rows = [f"link {self.a} - {self.b}, capacity {fmt(self.capacity)} Gbps (observed)"]
        for d, (src, dst) in enumerate(((self.a, self.b), (self.b, self.a))):
            load, util = self.load[d], self.utilisation[d]
            if math.isnan(load):
                obs = "not measured"
            else:
                pct = "inf" if math.isinf(util) else f"{util * 100:.1f} %"
                obs = f"{load:.4g} Gbps ({pct})"
            plan = "" if self.planned is None else f"; planned {self.planned[d]:.4g} Gbps"
            rows.append(f"{src} -> {dst}: observed {obs}{plan}")
        if self.violated:
            rows.append("OVER CAPACITY")
        return "\n".join(rows)


@dataclass
class MonitorOverlay(Overlay):
    """The canvas overlay of observed loads (NaN where not measured)."""

    planned: np.ndarray | None = None  # (L, 2)

    def link(self, index: int) -> ObservedLink:
        base = super().link(index)
        planned = None
        if self.planned is not None:
            planned = (float(self.planned[index, 0]), float(self.planned[index, 1]))
        fields = {f: getattr(base, f) for f in base.__dataclass_fields__}
        return ObservedLink(**fields, planned=planned)

    def with_filter(self, task: str | None) -> MonitorOverlay:
        """Observed loads have no tasks: a task filter chosen elsewhere is ignored."""
        return replace(self, task_filter=None)

    def link_label(self, index: int) -> str:
        row = self.link_load[index]
        if np.all(np.isnan(row)):
            return f"-/{fmt(float(self.link_capacity[index]))}"
        return f"{fmt(float(np.nanmax(row)))}/{fmt(float(self.link_capacity[index]))}"


def observed_overlay(sc: Scenario, loads: np.ndarray, planned: np.ndarray | None = None,
                     title: str = "observed load") -> MonitorOverlay:
    """The overlay of (L, 2) observed Gbps ``loads`` (NaN = not measured) on ``sc``."""
    n = len(sc.links)
    loads = np.asarray(loads, dtype=float).reshape(n, 2)
    cap = np.array([lk.capacity for lk in sc.links], dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        util = np.where(cap[:, None] > 0, loads / np.where(cap[:, None] > 0, cap[:, None], 1.0),
                        np.where(loads > 0, np.inf, 0.0))
    util = np.where(np.isnan(loads), np.nan, util)
    worst = np.nan_to_num(np.nanmax(np.where(np.isnan(util), -1.0, util), axis=1) if n else
                          np.zeros(0), nan=0.0)
    worst = np.maximum(worst, 0.0)
    violated = worst > FULL + TOL
    empty = np.zeros(0, dtype=np.int64)
    return MonitorOverlay(
        title=title,
        link_load=loads,
        link_capacity=cap,
        link_util=util,
        link_flows=np.zeros((n, 2), dtype=np.int64),
        link_violated=violated,
        link_class=colour_class(worst, violated),
        link_width=width_for(cap),
        link_ends=[(lk.a, lk.b) for lk in sc.links],
        switches={},
        tasks=[],
        task_colours=[],
        task_rates=[],
        segments=FlowSegments(empty, empty, empty, np.zeros(0, dtype=bool)),
        roles={},
        # the canvas legend prints "objective X (kind)": for observed load, the busiest link
        objective=float(worst.max()) if worst.size else 0.0,
        objective_kind="observed: highest link load/capacity",
        feasible=True,  # a plan's verdict; overloaded links are painted red all the same
        planned=planned,
    )


@dataclass
class LinkRow:
    """One directed link in the monitor table."""

    key: tuple[int, int]
    name: str
    observed: float | None
    planned: float | None
    capacity: float

    @property
    def utilisation(self) -> float | None:
        if self.observed is None:
            return None
        if self.capacity > 0:
            return self.observed / self.capacity
        return math.inf if self.observed > 0 else 0.0  # as the terminal's table says

    @property
    def deviation(self) -> float | None:
        if self.observed is None or self.planned is None:
            return None
        return deviation_share(self.observed, self.planned)


@dataclass
class MonitorModel:
    """The state of one monitoring session (live or replayed) on one scenario."""

    scenario: Scenario
    planned: np.ndarray | None = None  # (L, 2) Gbps from the evaluator
    rule: AlertRule = field(default_factory=AlertRule)
    history: int = 3600

    def __post_init__(self) -> None:
        sc = self.scenario
        self.names: dict[tuple[int, int], str] = {}
        for li, lk in enumerate(sc.links):
            self.names[(li, 0)] = f"{lk.a}->{lk.b}"
            self.names[(li, 1)] = f"{lk.b}->{lk.a}"
        self.capacity = np.array([lk.capacity for lk in sc.links], dtype=float)
        self._names_sorted: list[tuple[int, int]] | None = None
        self.reset()

    def reset(self) -> None:
        #: polls kept: ``history``, or fewer on a network whose polls would not fit in memory
        #: (:func:`~inaplanner.monitor.series.polls_kept`)
        self.kept = polls_kept(self.history, 2 * len(self.scenario.links))
        self.snapshots: deque[Snapshot] = deque(maxlen=self.kept)
        self.tracker = AlertTracker(self.rule, self.capacity, self.planned, self.names)
        self.alert_log: list[Alert] = []

    def set_rule(self, rule: AlertRule) -> None:
        self.rule = rule
        self.tracker = AlertTracker(rule, self.capacity, self.planned, self.names)

    def set_planned(self, planned: np.ndarray | None) -> None:
        self.planned = planned
        self.tracker = AlertTracker(self.rule, self.capacity, planned, self.names)

    @property
    def latest(self) -> Snapshot | None:
        return self.snapshots[-1] if self.snapshots else None

    def add(self, snap: Snapshot) -> list[Alert]:
        """Take one snapshot (in time order); returns the alerts it started."""
        self.snapshots.append(snap)
        started = self.tracker.update(snap)
        self.alert_log.extend(started)
        return started

    def loads(self, snap: Snapshot | None = None) -> np.ndarray:
        snap = snap if snap is not None else self.latest
        n = len(self.scenario.links)
        return snap.loads(n) if snap is not None else np.full((n, 2), np.nan)

    def overlay(self, snap: Snapshot | None = None) -> MonitorOverlay:
        snap = snap if snap is not None else self.latest
        title = "observed load" + (f" at t={snap.t:.1f}s" if snap is not None else "")
        return observed_overlay(self.scenario, self.loads(snap), self.planned, title)

    def rows(self, snap: Snapshot | None = None, limit: int | None = None) -> list[LinkRow]:
        """The directed links, most loaded first, then the unmeasured ones by name; the first
        ``limit`` of them (all with None). Only those are made: at fat-tree k=64 making and
        sorting a row for each of the 393,216 links took 1.6 s at every poll."""
        snap = snap if snap is not None else self.latest
        rates = snap.rates if snap is not None else {}
        n = len(self.names) if limit is None else max(0, limit)
        keys: list[tuple[int, int]] = []
        if snap is not None:
            li, d, load = snap.arrays()
            ours = np.flatnonzero((li >= 0) & (li < self.capacity.size) & ((d == 0) | (d == 1)))
            li, d, load = li[ours], d[ours], load[ours]
            keys = most_loaded(li, d, load, self.capacity[li], self.names.__getitem__, n)
        if len(keys) < n:
            keys += [k for k in self._by_name() if k not in rates][:n - len(keys)]
        out = []
        for key in keys:
            planned = None if self.planned is None else float(self.planned[key])
            out.append(LinkRow(key, self.names[key], rates.get(key), planned,
                               float(self.capacity[key[0]])))
        return out

    def _by_name(self) -> list[tuple[int, int]]:
        """Every directed link by name (made once: the unmeasured rows' order)."""
        if self._names_sorted is None:
            self._names_sorted = sorted(self.names, key=self.names.__getitem__)
        return self._names_sorted

    def switch_states(self, snap: Snapshot | None = None) -> dict[str, str]:
        """Switches that gave no figures in ``snap``: "not answering" (stale) or "reset (no
        pipeline)" (it came back blank: redeploy, see :meth:`redeploy_hint`)."""
        snap = snap if snap is not None else self.latest
        if snap is None:
            return {}
        out = {sid: "not answering" for sid in snap.stale}
        out.update({sid: "reset (no pipeline)" for sid in getattr(snap, "reset", ())})
        return out

    @staticmethod
    def redeploy_hint(plan: str, testbed: str) -> str:
        """The one command that puts the plan back on switches that came back blank."""
        return f"inaplanner deploy {plan} --testbed {testbed}"

    def series_of(self, key: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
        """Times and Gbps of one directed link over the polls kept that measured it, read from
        the snapshots when asked (a series per link, kept up to date at every poll, took 70 %
        of a poll's time in the window and doubled the memory)."""
        ts, vs = [], []
        for snap in self.snapshots:
            v = snap.rates.get(key)
            if v is not None:
                ts.append(snap.t)
                vs.append(v)
        return np.array(ts, dtype=float), np.array(vs, dtype=float)


@dataclass
class LiveSession:
    """What starting live monitoring makes (:func:`open_live`): the poller (not started yet),
    the recorder if any, the model, and a note for the status line."""

    poller: Any
    recorder: Any
    model: MonitorModel
    note: str = ""

    def close(self) -> None:
        self.poller.stop()
        if self.recorder is not None:
            self.recorder.close()


def open_live(sc: Scenario, plan: Plan | None, testbed: str, interval: float, window: float,
              rule: AlertRule, record_to: str | None = None) -> LiveSession:
    """Read the testbed file, map its switches' ports to the scenario's links, open the
    recording and compute the plan's loads: what the Monitor dock needs before its first poll,
    Qt-free so that it runs on a helper thread (13 s at fat-tree k=64, which held the window)."""
    from inaplanner.io.native import scenario_sha256
    from inaplanner.monitor.poller import Poller
    from inaplanner.monitor.recording import open_recorder
    from inaplanner.testbed.inventory import check_against_scenario, load_inventory

    inventory = load_inventory(testbed)
    check_against_scenario(inventory, sc)
    poller = Poller(sc, inventory, interval=interval, window=window)
    recorder = None
    if record_to is not None:
        recorder = open_recorder(record_to, {"scenario": sc.name,
                                             "scenario_sha256": scenario_sha256(sc),
                                             "interval": poller.interval},
                                 poller.link_infos())
        poller.recorder = recorder
    planned, note = plan_loads(sc, plan)
    return LiveSession(poller, recorder, MonitorModel(sc, planned, rule), note)


@dataclass
class ReplaySession:
    """What opening a recording makes (:func:`open_replay`): the recording, the model with every
    poll's alerts, those alerts in order, and a note for the status line."""

    recording: Recording
    model: MonitorModel
    alerts: list[Alert]
    note: str = ""


def open_replay(sc: Scenario, plan: Plan | None, rule: AlertRule, path: str,
                progress: Progress | None = None) -> ReplaySession:
    """Read a recording, check that its links are ``sc``'s, compute the plan's loads and take
    every poll into a model (its alerts): Qt-free so that it runs on a helper thread. At fat-tree
    k=64 a poll takes about 1 s to read, so a recording at the size limit (100 polls) would hold
    the window's thread 100-120 s. ``progress`` is told each poll and its cancel stops
    the work (:class:`~inaplanner.errors.Cancelled`); nothing is changed until it returns."""
    from inaplanner.errors import ValidationError
    from inaplanner.monitor.recording import load_recording

    progress = progress if progress is not None else Progress()
    rec = load_recording(path, progress.span(0.0, 0.9))
    n = len(sc.links)
    if any(k[0] >= n for k in rec.links) or any(
            (sc.links[k[0]].a, sc.links[k[0]].b)[k[1]] != info.src for k, info in rec.links.items()):
        raise ValidationError("the recording's links do not match the open scenario", source=path)
    planned, note = plan_loads(sc, plan)
    model = MonitorModel(sc, planned, rule, history=max(1, len(rec.snapshots)))
    alerts: list[Alert] = []
    taking = progress.span(0.9, 1.0)
    for i, snap in enumerate(rec.snapshots):
        alerts.extend(model.add(snap))
        taking.update((i + 1) / len(rec.snapshots), f"alerts of poll {i + 1:,} of {len(rec.snapshots):,}")
        taking.check()
    return ReplaySession(rec, model, alerts, note)


def plan_loads(sc: Scenario, plan: Plan | None) -> tuple[np.ndarray | None, str]:
    """The loads ``plan`` puts on ``sc``'s links (None without a plan), and a note when the plan
    was made for another version of the scenario (compared anyway)."""
    if plan is None:
        return None, ""
    from inaplanner.io.native import scenario_sha256

    note = ""
    if plan.scenario_sha256 and plan.scenario_sha256 != scenario_sha256(sc):
        note = "the plan was made for another version of the scenario; comparing anyway"
    return planned_loads(sc, plan), note
