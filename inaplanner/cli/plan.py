"""`inaplanner planners`, `inaplanner plan`, `inaplanner compare`.

* ``planners`` lists every registered planner with its parameters.
* ``plan SCENARIO --planner NAME [--param k=v ...] [--seed N] [--time-limit S] -o PLAN.json`` runs
  one planner, writes the plan and prints objective, status, solve seconds and bound.
* ``compare SCENARIO [--planners a,b,...] [--json]`` runs several planners on one scenario and
  scores each plan with the evaluator: objective, per-job throughput, status, seconds and the gap to
  the best bound any of them proved for that scenario.
"""

from __future__ import annotations

import argparse
import json
import math
from typing import Any

from inaplanner.errors import InaplannerError
from inaplanner.evaluate import evaluate
from inaplanner.io.formats import import_scenario
from inaplanner.io.native import save_plan
from inaplanner.model import Scenario
from inaplanner.planners.base import all_params, run_planner
from inaplanner.planners.registry import available, get


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("planners", help="list the available planners and their parameters")
    p.set_defaults(func=cmd_planners)

    p = subparsers.add_parser("plan", help="run one planner on a scenario and write the plan")
    p.add_argument("scenario", help="scenario file (.json, .graphml, .gml)")
    p.add_argument("--planner", required=True, help="planner name (see `inaplanner planners`)")
    p.add_argument("--param", action="append", default=[], metavar="K=V", help="planner parameter (repeatable)")
    p.add_argument("--seed", type=int, default=None, help="random seed")
    p.add_argument("--time-limit", type=float, default=None, help="solver time limit in seconds")
    p.add_argument("-o", "--output", required=True, help="plan file to write (JSON)")
    p.set_defaults(func=cmd_plan)

    p = subparsers.add_parser("compare", help="run several planners on one scenario and compare them")
    p.add_argument("scenario", help="scenario file (.json, .graphml, .gml)")
    p.add_argument("--planners", default=None, help="comma-separated planner names (default: all)")
    p.add_argument("--seed", type=int, default=None, help="random seed for every planner")
    p.add_argument("--time-limit", type=float, default=None, help="time limit per planner in seconds")
    p.add_argument("--json", action="store_true", help="print the table as JSON")
    p.set_defaults(func=cmd_compare)


def cmd_planners(args: argparse.Namespace) -> int:
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
    return "" if x is None else f"{x:g}"


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
    return params


def _load(path: str) -> Scenario:
    sc, _notes = import_scenario(path)
    return sc


def cmd_plan(args: argparse.Namespace) -> int:
    sc = _load(args.scenario)
    planner = get(args.planner)
    plan = run_planner(planner, sc, _common(args, parse_params(args.param)))
    save_plan(plan, args.output)
    ev = evaluate(sc, plan)
    print(f"planner {planner.name}: objective ({ev.objective_kind}) {ev.objective:.6g}, "
          f"status {plan.planner.status}, {plan.planner.seconds:.2f} s, "
          f"bound {'-' if plan.bound is None else f'{plan.bound:.6g}'}")
    for job, thr in ev.job_throughput.items():
        print(f"  job {job}: throughput {thr:.6g} Gbps")
    if not ev.feasible:
        for line in ev.errors + [str(v) for v in ev.violations]:
            print(f"  problem: {line}")
    print(f"wrote {args.output}")
    return 0 if ev.feasible else 1


def compare_rows(sc: Scenario, names: list[str], params: dict[str, Any]) -> tuple[list[dict[str, Any]], float | None]:
    """Run each planner (errors become rows) and score with the evaluator; returns (rows, best
    bound). ``gap`` is (best bound - objective) / best bound."""
    rows: list[dict[str, Any]] = []
    for name in names:
        planner = get(name)
        try:
            plan = run_planner(planner, sc, dict(params))
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
    bounds = [r["bound"] for r in rows if r["bound"] is not None]
    best = min(bounds) if bounds else None
    for r in rows:
        obj = r["objective"]
        r["gap"] = (best - obj) / best if best and obj is not None and best > 0 else None
    return rows, best


def cmd_compare(args: argparse.Namespace) -> int:
    sc = _load(args.scenario)
    names = [n.strip() for n in args.planners.split(",") if n.strip()] if args.planners else sorted(available())
    for n in names:
        get(n)  # unknown names fail before anything runs
    rows, best = compare_rows(sc, names, _common(args, {}))
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
            "-" if r["gap"] is None else f"{100 * r['gap']:.2f} %",
        ])
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    for row in table:
        print("  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths, strict=True))))
    print(f"best bound: {'-' if best is None else f'{best:.6g}'}")
    for r in rows:
        if r.get("error"):
            print(f"{r['planner']}: error: {r['error']}")
    return 0


def _fmt(x: float | None, digits: int = 4) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{x:.{digits}f}"
