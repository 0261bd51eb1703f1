"""The scale benchmark refuses a size it cannot build in one line, before any run starts, and a
run that fails says why in its row (both messages used to be lost in the child process, and each
row said only ``error``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_scale.py"


def test_an_unknown_size_is_refused_by_name_before_any_run():
    out = subprocess.run([sys.executable, str(SCRIPT), "--sizes", "ft8,16", "--planners", "random"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    assert "unknown size '16'" in out.stderr
    assert out.stdout == ""  # no table header, no row: nothing ran


def test_a_run_that_fails_says_why_in_its_row():
    """A child that fails (here an unknown planner) puts its last stderr line in the status, and
    the other planners' rows still come."""
    out = subprocess.run([sys.executable, str(SCRIPT), "--sizes", "ft4", "--workers", "2", "--seeds", "1",
                          "--planners", "nosuch,random", "--time-limit", "5"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    rows = out.stdout.splitlines()[1:]
    nosuch = next(r for r in rows if " nosuch " in r)
    assert "error: " in nosuch and "unknown planner 'nosuch'" in nosuch
    assert any(" random " in r and "heuristic" in r for r in rows)


def test_the_speed_workload_is_the_amount_of_work_the_readmes_figure_was_measured_on():
    """``--speed`` compares this machine with the README's by a fixed amount of ARO's work: the
    lambda = 3 joint model with every task at 50 Gbps. A change to the graphs or the model that
    changes its size changes that work, and the README's figure would no longer compare."""
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        import bench_scale
    finally:
        sys.path.remove(str(SCRIPT.parent))
    seconds, columns = bench_scale.speed_workload()
    assert columns == bench_scale.SPEED_COLUMNS
    assert seconds > 0
