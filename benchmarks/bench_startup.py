"""Start-up time of the command line (issue 12, item 6): whole processes, median of several runs.

Each row starts a fresh interpreter, as a user's shell does, and times it until it exits:

* ``inaplanner --version`` (target: at most 0.25 s);
* ``inaplanner --help`` (builds the whole parser: every command module is imported);
* ``inaplanner validate SAMPLE`` (reads and checks the bundled fat-tree sample; no solver);
* ``inaplanner planners`` (lists the planners: imports them, and so PuLP and highspy);
* for reference, a bare ``python -c pass`` and ``python -c "import highspy, numpy"``.

Asserts nothing; prints a table (seconds: median, min, max of ``--runs`` runs).

    python benchmarks/bench_startup.py [--runs N]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

from inaplanner import SAMPLES

TARGET_VERSION_S = 0.25


def cases() -> list[tuple[str, list[str]]]:
    py = sys.executable
    sample = str(SAMPLES / "fat_tree_k4.json")
    return [
        ("python -c pass", [py, "-c", "pass"]),
        ('python -c "import highspy, numpy"', [py, "-c", "import highspy, numpy"]),
        ("inaplanner --version", [py, "-m", "inaplanner", "--version"]),
        ("inaplanner --help", [py, "-m", "inaplanner", "--help"]),
        ("inaplanner validate fat_tree_k4.json", [py, "-m", "inaplanner", "validate", sample]),
        ("inaplanner planners", [py, "-m", "inaplanner", "planners"]),
    ]


def time_process(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=9, help="runs per command (default 9)")
    args = ap.parse_args()
    rows = []
    for label, argv in cases():
        time_process(argv)  # warm the file cache (and .pyc files) first
        times = [time_process(argv) for _ in range(max(1, args.runs))]
        rows.append((label, statistics.median(times), min(times), max(times)))
    width = max(len(r[0]) for r in rows)
    bare = rows[0][1]  # the interpreter alone: what no program can save
    print(f"{'command':<{width}}  {'median s':>8}  {'min s':>6}  {'max s':>6}  {'over python':>11}")
    for label, med, lo, hi in rows:
        print(f"{label:<{width}}  {med:8.3f}  {lo:6.3f}  {hi:6.3f}  {med - bare:11.3f}")
    version = next(r[1] for r in rows if r[0] == "inaplanner --version")
    reference = next(r[1] for r in rows if "highspy" in r[0])
    verdict = "meets" if version <= TARGET_VERSION_S else "MISSES"
    print(f"\n--version: {version:.3f} s median, {version / reference:.2f} x a bare "
          f"'import highspy, numpy'; {verdict} the {TARGET_VERSION_S} s target")


if __name__ == "__main__":
    main()
