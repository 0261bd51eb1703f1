"""What a review report holds: the scenario, each plan with its evaluation, and the diffs.

Every figure comes from :func:`inaplanner.evaluate.evaluate` (loads, objective, throughput, most
loaded links, switch rows); this module only gathers and labels them for the writers.
"""

from __future__ import annotations

import datetime as _dt
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inaplanner import __version__
from inaplanner.errors import InaplannerError
from inaplanner.evaluate import Evaluation, evaluate
from inaplanner.io.native import scenario_sha256
from inaplanner.model import Plan, Scenario, Switch
from inaplanner.report.diff import PlanDiff, diff_plans

TOP_LINKS = 10


@dataclass
class PlanReport:
    """One plan with its evaluation. ``label`` names it in tables (file stem or planner name)."""

    label: str
    plan: Plan
    evaluation: Evaluation

    @property
    def status(self) -> str:
        return self.plan.planner.status

    @property
    def gap(self) -> float | None:
        """Relative gap between the proved bound and the evaluated objective, when both exist."""
        bound = self.plan.bound
        obj = self.evaluation.objective
        if bound is None or not math.isfinite(bound) or bound <= 0:
            return None
        return max(0.0, (bound - obj) / bound)

    @property
    def max_utilisation(self) -> float:
        util = self.evaluation.link_utilisation
        return float(util.max()) if util.size else 0.0

    def top_links(self, n: int = TOP_LINKS) -> list[dict[str, Any]]:
        return self.evaluation.most_loaded_links(n)

    def switch_rows(self) -> list[dict[str, Any]]:
        return self.evaluation.switch_rows()

    def task_rows(self) -> list[dict[str, Any]]:
        ev = self.evaluation
        return [{"task": str(t), "job": t.job, "ps": t.ps, "rate": float(r)}
                for t, r in zip(ev.tasks, ev.rates, strict=True)]

    def route_rows(self) -> list[dict[str, Any]]:
        """One row per (task, worker) route, in plan order."""
        rows = []
        for tp in self.plan.tasks:
            for r in tp.routes:
                rows.append({"task": str(tp.task), "job": tp.job, "ps": tp.ps, "worker": r.worker,
                             "rate": float(tp.rate), "path": list(r.path),
                             "merge_at": list(r.merge_at), "hops": len(r.path) - 1})
        return rows

    def link_rows(self) -> list[dict[str, Any]]:
        """Every directed link: load, capacity, utilisation and flow count (CSV export)."""
        ev = self.evaluation
        load, util = ev.link_load, ev.link_utilisation
        rows = []
        for li, lk in enumerate(ev.scenario.links):
            for d, (src, dst) in enumerate(((lk.a, lk.b), (lk.b, lk.a))):
                rows.append({"link": f"{src}->{dst}", "index": li, "direction": d, "src": src,
                             "dst": dst, "load": float(load[li, d]), "capacity": float(lk.capacity),
                             "utilisation": float(util[li, d]),
                             "background": float(ev.link_background[li, d]),
                             "flows": int(ev.flows[:, li, d].sum())})
        return rows


@dataclass
class Report:
    scenario: Scenario
    plans: list[PlanReport]
    diffs: list[PlanDiff] = field(default_factory=list)  # plan i (i >= 1) against plan 0
    title: str = ""
    created: str = ""
    version: str = __version__
    #: where the per-worker routes go: "appendix" (in the document, after the plans), "csv"
    #: (a CSV file beside it, ``routes_file``), "none"
    routes: str = "appendix"
    routes_file: str = ""

    def scenario_summary(self) -> list[tuple[str, str]]:
        sc = self.scenario
        switches = sc.switches()
        prog = [s for s in switches if s.programmable]
        caps = sorted({lk.capacity for lk in sc.links})
        cap_text = (", ".join(f"{c:g}" for c in caps[:6]) + (" ..." if len(caps) > 6 else "")) \
            if caps else "-"
        pipes = sum(s.pipelines for s in prog)
        return [
            ("name", sc.name),
            ("nodes", f"{len(sc.nodes)} ({len(sc.hosts())} hosts, {len(switches)} switches)"),
            ("programmable switches", f"{len(prog)} ({pipes} pipelines)"),
            ("links", f"{len(sc.links)} (capacities {cap_text} Gbps)"),
            ("tiered (up-down routing)", "yes" if sc.is_tiered() else "no"),
            ("jobs", f"{len(sc.jobs)} ({len(sc.tasks())} tasks)"),
            ("scenario sha256", scenario_sha256(sc)),
        ]

    def job_rows(self) -> list[dict[str, Any]]:
        return [{"job": j.id, "workers": len(j.workers), "ps": ", ".join(j.parameter_servers),
                 "model_mb": j.model_mb, "weight": j.weight} for j in self.scenario.jobs]

    def programmable_switches(self) -> list[Switch]:
        return [s for s in self.scenario.switches() if s.programmable]


def plan_label(path: str | os.PathLike[str] | None, plan: Plan, index: int, used: set[str]) -> str:
    """A short unique label: the file stem, else the planner name; ``#2`` suffixes on clashes."""
    base = Path(path).stem if path else (plan.planner.name or f"plan {index + 1}")
    label, n = base, 1
    while label in used:
        n += 1
        label = f"{base} #{n}"
    used.add(label)
    return label


def build_report(scenario: Scenario, plans: list[tuple[str, Plan]] | list[Plan],
                 title: str | None = None, now: _dt.datetime | None = None) -> Report:
    """Evaluate every plan on ``scenario`` and diff each against the first. ``plans`` holds plans
    or (label, plan) pairs."""
    if not plans:
        raise InaplannerError("a report needs at least one plan")
    used: set[str] = set()
    reports: list[PlanReport] = []
    for i, item in enumerate(plans):
        if isinstance(item, Plan):
            label, plan = plan_label(None, item, i, used), item
        else:
            label, plan = item
            if label in used:
                label = plan_label(label, plan, i, used)
            used.add(label)
        reports.append(PlanReport(label, plan, evaluate(scenario, plan, check_hash=True)))
    first = reports[0]
    diffs = [diff_plans(scenario, first.plan, r.plan, first.label, r.label, first.evaluation,
                        r.evaluation) for r in reports[1:]]
    stamp = (now or _dt.datetime.now().astimezone()).strftime("%Y-%m-%d %H:%M %Z").strip()
    return Report(scenario, reports, diffs,
                  title or f"inaplanner report: {scenario.name}", stamp)
