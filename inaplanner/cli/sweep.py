"""``inaplanner sweep``: failure and growth sweeps, on a local pool or a Dask cluster."""

from __future__ import annotations

import argparse
import sys

CASES_HELP = ("comma-separated case generators: single-link, single-switch, pod (pods and planes), "
              "random-k (k simultaneous link failures, --k, --sample), capacity (--capacities), "
              "jobs (growth steps)")


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "sweep",
        help="re-plan under every single failure (or growth step) and find the critical elements",
        description="Run every case of the chosen generators with every chosen planner, score each "
        "plan with the evaluator, append the results to an SQLite file as they arrive (an "
        "interrupted sweep resumes and skips finished cases), and print per planner the worst "
        "case, the 5th percentile and median objective relative to no failure, and the ten most "
        "critical elements. Runs on a local pool of worker processes, or on a Dask cluster.")
    p.add_argument("scenario", help="scenario file")
    p.add_argument("--cases", default="single-link", help=CASES_HELP)
    p.add_argument("--planners", default="random", help="comma-separated planners (inaplanner planners)")
    p.add_argument("--time-limit", type=float, default=10.0, help="per case and planner (s)")
    p.add_argument("--limit-kind", choices=("wall", "cpu"), default="wall",
                   help="what the time limit counts (cpu: the same work whatever the load)")
    p.add_argument("--param", action="append", default=[], metavar="PLANNER.NAME=VALUE",
                   help="a planner parameter for one planner (repeatable)")
    p.add_argument("--sample", type=int, default=None, help="run a seeded sample of N cases")
    p.add_argument("--seed", type=int, default=0, help="seed of sampling and of every planner")
    p.add_argument("--k", type=int, default=2, help="simultaneous failures of random-k")
    p.add_argument("--capacities", default="", help="capacity grid in Gbps, e.g. 25,50,100")
    p.add_argument("--collapse-symmetric", action="store_true",
                   help="run one case per symmetry class of links/switches (reported as such)")
    p.add_argument("--workers", type=int, default=None, help="local worker processes (default: all cores)")
    p.add_argument("--cluster", metavar="tcp://HOST:PORT", default=None,
                   help="run on this Dask scheduler (pip install 'inaplanner[cluster]')")
    p.add_argument("-o", "--output", required=True, help="result file (SQLite), appended and resumed")
    p.add_argument("--csv", default=None, help="also write the results as CSV here")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(func=cmd_sweep)


def _params(items: list[str], planners: list[str]) -> dict[str, dict[str, str]]:
    from inaplanner.errors import InaplannerError

    out: dict[str, dict[str, str]] = {}
    for item in items:
        key, sep, value = item.partition("=")
        planner, dot, name = key.partition(".")
        if not sep or not dot or not name:
            raise InaplannerError(f"--param {item!r}: expected PLANNER.NAME=VALUE")
        if planner not in planners:
            raise InaplannerError(f"--param {item!r}: planner {planner!r} is not in --planners")
        out.setdefault(planner, {})[name] = value
    return out


def cmd_sweep(args: argparse.Namespace) -> int:
    import json

    from inaplanner.cli.progress import cli_progress
    from inaplanner.errors import InaplannerError
    from inaplanner.io.formats import import_scenario
    from inaplanner.sweeps import SweepSpec, format_summary, parse_generators, run_sweep, summarise
    from inaplanner.sweeps.backends import DaskCluster, LocalPool
    from inaplanner.sweeps.store import write_csv

    planners = [p.strip() for p in args.planners.split(",") if p.strip()]
    from inaplanner.planners import get

    for name in planners:
        get(name)  # an unknown planner is refused before anything runs
    try:
        capacities = [float(x) for x in args.capacities.split(",") if x.strip()]
    except ValueError:
        raise InaplannerError(f"--capacities {args.capacities!r}: expected numbers like 25,50,100") from None
    spec = SweepSpec(
        scenario=import_scenario(args.scenario)[0],
        generators=parse_generators(args.cases),
        planners=planners,
        time_limit=args.time_limit,
        params={p: {"limit_kind": args.limit_kind, **v}
                for p, v in {p: _params(args.param, planners).get(p, {}) for p in planners}.items()},
        k=args.k,
        sample=args.sample,
        seed=args.seed,
        capacities=capacities,
        collapse=args.collapse_symmetric,
    )
    backend = DaskCluster(args.cluster) if args.cluster else LocalPool(args.workers)
    with cli_progress(args, "sweep") as progress:
        rows = run_sweep(spec, args.output, backend, progress)
    if args.csv:
        write_csv(rows, args.csv)
    summary = summarise(rows)
    if args.json:
        print(json.dumps(summary, indent=1))
    else:
        print(format_summary(summary))
    errors = sum(e["errors"] for e in summary["planners"].values())
    if errors:
        print(f"inaplanner: {errors} run(s) ended in an error; they are in {args.output} with their cause",
              file=sys.stderr)
    return 0
