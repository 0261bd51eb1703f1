"""Foundation commands: ``generate``, ``validate``, ``convert``, ``evaluate``."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from inaplanner.errors import InaplannerError
from inaplanner.views.fmt import num, pct

if TYPE_CHECKING:
    from inaplanner.model import Scenario

# The model, io, topologies and the evaluator (numpy, networkx) are imported inside the handlers:
# registering the commands costs nothing and ``validate`` never loads a planner or a solver.

#: testbed name -> the function of :mod:`inaplanner.topologies` that builds it
TESTBEDS = {
    "aro-fig1": "aro_fig1",
    "grid-fig1": "grid_fig1",
    "grid": "grid_testbed",
    "inart-fig1": "inart_fig1",
    "inart": "inart_testbed",
}


def register(sub: argparse._SubParsersAction) -> None:
    g = sub.add_parser("generate", help="build a topology (and jobs) and write it")
    gsub = g.add_subparsers(dest="topology", metavar="TOPOLOGY", required=True)
    ls = gsub.add_parser("leaf-spine", help="two-tier leaf-spine")
    ls.add_argument("--leaves", type=int, default=4)
    ls.add_argument("--spines", type=int, default=2)
    ls.add_argument("--hosts-per-leaf", type=int, default=4)
    ls.add_argument("--host-capacity", type=float, default=100.0, help="Gbps")
    ls.add_argument("--fabric-capacity", type=float, default=100.0, help="Gbps")
    ft = gsub.add_parser("fat-tree", help="3-tier k-ary fat-tree")
    ft.add_argument("--k", type=int, default=4)
    ft.add_argument("--capacity", type=float, default=100.0, help="Gbps")
    tb = gsub.add_parser("testbed", help="a paper's example or testbed network")
    tb.add_argument("name", choices=sorted(TESTBEDS))
    for p in (ls, ft):
        p.add_argument("--programmable", default="leaves",
                       help="'leaves' (all leaves/ToRs), 'none', or a share in [0,1] of all switches")
        p.add_argument("--pipelines", type=int, default=1, help="pipelines per programmable switch")
        p.add_argument("--jobs", type=int, default=1)
        p.add_argument("--tasks-per-job", type=int, default=1, help="parameter servers per job")
        p.add_argument("--workers-per-job", type=int, default=8)
        p.add_argument("--seed", type=int, default=0)
    for p in (ls, ft, tb):
        p.add_argument("--max-fan-in", type=int, default=None, metavar="N",
                       help="most flows one aggregate may merge at a programmable switch "
                            "(default: null, which means 32, the bundled programs' bitmap)")
        p.add_argument("-o", "--output", required=True, help="file to write (.json, .graphml, .gml)")
        p.set_defaults(func=cmd_generate)

    v = sub.add_parser("validate", help="check a scenario file (any supported format)")
    v.add_argument("file")
    v.set_defaults(func=cmd_validate)

    c = sub.add_parser("convert", help="convert a scenario between formats (by extension)")
    c.add_argument("input")
    c.add_argument("output")
    c.add_argument("--default-capacity", type=float, default=10.0,
                   help="Gbps for imported links without a speed (default 10)")
    c.set_defaults(func=cmd_convert)

    e = sub.add_parser("evaluate", help="check a plan on a scenario: loads, violations, objective")
    e.add_argument("scenario")
    e.add_argument("plan")
    e.add_argument("--json", action="store_true", help="print the evaluation as JSON")
    e.add_argument("--top", type=int, default=5, help="how many of the most loaded links to show (default 5); the lists of "
                   "aggregating switches and of violations show at least 20 lines")
    e.set_defaults(func=cmd_evaluate)


def build_generated(args: argparse.Namespace) -> Scenario:
    from inaplanner.topologies import set_max_fan_in

    sc = _build_generated(args)
    if getattr(args, "max_fan_in", None) is not None:
        set_max_fan_in(sc, args.max_fan_in)
    return sc


def _build_generated(args: argparse.Namespace) -> Scenario:
    from inaplanner import topologies
    from inaplanner.topologies import fat_tree, leaf_spine, mark_programmable, place_jobs

    if args.topology == "testbed":
        return getattr(topologies, TESTBEDS[args.name])()
    if args.topology == "leaf-spine":
        sc = leaf_spine(args.leaves, args.spines, args.hosts_per_leaf, args.host_capacity, args.fabric_capacity)
    else:
        sc = fat_tree(args.k, args.capacity)
    prog = str(args.programmable).strip().lower()
    if prog == "leaves":
        mark_programmable(sc, None, pipelines=args.pipelines, seed=args.seed)
    elif prog != "none":
        try:
            share = float(prog)
        except ValueError:
            raise InaplannerError(f"--programmable: expected 'leaves', 'none' or a share, got {prog!r}") from None
        mark_programmable(sc, share, pipelines=args.pipelines, seed=args.seed)
    if args.jobs > 0:
        place_jobs(sc, args.jobs, args.tasks_per_job, args.workers_per_job, seed=args.seed)
    return sc


def cmd_generate(args: argparse.Namespace) -> int:
    from inaplanner.io.formats import export_scenario

    sc = build_generated(args)
    export_scenario(sc, args.output)
    print(f"wrote {args.output}: {sc.name}, {len(sc.hosts())} hosts, {len(sc.switches())} switches, "
          f"{len(sc.links)} links, {len(sc.jobs)} jobs")
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    from inaplanner.io.formats import import_scenario
    from inaplanner.io.native import scenario_sha256

    sc, notes = import_scenario(args.file)
    for note in notes:
        print(f"note: {note}")
    prog = sum(1 for s in sc.switches() if s.programmable)
    print(f"{args.file}: valid: {len(sc.hosts())} hosts, {len(sc.switches())} switches "
          f"({prog} programmable), {len(sc.links)} links, {len(sc.jobs)} jobs, "
          f"{'tiered (Clos)' if sc.is_tiered() else 'not tiered'}; sha256 {scenario_sha256(sc)}")
    return 0


def cmd_convert(args: argparse.Namespace) -> int:
    from inaplanner.io.formats import export_scenario, import_scenario

    sc, notes = import_scenario(args.input, default_capacity=args.default_capacity)
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    export_scenario(sc, args.output)
    print(f"wrote {args.output}")
    return 0


def cmd_evaluate(args: argparse.Namespace) -> int:
    from inaplanner.evaluate import evaluate, max_min_rates
    from inaplanner.io.formats import import_scenario
    from inaplanner.io.native import load_plan

    sc, _ = import_scenario(args.scenario)
    plan = load_plan(args.plan)
    ev = evaluate(sc, plan, check_hash=True)
    summary: dict[str, Any] = ev.summary()
    if ev.valid:
        summary["max_min_rates"] = [
            {"job": j, "ps": ps, "rate": r} for (j, ps), r in max_min_rates(sc, plan, ev).items()
        ]
    if args.json:
        print(json.dumps(summary, indent=1))
    else:
        _print_evaluation(ev, summary, args.top)
    return 0 if ev.feasible else 1


LIST_LINES = 20  # lines of one list in evaluate's text (at least --top)


def _more(n: int, what: str) -> None:
    if n > 0:
        print(f"  ... {n} more {what} (--top N shows more, --json lists them all)")


def _print_evaluation(ev: Any, summary: dict[str, Any], top: int) -> None:
    state = "feasible" if ev.feasible else ("INVALID" if not ev.valid else "INFEASIBLE")
    print(f"plan by {ev.plan.planner.name} ({ev.plan.planner.status}): {state}")
    print(f"objective ({ev.objective_kind}): {num(ev.objective)}"
          + (f"   bound: {num(ev.plan.bound)}" if ev.plan.bound is not None else ""))
    for t in summary["tasks"]:
        print(f"  task {t['job']}/{t['ps']}: rate {num(t['rate'])} Gbps")
    for job, thr in ev.job_throughput.items():
        print(f"  job {job}: throughput {num(thr)} Gbps")
    print(f"most loaded links (top {top}):")
    for row in ev.most_loaded_links(top):
        print(f"  {row['link']:<24} {num(row['load'], 4):>10} / {num(row['capacity'], 4):<10} "
              f"{pct(row['utilisation']):>8}  {row['flows']} flow(s)")
    # a datacenter's plan aggregates at hundreds of switches and may break a rule thousands of times:
    # the lists stop at LIST_LINES (or --top) lines and say how many more --json holds
    shown = max(top, LIST_LINES)
    used = [r for r in summary["switches"] if r["aggregates"]]
    if used:
        fullest = sorted(used, key=lambda r: -r["fan_in_used"] / max(r["max_fan_in"], 1))[:shown]
        print("aggregating switches (fan-in used / max_fan_in)"
              + (f", the {len(fullest)} fullest of {len(used)}:" if len(fullest) < len(used) else ":"))
        for r in fullest:
            print(f"  {r['switch']:<24} {r['fan_in_used']:>5} / {r['max_fan_in']:<5} "
                  f"{r['aggregates']} aggregate(s)")
        _more(len(used) - len(fullest), "aggregating switch(es)")
    for kind, lines in (("error", ev.errors), ("violation", ev.violations), ("warning", ev.warnings)):
        for line in lines[:shown]:
            print(f"{kind}: {line}")
        _more(len(lines) - shown, f"{kind}(s)")
    if "max_min_rates" in summary:
        rates = ", ".join(f"{r['job']}/{r['ps']}={num(r['rate'])}" for r in summary["max_min_rates"])
        print(f"largest max-min fair rates on these routes: {rates}")
