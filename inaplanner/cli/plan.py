"""`inaplanner planners`, `inaplanner plan`, `inaplanner compare`.

* ``planners`` lists every registered planner with its parameters.
* ``plan SCENARIO --planner NAME [--param k=v ...] [--seed N] [--time-limit S] -o PLAN.json`` runs
  one planner, writes the plan and prints objective, status, solve seconds and bound.
* ``compare SCENARIO [--planners a,b,...] [--json] [--output-dir DIR]`` runs several planners on
  one scenario and scores each plan with the evaluator: objective, per-job throughput, status,
  seconds and the gap to the best bound any of them proved for that scenario; with ``--output-dir``
  it keeps the plans too.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
from typing import TYPE_CHECKING, Any

from inaplanner.cli.progress import cli_progress
from inaplanner.errors import InaplannerError
from inaplanner.progress import Progress
from inaplanner.views.fmt import fixed, num, pct

if TYPE_CHECKING:
    from inaplanner.model import Scenario

# The planners, the evaluator and the solvers are imported inside the handlers (start-up time).

log = logging.getLogger("inaplanner.cli")


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("planners", help="list the available planners and their parameters")
    p.set_defaults(func=cmd_planners)

    p = subparsers.add_parser("plan", help="run one planner on a scenario and write the plan")
    p.add_argument("scenario", help="scenario file (.json, .graphml, .gml)")
    p.add_argument("--planner", required=True, help="planner name (see `inaplanner planners`)")
    p.add_argument("--param", action="append", default=[], metavar="K=V", help="planner parameter (repeatable)")
    p.add_argument("--seed", type=int, default=None, help="random seed")
    p.add_argument("--time-limit", type=float, default=None,
                   help="time limit of the whole run in seconds (every phase, not only the solver)")
    p.add_argument("--limit-kind", choices=("wall", "cpu"), default=None,
                   help="what the time limit counts: wall-clock (default) or CPU seconds, so a "
                   "loaded machine changes the answer far less; recorded in the plan")
    p.add_argument("-o", "--output", required=True, help="plan file to write (JSON)")
    p.set_defaults(func=cmd_plan)

    p = subparsers.add_parser("compare", help="run several planners on one scenario and compare them")
    p.add_argument("scenario", help="scenario file (.json, .graphml, .gml)")
    p.add_argument("--planners", default=None, help="comma-separated planner names (default: all)")
    p.add_argument("--seed", type=int, default=None, help="random seed for every planner")
    p.add_argument("--time-limit", type=float, default=None, help="time limit per planner in seconds")
    p.add_argument("--limit-kind", choices=("wall", "cpu"), default=None,
                   help="what the time limit counts: wall-clock (default) or CPU seconds")
    p.add_argument("--json", action="store_true", help="print the table as JSON")
    p.add_argument("--output-dir", metavar="DIR", default=None,
                   help="also write each planner's plan to DIR/PLANNER.json as it finishes (for "
                        "report, diff, deploy; an interrupted compare keeps the plans it finished)")
    p.set_defaults(func=cmd_compare)


def cmd_planners(args: argparse.Namespace) -> int:
    from inaplanner.planners.base import all_params
    from inaplanner.planners.registry import available

    for name, planner in sorted(available().items()):
        print(f"{name}: {planner.description}")
        for prm in all_params(planner):
            extra = []
            if prm.min is not None or prm.max is not None:
                extra.append(f"range {_num(prm.min)}..{_num(prm.max)}")
            if prm.choices:
                extra.append("one of " + ", ".join(map(str, prm.choices)))
            tail = f" ({'; '.join(extra)})" if extra else ""
            print(f"  --param {prm.name}=<{prm.type.__name__}>  default {prm.default!r}{tail}: {prm.help}")
    return 0


def _num(x: float | None) -> str:
    return "" if x is None else num(x)


def parse_params(items: list[str]) -> dict[str, str]:
    """``["k=v", ...]`` -> dict; a malformed item is an InaplannerError."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InaplannerError(f"--param {item!r}: expected NAME=VALUE")
        out[key.strip()] = value.strip()
    return out


def _common(args: argparse.Namespace, params: dict[str, Any]) -> dict[str, Any]:
    if args.seed is not None:
        params["seed"] = args.seed
    if args.time_limit is not None:
        params["time_limit"] = args.time_limit
    if getattr(args, "limit_kind", None) is not None:
        params["limit_kind"] = args.limit_kind
    return params


def _load(path: str) -> Scenario:
    from inaplanner.io.formats import import_scenario

    sc, notes = import_scenario(path)
    log.info("%s: %s, %d jobs, %d links", path, sc.name, len(sc.jobs), len(sc.links))
    for note in notes:
        log.info("%s: %s", path, note)
    return sc


def cmd_plan(args: argparse.Namespace) -> int:
    from inaplanner.evaluate import evaluate
    from inaplanner.io.native import save_plan
    from inaplanner.planners.base import run_planner
    from inaplanner.planners.registry import get

    sc = _load(args.scenario)
    planner = get(args.planner)
    params = _common(args, parse_params(args.param))
    with cli_progress(args, f"plan {planner.name}") as progress:
        plan = run_planner(planner, sc, params, progress)
        progress.update(1.0, "evaluating", phase="evaluate")
        ev = evaluate(sc, plan)
    save_plan(plan, args.output)
    log.info("plan written to %s (solver %s)", args.output, plan.planner.solver or "-")
    print(f"planner {planner.name}: objective ({ev.objective_kind}) {num(ev.objective)}, "
          f"status {plan.planner.status}, {fixed(plan.planner.seconds, 2)} s, "
          f"bound {num(plan.bound)}")
    if plan.planner.stopped:
        print(f"  stopped: {plan.planner.stopped}")
    for job, thr in ev.job_throughput.items():
        print(f"  job {job}: throughput {num(thr)} Gbps")
    if not ev.feasible:
        for line in ev.errors + [str(v) for v in ev.violations]:
            print(f"  problem: {line}")
    print(f"wrote {args.output}")
    return 0 if ev.feasible else 1


def compare_rows(sc: Scenario, names: list[str], params: dict[str, Any],
                 progress: Progress | None = None,
                 output_dir: str | None = None) -> tuple[list[dict[str, Any]], float | None]:
    """Run each planner (errors become rows) and score with the evaluator; returns (rows, best
    bound). ``gap`` is (best bound - objective) / best bound. ``progress`` gets each planner's
    reports in its share of the whole (``phase`` is the planner's name); its incumbent and bound
    are the running planner's own, never the one before's. With ``output_dir`` each plan is saved
    there as ``NAME.json`` (atomically) as soon as it is made, and its row names the file."""
    from inaplanner.evaluate import evaluate
    from inaplanner.planners.base import run_planner
    from inaplanner.planners.registry import get

    rows: list[dict[str, Any]] = []
    for i, name in enumerate(names):
        planner = get(name)
        part = None
        if progress is not None:
            progress.update(i / len(names), "", phase=name, fresh=True)
            part = progress.span(i / len(names), (i + 1) / len(names))
        try:
            plan = run_planner(planner, sc, dict(params), part)
        except InaplannerError as exc:
            rows.append({"planner": name, "objective": None, "jobs": {}, "status": "error",
                         "seconds": None, "bound": None, "feasible": False, "error": str(exc)})
            continue
        ev = evaluate(sc, plan)
        rows.append({
            "planner": name,
            "objective": ev.objective if ev.feasible else None,
            "jobs": dict(ev.job_throughput),
            "status": plan.planner.status if ev.feasible else "infeasible",
            "seconds": plan.planner.seconds,
            "bound": plan.bound,
            "feasible": ev.feasible,
        })
        if output_dir is not None:
            from inaplanner.io.native import save_plan

            path = os.path.join(output_dir, f"{name}.json")
            save_plan(plan, path)
            rows[-1]["plan_file"] = path
    bounds = [r["bound"] for r in rows if r["bound"] is not None]
    best = min(bounds) if bounds else None
    for r in rows:
        obj = r["objective"]
        r["gap"] = (best - obj) / best if best and obj is not None and best > 0 else None
    return rows, best


def cmd_compare(args: argparse.Namespace) -> int:
    from inaplanner.planners.registry import available, get

    sc = _load(args.scenario)
    names = [n.strip() for n in args.planners.split(",") if n.strip()] if args.planners else sorted(available())
    for n in names:
        get(n)  # unknown names fail before anything runs
    if args.output_dir is not None:
        _writable_dir(args.output_dir)  # before the first planner runs, not after it
    with cli_progress(args, "compare") as progress:
        rows, best = compare_rows(sc, names, _common(args, {}), progress, args.output_dir)
    if args.json:
        print(json.dumps({"scenario": sc.name, "best_bound": best, "rows": rows}, indent=1))
        return 0
    jobs = [j.id for j in sc.jobs]
    head = ["planner", "objective", *[f"T({j})" for j in jobs], "status", "seconds", "gap"]
    table = [head]
    for r in rows:
        table.append([
            r["planner"],
            _fmt(r["objective"]),
            *[_fmt(r["jobs"].get(j)) for j in jobs],
            r["status"],
            _fmt(r["seconds"], 2),
            pct(r["gap"], 2),
        ])
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    for row in table:
        print("  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths, strict=True))))
    print(f"best bound: {num(best)}")
    for r in rows:
        if r.get("error"):
            print(f"{r['planner']}: error: {r['error']}")
    written = [r["plan_file"] for r in rows if r.get("plan_file")]
    if written:
        print(f"wrote {len(written)} plan(s) to {args.output_dir}: "
              + ", ".join(os.path.basename(f) for f in written))
    return 0


def _writable_dir(path: str) -> None:
    """Make ``path`` (a directory) or say in one line why it cannot hold the plans."""
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        raise InaplannerError(f"{path}: cannot make the output directory: {exc.strerror or exc}") from None
    if not os.access(path, os.W_OK):
        raise InaplannerError(f"{path}: the output directory is not writable")


def _fmt(x: float | None, digits: int = 4) -> str:
    return "-" if x is None or x != x else fixed(x, digits)  # x != x: nan
