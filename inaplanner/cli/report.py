"""``inaplanner report`` and ``inaplanner diff``."""

from __future__ import annotations

import argparse
import json
import sys

from inaplanner.errors import InaplannerError

# inaplanner.report (numpy, the evaluator) is imported inside the handlers (start-up time).
#: the output formats of :data:`inaplanner.report.export.FORMATS` (a test keeps them equal)
FORMATS = ("html", "pdf", "csv", "json", "png", "svg")


def register(subparsers: argparse._SubParsersAction) -> None:
    r = subparsers.add_parser(
        "report",
        help="export plans for review: html, pdf, csv, json, png or svg",
        description="Write a review report of one or more plans of one scenario. html and pdf "
        "hold the scenario summary, a comparison of the plans, and per plan its planner, result, "
        "the topology with its load (at pod level on a datacenter), the most loaded links, the "
        "busiest switches and the diff against the first plan; the per-worker routes go to a CSV "
        "beside the report (pdf default), an appendix (html default) or nowhere (--routes). json, "
        "png and svg write one file per plan and csv the tables: -o NAME.ext for one plan, -o "
        "NAME.zip or --output-dir DIR for several. A sweep result file (inaplanner sweep -o) "
        "gives the sweep's report: html, csv or json.",
    )
    r.add_argument("plans", nargs="+", metavar="PLAN",
                   help="plan file(s) (JSON), or one sweep result file (inaplanner sweep -o)")
    r.add_argument("--scenario", "-s", metavar="S",
                   help="the scenario file (default: the one the plan names or whose hash it "
                   "carries, in the plan's folder)")
    r.add_argument("--format", "-f", choices=FORMATS,
                   help="output format (default: from the extension of -o)")
    out = r.add_mutually_exclusive_group(required=True)
    out.add_argument("-o", "--output", metavar="OUT",
                     help="output file: NAME.html, NAME.pdf; NAME.png/svg/json for one plan; "
                     "NAME.zip for the files of several plans or the csv tables; NAME.csv for the "
                     "link table")
    out.add_argument("--output-dir", metavar="DIR",
                     help="write the files (one per plan, or the csv tables) into this directory")
    r.add_argument("--routes", choices=("appendix", "csv", "none"), default=None,
                   help="per-worker routes of html/pdf: an appendix, a CSV file beside the report "
                   "(NAME.routes.csv), or none (default: csv for pdf, appendix for html)")
    r.add_argument("--title", help="report title")
    r.set_defaults(func=run_report)

    d = subparsers.add_parser(
        "diff",
        help="what changes between two plans: routes moved, merges changed, link load deltas",
    )
    d.add_argument("plan_a", metavar="PLAN_A")
    d.add_argument("plan_b", metavar="PLAN_B")
    d.add_argument("--scenario", "-s", metavar="S", help="the scenario file (as for report)")
    d.add_argument("--json", action="store_true", help="print the diff as JSON")
    d.add_argument("--max-links", type=int, default=20, metavar="N",
                   help="link load changes to list (default 20)")
    d.add_argument("--max-routes", type=int, default=30, metavar="N",
                   help="moved routes and changed merges to list, each (default 30; "
                        "the count per task is always shown)")
    d.set_defaults(func=run_diff)


def _load(paths: list[str], scenario: str | None):
    from inaplanner.io.native import load_plan, scenario_sha256
    from inaplanner.io.scenario_lookup import scenario_for

    plans = [(p, load_plan(p)) for p in paths]
    sc = scenario_for(plans, scenario)
    sha = scenario_sha256(sc)
    for path, plan in plans:
        if plan.scenario_sha256 != sha:
            print(f"inaplanner: warning: {path} was made for another version of the scenario "
                  "(scenario_sha256 differs); judging it on the given one", file=sys.stderr)
    return sc, plans


def is_sweep_file(path: str) -> bool:
    """An SQLite file (what ``inaplanner sweep`` writes) rather than a plan."""
    try:
        with open(path, "rb") as f:
            return f.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False


def run_sweep_report(args: argparse.Namespace) -> int:
    from inaplanner.io.atomic import atomic_write_text
    from inaplanner.report.export import format_from_path
    from inaplanner.report.sweep import sweep_html
    from inaplanner.sweeps.engine import summarise
    from inaplanner.sweeps.store import load_results, write_csv

    if len(args.plans) != 1:
        raise InaplannerError("report: give one sweep result file, or plan files, not both")
    if args.output is None:
        raise InaplannerError("report: a sweep report is one file: give -o NAME.html|csv|json")
    fmt = args.format or format_from_path(args.output)
    meta, rows = load_results(args.plans[0])
    if fmt == "html":
        atomic_write_text(args.output, sweep_html(meta, rows, args.title))
    elif fmt == "csv":
        write_csv(rows, args.output)
    elif fmt == "json":
        atomic_write_text(args.output, json.dumps({"identity": meta.get("identity"),
                                                   "summary": summarise(rows), "rows": rows}, indent=1))
    else:
        raise InaplannerError(f"{args.output}: a sweep report is written as html, csv or json, not {fmt}")
    print(args.output)
    return 0


def run_report(args: argparse.Namespace) -> int:
    if args.plans and is_sweep_file(args.plans[0]):
        return run_sweep_report(args)
    from inaplanner.report.data import build_report, plan_label
    from inaplanner.report.export import export_report, format_from_path, one_file_problem

    fmt = args.format or (format_from_path(args.output) if args.output else None)
    if fmt is None:
        raise InaplannerError(f"{args.output or args.output_dir}: give --format (one of "
                              f"{', '.join(FORMATS)}); the output name does not tell")
    problem = one_file_problem(fmt, args.output, args.output_dir, len(args.plans))
    if problem:
        raise InaplannerError(problem)
    sc, plans = _load(args.plans, args.scenario)
    used: set[str] = set()
    labelled = [(plan_label(path, plan, i, used), plan) for i, (path, plan) in enumerate(plans)]
    report = build_report(sc, labelled, title=args.title)
    report.routes = args.routes or ("csv" if fmt == "pdf" else "appendix")
    written = export_report(report, fmt, args.output, output_dir=args.output_dir)
    for path in written:
        print(path)
    return 0


def run_diff(args: argparse.Namespace) -> int:
    from inaplanner.report.data import plan_label
    from inaplanner.report.diff import diff_plans

    sc, plans = _load([args.plan_a, args.plan_b], args.scenario)
    used: set[str] = set()
    (pa, a), (pb, b) = plans
    la, lb = plan_label(pa, a, 0, used), plan_label(pb, b, 1, used)
    diff = diff_plans(sc, a, b, la, lb)
    if args.json:
        print(json.dumps(diff.to_dict(), indent=1, sort_keys=True))
    else:
        sys.stdout.write(diff.to_text(max_links=max(0, args.max_links), max_routes=max(0, args.max_routes)))
    return 0
