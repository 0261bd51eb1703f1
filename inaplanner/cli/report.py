"""``inaplanner report`` and ``inaplanner diff``."""

from __future__ import annotations

import argparse
import json
import sys

from inaplanner.errors import InaplannerError
from inaplanner.io.native import load_plan, scenario_sha256
from inaplanner.io.scenario_lookup import scenario_for
from inaplanner.report.data import build_report, plan_label
from inaplanner.report.diff import diff_plans
from inaplanner.report.export import FORMATS, export_report, format_from_path


def register(subparsers: argparse._SubParsersAction) -> None:
    r = subparsers.add_parser(
        "report",
        help="export plans for review: html, pdf, csv, json, png or svg",
        description="Write a review report of one or more plans of one scenario. html and pdf "
        "hold the scenario summary, planner, status, objective, throughput, the topology with "
        "its load, the most loaded links, switch aggregation, routes, and with several plans a "
        "comparison and the diff of each plan against the first. csv writes a directory of "
        "tables; json, png and svg write one file per plan (a directory for several plans).",
    )
    r.add_argument("plans", nargs="+", metavar="PLAN", help="plan file(s) (JSON)")
    r.add_argument("--scenario", "-s", metavar="S",
                   help="the scenario file (default: the one the plan names or whose hash it "
                   "carries, in the plan's folder)")
    r.add_argument("--format", "-f", choices=FORMATS,
                   help="output format (default: from the extension of -o)")
    r.add_argument("-o", "--output", required=True, metavar="OUT", help="output file or directory")
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
    d.set_defaults(func=run_diff)


def _load(paths: list[str], scenario: str | None):
    plans = [(p, load_plan(p)) for p in paths]
    sc = scenario_for(plans, scenario)
    sha = scenario_sha256(sc)
    for path, plan in plans:
        if plan.scenario_sha256 != sha:
            print(f"inaplanner: warning: {path} was made for another version of the scenario "
                  "(scenario_sha256 differs); judging it on the given one", file=sys.stderr)
    return sc, plans


def run_report(args: argparse.Namespace) -> int:
    fmt = args.format or format_from_path(args.output)
    if fmt is None:
        raise InaplannerError(f"{args.output}: give --format (one of {', '.join(FORMATS)}); "
                              "the output name does not tell")
    sc, plans = _load(args.plans, args.scenario)
    used: set[str] = set()
    labelled = [(plan_label(path, plan, i, used), plan) for i, (path, plan) in enumerate(plans)]
    report = build_report(sc, labelled, title=args.title)
    written = export_report(report, fmt, args.output)
    for path in written:
        print(path)
    return 0


def run_diff(args: argparse.Namespace) -> int:
    sc, plans = _load([args.plan_a, args.plan_b], args.scenario)
    used: set[str] = set()
    (pa, a), (pb, b) = plans
    la, lb = plan_label(pa, a, 0, used), plan_label(pb, b, 1, used)
    diff = diff_plans(sc, a, b, la, lb)
    if args.json:
        print(json.dumps(diff.to_dict(), indent=1, sort_keys=True))
    else:
        sys.stdout.write(diff.to_text(max_links=max(0, args.max_links)))
    return 0
