"""What the canvas paints over the network for one evaluated plan: pure data, no Qt.

Everything here comes from :func:`inaplanner.evaluate.evaluate` (loads, utilisation, flow counts,
aggregation loads, violations); nothing is recomputed. The only thing read from the plan itself is
the geometry of the routes (which links a task's flows use, and whether the data on a segment is
already aggregated: after the route's first ``merge_at`` switch), drawn GRID Fig. 1 style: aggregated
flows solid, raw flows dashed, one colour per task.

Colour scale (issue 6, item 7): grey for an idle link, a green-to-yellow ramp in 10 % steps below
80 % of capacity, orange from 80 % up to capacity, red when the evaluator reports the link violated.
Width grows with the logarithm of capacity.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from inaplanner.model import Scenario, Switch

WARN = 0.8  # first threshold: 80 % of capacity
FULL = 1.0  # second threshold: capacity

IDLE_COLOUR = "#9aa5b1"
RAMP = ("#1b9e4b", "#3fae49", "#62bd45", "#86c940", "#a8d43a", "#c7dc35", "#e0e030", "#f2d82b")
WARN_COLOUR = "#f28c18"
VIOLATED_COLOUR = "#d7263d"
#: Colour classes, index -> hex: 0 idle, 1..8 ramp (0-80 % in 10 % steps), 9 warn, 10 violated.
COLOURS: tuple[str, ...] = (IDLE_COLOUR, *RAMP, WARN_COLOUR, VIOLATED_COLOUR)
WARN_CLASS = 1 + len(RAMP)
VIOLATED_CLASS = WARN_CLASS + 1

#: Distinct colours for tasks (colour-blind friendly qualitative set, then repeats).
TASK_COLOURS = (
    "#0072b2",
    "#d55e00",
    "#009e73",
    "#cc79a7",
    "#56b4e9",
    "#e69f00",
    "#7f3c8d",
    "#11a579",
    "#3969ac",
    "#f2b701",
    "#e73f74",
    "#80ba5a",
)

MIN_WIDTH = 1.0
MAX_WIDTH = 6.0


def fmt(x: float) -> str:
    """A figure as the papers print them: 3, 2.43, 0.2, 1e+03."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    if math.isinf(x):
        return "inf"
    text = f"{x:.3g}"
    return text


def colour_class(util: np.ndarray, violated: np.ndarray) -> np.ndarray:
    """Colour class per link from its worst-direction utilisation and violated flag."""
    u = np.asarray(util, dtype=float)
    # 10 % bins; the tiny nudge keeps 0.3 (= 2.9999... tenths in binary) in the 30 % bin
    steps = np.clip(np.floor(np.nan_to_num(u * 10.0 + 1e-9, nan=0.0, posinf=99.0)), 0, len(RAMP) - 1).astype(np.int64)
    cls = np.where(u <= 0.0, 0, 1 + steps)
    cls = np.where(u >= WARN, WARN_CLASS, cls)
    cls = np.where(np.asarray(violated, dtype=bool), VIOLATED_CLASS, cls)
    return cls.astype(np.int64)


def colour_of(util: float, violated: bool = False) -> str:
    """The colour of one utilisation (the scalar form of :func:`colour_class`)."""
    if violated:
        return VIOLATED_COLOUR
    if util >= WARN:
        return WARN_COLOUR
    if not util > 0.0:
        return IDLE_COLOUR
    step = min(max(math.floor(util * 10.0 + 1e-9), 0), len(RAMP) - 1)
    return RAMP[step]


def width_for(capacity: np.ndarray) -> np.ndarray:
    """Pen width (pixels) per link: 1 for the thinnest capacity, +1 per 4x more, in 0.5 steps."""
    cap = np.asarray(capacity, dtype=float)
    pos = cap[cap > 0]
    if pos.size == 0:
        return np.full(cap.shape, MIN_WIDTH)
    base = float(pos.min())
    with np.errstate(divide="ignore"):
        steps = np.where(cap > 0, np.log2(np.maximum(cap, base) / base) / 2.0, 0.0)
    return np.clip(np.round((MIN_WIDTH + steps) * 2.0) / 2.0, MIN_WIDTH, MAX_WIDTH)


def legend_entries() -> list[tuple[str, str]]:
    """(colour, text) rows of the legend."""
    return [
        (IDLE_COLOUR, "no load"),
        (RAMP[0], "< 10 % of capacity"),
        (RAMP[-1], "70-80 %"),
        (WARN_COLOUR, f"{int(WARN * 100)}-{int(FULL * 100)} %"),
        (VIOLATED_COLOUR, "over capacity (violated)"),
    ]


@dataclass(frozen=True)
class LinkOverlay:
    """The figures of one link in an overlay."""

    index: int
    a: str
    b: str
    load: tuple[float, float]  # a->b, b->a, background included
    capacity: float
    utilisation: tuple[float, float]
    flows: tuple[int, int]
    violated: bool
    colour: str
    width: float

    @property
    def max_util(self) -> float:
        return max(self.utilisation)

    @property
    def label(self) -> str:
        """``load/capacity`` of the busier direction, as the papers label links."""
        return f"{fmt(max(self.load))}/{fmt(self.capacity)}"

    @property
    def tooltip(self) -> str:
        rows = [f"link {self.a} - {self.b}, capacity {fmt(self.capacity)} Gbps"]
        for (src, dst), load, util, flows in (
            ((self.a, self.b), self.load[0], self.utilisation[0], self.flows[0]),
            ((self.b, self.a), self.load[1], self.utilisation[1], self.flows[1]),
        ):
            pct = "inf" if math.isinf(util) else f"{util * 100:.1f} %"
            rows.append(f"{src} -> {dst}: {load:.6g} Gbps ({pct}), {flows} flow(s)")
        if self.violated:
            rows.append("VIOLATED: load over capacity")
        return "\n".join(rows)


@dataclass(frozen=True)
class SwitchOverlay:
    """Aggregation figures of one programmable switch."""

    id: str
    load: float
    capacity: float | None
    aggregates: int
    pipelines_used: tuple[int, ...]
    pipelines: int
    violated: bool

    @property
    def label(self) -> str:
        cap = "-" if self.capacity is None else fmt(self.capacity)
        return f"{fmt(self.load)}/{cap}"

    @property
    def pipelines_label(self) -> str:
        if not self.pipelines_used:
            return "no aggregation"
        used = ",".join(f"P{p}" for p in self.pipelines_used)
        return f"{used} of {self.pipelines}"

    @property
    def colour(self) -> str:
        if self.capacity is None:
            return colour_of(0.0 if self.load <= 0 else 0.05, self.violated)
        util = self.load / self.capacity if self.capacity > 0 else (math.inf if self.load > 0 else 0.0)
        return colour_of(util, self.violated)

    @property
    def tooltip(self) -> str:
        cap = "line rate" if self.capacity is None else f"{self.capacity:.6g} Gbps"
        rows = [
            f"switch {self.id}: aggregation load {self.load:.6g} Gbps of {cap}",
            f"{self.aggregates} aggregate(s); pipelines aggregating: {self.pipelines_label}",
        ]
        if self.violated:
            rows.append("VIOLATED: aggregation load over capacity")
        return "\n".join(rows)


@dataclass
class FlowSegments:
    """Directed link segments used by tasks: parallel arrays, one row per (task, link, direction,
    aggregated) present in the plan's routes."""

    task: np.ndarray  # task index
    link: np.ndarray  # link index
    direction: np.ndarray  # 0: a->b, 1: b->a
    aggregated: np.ndarray  # bool: the data on this segment is already aggregated

    def __len__(self) -> int:
        return int(self.task.size)

    def of_task(self, ti: int) -> FlowSegments:
        m = self.task == ti
        return FlowSegments(self.task[m], self.link[m], self.direction[m], self.aggregated[m])


@dataclass
class Overlay:
    """Everything the canvas needs to paint one evaluated plan."""

    title: str
    link_load: np.ndarray  # (L, 2)
    link_capacity: np.ndarray  # (L,)
    link_util: np.ndarray  # (L, 2)
    link_flows: np.ndarray  # (L, 2) flows of all tasks
    link_violated: np.ndarray  # (L,) bool
    link_class: np.ndarray  # (L,) colour class, see COLOURS
    link_width: np.ndarray  # (L,)
    link_ends: list[tuple[str, str]]
    switches: dict[str, SwitchOverlay]
    tasks: list[str]
    task_colours: list[str]
    task_rates: list[float]
    segments: FlowSegments
    roles: dict[str, list[tuple[int, str]]]  # host -> [(task index, "worker" | "ps")]
    objective: float = 0.0
    objective_kind: str = ""
    feasible: bool = True
    errors: list[str] = field(default_factory=list)
    task_filter: str | None = None

    # ---- per element -------------------------------------------------------------------------

    @property
    def link_count(self) -> int:
        return int(self.link_capacity.size)

    def link(self, index: int) -> LinkOverlay:
        a, b = self.link_ends[index]
        return LinkOverlay(
            index=index,
            a=a,
            b=b,
            load=(float(self.link_load[index, 0]), float(self.link_load[index, 1])),
            capacity=float(self.link_capacity[index]),
            utilisation=(float(self.link_util[index, 0]), float(self.link_util[index, 1])),
            flows=(int(self.link_flows[index, 0]), int(self.link_flows[index, 1])),
            violated=bool(self.link_violated[index]),
            colour=COLOURS[int(self.link_class[index])],
            width=float(self.link_width[index]),
        )

    def link_colour(self, index: int) -> str:
        return COLOURS[int(self.link_class[index])]

    def link_label(self, index: int) -> str:
        return f"{fmt(float(self.link_load[index].max()))}/{fmt(float(self.link_capacity[index]))}"

    def switch(self, switch_id: str) -> SwitchOverlay | None:
        return self.switches.get(switch_id)

    def task_index(self, task: str) -> int:
        return self.tasks.index(task)

    def visible_tasks(self) -> list[int]:
        """Indices of the tasks to draw (all, or the filtered one)."""
        if self.task_filter is None or self.task_filter not in self.tasks:
            return list(range(len(self.tasks)))
        return [self.tasks.index(self.task_filter)]

    def with_filter(self, task: str | None) -> Overlay:
        """The same overlay showing only ``task`` (None: all)."""
        if task is not None and task not in self.tasks:
            raise KeyError(f"no task {task!r} in this plan (tasks: {', '.join(self.tasks)})")
        out = Overlay(**{f: getattr(self, f) for f in self.__dataclass_fields__})
        out.task_filter = task
        return out

    def legend(self) -> list[tuple[str, str]]:
        rows = legend_entries()
        for ti in self.visible_tasks():
            rows.append((self.task_colours[ti], f"task {self.tasks[ti]} ({fmt(self.task_rates[ti])} Gbps)"))
        return rows

    def summary(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "objective": self.objective,
            "feasible": self.feasible,
            "violated_links": int(self.link_violated.sum()),
            "violated_switches": sum(1 for s in self.switches.values() if s.violated),
        }


def _violated_links(sc: Scenario, names: list[str]) -> set[int]:
    """Link indices of the evaluator's "A->B" violation names (ids may themselves contain '-')."""
    out: set[int] = set()
    for name in names:
        start = 0
        while True:
            k = name.find("->", start)
            if k < 0:
                break
            a, b = name[:k], name[k + 2 :]
            li = sc.link_index(a, b) if sc.has_node(a) and sc.has_node(b) else None
            if li is not None:
                out.add(li)
                break
            start = k + 1
    return out


def flow_segments(sc: Scenario, plan: Any, tasks: list[str]) -> tuple[FlowSegments, dict[str, list[tuple[int, str]]]]:
    """Segments of every route of the plan, marked aggregated after the route's first merge; and each
    host's roles. Routes naming unknown nodes or missing links are skipped (the evaluator reports
    them)."""
    t_index = {t: i for i, t in enumerate(tasks)}
    rows: set[tuple[int, int, int, bool]] = set()
    roles: dict[str, list[tuple[int, str]]] = {}
    for tp in plan.tasks:
        ti = t_index.get(f"{tp.job}/{tp.ps}")
        if ti is None:
            continue
        roles.setdefault(tp.ps, []).append((ti, "ps"))
        for r in tp.routes:
            roles.setdefault(r.worker, []).append((ti, "worker"))
            merged = False
            merges = set(r.merge_at)
            for u, v in zip(r.path, r.path[1:], strict=False):
                if u in merges:
                    merged = True
                if not (sc.has_node(u) and sc.has_node(v)):
                    break
                li = sc.link_index(u, v)
                if li is None:
                    break
                d = 0 if sc.links[li].a == u else 1
                rows.add((ti, li, d, merged))
    ordered = sorted(rows)
    arr = np.array(ordered, dtype=np.int64).reshape(-1, 4)
    segs = FlowSegments(arr[:, 0], arr[:, 1], arr[:, 2], arr[:, 3].astype(bool))
    return segs, roles


def overlay_from_evaluation(ev: Any, task_filter: str | None = None, title: str | None = None) -> Overlay:
    """Build the overlay of an :class:`~inaplanner.evaluate.Evaluation` (optionally showing one
    task's flows: ``task_filter`` like ``"job0/PS"``)."""
    sc: Scenario = ev.scenario
    tasks = [str(t) for t in ev.tasks]
    if task_filter is not None and task_filter not in tasks:
        raise KeyError(f"no task {task_filter!r} in this plan (tasks: {', '.join(tasks)})")
    load = np.asarray(ev.link_load, dtype=float).reshape(-1, 2)
    util = np.asarray(ev.link_utilisation, dtype=float).reshape(-1, 2)
    flows = np.asarray(ev.flows).sum(axis=0) if len(tasks) else np.zeros((len(sc.links), 2), dtype=np.int64)
    flows = flows.reshape(-1, 2)
    link_names = [v.name for v in ev.violations if v.kind == "link"]
    violated = np.zeros(len(sc.links), dtype=bool)
    bad = sorted(_violated_links(sc, link_names))
    if bad:
        violated[bad] = True
    cap = np.asarray(ev.link_capacity, dtype=float)
    cls = colour_class(util.max(axis=1) if util.size else np.zeros(0), violated)
    switch_bad = {v.name for v in ev.violations if v.kind == "switch"}
    switches: dict[str, SwitchOverlay] = {}
    for row in ev.switch_rows():
        switches[row["switch"]] = SwitchOverlay(
            id=row["switch"],
            load=float(row["load"]),
            capacity=row["capacity"],
            aggregates=int(row["aggregates"]),
            pipelines_used=tuple(int(p) for p in row["pipelines_used"]),
            pipelines=int(row["pipelines"]),
            violated=row["switch"] in switch_bad,
        )
    # non-programmable switches never aggregate; the evaluator may still list a violation for them
    for sid in switch_bad - set(switches):
        sw = sc.node(sid)
        if isinstance(sw, Switch):
            switches[sid] = SwitchOverlay(sid, 0.0, sw.aggregation_capacity, 0, (), sw.pipelines, True)
    segs, roles = flow_segments(sc, ev.plan, tasks)
    name = title or f"{ev.plan.planner.name} ({ev.plan.planner.status})"
    return Overlay(
        title=name,
        link_load=load,
        link_capacity=cap,
        link_util=util,
        link_flows=flows,
        link_violated=violated,
        link_class=cls,
        link_width=width_for(cap),
        link_ends=[(lk.a, lk.b) for lk in sc.links],
        switches=switches,
        tasks=tasks,
        task_colours=[TASK_COLOURS[i % len(TASK_COLOURS)] for i in range(len(tasks))],
        task_rates=[float(r) for r in ev.rates],
        segments=segs,
        roles=roles,
        objective=float(ev.objective),
        objective_kind=str(ev.objective_kind),
        feasible=bool(ev.feasible),
        errors=list(ev.errors),
        task_filter=task_filter,
    )
