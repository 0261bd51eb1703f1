"""``inaplanner memsim``: compare aggregator-memory policies (SwitchML, ATP, ESA) on one switch.

    inaplanner memsim SCENARIO_OR_PRESET --policies switchml,atp,esa
        [--jobs N --workers-per-job M --memory-mb X --seed S] [--iterations K] [--batch B]
        [--window-mode in-order|outstanding] [--window atp|cap60] [--max-window-kb W]
        [--no-bound] [--json]

SCENARIO_OR_PRESET is a scenario file (the jobs attached to one programmable switch are simulated,
see :mod:`inaplanner.memsched.from_scenario`) or a preset of ESA §7.2: ``dnn-a``, ``dnn-b``,
``dnn-ab`` (8 jobs x 8 workers on one switch, 5 MB, 306-byte packets, 100 Gbps, 10 us RTT).
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

from inaplanner.cli.progress import cli_progress
from inaplanner.errors import InaplannerError
from inaplanner.progress import Progress
from inaplanner.views.fmt import fixed

if TYPE_CHECKING:
    from inaplanner.memsched.results import SimResult
    from inaplanner.memsched.workload import SimConfig

# inaplanner.memsched (numpy, networkx) is imported inside the functions (start-up time).

DESCRIPTION = textwrap.fill(
    "Simulate how the aggregator memory of one switch is shared by the jobs placed on it, "
    "under SwitchML's static split, ATP's first-come-first-serve hashing and ESA's "
    "preemptive priorities (ESA paper, §7.2), and print JCT, memory utilisation, PS "
    "fallback traffic and preemptions.", 79)


def _fill_help(p: argparse.ArgumentParser) -> None:
    """The presets and policies in ``memsim --help`` (read from memsched only when shown)."""
    from inaplanner.memsched.workload import POLICY_HELP, PRESETS

    p.description = (DESCRIPTION + "\n\npresets:\n"
                     + "\n".join(f"  {k:15s} {v}" for k, v in PRESETS.items()))
    p.epilog = "policies:\n" + "\n".join(f"  {k:15s} {v}" for k, v in POLICY_HELP.items())


def __getattr__(name: str) -> Any:  # BOUND, run_one: where they live, imported when asked for
    if name in ("BOUND", "run_one"):
        from inaplanner.memsched import runs

        return getattr(runs, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "memsim",
        help="simulate SwitchML / ATP / ESA aggregator-memory sharing on one switch",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.fill_help = _fill_help  # type: ignore[attr-defined]  # see inaplanner.cli.Parser
    p.add_argument("source", metavar="SCENARIO_OR_PRESET",
                   help="a scenario file or a preset (listed above)")
    p.add_argument("--policies", default="switchml,atp,esa",
                   help="comma-separated policies to compare (default: switchml,atp,esa)")
    p.add_argument("--jobs", type=int, default=None, help="preset only: number of jobs (default 8)")
    p.add_argument("--workers-per-job", type=int, default=None,
                   help="preset only: workers per job (default 8)")
    p.add_argument("--memory-mb", type=float, default=None,
                   help="switch memory for INA in MB (default: 5, or the switch's aggregators)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--iterations", type=int, default=3, help="training iterations (default 3)")
    p.add_argument("--batch", type=int, default=8,
                   help="packets per simulation event; 1 = packet granularity (default 8, "
                   "within 2 %% of packet granularity)")
    p.add_argument("--switch", default=None, help="scenario only: the switch to simulate")
    p.add_argument("--window-mode", choices=("in-order", "outstanding"), default="in-order",
                   help="in-order: the window slides on its first sequence (ESA §5.1, default); "
                   "outstanding: any result frees a window slot")
    p.add_argument("--window", choices=("atp", "cap60"), default="atp",
                   help="ATP's/ESA's window: atp = 60 KB initial window and ATP's AIMD congestion "
                   "control, no cap (ESA §5.1, default); cap60 = capped at 60 KB")
    p.add_argument("--max-window-kb", type=float, default=None,
                   help="cap of ATP's/ESA's congestion window in KB; 0 = no cap (default: the "
                   "--window model's)")
    p.add_argument("--no-bound", action="store_true",
                   help="skip the unlimited-memory run (the JCT no memory policy can beat)")
    p.add_argument("--processes", type=int, default=None,
                   help="policies simulated in parallel (default: CPU count)")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.set_defaults(func=run)


def _policies(text: str) -> list[str]:
    from inaplanner.memsched.workload import POLICIES

    names = [x.strip() for x in text.split(",") if x.strip()]
    if not names:
        raise InaplannerError("--policies: name at least one policy")
    bad = [x for x in names if x not in POLICIES]
    if bad:
        raise InaplannerError(f"--policies: unknown policy {bad[0]!r} (one of {', '.join(POLICIES)})")
    return list(dict.fromkeys(names))


def build_config(args: argparse.Namespace) -> SimConfig:
    """The simulation the command line asks for (a preset or a scenario file)."""
    from inaplanner.memsched.workload import MB, PRESETS, preset, window_knobs

    knobs: dict[str, Any] = {"seed": args.seed, "iterations": args.iterations, "batch": args.batch,
                             "window_mode": args.window_mode, **window_knobs(args.window)}
    if args.memory_mb is not None:
        if not args.memory_mb > 0:
            raise InaplannerError("--memory-mb must be > 0")
        knobs["memory_bytes"] = int(args.memory_mb * MB)
    if args.max_window_kb is not None:
        if args.max_window_kb < 0:
            raise InaplannerError("--max-window-kb must be >= 0 (0: no cap)")
        knobs["max_window_bytes"] = int(args.max_window_kb * 1000) or None
    path = Path(args.source)
    if path.exists():
        if args.jobs is not None or args.workers_per_job is not None:
            raise InaplannerError("--jobs and --workers-per-job apply to presets; a scenario brings its jobs")
        from inaplanner.io.native import load_scenario
        from inaplanner.memsched.from_scenario import config_from_scenario

        sc = load_scenario(path)
        mem = knobs.pop("memory_bytes", None)
        return config_from_scenario(sc, args.switch, memory_bytes=mem, **knobs)
    if args.source not in PRESETS:
        raise InaplannerError(
            f"{args.source}: no such scenario file, and not a preset ({', '.join(PRESETS)})")
    if args.switch is not None:
        raise InaplannerError("--switch applies to scenario files")
    return preset(args.source, jobs=8 if args.jobs is None else args.jobs,
                  workers_per_job=8 if args.workers_per_job is None else args.workers_per_job, **knobs)


def run_policies(config: SimConfig, policies: list[str], processes: int | None = None,
                 bound: bool = False, progress: Progress | None = None) -> dict[str, SimResult]:
    """Simulate each policy on ``config`` (and, with ``bound``, the unlimited-memory run under the
    name :data:`BOUND`), in parallel processes when there are several cores, reporting to
    ``progress`` (:func:`inaplanner.memsched.runs.run_many`)."""
    from inaplanner.memsched.runs import BOUND, run_many

    runs = [*policies, BOUND] if bound else list(policies)
    return run_many(config, runs, processes, progress)


def _ms(x: float) -> str:
    return "-" if x != x else fixed(x * 1e3, 3)  # x != x: nan


def format_table(config: SimConfig, results: dict[str, SimResult]) -> str:
    from inaplanner.memsched.bound import speedup_ceiling
    from inaplanner.memsched.runs import BOUND
    from inaplanner.memsched.workload import MB

    ref = results.get("esa")
    lines = [
        f"{len(config.jobs)} jobs, {sum(j.workers for j in config.jobs)} workers, "
        f"{config.n_aggregators} aggregators ({config.n_aggregators * config.payload_bytes / MB:.2f} MB), "
        f"{config.link_gbps:g} Gbps, RTT {config.rtt_s * 1e6:g} us, {config.iterations} iterations, "
        f"batch {config.batch}, seed {config.seed}",
        f"{'policy':16s} {'JCT ms':>9s} {'/ESA':>6s} {'util':>6s} {'occup':>6s} {'PS fb MB':>9s} "
        f"{'preempt':>8s} {'downgr':>7s} {'remind':>7s} {'timeout':>7s}  check",
    ]
    for name, r in results.items():
        if name == BOUND:
            continue
        ratio = f"{r.avg_jct_s / ref.avg_jct_s:.2f}" if ref and ref.avg_jct_s > 0 else "-"
        lines.append(
            f"{name:16s} {_ms(r.avg_jct_s):>9s} {ratio:>6s} {r.utilisation:6.3f} {r.occupancy:6.3f} "
            f"{r.ps_fallback_bytes / MB:9.3f} {r.preemptions:8d} {r.downgrades:7d} {r.reminders:7d} "
            f"{r.timeout_reminders:7d}  "
            + ("ok" if r.ok else f"FAILED ({r.value_errors} wrong, {r.double_counts} double, "
                                 f"{r.unfinished_tasks} unfinished)"))
    free = results.get(BOUND)
    if free is not None:
        lines.append(
            f"{BOUND:16s} {_ms(free.avg_jct_s):>9s}  <- no memory policy can beat this JCT here; "
            "the most any could gain: "
            + ", ".join(f"{name} {speedup_ceiling(r, free):.2f}x" for name, r in results.items()
                        if name != BOUND))
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    policies = _policies(args.policies)
    config = build_config(args)
    with cli_progress(args, "memsim") as progress:
        results = run_policies(config, policies, args.processes, bound=not args.no_bound,
                               progress=progress)
    from inaplanner.memsched.runs import BOUND

    if args.json:
        doc = {
            "config": {
                "jobs": [{"id": j.id, "workload": j.workload.name, "workers": j.workers}
                         for j in config.jobs],
                "aggregators": config.n_aggregators, "link_gbps": config.link_gbps,
                "rtt_s": config.rtt_s, "packet_bytes": config.packet_bytes,
                "iterations": config.iterations, "batch": config.batch, "seed": config.seed,
                "window_mode": config.window_mode, "max_window_bytes": config.max_window_bytes,
                "window_increase": config.window_increase, "loss_backoff": config.loss_backoff,
                **config.extra,
            },
            "results": {name: r.to_dict() for name, r in results.items() if name != BOUND},
            "unlimited_memory": results[BOUND].to_dict() if BOUND in results else None,
        }
        json.dump(doc, sys.stdout, indent=2, default=float)
        sys.stdout.write("\n")
    else:
        print(format_table(config, results))
    return 0 if all(r.ok for r in results.values()) else 1
