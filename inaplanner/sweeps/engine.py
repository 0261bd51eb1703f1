"""A sweep from end to end: cases x planners, run on a backend, stored as they arrive, summarised.

:func:`run_sweep` decides the case order and every planner's parameters (seed included) in one
place for every backend, skips what the result file already holds (resume), reports progress
through the one protocol (:class:`inaplanner.progress.Progress`: cases done, ETA, best and worst
so far) and returns every row. :func:`summarise` turns rows into what an operator asks: per planner
the no-failure objective, the worst case, the 5th percentile and median of the objective relative
to no failure, and the most critical elements (the largest throughput lost when they fail).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from inaplanner.errors import InaplannerError
from inaplanner.model import Scenario
from inaplanner.progress import Progress, as_progress
from inaplanner.sweeps.backends import LocalPool, Task
from inaplanner.sweeps.cases import BASELINE, Case, generate
from inaplanner.sweeps.store import ResultStore
from inaplanner.views.fmt import num, pct

#: statuses whose objective counts in the statistics (an ``error`` row does not)
SCORED = ("optimal", "feasible", "timeout", "heuristic", "disconnected", "")


@dataclass
class SweepSpec:
    scenario: Scenario
    generators: Sequence[str]
    planners: Sequence[str]
    time_limit: float = 10.0
    params: dict[str, dict[str, Any]] = field(default_factory=dict)  # per planner, extra params
    k: int = 2
    sample: int | None = None
    seed: int = 0
    capacities: Sequence[float] = ()
    collapse: bool = False
    #: cases made by hand (the GUI's chosen elements, tests), run after the generated ones
    extra_cases: Sequence[Case] = ()

    def cases(self) -> list[Case]:
        made = generate(self.scenario, self.generators, k=self.k, sample=self.sample,
                        seed=self.seed, capacities=self.capacities,
                        collapse=self.collapse) if self.generators else []
        ids = {c.id for c in made}
        return [BASELINE, *made, *(c for c in self.extra_cases if c.id not in ids)]

    def resolved_params(self) -> dict[str, dict[str, Any]]:
        from inaplanner.planners import get
        from inaplanner.planners.base import resolve_params

        out = {}
        for name in self.planners:
            given = {"time_limit": self.time_limit, "seed": self.seed, **self.params.get(name, {})}
            out[name] = resolve_params(get(name), given)
        return out


def identity(spec: SweepSpec, sha: str, params: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {"scenario_sha256": sha, "planners": list(spec.planners), "params": params,
            "generators": list(spec.generators), "k": spec.k, "sample": spec.sample,
            "seed": spec.seed, "capacities": list(spec.capacities), "collapse": spec.collapse,
            "extra_cases": [c.id for c in spec.extra_cases]}


def run_sweep(spec: SweepSpec, output: str, backend: Any = None,
              progress: Progress | None = None) -> list[dict[str, Any]]:
    """Run (or resume) the sweep into ``output``; return every row of the file."""
    from inaplanner.io.native import scenario_sha256, scenario_to_dict

    if not spec.planners:
        raise InaplannerError("sweep: name at least one planner (--planners random,aro)")
    prog = as_progress(progress)
    backend = backend or LocalPool()
    doc = scenario_to_dict(spec.scenario)
    sha = scenario_sha256(spec.scenario)
    params = spec.resolved_params()
    prog.update(0.0, "generating cases", phase="cases")
    cases = spec.cases()
    tasks: list[Task] = [(c, p, params[p]) for c in cases for p in spec.planners]
    with ResultStore(output) as store:
        store.bind(identity(spec, sha, params))
        done = store.done()
        todo = [t for t in tasks if (t[0].id, t[1]) not in done]
        baselines = {r["planner"]: r for r in store.rows() if r["case_id"] == BASELINE.id}
        total, finished = len(tasks), len(tasks) - len(todo)
        start = time.monotonic()
        tracker = _Extremes(baselines)
        prog.update(finished / max(total, 1),
                    f"{finished} of {total} runs already done; {len(todo)} to run on {backend.describe()}",
                    phase="run")

        def on_result(_idx: int, row: dict[str, Any]) -> None:
            nonlocal finished
            store.add(row)
            finished += 1
            tracker.see(row)
            ran = finished - (total - len(todo))
            eta = (time.monotonic() - start) / max(ran, 1) * (total - finished)
            prog.update(finished / total, f"{finished}/{total} runs, ETA {_eta(eta)}{tracker.text()}",
                        phase="run")

        if todo:
            backend.run(doc, sha, todo, on_result, prog.token)
        prog.update(1.0, f"{total} runs done", phase="done")
        return store.rows()


def _eta(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "?"
    seconds = int(round(seconds))
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


class _Extremes:
    """Best and worst relative objective so far (for the progress line)."""

    def __init__(self, baselines: dict[str, dict[str, Any]]) -> None:
        self.base = {p: r.get("objective") for p, r in baselines.items()}
        self.worst: tuple[float, str] | None = None

    def see(self, row: dict[str, Any]) -> None:
        if row["case_id"] == BASELINE.id:
            self.base[row["planner"]] = row.get("objective")
            return
        rel = relative(row, self.base.get(row["planner"]))
        if rel is not None and (self.worst is None or rel < self.worst[0]):
            self.worst = (rel, f"{row['element']} ({row['planner']})")

    def text(self) -> str:
        if self.worst is None:
            return ""
        return f"; worst so far {pct(self.worst[0], 0)} of no failure: {self.worst[1]}"


def relative(row: dict[str, Any], base: float | None) -> float | None:
    """The row's objective over the no-failure objective of its planner (None when unknown)."""
    if row.get("status") not in SCORED or row.get("objective") is None or not base:
        return None
    return float(row["objective"]) / float(base)


def weighted_quantile(values: Sequence[float], weights: Sequence[int], q: float) -> float:
    """The smallest value v with (weight of values <= v) >= q x total weight."""
    pairs = sorted(zip(values, weights, strict=True))
    total = sum(w for _, w in pairs)
    acc = 0.0
    for v, w in pairs:
        acc += w
        if acc >= q * total - 1e-12:
            return v
    return pairs[-1][0]


def summarise(rows: Sequence[dict[str, Any]], top: int = 10) -> dict[str, Any]:
    """Per planner: no-failure objective, worst case, p5 and median relative objective, counts;
    and the ``top`` most critical elements (largest loss relative to no failure, by the planner
    that loses most on them)."""
    planners = sorted({r["planner"] for r in rows}, key=lambda p: [r["planner"] for r in rows].index(p))
    base = {r["planner"]: r.get("objective") for r in rows if r["case_id"] == BASELINE.id}
    per: dict[str, Any] = {}
    loss: dict[str, dict[str, Any]] = {}
    for p in planners:
        rs = [r for r in rows if r["planner"] == p and r["case_id"] != BASELINE.id]
        rel = [(relative(r, base.get(p)), r) for r in rs]
        scored = [(v, r) for v, r in rel if v is not None]
        errors = [r for r in rs if r["status"] == "error"]
        entry: dict[str, Any] = {"baseline": base.get(p), "cases": len(rs),
                                 "elements": sum(r.get("weight") or 1 for r in rs),
                                 "errors": len(errors), "worst": None, "p5": None, "median": None}
        if scored:
            vals = [v for v, _ in scored]
            wts = [int(r.get("weight") or 1) for _, r in scored]
            worst_v, worst_r = min(scored, key=lambda x: (x[0], x[1]["case_id"]))
            entry.update(worst=worst_v, worst_element=worst_r["element"],
                         p5=weighted_quantile(vals, wts, 0.05), median=weighted_quantile(vals, wts, 0.5))
            for v, r in scored:
                cur = loss.setdefault(r["case_id"], {"element": r["element"], "generator": r["generator"],
                                                     "members": r.get("members") or [], "loss": {}})
                cur["loss"][p] = 1.0 - v
        per[p] = entry
    critical = sorted(loss.values(), key=lambda e: (-max(e["loss"].values()), e["element"]))[:top]
    return {"planners": per, "critical": critical}


def format_summary(summary: dict[str, Any]) -> str:
    """The end-of-sweep text: per planner figures, then the critical elements."""
    lines = ["planner        no failure   worst   p5      median  cases  errors  worst element"]
    for p, e in summary["planners"].items():
        def share(x: float | None) -> str:
            return "-" if x is None else pct(x, 0)

        lines.append(f"{p:<14} {('-' if e['baseline'] is None else num(e['baseline'])):>10}   "
                     f"{share(e['worst']):<7} {share(e['p5']):<7} {share(e['median']):<7} "
                     f"{e['cases']:>5}  {e['errors']:>6}  {e.get('worst_element', '-')}")
    if summary["critical"]:
        names = list(summary["planners"])
        lines.append("")
        lines.append("most critical elements (throughput lost when they fail, relative to no failure):")
        for e in summary["critical"]:
            losses = ", ".join(f"{p} {pct(e['loss'][p])}" for p in names if p in e["loss"])
            more = f"  [+{len(e['members']) - 1} symmetric]" if len(e["members"]) > 1 else ""
            lines.append(f"  {e['element']}: {losses}{more}")
    return "\n".join(lines)
