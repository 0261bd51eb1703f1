"""Every single-link failure of a fat-tree k=8, per planner, on a local pool and on a Dask cluster.

    python benchmarks/bench_sweep.py                      # k=8, random + aro (10 s), all parts
    python benchmarks/bench_sweep.py --k 4 --planners random --parts local
    python benchmarks/bench_sweep.py --planners aro --sample 20 --parts local,dask

Parts:
- ``collapse``: cases and wall time with symmetry collapsing on and off (local pool, 2 workers).
- ``local``: the full sweep with 1 and 2 worker processes (speed-up).
- ``dask``: the same on a Dask cluster of one scheduler and two single-threaded workers started on
  127.0.0.1 by this script (overhead per case against the local pool with 2 workers).

Fat-tree k=8: 128 hosts, 80 switches, 384 links; 2 jobs x 2 tasks x 16 workers, 20 % programmable,
4 pipelines, seed 1. Prints one table; wall seconds are whole-sweep times on this machine.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from inaplanner.sweeps import SweepSpec, run_sweep, summarise
from inaplanner.sweeps.backends import DaskCluster, LocalPool
from inaplanner.topologies import fat_tree, mark_programmable, place_jobs


def scenario(k: int):
    sc = fat_tree(k)
    mark_programmable(sc, 0.2, seed=1, pipelines=4)
    place_jobs(sc, jobs=2, tasks_per_job=2, workers_per_job=max(4, k * 2), seed=1)
    sc.validate()
    return sc


def timed(spec: SweepSpec, backend, out: Path) -> tuple[float, list[dict]]:
    if out.exists():
        out.unlink()
    t = time.perf_counter()
    rows = run_sweep(spec, str(out), backend)
    return time.perf_counter() - t, rows


def start_dask(tmp: Path) -> tuple[str, list[subprocess.Popen]]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    exe = str(Path(sys.executable).with_name("dask"))
    addr = f"tcp://127.0.0.1:{port}"
    log = open(tmp / "dask.log", "wb")  # noqa: SIM115
    procs = [subprocess.Popen([exe, "scheduler", "--host", "127.0.0.1", "--port", str(port),
                               "--no-dashboard"], stdout=log, stderr=log, start_new_session=True)]
    procs += [subprocess.Popen([exe, "worker", addr, "--nthreads", "1", "--no-nanny", "--no-dashboard",
                                "--host", "127.0.0.1"], stdout=log, stderr=log, start_new_session=True)
              for _ in range(2)]
    from distributed import Client

    for _ in range(180):
        try:
            with Client(addr, timeout=5) as c:
                if len(c.scheduler_info()["workers"]) >= 2:
                    return addr, procs
        except OSError:
            pass
        time.sleep(0.5)
    raise SystemExit("the Dask cluster did not start")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--k", type=int, default=8)
    ap.add_argument("--planners", default="random,aro")
    ap.add_argument("--time-limit", type=float, default=10.0)
    ap.add_argument("--parts", default="collapse,local,dask")
    ap.add_argument("--sample", type=int, default=None, help="a seeded sample of N links")
    args = ap.parse_args()
    sc = scenario(args.k)
    planners = args.planners.split(",")
    parts = args.parts.split(",")
    tmp = Path(tempfile.mkdtemp(prefix="bench-sweep-"))
    print(f"fat-tree k={args.k}: {len(sc.links)} links, {len(sc.switches())} switches, "
          f"planners {', '.join(planners)}, time limit {args.time_limit:g} s, {os.cpu_count()} cores")
    print(f"{'run':<36} {'cases':>6} {'runs':>6} {'wall s':>8} {'s/run':>7}")

    def row(label: str, spec: SweepSpec, backend) -> tuple[float, list[dict]]:
        wall, rows = timed(spec, backend, tmp / f"{label.replace(' ', '_')}.sqlite")
        cases = len({r["case_id"] for r in rows})
        print(f"{label:<36} {cases:>6} {len(rows):>6} {wall:>8.1f} {wall / max(len(rows), 1):>7.3f}",
              flush=True)
        return wall, rows

    spec = SweepSpec(sc, ["single-link"], planners, time_limit=args.time_limit, sample=args.sample)
    collapsed = SweepSpec(sc, ["single-link"], planners, time_limit=args.time_limit, collapse=True,
                          sample=args.sample)
    results = {}
    if "collapse" in parts:
        results["collapsed"] = row("collapsed, local 2 workers", collapsed, LocalPool(2))
    if "local" in parts:
        results["local1"] = row("all links, local 1 worker", spec, LocalPool(1))
        results["local2"] = row("all links, local 2 workers", spec, LocalPool(2))
        print(f"speed-up 2 vs 1 worker: {results['local1'][0] / results['local2'][0]:.2f}x")
    if "dask" in parts:
        addr, procs = start_dask(tmp)
        try:
            results["dask"] = row("all links, Dask 2 workers", spec, DaskCluster(addr))
        finally:
            for p in procs:
                os.killpg(p.pid, signal.SIGTERM)
            for p in procs:  # a worker whose scheduler is gone may keep retrying: make sure
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait(5)
        if "local2" in results:
            n = len(results["dask"][1])
            over = (results["dask"][0] - results["local2"][0]) / n
            print(f"Dask overhead per run vs local pool (2 workers): {over * 1000:+.0f} ms")
    for name, (_, rows) in results.items():
        s = summarise(rows)
        for p, e in s["planners"].items():
            print(f"{name:<10} {p:<8} no failure {e['baseline']:.4g}  worst {e['worst']:.0%}  "
                  f"p5 {e['p5']:.0%}  median {e['median']:.0%}  errors {e['errors']}")


if __name__ == "__main__":
    main()
