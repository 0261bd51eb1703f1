"""Planners at datacenter scale (issue 13): objective, bound, gap, wall and CPU seconds, peak memory.

Instances (``--sizes``):

* ``ft8``, ``ft16``, ``ft24``, ``ft32`` (and any ``ftK``: ``ft64``): fat-tree k = 8 .. 32 (100 Gbps links), 20 % of all switches
  programmable (drawn with the seed) with 4 pipelines, 2 jobs x 2 tasks (PSs), ``--workers`` workers
  per job (50, 200, 500, 1000), placed as ARO section V-A does (``place_jobs``: the PS of task i under
  leaf i, that leaf programmable, workers drawn at random). This is exactly
  ``inaplanner generate fat-tree --k K --programmable 0.2 --pipelines 4 --jobs 2 --tasks-per-job 2
  --workers-per-job W --seed S``.
* ``L3``, ``L4``, ``L5``: the ARO paper's scaling setting (``benchmarks/bench_aro.py``'s ``build``:
  leaf-spine 24 lambda x 24 lambda, 24 hosts per leaf, five jobs of 100 lambda workers).

Every instance gets ``max_fan_in`` = ``--fan-in`` (default: null, i.e. the bundled programs' 32) on its
programmable switches. Each (instance, planner) runs in a child process; its peak memory is the
child's maximum resident set size (``os.wait4``), its times are the planner run's wall and CPU
seconds (scenario building excluded). ``gap`` is (bound - objective) / bound with the planner's own
bound: ARO's bounds every plan; GRID's (Eq. (1)'s LP) and InArt's (Eq. (5) for its paths and split)
bound only plans of their own form.

``grid-authors`` is the GRID authors' method as the paper prints it (:func:`inaplanner.planners.grid.
authors_rgria`): Eq. (1)'s LP relaxation with every worker's x and r variables, the solver's
optimum, one randomized rounding (Alg. 1), on the same candidates (up-down on a Clos); for each
instance the table gives GRID's default CPU seconds over it.

A planner name may carry parameters: ``grid:links=ignore:rounds=1``.

    python benchmarks/bench_scale.py --sizes ft8,ft16 --workers 50 --seeds 1 --time-limit 60
    python benchmarks/bench_scale.py --sizes L3,L4,L5 --seeds 1 --planners aro,grid,inart,atp,random
    python benchmarks/bench_scale.py --sizes ft8 --workers 50 --seeds 0,1,2 --planners grid,grid-authors \
        --repeat 5                              # medians: this ratio moves by 0.1 between runs
    python benchmarks/bench_scale.py --paths      # our k shortest paths vs networkx's
    python benchmarks/bench_scale.py --speed      # this machine against the README's reference

Every ARO figure ends at its time limit, so a machine that does less in a CPU second gives worse
figures (docs/scale.md, round 27). ``--speed`` times a fixed amount of the work ARO's checks do
(:func:`speed_workload`) and prints it beside the figure of the README's reference machine
(round 27's), against which the README states each figure's machine speed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_PLANNERS = "aro,grid,grid-authors,inart,atp,random"


def unknown_size(size: str) -> str | None:
    """Why ``size`` names no instance this benchmark builds, or None when it names one."""
    if size[:2] == "ft" and size[2:].isdigit() or size[:1] == "L" and size[1:].isdigit():
        return None
    return f"unknown size {size!r}: ft8, ft16, ft24, ft32 (any ftK), L3, L4, L5"


def build(size: str, workers: int, seed: int, fan_in: int | None):
    from inaplanner.topologies import fat_tree, mark_programmable, place_jobs, set_max_fan_in

    if (why := unknown_size(size)) is not None:
        raise SystemExit(why)
    if size.startswith("ft"):
        sc = fat_tree(int(size[2:]))
        mark_programmable(sc, 0.2, pipelines=4, seed=seed)
        place_jobs(sc, 2, 2, workers, seed=seed)
        sc.name = f"{size} w{workers} seed {seed}"
    else:
        sys.path.insert(0, HERE)
        import bench_aro

        sc = bench_aro.build(size, seed)
    set_max_fan_in(sc, fan_in)
    return sc


def child(spec: dict) -> None:
    """Run one planner on one instance and print one JSON line."""
    import warnings

    warnings.filterwarnings("ignore")
    # run_planner's import of the formats (schema and hashing, ~0.1 s) is not planning time: the
    # CLI and the GUI have it loaded already, and grid-authors (called directly below) never pays it
    import inaplanner.io.native  # noqa: F401
    from inaplanner.evaluate import evaluate
    from inaplanner.planners import get, run_planner

    sc = build(spec["size"], spec["workers"], spec["seed"], spec["fan_in"])
    name, _, rest = spec["planner"].partition(":")
    params = dict(kv.split("=", 1) for kv in rest.split(":") if kv)
    # the planner registry (importing every planner module, scanning plug-ins) is loaded before
    # the clock starts, as in the CLI and the GUI; neither method pays for imports
    from inaplanner.planners.grid import authors_rgria

    planner = None if name == "grid-authors" else get(name)
    wall, cpu = time.perf_counter(), time.process_time()
    if planner is None:
        plan, _ = authors_rgria(sc, seed=spec["seed"])
        status, plan_params = "heuristic", {}
    else:
        plan = run_planner(planner, sc, {"seed": spec["seed"], "time_limit": spec["time_limit"],
                                         "limit_kind": spec["limit_kind"], **params})
        status, plan_params = plan.planner.status, plan.planner.params
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    ev = evaluate(sc, plan)
    keep = ("plan_source", "tie_break", "rounded_objective", "repaired_objective",
            "atp_same_routes_objective", "fallback_objective", "lp_objective", "stopped")
    print(json.dumps({
        "objective": ev.objective, "bound": plan.bound, "status": status, "wall": wall, "cpu": cpu,
        "valid": not ev.errors and not ev.violations,
        "breaks": (ev.errors + [str(v) for v in ev.violations])[:2],
        "params": {k: plan_params[k] for k in keep if k in plan_params},
    }), flush=True)


def run_child(spec: dict, timeout: float) -> dict:
    """Run :func:`child` in a fresh process; its peak memory is its own maximum resident set size
    (``os.wait4``'s rusage of that child), killed after ``timeout`` seconds. A child that fails
    gives the status ``error: `` and the last line it wrote to stderr (an unknown planner, say)."""
    import tempfile
    import threading

    with tempfile.TemporaryFile("w+") as err:  # a file, not a pipe: the child never blocks on it
        proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--child", json.dumps(spec)],
                                stdout=subprocess.PIPE, stderr=err, text=True)
        start = time.perf_counter()
        timer = threading.Timer(timeout, proc.kill)
        timer.start()
        assert proc.stdout is not None
        out = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
        timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        why = ([ln.strip() for ln in err.read().splitlines() if ln.strip()] or [""])[-1]
    peak_mb = usage.ru_maxrss / 1024  # KiB on Linux
    line = out.strip().splitlines()[-1] if out.strip() else ""
    if not line:
        return {"status": "killed" if proc.returncode < 0 else f"error: {why}" if why else "error",
                "wall": time.perf_counter() - start, "peak_mb": peak_mb}
    res = json.loads(line)
    res["peak_mb"] = peak_mb
    return res


def fmt(x: object, spec: str = ".4g") -> str:
    return "-" if x is None else format(x, spec) if isinstance(x, (int, float)) else str(x)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="ft8,ft16,ft24,ft32,L3,L4,L5")
    ap.add_argument("--workers", default="50,200,500,1000", help="workers per job (fat-trees)")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--planners", default=DEFAULT_PLANNERS)
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--limit-kind", default="wall", choices=("wall", "cpu"))
    ap.add_argument("--fan-in", type=int, default=None, help="max_fan_in (default null = 32)")
    ap.add_argument("--repeat", type=int, default=1,
                    help="runs of each planner per instance, in turn (A B A B ...); the row is the "
                         "run with the median CPU seconds, the GRID ratio the median of the pairs")
    ap.add_argument("--paths", action="store_true", help="time k shortest paths: ours vs networkx")
    ap.add_argument("--speed", action="store_true",
                    help="time a fixed amount of ARO's work against the README's machine")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(json.loads(args.child))
        return
    if args.paths:
        paths_benchmark()
        return
    if args.speed:
        speed_benchmark()
        return
    planners = args.planners.split(",")
    for size in args.sizes.split(","):  # here, not in the child, where the message would be lost
        if (why := unknown_size(size)) is not None:
            ap.error(why)
    print(f"{'instance':<20} {'planner':<28} {'objective':>10} {'bound':>9} {'gap':>7} {'wall s':>7} "
          f"{'cpu s':>7} {'peak MB':>8}  status / source", flush=True)
    for size in args.sizes.split(","):
        for workers in ([int(w) for w in args.workers.split(",")] if size.startswith("ft") else [0]):
            for seed in [int(s) for s in args.seeds.split(",")]:
                runs: dict[str, list[dict]] = {name: [] for name in planners}
                for _ in range(max(args.repeat, 1)):  # in turn, so a drift of the machine hits all
                    for name in planners:
                        spec = {"size": size, "workers": workers, "seed": seed, "planner": name,
                                "time_limit": args.time_limit, "limit_kind": args.limit_kind,
                                "fan_in": args.fan_in}
                        runs[name].append(run_child(spec, timeout=3 * args.time_limit + 300))
                rows = {name: median_run(rs) for name, rs in runs.items()}
                label = f"{size}" + (f" w{workers}" if workers else "") + f" s{seed}"
                for name, r in rows.items():
                    obj = r.get("objective")
                    own = r.get("bound")  # each planner's gap to its own proven bound
                    gap = (own - obj) / own if own and obj is not None else None
                    src = r.get("params", {}).get("plan_source", "")
                    print(f"{label:<20} {name:<28} {fmt(obj):>10} {fmt(r.get('bound')):>9} "
                          f"{fmt(None if gap is None else 100 * gap, '.1f') + ('%' if gap is not None else ''):>7} "
                          f"{fmt(r.get('wall'), '.1f'):>7} {fmt(r.get('cpu'), '.1f'):>7} "
                          f"{fmt(r.get('peak_mb'), '.0f'):>8}  {r.get('status')}"
                          f"{' (INVALID: ' + str(r.get('breaks')) + ')' if r.get('valid') is False else ''}"
                          f"{' / ' + src if src else ''}", flush=True)
                if "grid" in runs and "grid-authors" in runs:
                    ratios = sorted(g.get("cpu", float("nan")) / a["cpu"]
                                    for g, a in zip(runs["grid"], runs["grid-authors"], strict=True)
                                    if a.get("cpu"))
                    if ratios:
                        spread = f"  (pairs: {ratios[0]:.2f}-{ratios[-1]:.2f})" if len(ratios) > 1 else ""
                        print(f"{label:<20} {'grid / grid-authors CPU':<28} "
                              f"{ratios[(len(ratios) - 1) // 2]:10.2f}{spread}", flush=True)


def median_run(runs: list[dict]) -> dict:
    """The run with the median CPU seconds (the lower one of an even count), so its objective,
    status and memory are those of one real run."""
    timed = sorted(runs, key=lambda r: r.get("cpu", float("inf")))
    return timed[(len(timed) - 1) // 2]


#: :func:`speed_workload`'s median CPU seconds on the README's reference machine (round 27's
#: 2-core AMD EPYC machine, idle): the README gives each figure's machine speed against it.
README_SPEED_SECONDS = 3.46
#: The columns of the workload's model: another count means another amount of work, and the
#: figure above no longer compares.
SPEED_COLUMNS = 33139


def speed_workload() -> tuple[float, int]:
    """CPU seconds of a fixed amount of ARO's work, the same on every machine: the unfolded graphs
    of the lambda = 3 setting (seed 0, the 32-flow fan-in), its joint feasibility model with every
    task at 50 Gbps (33,139 columns; Python) and that model's LP relaxation by interior point
    (HiGHS; a fixed number of iterations), the step a probe repeats. Returns the CPU seconds and
    the model's columns."""
    from inaplanner.planners.aro.formulation import feasibility_model
    from inaplanner.planners.aro.graph import task_graphs

    sc = build("L3", 0, 0, None)
    cpu = time.process_time()
    graphs = task_graphs(sc, sc.tasks())
    m, _ = feasibility_model(sc, graphs, [50.0] * len(graphs))
    m.solve(presolve=False, relax=True, ipm=True)
    return time.process_time() - cpu, m.n_cols


def speed_benchmark(runs: int = 3) -> None:
    """The median of ``runs`` :func:`speed_workload` runs, each in a fresh process, against the
    README's reference machine."""
    import statistics

    code = f"import sys; sys.path.insert(0, {HERE!r}); import bench_scale; print(*bench_scale.speed_workload())"
    got = []
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        seconds, columns = out.split()[-2:]
        if int(columns) != SPEED_COLUMNS:
            raise SystemExit(f"the speed workload has {columns} columns, not {SPEED_COLUMNS}: "
                             "its figure no longer compares with the README's")
        got.append(float(seconds))
    mid = statistics.median(got)
    print(f"speed workload: {mid:.2f} CPU s (median of {runs}: {', '.join(f'{g:.2f}' for g in got)}); "
          f"the README's reference machine (round 27's): {README_SPEED_SECONDS:.2f} s, so this machine does "
          f"{README_SPEED_SECONDS / mid:.2f} times its work in a CPU second", flush=True)


def paths_benchmark() -> None:
    """k = 4 shortest simple paths between 300 random host pairs of a fat-tree k=8, our best-first
    search vs networkx's shortest_simple_paths (on the graph with the other hosts removed, so that
    hosts never forward), both without the up-down rule; then ours with it."""
    import itertools
    import random

    import networkx as nx

    from inaplanner.planners.paths import Paths
    from inaplanner.topologies import fat_tree

    sc = fat_tree(8)
    rng = random.Random(0)
    hosts = [h.id for h in sc.hosts()]
    pairs = [tuple(rng.sample(hosts, 2)) for _ in range(300)]
    g = nx.Graph()
    g.add_edges_from((lk.a, lk.b) for lk in sc.links)
    switches = [s.id for s in sc.switches()]
    p = Paths(sc, updown=False)
    t = time.perf_counter()
    ours = [p._best_first(a, b, 0, (0, 1), frozenset(), 4, False) for a, b in pairs]
    t_ours = time.perf_counter() - t
    t = time.perf_counter()
    for a, b in pairs:
        p.k_shortest(a, b, 4)
    t_used = time.perf_counter() - t
    t = time.perf_counter()
    theirs = []
    for a, b in pairs:
        sub = g.subgraph([*switches, a, b])
        gen = nx.shortest_simple_paths(sub, a, b)
        theirs.append(list(itertools.islice(gen, 4)))
    t_nx = time.perf_counter() - t
    same = all([len(x) for x in o] == [len(x) for x in n] for o, n in zip(ours, theirs, strict=True))
    pu = Paths(sc)
    t = time.perf_counter()
    for a, b in pairs:
        pu.k_shortest(a, b, 4)
    t_ud = time.perf_counter() - t
    print(f"k=4 shortest paths, 300 host pairs, fat-tree k=8: best-first {t_ours:.3f} s, networkx "
          f"{t_nx:.3f} s (same path lengths: {same}); Paths.k_shortest off Clos (networkx)"
          f" {t_used:.3f} s; up-down best-first {t_ud:.3f} s")


if __name__ == "__main__":
    main()
