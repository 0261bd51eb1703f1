"""What the canvas paints over the network for one evaluated plan: pure data, no Qt.

Everything here comes from :func:`inaplanner.evaluate.evaluate` (loads, utilisation, flow counts,
aggregation loads, violations); nothing is recomputed. The only thing read from the plan itself is
the geometry of the routes (which links a task's flows use, and whether the data on a segment is
already aggregated: after the route's first ``merge_at`` switch), drawn GRID Fig. 1 style: aggregated
flows solid, raw flows dashed, one colour per task.

Colour scale (issue 14, item 3): a continuous, colour-blind-safe ramp (viridis, read from its
light end to its dark end, so a busier link is darker and stands out on the light canvas) from just
above idle to 100 % of capacity, quantised in 5 % steps so the canvas can paint links bucketed by
pen; a light grey for an idle link and a distinct red for a link over capacity (or reported violated
by the evaluator). Task colours come from a qualitative palette far from every load colour.
Width grows with the logarithm of capacity.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from inaplanner.model import Scenario, Switch
from inaplanner.views.fmt import num, pct

WARN = 0.8  # first threshold: 80 % of capacity
FULL = 1.0  # second threshold: capacity

IDLE_COLOUR = "#c3c9d0"
#: Viridis anchors from its light end (yellow-green) to its dark end (purple); the load ramp runs
#: through them: low load light, full load dark.
VIRIDIS_ANCHORS = ("#b4de2c", "#6dcd59", "#35b779", "#1f9e89", "#26828e", "#31688e", "#3e4a89",
                   "#482878", "#440154")
STEPS = 20  # ramp classes: (0, 5 %], (5, 10 %], ..., (95, 100 %]
OVER_COLOUR = "#d7191c"
VIOLATED_COLOUR = OVER_COLOUR  # over capacity and "violated" are one class


def _rgb(h: str) -> tuple[int, int, int]:
    return int(h[1:3], 16), int(h[3:5], 16), int(h[5:7], 16)


def ramp_colour(t: float) -> str:
    """The ramp's colour at ``t`` in [0, 1] (linear between the viridis anchors)."""
    t = min(max(float(t), 0.0), 1.0)
    x = t * (len(VIRIDIS_ANCHORS) - 1)
    i = min(int(x), len(VIRIDIS_ANCHORS) - 2)
    f = x - i
    a, b = _rgb(VIRIDIS_ANCHORS[i]), _rgb(VIRIDIS_ANCHORS[i + 1])
    return "#{:02x}{:02x}{:02x}".format(*(round(a[k] + (b[k] - a[k]) * f) for k in range(3)))


#: The ramp's classes, lowest load first (the colour at the middle of each 5 % step).
RAMP: tuple[str, ...] = tuple(ramp_colour((i + 0.5) / STEPS) for i in range(STEPS))
#: Colour classes, index -> hex: 0 idle, 1..STEPS the ramp, STEPS + 1 over capacity / violated.
COLOURS: tuple[str, ...] = (IDLE_COLOUR, *RAMP, OVER_COLOUR)
VIOLATED_CLASS = len(COLOURS) - 1
OVER_CLASS = VIOLATED_CLASS
#: Ticks of the colour bar (load/capacity).
TICKS = (0.0, 0.25, 0.5, 0.75, 1.0)

#: Task colours: a qualitative palette (oranges, pinks, browns, black) that stays far from every
#: load colour (tests check the distance), so a task's flow never reads as a load.
TASK_COLOURS = (
    "#e66100",
    "#c51b7d",
    "#8c510a",
    "#f781bf",
    "#a6761d",
    "#fdae61",
    "#000000",
    "#e7298a",
)

MIN_WIDTH = 1.0
MAX_WIDTH = 6.0


def fmt(x: float | None) -> str:
    """A figure as the papers print them, three significant digits: 3, 2.43, 0.2, 1000
    (the program's one formatter, :func:`inaplanner.views.fmt.num`)."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return num(x, 3)


def colour_class(util: np.ndarray, violated: np.ndarray) -> np.ndarray:
    """Colour class per link from its worst-direction utilisation and violated flag: 0 idle, then one
    class per 5 % of capacity, the last class over capacity (by more than 1e-9) or violated."""
    u = np.nan_to_num(np.asarray(util, dtype=float), nan=0.0, posinf=99.0)
    # (0, 5 %] -> 1, ..., (95, 100 %] -> STEPS; the nudge keeps exact multiples of 5 % in their bin
    steps = np.clip(np.floor(u * STEPS - 1e-9), 0, STEPS - 1).astype(np.int64) + 1
    cls = np.where(u <= 0.0, 0, steps)
    cls = np.where((u > FULL + 1e-9) | np.asarray(violated, dtype=bool), OVER_CLASS, cls)
    return cls.astype(np.int64)


def colour_of(util: float, violated: bool = False) -> str:
    """The colour of one utilisation (the scalar form of :func:`colour_class`)."""
    if violated or util > FULL + 1e-9:
        return OVER_COLOUR
    if not util > 0.0:
        return IDLE_COLOUR
    return RAMP[min(max(math.floor(util * STEPS - 1e-9), 0), STEPS - 1)]


def colour_bar(samples: int = 64) -> list[tuple[float, str]]:
    """(load/capacity, colour) stops of the colour bar from 0 to 100 %, for gradients."""
    return [(i / (samples - 1), ramp_colour(i / (samples - 1))) for i in range(samples)]


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
    """(colour, text) rows of the legend: idle, the ramp at its ticks, over capacity."""
    rows = [(IDLE_COLOUR, "no load")]
    for t in TICKS:
        rows.append((colour_of(max(t, 1e-6)), f"{int(round(t * 100))} % of capacity"))
    rows.append((OVER_COLOUR, "over capacity (violated)"))
    return rows


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
            rows.append(f"{src} -> {dst}: {num(load)} Gbps ({pct(util)}), {flows} flow(s)")
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
    fan_in_used: int = 0  # the largest fan-in of an aggregate here
    max_fan_in: int | None = None

    @property
    def utilisation(self) -> float:
        """Aggregation load / capacity (0 at line rate: no capacity of its own)."""
        if self.capacity is None:
            return 0.0
        if self.capacity <= 0:
            return math.inf if self.load > 0 else 0.0
        return self.load / self.capacity

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
        cap = "line rate" if self.capacity is None else f"{num(self.capacity)} Gbps"
        rows = [
            f"switch {self.id}: aggregation load {num(self.load)} Gbps of {cap}",
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
    #: where each task's flows merge: task index -> switch -> [(pipeline, flows merged)]
    merges: dict[int, dict[str, list[tuple[int, int]]]] = field(default_factory=dict)

    def merge_label(self, ti: int, switch: str) -> str:
        """``"3 -> 1 on P0"``: how many flows of task ``ti`` merge at ``switch``, on which pipeline."""
        rows = self.merges.get(ti, {}).get(switch, [])
        return ", ".join(f"{n} -> 1 on P{p}" for p, n in sorted(rows))

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
            fan_in_used=int(row.get("fan_in_used", 0) or 0),
            max_fan_in=None if row.get("max_fan_in") is None else int(row["max_fan_in"]),
        )
    # non-programmable switches never aggregate; the evaluator may still list a violation for them
    for sid in switch_bad - set(switches):
        sw = sc.node(sid)
        if isinstance(sw, Switch):
            switches[sid] = SwitchOverlay(sid, 0.0, sw.aggregation_capacity, 0, (), sw.pipelines, True)
    segs, roles = flow_segments(sc, ev.plan, tasks)
    t_index = {t: i for i, t in enumerate(tasks)}
    merges: dict[int, dict[str, list[tuple[int, int]]]] = {}
    for a in getattr(ev, "aggregates", ()):
        ti = t_index.get(str(a.task))
        if ti is not None:
            merges.setdefault(ti, {}).setdefault(a.switch, []).append((int(a.pipeline), int(a.inputs)))
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
        merges=merges,
    )
