"""A plan diff for review: what changes between two plans of one scenario (Qt-free).

``diff_plans(scenario, plan_a, plan_b)`` lists the tasks added or removed, the rate changes, the
workers whose route moved (another path), the workers whose merges changed on the same path, and
the change of load on every directed link. Loads come from :func:`inaplanner.evaluate.evaluate`
(CONTRACTS.md rule 3), never recomputed here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from inaplanner.evaluate import Evaluation, evaluate
from inaplanner.model import Plan, Route, Scenario
from inaplanner.views.fmt import delta, num, signed

REL_TOL = 1e-9
ABS_TOL = 1e-9


def _differs(a: float, b: float) -> bool:
    return abs(a - b) > ABS_TOL + REL_TOL * max(abs(a), abs(b))


@dataclass(frozen=True)
class RouteChange:
    """One worker of one task whose route differs. ``kind``: ``moved`` (another path),
    ``merges`` (same path, other merges), ``added`` / ``removed`` (route only in plan B / A)."""

    task: str
    worker: str
    kind: str
    path_a: tuple[str, ...] = ()
    path_b: tuple[str, ...] = ()
    merges_a: tuple[str, ...] = ()
    merges_b: tuple[str, ...] = ()

    def describe(self) -> str:
        def show(path: tuple[str, ...], merges: tuple[str, ...]) -> str:
            return "-".join(f"[{n}]" if n in merges else n for n in path) if path else "(none)"

        a = show(self.path_a, self.merges_a)
        b = show(self.path_b, self.merges_b)
        return f"{self.task} {self.worker}: {a} -> {b}"


@dataclass(frozen=True)
class RateChange:
    task: str
    rate_a: float
    rate_b: float

    @property
    def delta(self) -> float:
        return self.rate_b - self.rate_a


@dataclass(frozen=True)
class LinkDelta:
    """Load on one directed link in both plans (Gbps, background included)."""

    link: str  # "src->dst"
    index: int
    direction: int  # 0: a->b, 1: b->a
    load_a: float
    load_b: float
    capacity: float

    @property
    def delta(self) -> float:
        return self.load_b - self.load_a


@dataclass
class PlanDiff:
    """What changes from plan A to plan B. Lists are sorted for stable output."""

    tasks_added: list[str] = field(default_factory=list)
    tasks_removed: list[str] = field(default_factory=list)
    rate_changes: list[RateChange] = field(default_factory=list)
    routes_moved: list[RouteChange] = field(default_factory=list)  # moved / added / removed
    merges_changed: list[RouteChange] = field(default_factory=list)
    link_deltas: list[LinkDelta] = field(default_factory=list)  # largest |delta| first
    objective_a: float = 0.0
    objective_b: float = 0.0
    label_a: str = "A"
    label_b: str = "B"

    def is_empty(self) -> bool:
        """True when B routes, merges and loads exactly as A does."""
        return not (self.tasks_added or self.tasks_removed or self.rate_changes
                    or self.routes_moved or self.merges_changed or self.link_deltas)

    def to_dict(self) -> dict[str, Any]:
        def change(c: RouteChange) -> dict[str, Any]:
            return {"task": c.task, "worker": c.worker, "kind": c.kind,
                    "path_a": list(c.path_a), "path_b": list(c.path_b),
                    "merge_at_a": list(c.merges_a), "merge_at_b": list(c.merges_b)}

        return {
            "a": self.label_a,
            "b": self.label_b,
            "empty": self.is_empty(),
            "objective_a": self.objective_a,
            "objective_b": self.objective_b,
            "tasks_added": list(self.tasks_added),
            "tasks_removed": list(self.tasks_removed),
            "rate_changes": [{"task": r.task, "rate_a": r.rate_a, "rate_b": r.rate_b}
                             for r in self.rate_changes],
            "routes_moved": [change(c) for c in self.routes_moved],
            "merges_changed": [change(c) for c in self.merges_changed],
            "link_deltas": [{"link": d.link, "index": d.index, "load_a": d.load_a,
                             "load_b": d.load_b, "delta": d.delta, "capacity": d.capacity}
                            for d in self.link_deltas],
        }

    def to_text(self, max_links: int = 20, max_routes: int | None = None) -> str:
        """A readable review text (``inaplanner diff``): at most ``max_links`` link load changes
        (the largest) and ``max_routes`` moved routes and changed merges each (all when None),
        with the count per task when a list is cut (fat-tree k=32: 1,870 routes move)."""
        lines = [f"plan diff: {self.label_a} -> {self.label_b}"]
        if self.is_empty():
            lines.append("no difference: same routes, merges, rates and link loads")
            return "\n".join(lines) + "\n"
        lines.append(f"objective: {num(self.objective_a)} -> {num(self.objective_b)} "
                     f"({delta(self.objective_a, self.objective_b)})")
        for t in self.tasks_added:
            lines.append(f"task added: {t}")
        for t in self.tasks_removed:
            lines.append(f"task removed: {t}")
        if self.rate_changes:
            lines.append(f"rate changes ({len(self.rate_changes)}):")
            lines += [f"  {r.task}: {num(r.rate_a)} -> {num(r.rate_b)} Gbps ({signed(r.delta)})"
                      for r in self.rate_changes]
        if self.routes_moved:
            lines += _cut_list("routes moved", self.routes_moved, max_routes,
                               lambda c: f"{c.kind}: {c.describe()}")
        if self.merges_changed:
            lines += _cut_list("merges changed", self.merges_changed, max_routes, lambda c: c.describe())
        if self.link_deltas:
            shown = self.link_deltas[:max_links]
            lines.append(f"link load changes ({len(self.link_deltas)}"
                         + (f", largest {len(shown)}" if len(shown) < len(self.link_deltas) else "")
                         + "):")
            lines += [f"  {d.link}: {num(d.load_a)} -> {num(d.load_b)} Gbps ({signed(d.delta)}) "
                      f"of {num(d.capacity)}" for d in shown]
        lines.append("([X] marks a merge at switch X)")
        return "\n".join(lines) + "\n"


def _cut_list(title: str, changes: list[RouteChange], limit: int | None,
              line: Callable[[RouteChange], str]) -> list[str]:
    """The heading and lines of one list of route changes, the first ``limit`` of them (all when
    None); a cut list says how many each task has and how many were left out."""
    if limit is None or len(changes) <= limit:
        return [f"{title} ({len(changes)}):"] + [f"  {line(c)}" for c in changes]
    per_task: dict[str, int] = {}
    for c in changes:
        per_task[c.task] = per_task.get(c.task, 0) + 1
    counts = ", ".join(f"{t} {n}" for t, n in sorted(per_task.items(), key=lambda tn: (-tn[1], tn[0]))[:8])
    more = ", ..." if len(per_task) > 8 else ""
    first = f"; the first {limit}" if limit else ""
    out = [f"{title} ({len(changes)} in {len(per_task)} task{'s' if len(per_task) != 1 else ''}: "
           f"{counts}{more}{first}):"]
    out += [f"  {line(c)}" for c in changes[:limit]]
    left = f"... {len(changes) - limit} more" if limit else f"{len(changes)} not listed"
    out.append(f"  {left} (--max-routes N, or --json for all)")
    return out


def _routes(plan: Plan) -> dict[str, dict[str, Route]]:
    out: dict[str, dict[str, Route]] = {}
    for tp in plan.tasks:
        out.setdefault(str(tp.task), {}).update({r.worker: r for r in tp.routes})
    return out


def _rates(plan: Plan) -> dict[str, float]:
    return {str(tp.task): float(tp.rate) for tp in plan.tasks}


def route_changes(plan_a: Plan, plan_b: Plan) -> tuple[list[RouteChange], list[RouteChange]]:
    """(routes moved / added / removed, merges changed) between two plans, sorted by task, worker."""
    ra, rb = _routes(plan_a), _routes(plan_b)
    moved: list[RouteChange] = []
    merges: list[RouteChange] = []
    for task in sorted(set(ra) | set(rb)):
        wa, wb = ra.get(task, {}), rb.get(task, {})
        for worker in sorted(set(wa) | set(wb)):
            a, b = wa.get(worker), wb.get(worker)
            pa = tuple(a.path) if a else ()
            pb = tuple(b.path) if b else ()
            ma = tuple(a.merge_at) if a else ()
            mb = tuple(b.merge_at) if b else ()
            if a is None or b is None:
                kind = "added" if a is None else "removed"
                moved.append(RouteChange(task, worker, kind, pa, pb, ma, mb))
            elif pa != pb:
                moved.append(RouteChange(task, worker, "moved", pa, pb, ma, mb))
            elif ma != mb:
                merges.append(RouteChange(task, worker, "merges", pa, pb, ma, mb))
    return moved, merges


def link_deltas(scenario: Scenario, ev_a: Evaluation, ev_b: Evaluation) -> list[LinkDelta]:
    """Directed links whose load differs, largest change first (ties in link order)."""
    la, lb = ev_a.link_load, ev_b.link_load
    out: list[LinkDelta] = []
    for li, d in np.argwhere(np.abs(lb - la) > ABS_TOL + REL_TOL * np.maximum(np.abs(la), np.abs(lb))):
        lk = scenario.links[int(li)]
        name = f"{lk.a}->{lk.b}" if d == 0 else f"{lk.b}->{lk.a}"
        out.append(LinkDelta(name, int(li), int(d), float(la[li, d]), float(lb[li, d]),
                             float(lk.capacity)))
    out.sort(key=lambda x: (-abs(x.delta), x.index, x.direction))
    return out


def diff_plans(scenario: Scenario, plan_a: Plan, plan_b: Plan, label_a: str = "A",
               label_b: str = "B", ev_a: Evaluation | None = None,
               ev_b: Evaluation | None = None) -> PlanDiff:
    """The review diff of ``plan_b`` against ``plan_a`` on ``scenario``. Evaluations already at
    hand may be passed to save re-evaluating."""
    ev_a = ev_a if ev_a is not None else evaluate(scenario, plan_a)
    ev_b = ev_b if ev_b is not None else evaluate(scenario, plan_b)
    rates_a, rates_b = _rates(plan_a), _rates(plan_b)
    rate_changes = [RateChange(t, rates_a[t], rates_b[t]) for t in sorted(set(rates_a) & set(rates_b))
                    if _differs(rates_a[t], rates_b[t])]
    moved, merges = route_changes(plan_a, plan_b)
    return PlanDiff(
        tasks_added=sorted(set(rates_b) - set(rates_a)),
        tasks_removed=sorted(set(rates_a) - set(rates_b)),
        rate_changes=rate_changes,
        routes_moved=moved,
        merges_changed=merges,
        link_deltas=link_deltas(scenario, ev_a, ev_b),
        objective_a=float(ev_a.objective),
        objective_b=float(ev_b.objective),
        label_a=label_a,
        label_b=label_b,
    )
