"""What the Resilience Sweep view shows, as plain data (no Qt): the criticality overlay, the rows
of its table and the distribution of each planner's relative objective.

The criticality overlay paints each link and switch by the share of the no-failure objective that
is lost when it fails (single-link and single-switch cases of one planner), on the load overlay's
colour scale and conventions: idle grey where nothing is lost, the ramp up to 80 %, orange to
100 %, red where the failure stops training (a disconnected job: 100 % lost). Elements a sweep
did not fail stay idle; collapsed cases colour every member of their symmetry class.

It lives in the sweeps package, not in :mod:`inaplanner.views`, because the sweep engine builds on
the view models (the what-if changes, the number formatter): ``views`` never imports ``sweeps``,
so there is no import cycle between the two packages (the acyclic contract in pyproject.toml).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from inaplanner.model import Scenario
from inaplanner.sweeps.cases import BASELINE, link_name
from inaplanner.sweeps.engine import relative
from inaplanner.views.fmt import num, pct
from inaplanner.views.overlay import (
    FULL,
    FlowSegments,
    LinkOverlay,
    Overlay,
    SwitchOverlay,
    colour_class,
    legend_entries,
    width_for,
)


@dataclass(frozen=True)
class CriticalLink(LinkOverlay):
    """A link of the criticality overlay (``utilisation`` holds the share lost, both directions)."""

    lost: float | None = None
    status: str = ""

    @property
    def tooltip(self) -> str:
        head = f"link {self.a} - {self.b}, capacity {num(self.capacity)} Gbps"
        if self.lost is None:
            return f"{head}\nnot failed in this sweep"
        what = "training stops (a job is cut off)" if self.status == "disconnected" else f"{pct(self.lost)} of the objective lost"
        return f"{head}\nwhen it fails: {what}"


@dataclass(frozen=True)
class CriticalSwitch(SwitchOverlay):
    lost: float | None = None

    @property
    def label(self) -> str:
        return "-" if self.lost is None else pct(self.lost, 0)

    @property
    def pipelines_label(self) -> str:  # the canvas badge reads "<label>  <pipelines_label>"
        return "cuts a job off" if self.violated else "lost"

    @property
    def tooltip(self) -> str:
        if self.lost is None:
            return f"switch {self.id}: not failed in this sweep"
        return f"switch {self.id}: {pct(self.lost)} of the objective lost when it fails"


@dataclass
class CriticalityOverlay(Overlay):
    lost: np.ndarray | None = None  # (L,) share lost per link, NaN where not failed
    statuses: dict[int, str] | None = None

    def link(self, index: int) -> CriticalLink:
        base = super().link(index)
        fields = {f: getattr(base, f) for f in base.__dataclass_fields__}
        lost = None if self.lost is None or np.isnan(self.lost[index]) else float(self.lost[index])
        return CriticalLink(**fields, lost=lost, status=(self.statuses or {}).get(index, ""))

    def with_filter(self, task: str | None) -> CriticalityOverlay:
        return replace(self, task_filter=None)

    def link_label(self, index: int) -> str:
        if self.lost is None or np.isnan(self.lost[index]):
            return ""
        return pct(float(self.lost[index]), 0)

    def legend(self) -> list[tuple[str, str]]:
        """The load legend's colours, in the words of criticality."""
        rows = []
        for colour, text in legend_entries():
            if text == "no load":
                text = "nothing lost (or not failed)"
            elif text.endswith("% of capacity"):
                text = text.replace("of capacity", "of the objective lost")
            else:
                text = "a job cut off (training stops)"
            rows.append((colour, text))
        return rows

    def summary(self) -> dict[str, Any]:
        cut = int(self.link_violated.sum()) + sum(1 for s in self.switches.values() if s.violated)
        return {"title": self.title + (f"; {cut} elements cut a job off" if cut else ""),
                "objective": self.objective, "feasible": True, "violated_links": 0,
                "violated_switches": 0}


def losses(rows: list[dict[str, Any]], planner: str) -> dict[str, tuple[float, str]]:
    """Element name -> (share of the no-failure objective lost, status), for ``planner``; a
    collapsed case gives its value to every member."""
    base = next((r.get("objective") for r in rows if r["case_id"] == BASELINE.id and r["planner"] == planner), None)
    out: dict[str, tuple[float, str]] = {}
    for r in rows:
        if r["planner"] != planner or r["case_id"] == BASELINE.id:
            continue
        rel = relative(r, base)
        if rel is None:
            continue
        for member in r.get("members") or [r["element"]]:
            out[member] = (max(0.0, 1.0 - rel), r["status"])
    return out


def criticality_overlay(sc: Scenario, rows: list[dict[str, Any]], planner: str) -> CriticalityOverlay:
    """The canvas overlay of what each link and switch failure costs ``planner``."""
    lost_by = losses(rows, planner)
    n = len(sc.links)
    lost = np.full(n, np.nan)
    statuses: dict[int, str] = {}
    for i, lk in enumerate(sc.links):
        hit = lost_by.get(link_name(lk.a, lk.b)) or lost_by.get(link_name(lk.b, lk.a))
        if hit is not None:
            lost[i] = hit[0]
            statuses[i] = hit[1]
    shown = np.nan_to_num(lost, nan=0.0)
    cut = np.array([statuses.get(i) == "disconnected" for i in range(n)], dtype=bool)
    violated = cut | (shown > FULL)
    util = np.stack([shown, shown], axis=1)
    cap = np.array([lk.capacity for lk in sc.links], dtype=float)
    switches: dict[str, SwitchOverlay] = {}
    for s in sc.switches():
        hit = lost_by.get(s.id)
        if hit is None:
            continue
        switches[s.id] = CriticalSwitch(s.id, hit[0], 1.0, 0, (), s.pipelines,
                                        hit[1] == "disconnected", lost=hit[0])
    empty = np.zeros(0, dtype=np.int64)
    worst = float(np.nanmax(lost)) if np.any(~np.isnan(lost)) else 0.0
    return CriticalityOverlay(
        title=f"criticality ({planner}): objective lost when it fails",
        link_load=util * cap[:, None],
        link_capacity=cap,
        link_util=util,
        link_flows=np.zeros((n, 2), dtype=np.int64),
        link_violated=violated,
        link_class=colour_class(shown, violated),
        link_width=width_for(cap),
        link_ends=[(lk.a, lk.b) for lk in sc.links],
        switches=switches,
        tasks=[],
        task_colours=[],
        task_rates=[],
        segments=FlowSegments(empty, empty, empty, np.zeros(0, dtype=bool)),
        roles={},
        objective=worst,
        objective_kind="criticality: largest share lost by one failure",
        feasible=True,
        lost=lost,
        statuses=statuses,
    )


@dataclass(frozen=True)
class TableRow:
    case_id: str
    element: str
    planner: str
    status: str
    objective: float | None
    relative: float | None
    members: tuple[str, ...]
    error: str

    def cells(self) -> tuple[str, ...]:
        rel = "-" if self.relative is None else pct(self.relative, 1)
        more = f" (+{len(self.members) - 1} symmetric)" if len(self.members) > 1 else ""
        return (self.element + more, self.planner, num(self.objective, 4), rel, self.status,
                self.error)


COLUMNS = ("element", "planner", "objective", "vs no failure", "status", "error")


def table_rows(rows: list[dict[str, Any]]) -> list[TableRow]:
    """Every non-baseline row, most critical first (lowest share of the no-failure objective)."""
    base = {r["planner"]: r.get("objective") for r in rows if r["case_id"] == BASELINE.id}
    out = []
    for r in rows:
        if r["case_id"] == BASELINE.id:
            continue
        out.append(TableRow(r["case_id"], r["element"], r["planner"], r["status"], r.get("objective"),
                            relative(r, base.get(r["planner"])), tuple(r.get("members") or ()),
                            r.get("error") or ""))
    return sorted(out, key=lambda t: (t.relative if t.relative is not None else 2.0, t.element, t.planner))


def distribution(rows: list[dict[str, Any]], planner: str) -> tuple[np.ndarray, np.ndarray]:
    """The empirical distribution of ``planner``'s relative objective over the cases, weighted by
    symmetry class size: (sorted values, cumulative share of cases at or below each)."""
    base = next((r.get("objective") for r in rows if r["case_id"] == BASELINE.id and r["planner"] == planner), None)
    pairs = []
    for r in rows:
        if r["planner"] != planner or r["case_id"] == BASELINE.id:
            continue
        rel = relative(r, base)
        if rel is not None:
            pairs.append((rel, int(r.get("weight") or 1)))
    if not pairs:
        return np.zeros(0), np.zeros(0)
    pairs.sort()
    vals = np.array([v for v, _ in pairs])
    w = np.array([x for _, x in pairs], dtype=float)
    return vals, np.cumsum(w) / w.sum()


def element_selection(sc: Scenario, element: str) -> tuple[list[str], list[int]]:
    """Canvas selection (node ids, link indices) of a case's element name."""
    if sc.has_node(element):
        return [element], []
    for i, lk in enumerate(sc.links):
        if element in (link_name(lk.a, lk.b), link_name(lk.b, lk.a)):
            return [], [i]
    return [], []
