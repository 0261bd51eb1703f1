"""ARO and its baselines on the paper's settings (ARO section IV). Prints figures; asserts nothing.

Settings (leaf-spine, 100 Gbps links, floor(20 %) of the switches programmable with 4 pipelines, the
PS of task i under leaf i and that leaf programmable, workers drawn at random as in section IV-A):

* ``SJST``   24 x 24 leaves/spines, 24 hosts per leaf (576 servers), one task of 200 workers;
* ``SJMT-t`` the same network, one job of 100 workers with t = 2, 3, 4 tasks (PSs);
* ``MJMT-j`` the same network, j = 2, 3, 4 jobs of 2 tasks and 100 workers each;
* ``L3..L5`` the scaling setting: 48 lambda switches (24 lambda leaves and spines), five jobs of
  100 lambda workers, one task each.

Per setting and planner it prints the mean objective, the ratio of means to ``random`` and
``aggtree`` (the paper reports about 3.3x and 3x for SJST), the gap to the best bound any planner
proved on that seed (mean and worst), seconds (mean and worst) and the statuses.

    python benchmarks/bench_aro.py                       # every setting, 3 seeds
    python benchmarks/bench_aro.py --settings SJST --seeds 10
    python benchmarks/bench_aro.py --build               # PuLP vs direct highspy model building
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from collections import Counter

from inaplanner.evaluate import evaluate
from inaplanner.model import Scenario
from inaplanner.planners import get, run_planner
from inaplanner.planners.solver import new_variable
from inaplanner.topologies import leaf_spine, mark_programmable, place_jobs, set_max_fan_in

SETTINGS = ["SJST", "SJMT-2", "SJMT-3", "SJMT-4", "MJMT-2", "MJMT-3", "MJMT-4", "L3", "L4", "L5"]


def build(setting: str, seed: int) -> Scenario:
    """One seeded instance of a setting."""
    if setting == "SJST":
        sc, jobs, tasks, workers = leaf_spine(24, 24, 24), 1, 1, 200
    elif setting.startswith("SJMT-"):
        sc, jobs, tasks, workers = leaf_spine(24, 24, 24), 1, int(setting[5:]), 100
    elif setting.startswith("MJMT-"):
        sc, jobs, tasks, workers = leaf_spine(24, 24, 24), int(setting[5:]), 2, 100
    elif setting.startswith("L"):
        lam = int(setting[1:])
        sc, jobs, tasks, workers = leaf_spine(24 * lam, 24 * lam, 24), 5, 1, 100 * lam
    else:
        raise SystemExit(f"unknown setting {setting!r} (one of {', '.join(SETTINGS)})")
    n = len(sc.switches())
    share = math.floor(0.2 * n) / n
    ps_leaves = [f"L{i + 1}" for i in range(jobs * tasks)]
    mark_programmable(sc, share, tiers=None, seed=seed, pipelines=4, include=ps_leaves)
    place_jobs(sc, jobs, tasks, workers, seed=seed)
    apply_fan_in(sc)
    sc.name = f"{setting} seed {seed}"
    return sc


#: max_fan_in on the programmable switches (CONTRACTS.md rule 5) for the run in progress; set by
#: ``--fan-in``. The paper has no fan-in limit (SJST merges up to 48 flows at the PS's leaf): 1024
#: reproduces it; 32 is the bundled data-plane programs' bitmap.
FAN_IN: int | None = 1024


def apply_fan_in(sc: Scenario) -> None:
    set_max_fan_in(sc, FAN_IN)


def run(settings: list[str], planners: list[str], seeds: int, time_limit: float) -> None:
    for setting in settings:
        results: dict[str, list[dict]] = {p: [] for p in planners}
        bounds: list[float | None] = []
        for seed in range(seeds):
            sc = build(setting, seed)
            seed_bounds = []
            for name in planners:
                t = time.perf_counter()
                plan = run_planner(get(name), sc, {"seed": seed, "time_limit": time_limit})
                seconds = time.perf_counter() - t
                ev = evaluate(sc, plan)
                assert ev.feasible, f"{name} returned an infeasible plan on {sc.name}"
                results[name].append({"obj": ev.objective, "s": seconds, "status": plan.planner.status,
                                      "bound": plan.bound})
                if plan.bound is not None:
                    seed_bounds.append(plan.bound)
                print(f"  {sc.name:<16} {name:<8} objective {ev.objective:9.4f}  "
                      f"bound {'-' if plan.bound is None else f'{plan.bound:9.4f}'}  "
                      f"{plan.planner.status:<9} {seconds:7.2f} s", file=sys.stderr, flush=True)
            bounds.append(min(seed_bounds) if seed_bounds else None)
        print(f"\n{setting} ({seeds} seeds)")
        print(f"  {'planner':<8} {'objective':>10} {'x random':>9} {'x aggtree':>10} {'gap mean':>9} "
              f"{'gap max':>8} {'s mean':>7} {'s max':>7}  status")
        mean = {p: statistics.fmean(r["obj"] for r in results[p]) for p in planners}
        for p in planners:
            rows = results[p]
            gaps = [(b - r["obj"]) / b for r, b in zip(rows, bounds, strict=True) if b]
            ratio_r = mean[p] / mean["random"] if "random" in mean and mean["random"] > 0 else float("nan")
            ratio_a = mean[p] / mean["aggtree"] if "aggtree" in mean and mean["aggtree"] > 0 else float("nan")
            status = ", ".join(f"{k} {v}" for k, v in Counter(r["status"] for r in rows).most_common())
            print(f"  {p:<8} {mean[p]:10.4f} {ratio_r:9.2f} {ratio_a:10.2f} "
                  f"{_pct(statistics.fmean(gaps) if gaps else None):>9} {_pct(max(gaps) if gaps else None):>8} "
                  f"{statistics.fmean(r['s'] for r in rows):7.2f} {max(r['s'] for r in rows):7.2f}  {status}")
        print(flush=True)


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.2f}%"


def build_speed(setting: str = "L5") -> None:
    """Time building the largest model (the joint feasibility model of the scaling setting) with
    the direct builder and with PuLP objects handed to HiGHS the way PuLP does it."""
    import pulp

    from inaplanner.planners.aro.formulation import feasibility_model
    from inaplanner.planners.aro.graph import task_graphs

    sc = build(setting, 0)
    graphs = task_graphs(sc)
    rates = [20.0] * len(graphs)
    t0 = time.perf_counter()
    m, _ = feasibility_model(sc, graphs, rates)
    t1 = time.perf_counter()
    import highspy
    import numpy as np

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = m.n_cols, m.n_rows
    lp.col_cost_ = np.asarray(m.cost)
    lp.col_lower_, lp.col_upper_ = np.asarray(m.lb), np.asarray(m.ub)
    lp.row_lower_, lp.row_upper_ = np.asarray(m.row_lo), np.asarray(m.row_hi)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    lp.a_matrix_.start_ = np.asarray(m.row_start, dtype=np.int32)
    lp.a_matrix_.index_ = np.asarray(m.row_idx, dtype=np.int32)
    lp.a_matrix_.value_ = np.asarray(m.row_val)
    h.passModel(lp)
    t2 = time.perf_counter()
    prob = pulp.LpProblem("same", pulp.LpMinimize)
    xs = [new_variable(prob, f"c{i}", m.lb[i], m.ub[i], pulp.LpInteger if m.integer[i] else pulp.LpContinuous)
          for i in range(m.n_cols)]
    for r in range(m.n_rows):
        a, b = m.row_start[r], m.row_start[r + 1]
        expr = pulp.LpAffineExpression([(xs[m.row_idx[k]], m.row_val[k]) for k in range(a, b)])
        lo, hi = m.row_lo[r], m.row_hi[r]
        if lo == hi:
            prob += expr == lo
        elif hi < 1e30:
            prob += expr <= hi
        else:
            prob += expr >= lo
    prob += pulp.lpSum([])
    t3 = time.perf_counter()
    solver = pulp.HiGHS(msg=False)
    prob.solverModel = highspy.Highs()
    prob.solverModel.setOptionValue("output_flag", False)
    solver.buildSolverModel(prob)
    t4 = time.perf_counter()
    print(f"{setting} joint feasibility model: {m.n_cols} columns, {m.n_rows} rows, {len(m.row_val)} nonzeros")
    print(f"  direct: build {t1 - t0:.2f} s + pass to HiGHS {t2 - t1:.2f} s")
    print(f"  PuLP:   build objects {t3 - t2:.2f} s + pass to HiGHS {t4 - t3:.2f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--settings", default=",".join(SETTINGS))
    ap.add_argument("--planners", default="aro,aro-acc,random,aggtree,grid,grid-aro-eval")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--build", action="store_true", help="only time model building (PuLP vs direct)")
    ap.add_argument("--fan-in", default="1024,32",
                    help="max_fan_in values of the programmable switches, one set of tables each "
                         "(default 1024, the paper's unlimited aggregation, then 32, the bundled "
                         "programs' bitmap)")
    args = ap.parse_args()
    if args.build:
        build_speed()
        return
    global FAN_IN
    for fan_in in (int(x) for x in args.fan_in.split(",")):
        FAN_IN = fan_in
        print(f"=== max_fan_in {fan_in} on every programmable switch ===", flush=True)
        run(args.settings.split(","), args.planners.split(","), args.seeds, args.time_limit)


if __name__ == "__main__":
    main()
