"""One case of a sweep, run by one planner: the function every worker (local or Dask) executes.

``run_case`` gets the base scenario as its canonical document (shipped once per worker: the local
pool sends it at start, a Dask cluster scatters it), applies the case's what-if changes to a copy,
plans with the named planner, and scores the plan with the one evaluator. It never raises for a
case that fails: a planner error, a time-out without a plan, or a scenario the failure
disconnects comes back as a row with its status and error, so one bad case never stops a sweep.
"""

from __future__ import annotations

import os
import socket
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from inaplanner.sweeps.cases import Case

#: Per worker process: parsed base scenarios by sha256 (a worker serves many cases of one sweep).
_SCENARIOS: dict[str, Any] = {}


@dataclass
class CaseResult:
    """What the sweep records per case and planner.

    ``status``: the planner's (``optimal``, ``feasible``, ``timeout``, ``heuristic``), or
    ``disconnected`` (the failure cuts a worker off its PS: the job cannot train; objective 0), or
    ``error`` (the planner failed; ``error`` says why; left out of the statistics).
    """

    case_id: str
    planner: str
    generator: str
    element: str
    members: list[str] = field(default_factory=list)
    weight: int = 1
    status: str = ""
    objective: float | None = None
    bound: float | None = None
    gap: float | None = None
    seconds: float = 0.0
    feasible: bool | None = None
    job_throughput: dict[str, float] = field(default_factory=dict)
    error: str = ""
    worker: str = ""

    def to_row(self) -> dict[str, Any]:
        return asdict(self)


def _base(doc: dict[str, Any], sha: str) -> Any:
    sc = _SCENARIOS.get(sha)
    if sc is None:
        from inaplanner.io.native import scenario_from_dict

        sc = scenario_from_dict(doc, "<sweep scenario>")
        _SCENARIOS.clear()  # one sweep at a time per worker
        _SCENARIOS[sha] = sc
    return sc


def disconnected_jobs(sc: Any) -> list[str]:
    """Jobs some worker of which cannot reach one of the job's PSs through switches."""
    import networkx as nx

    g = nx.Graph()
    g.add_nodes_from(n.id for n in sc.nodes)
    for lk in sc.links:
        if lk.capacity > 0:
            g.add_edge(lk.a, lk.b)
    # hosts never forward: a host-host path through a third host is not a path
    hosts = {h.id for h in sc.hosts()}
    sw = g.subgraph([n for n in g if n not in hosts])
    comp: dict[str, int] = {}
    for i, c in enumerate(nx.connected_components(sw)):
        for n in c:
            comp[n] = i
    out = []
    for j in sc.jobs:
        def comps(h: str) -> set[int]:
            return {comp[n] for n in g.neighbors(h) if n in comp}

        ps_comps = [comps(p) for p in j.parameter_servers]
        if any(not (comps(w) & pc) for w in j.workers for pc in ps_comps):
            out.append(j.id)
    return out


def run_case(doc: dict[str, Any], sha: str, case: Case, planner: str,
             params: dict[str, Any]) -> dict[str, Any]:
    """Run ``case`` with ``planner`` (``params`` as resolved by the sweep) and return the row."""
    from inaplanner.errors import InaplannerError
    from inaplanner.evaluate import evaluate
    from inaplanner.planners import get, run_planner
    from inaplanner.views.whatif import what_if

    res = CaseResult(case.id, planner, case.generator, case.element, list(case.members), case.weight,
                     worker=f"{socket.gethostname()}:{os.getpid()}")
    start = time.perf_counter()
    try:
        sc = what_if(_base(doc, sha), list(case.changes))
        cut = disconnected_jobs(sc)
        if cut:
            res.status = "disconnected"
            res.objective = 0.0
            res.error = f"no path from a worker to its PS in job(s) {', '.join(cut)}"
            res.job_throughput = {j.id: 0.0 for j in sc.jobs if j.id in cut}
            return res.to_row()
        plan = run_planner(get(planner), sc, params)
        ev = evaluate(sc, plan)
        res.status = plan.planner.status or ""
        res.objective = float(ev.objective)
        res.feasible = bool(ev.feasible)
        res.bound = None if plan.bound is None else float(plan.bound)
        if res.bound is not None and res.bound > 0:
            res.gap = max(0.0, (res.bound - res.objective) / res.bound)
        res.job_throughput = {k: float(v) for k, v in ev.job_throughput.items()}
        if not ev.feasible:
            res.error = "; ".join([*ev.errors, *(f"{v.kind} {v.name}" for v in ev.violations)])[:500]
    except InaplannerError as exc:
        res.status = "error"
        res.error = str(exc)[:500]
    except Exception as exc:  # a planner bug must not stop the sweep: record it
        res.status = "error"
        res.error = f"{type(exc).__name__}: {exc}"[:500]
    finally:
        res.seconds = time.perf_counter() - start
    return res.to_row()
