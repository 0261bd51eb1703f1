"""ESA's simulations (ESA §7.2-7.3) with inaplanner's memory-scheduling simulator (issue 5).

Prints figures next to the paper's; asserts nothing. Runs, on one switch (64 servers + PSs, 100 Gbps,
10 us RTT, 5 MB, 306-byte packets), with batch 8 (``tests/memsched`` shows it within 2 % of packet
granularity):

1. the 8 jobs x 8 workers preset (3 iterations) for DNN A, DNN B and A:B = 1:1 under SwitchML, ATP,
   ESA and the two straw men of §7.3: average JCT, ratios, memory utilisation (§7.3), PS fall-back
   traffic, preemptions; and how long the preset takes to simulate;
2. JCT vs number of jobs (8 workers each) and vs workers per job (8 jobs), Figs. 8 and 9;
3. the JCT no memory policy can beat (the same jobs with unlimited memory, see
   ``inaplanner.memsched.bound``) and so the largest speed-up any policy could have over SwitchML;
4. sensitivity (why the paper's ordering does or does not appear): less switch memory, a window
   that counts outstanding packets instead of sliding in order.

The window is ESA §5.1's: 60 KB initial, ATP's AIMD congestion control (the default ``atp`` window
model); every 8 x 8 table is also printed with the window capped at 60 KB (``cap60``, the earlier
model), and the ESA vs always-preempt comparison of Fig. 11 with the counts that explain it.
``--main-only`` runs the 8 x 8 tables, the floor and Fig. 11 only (no sweeps, no speed section).

    python benchmarks/bench_memsched.py [--quick] [--main-only] [--processes N] [--seeds K]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from inaplanner.cli.memsim import run_policies
from inaplanner.memsched.bound import lower_bound
from inaplanner.memsched.simulator import simulate
from inaplanner.memsched.workload import MB, preset, window_knobs

MAIN = ("switchml", "atp", "esa")
ALL = ("switchml", "atp", "esa", "always-preempt", "half-preempt")
FREE = "unlimited-memory"
BATCH = 8
KIND = {"dnn-a": "all A", "dnn-b": "all B", "dnn-ab": "A:B = 1:1"}


def _run(job: tuple[str, str, dict[str, Any]]) -> tuple[str, str, dict[str, Any], dict[str, Any]]:
    name, policy, knobs = job
    window = knobs.get("window", "atp")
    cfg = preset(name, **{k: v for k, v in knobs.items() if k != "window"}, **window_knobs(window))
    t0 = time.process_time()
    r = lower_bound(cfg) if policy == FREE else simulate(cfg, policy)
    cpu = time.process_time() - t0
    return name, policy, knobs, {"jct": r.avg_jct_s, "util": r.utilisation, "occ": r.occupancy,
                                 "fb_mb": r.ps_fallback_bytes / MB, "pre": r.preemptions,
                                 "coll": r.collisions, "coll_pk": r.collision_packets,
                                 "down": r.downgrades, "evict": r.evicted_packets,
                                 "rem_pk": r.reminded_packets, "rto": r.timeout_reminders,
                                 "wrem": r.worker_reminders, "ok": r.ok, "cpu": cpu}


def run_all(jobs: list[tuple[str, str, dict[str, Any]]], processes: int) -> list:
    if processes <= 1:
        return [_run(j) for j in jobs]
    with ProcessPoolExecutor(max_workers=processes) as pool:
        return list(pool.map(_run, jobs))


def key(knobs: dict[str, Any]) -> tuple:
    return tuple(sorted((k, v) for k, v in knobs.items() if k != "seed"))


def averaged(results: list, seeds: int) -> dict[tuple, dict[str, float]]:
    """(name, policy, knobs without seed) -> metrics averaged over seeds."""
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for name, policy, knobs, m in results:
        groups.setdefault((name, policy, key(knobs)), []).append(m)
    out = {}
    for k, ms in groups.items():
        out[k] = {f: statistics.mean(m[f] for m in ms)
                  for f in ("jct", "util", "occ", "fb_mb", "pre", "coll", "coll_pk", "down", "evict",
                            "rem_pk", "rto", "wrem", "cpu")}
        out[k]["ok"] = all(m["ok"] for m in ms)
        out[k]["n"] = len(ms)
    return out


def seeded(name: str, policies: tuple[str, ...], seeds: int, **knobs: Any) -> list:
    return [(name, p, {**knobs, "seed": s}) for p in policies for s in range(seeds)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer sweep points, 1 iteration in sweeps")
    ap.add_argument("--processes", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--seeds", type=int, default=1, help="seeds per point (default 1)")
    ap.add_argument("--main-only", action="store_true",
                    help="only the 8 x 8 tables (both window models), the floor and Fig. 11")
    ap.add_argument("--workload", action="append", choices=list(KIND),
                    help="with --main-only: this workload only (repeatable; default all three)")
    args = ap.parse_args()
    base = {"batch": BATCH}
    if args.main_only:
        main_tables(args, base, {k: KIND[k] for k in (args.workload or KIND)})
        return

    # ---- 0. how long the 8 x 8 preset takes -----------------------------------------------------
    print("== speed: the 8 jobs x 8 workers preset (DNN A, 3 iterations, batch 8) ==")
    cfg = preset("dnn-a", batch=BATCH)
    cpu = {}
    for p in MAIN:
        t0 = time.process_time()
        simulate(cfg, p)
        cpu[p] = time.process_time() - t0
    print("  CPU seconds per policy: " + ", ".join(f"{p} {cpu[p]:.1f}" for p in MAIN)
          + f"; sequential total {sum(cpu.values()):.1f} s")
    t0 = time.perf_counter()
    run_policies(cfg, list(MAIN), args.processes, bound=True)
    print(f"  wall clock of `inaplanner memsim dnn-a` (switchml, atp, esa and the unlimited-memory "
          f"run, {args.processes} processes): {time.perf_counter() - t0:.1f} s")

    # ---- 1. the 8 x 8 setting ------------------------------------------------------------------
    jobs = []
    for name in KIND:
        jobs += seeded(name, (*ALL, FREE), args.seeds, **base)
    sweep_jobs = [2, 4, 8] if args.quick else [2, 4, 6, 8]
    sweep_workers = [2, 4] if args.quick else [2, 4, 6]
    it = {"iterations": 1} if args.quick else {}
    for name in KIND:
        for n in sweep_jobs:
            if n != 8:
                jobs += seeded(name, MAIN, args.seeds, jobs=n, **base, **it)
        for w in sweep_workers:
            jobs += seeded(name, MAIN, args.seeds, workers_per_job=w, **base, **it)
        if it:
            jobs += seeded(name, MAIN, args.seeds, **base, **it)
    for mem in (0.25, 0.5, 1.0, 2.0):
        jobs += seeded("dnn-a", MAIN, args.seeds, memory_bytes=int(mem * MB), **base, iterations=1)
    jobs += seeded("dnn-a", ALL, args.seeds, window_mode="outstanding", **base, iterations=1)
    for name in KIND:
        jobs += seeded(name, ALL, args.seeds, window="cap60", **base)
    t0 = time.perf_counter()
    res = averaged(run_all(jobs, args.processes), args.seeds)
    print(f"\n({len(jobs)} simulations in {time.perf_counter() - t0:.0f} s, {args.processes} processes,"
          f" {args.seeds} seed(s) per point)")

    def get(name: str, policy: str, **knobs: Any) -> dict[str, float]:
        return res[(name, policy, key({**base, **knobs}))]

    print("\n== 8 jobs x 8 workers, 3 iterations: average JCT (ms) and memory utilisation ==")
    print(f"{'workload':10s} " + " ".join(f"{p:>15s}" for p in ALL) + "   checks")
    for name, label in KIND.items():
        row = [get(name, p) for p in ALL]
        print(f"{label:10s} " + " ".join(f"{m['jct'] * 1e3:8.3f} ({m['util']:.2f})" for m in row)
              + ("   ok" if all(m["ok"] for m in row) else "   FAILED"))
    print("  (utilisation in brackets: gradient bytes / line rate over communication time, §7.3)")

    print("\n== ratios in the 8 x 8 setting (measured vs the paper) ==")
    for name, label in KIND.items():
        s, a, e = (get(name, p) for p in MAIN)
        print(f"  {label:10s} JCT SwitchML/ESA {s['jct'] / e['jct']:.2f} (paper up to 1.89), "
              f"ATP/ESA {a['jct'] / e['jct']:.2f} (paper up to 1.35); "
              f"util ESA/SwitchML {e['util'] / s['util']:.2f}, ESA/ATP {e['util'] / a['util']:.2f} "
              f"(paper {'2.27 / 1.45' if name == 'dnn-a' else '1.9 / 1.28' if name == 'dnn-b' else '-'})")
        order = sorted(MAIN, key=lambda p: get(name, p)["jct"])
        print(f"  {'':10s} JCT order (best first): {' < '.join(order)}"
              f"   [paper: esa < atp < switchml]")
    print("\n== the floor: the same jobs with unlimited switch memory (no policy can beat it) ==")
    for name, label in KIND.items():
        free = get(name, FREE)["jct"]
        s = get(name, "switchml")["jct"]
        print(f"  {label:10s} unlimited memory {free * 1e3:.3f} ms; SwitchML is within "
              f"{(s / free - 1) * 100:.1f} % of it, so no memory policy can be more than "
              f"{s / free:.3f}x faster than SwitchML here (paper: ESA up to 1.89x)")

    print("\n== priority scheduling (§7.3, Fig. 11): JCT speed-up over ATP ==")
    for name, paper in (("dnn-a", "1.35 / 1.19 / 1.19"), ("dnn-ab", "1.22 / 1.05 / 1.05")):
        a = get(name, "atp")["jct"]
        ratios = " / ".join(f"{a / get(name, p)['jct']:.2f}" for p in ("esa", "always-preempt", "half-preempt"))
        print(f"  {KIND[name]:10s} ESA / always-preempt / half-preempt: {ratios}   (paper {paper})")
    print("\n== PS fall-back traffic (MB) and preemptions, 8 x 8 ==")
    for name, label in KIND.items():
        print(f"  {label:10s} " + ", ".join(
            f"{p} {get(name, p)['fb_mb']:.1f} MB / {get(name, p)['pre']:.0f}" for p in ALL))

    sweep_it = it or {}
    print("\n== JCT (ms) vs number of jobs, 8 workers each (Fig. 8) ==")
    for name, label in KIND.items():
        for n in sweep_jobs:
            kn = {"jobs": n, **sweep_it} if n != 8 else dict(sweep_it)
            s, a, e = (get(name, p, **kn) for p in MAIN)
            print(f"  {label:10s} {n} jobs: switchml {s['jct'] * 1e3:.3f}, atp {a['jct'] * 1e3:.3f}, "
                  f"esa {e['jct'] * 1e3:.3f}   SwitchML/ESA {s['jct'] / e['jct']:.2f}, "
                  f"ATP/ESA {a['jct'] / e['jct']:.2f}")
    print("\n== JCT (ms) vs workers per job, 8 jobs (Fig. 9) ==")
    for name, label in KIND.items():
        for w in [*sweep_workers, 8]:
            kn = {"workers_per_job": w, **sweep_it} if w != 8 else dict(sweep_it)
            s, a, e = (get(name, p, **kn) for p in MAIN)
            print(f"  {label:10s} {w} workers: switchml {s['jct'] * 1e3:.3f}, atp {a['jct'] * 1e3:.3f}, "
                  f"esa {e['jct'] * 1e3:.3f}   SwitchML/ESA {s['jct'] / e['jct']:.2f}, "
                  f"ATP/ESA {a['jct'] / e['jct']:.2f}")

    print("\n== sensitivity: 8 x 8 DNN A, 1 iteration ==")
    for mem in (0.25, 0.5, 1.0, 2.0):
        s, a, e = (get("dnn-a", p, memory_bytes=int(mem * MB), iterations=1) for p in MAIN)
        print(f"  memory {mem:4.2f} MB: switchml {s['jct'] * 1e3:.3f}, atp {a['jct'] * 1e3:.3f}, "
              f"esa {e['jct'] * 1e3:.3f} ms")
    print("  window counting outstanding packets (not in order): " + ", ".join(
        f"{p} {get('dnn-a', p, window_mode='outstanding', iterations=1)['jct'] * 1e3:.3f}" for p in ALL)
        + " ms")
    report_windows(get, KIND)


def report_windows(get: Any, kinds: dict[str, str]) -> None:
    """The 8 x 8 tables with the window capped at 60 KB, and Fig. 11 explained with counts."""
    print("\n== 8 x 8 with the window capped at 60 KB (--window cap60, the earlier model) ==")
    print(f"{'workload':10s} " + " ".join(f"{p:>15s}" for p in ALL))
    for name, label in kinds.items():
        print(f"{label:10s} " + " ".join(f"{get(name, p, window='cap60')['jct'] * 1e3:8.3f} "
                                         f"({get(name, p, window='cap60')['util']:.2f})"
                                         for p in ALL))
    print("\n== Fig. 11 explained: ESA vs always-preempt, 8 x 8, 3 iterations ==")
    print("  collisions, failed preemptions (packets to the PS), priority downgrades, evicted "
          "partials, reminder flushes, worker dupACK reminders, PS timeouts (RTO_min 1 ms)")
    for window in ("atp", "cap60"):
        kn = {} if window == "atp" else {"window": window}
        for name, label in kinds.items():
            a = get(name, "atp", **kn)["jct"]
            for p in ("esa", "always-preempt"):
                m = get(name, p, **kn)
                print(f"  [{window:5s}] {label:10s} {p:15s} JCT {m['jct'] * 1e3:6.3f} ms "
                      f"({a / m['jct']:.2f}x ATP): coll {m['coll']:8.0f}, to PS {m['coll_pk']:8.0f}, "
                      f"downgr {m['down']:7.0f}, evicted {m['evict']:7.0f}, flushed {m['rem_pk']:6.0f}, "
                      f"dupACK rem {m['wrem']:6.0f}, timeouts {m['rto']:5.0f}")


def main_tables(args: argparse.Namespace, base: dict[str, Any], kinds: dict[str, str]) -> None:
    """The 8 x 8 tables under both window models, the floor and the Fig. 11 comparison."""
    jobs = []
    for name in kinds:
        jobs += seeded(name, (*ALL, FREE), args.seeds, **base)
        jobs += seeded(name, ALL, args.seeds, window="cap60", **base)
    t0 = time.perf_counter()
    res = averaged(run_all(jobs, args.processes), args.seeds)
    print(f"({len(jobs)} simulations in {time.perf_counter() - t0:.0f} s, {args.processes} processes,"
          f" {args.seeds} seed(s) per point)")

    def get(name: str, policy: str, **knobs: Any) -> dict[str, float]:
        return res[(name, policy, key({**base, **knobs}))]

    print("\n== 8 jobs x 8 workers, 3 iterations, window atp (default): JCT (ms) and utilisation ==")
    print(f"{'workload':10s} " + " ".join(f"{p:>15s}" for p in ALL) + "   checks")
    for name, label in kinds.items():
        row = [get(name, p) for p in ALL]
        print(f"{label:10s} " + " ".join(f"{m['jct'] * 1e3:8.3f} ({m['util']:.2f})" for m in row)
              + ("   ok" if all(m["ok"] for m in row) else "   FAILED"))
    for name, label in kinds.items():
        s, a, e = (get(name, p) for p in MAIN)
        free = get(name, FREE)["jct"]
        print(f"  {label:10s} SwitchML/ESA {s['jct'] / e['jct']:.2f} (paper up to 1.89), ATP/ESA "
              f"{a['jct'] / e['jct']:.2f} (paper up to 1.35); unlimited memory {free * 1e3:.3f} ms, "
              f"SwitchML within {(s['jct'] / free - 1) * 100:.1f} %")
    print("\n== priority scheduling (Fig. 11): JCT speed-up over ATP, ESA / always / half ==")
    for window in ("atp", "cap60"):
        kn = {} if window == "atp" else {"window": window}
        for name, label in kinds.items():
            a = get(name, "atp", **kn)["jct"]
            ratios = " / ".join(f"{a / get(name, p, **kn)['jct']:.2f}"
                                for p in ("esa", "always-preempt", "half-preempt"))
            paper = {"dnn-a": "1.35 / 1.19 / 1.19", "dnn-ab": "1.22 / 1.05 / 1.05"}.get(name, "-")
            print(f"  [{window:5s}] {label:10s} {ratios}   (paper {paper})")
    report_windows(get, kinds)


if __name__ == "__main__":
    main()
