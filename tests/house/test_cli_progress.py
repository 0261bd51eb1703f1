"""The one progress protocol (inaplanner.progress) and how the CLI shows it: phase lines on a
pipe, a bar on a terminal, nothing with -q, Ctrl-C cancels with exit code 130, and the solver's
banner never reaches stdout."""

from __future__ import annotations

import io
import os
import re
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from inaplanner import SAMPLES
from inaplanner.cli.progress import TerminalProgress, describe
from inaplanner.errors import Cancelled
from inaplanner.progress import CancelToken, Progress, ProgressEvent, as_progress, current_progress

FAT_TREE_K4 = SAMPLES / "fat_tree_k4.json"


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "inaplanner", *args]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("COLUMNS", None)
    return env


# ------------------------------------------------------------------------------ the protocol


def test_span_maps_fractions_and_shares_cancel_and_watchers():
    p = Progress()
    seen: list[ProgressEvent] = []
    p.subscribe(seen.append)
    child = p.span(0.2, 0.6)
    grandchild = child.span(0.5, 1.0)
    child.update(0.5, "half", phase="solve")
    grandchild(1.0, "end")
    child(3.0, "over")  # clipped
    assert [round(e.fraction, 9) for e in seen] == [0.4, 0.6, 0.6]
    assert seen[0].phase == "solve" and seen[1].phase == "solve"  # kept until changed
    assert p.last.message == "over" and child.token is p.token is grandchild.token
    grandchild.cancel()
    assert p.cancelled and child.cancelled
    with pytest.raises(Cancelled):
        child.check()


def test_subscribe_and_unsubscribe():
    p = Progress()
    a: list[ProgressEvent] = []
    b: list[ProgressEvent] = []
    stop_a = p.subscribe(a.append)
    p.span(0.0, 0.5).subscribe(b.append)  # a child's watcher watches the whole
    p(0.1, "one")
    stop_a()
    stop_a()  # twice is harmless
    p(0.2, "two")
    assert [e.message for e in a] == ["one"]
    assert [e.message for e in b] == ["one", "two"]


def test_incumbent_and_bound_and_gap():
    p = Progress()
    p.update(0.5, phase="solve", incumbent=80.0, bound=100.0)
    p.update(0.6)  # omitted fields keep their value
    assert (p.last.incumbent, p.last.bound, p.last.phase) == (80.0, 100.0, "solve")
    assert p.last.gap == pytest.approx(0.2)
    assert ProgressEvent(incumbent=1.0).gap is None
    assert ProgressEvent(incumbent=1.0, bound=float("inf")).gap is None


def test_per_item_events_stand_alone_and_leave_the_overall_state():
    p = Progress()
    seen: list[ProgressEvent] = []
    p.subscribe(seen.append)
    p.update(0.5, "overall", phase="deploy")
    p.update(None, "3 updates", phase="write", node="S1", state="done")
    p.update(None, "", phase="build", node="S2", state="start")
    assert (seen[1].node, seen[1].phase, seen[1].state, seen[1].fraction) == ("S1", "write", "done", None)
    assert seen[2].message == "" and seen[2].node == "S2"
    assert (p.last.message, p.last.phase, p.last.node) == ("overall", "deploy", "")


def test_cancel_token_is_a_cancel_check():
    token = CancelToken()
    assert token() is False and not token.cancelled
    assert token.wait(0.01) is False
    threading.Timer(0.05, token.cancel).start()
    assert token.wait(10.0) is True
    assert token() is True
    with pytest.raises(Cancelled):
        token.check()
    p = Progress(token)
    assert p.token is token and p.cancelled


def test_as_progress_with_a_plain_callable_and_none():
    calls: list[tuple[float, str]] = []
    token = CancelToken()
    p = as_progress(lambda f, m: calls.append((f, m)), token)
    p(0.25, "a")
    p.update(message="b")
    p.update(0.5, "per switch", node="S1", state="start")  # per-item: not for a (f, m) callable
    assert calls == [(0.25, "a"), (0.25, "b")]
    assert p.token is token
    q = as_progress(None)
    q(0.5, "nobody listens")
    assert as_progress(q) is q


def test_current_progress_is_set_while_active():
    p = Progress()
    assert current_progress() is None
    with p.active():
        assert current_progress() is p
        inner = Progress()
        with inner.active():
            assert current_progress() is inner
        assert current_progress() is p
    assert current_progress() is None


def test_run_planner_activates_the_planners_progress():
    from inaplanner.planners.base import run_planner
    from inaplanner.planners.registry import get
    from inaplanner.topologies import aro_fig1

    p = Progress()
    seen: list[ProgressEvent] = []
    p.subscribe(seen.append)
    plan = run_planner(get("aro"), aro_fig1(), {"time_limit": 20}, p)
    assert plan.planner.status == "optimal"
    assert seen and seen[-1].fraction == 1.0
    assert current_progress() is None


@pytest.mark.parametrize("name", ["ecmp", "random", "aggtree"])
def test_the_baselines_report_each_task_they_route(name):
    """At fat-tree k=64 a baseline routes for seconds a task: it says which task, then the rates."""
    from inaplanner.planners.base import run_planner
    from inaplanner.planners.registry import get
    from inaplanner.topologies import fat_tree, mark_programmable, place_jobs

    sc = fat_tree(4)
    mark_programmable(sc, 0.5, seed=1)
    place_jobs(sc, 2, 2, 6, seed=1)
    p = Progress()
    seen: list[ProgressEvent] = []
    p.subscribe(seen.append)
    run_planner(get(name), sc, {}, p)
    steps = [(e.phase, e.message) for e in seen if e.phase in ("routes", "rates")]
    assert steps == [("routes", f"task {i} of 4: {t.job}/{t.ps}") for i, t in enumerate(sc.tasks(), 1)] + [
        ("rates", "fan-in limits and max-min rates")]
    fractions = [e.fraction for e in seen if e.phase in ("routes", "rates")]
    assert fractions == sorted(fractions) and fractions[-1] < 1.0


# ------------------------------------------------------------------------------ the terminal view


def test_lines_mode_one_line_per_phase_and_rate_limited_figures():
    p = Progress()
    out = io.StringIO()
    with TerminalProgress(p, out, mode="lines", label="plan x"):
        p.update(0.0, "building", phase="model")
        for i in range(200):  # a solver improving quickly: not 200 lines
            p.update(0.5, phase="solve", incumbent=float(i), bound=300.0 - i)
        p.update(0.9, "routes", phase="routes")
    lines = out.getvalue().splitlines()
    assert all(line.startswith("inaplanner: plan x: ") for line in lines)
    phases = [re.search(r"%\s+(\w+)", line).group(1) for line in lines]
    assert phases[0] == "model" and phases[1] == "solve" and "routes" in phases
    assert len(lines) <= 5
    assert "incumbent 0" in lines[1] and "bound 300" in lines[1]
    # how the solve ended, held back by the rate limit, comes before the next phase
    assert "% solve: building (incumbent 199, bound 101" in lines[-2] and phases[-1] == "routes"


def test_lines_mode_prints_the_figures_held_back_at_the_end():
    p = Progress()
    out = io.StringIO()
    with TerminalProgress(p, out, mode="lines"):
        p.update(0.5, phase="solve", incumbent=1.0, bound=10.0)
        p.update(0.5, phase="solve", incumbent=9.0, bound=10.0)  # within the rate limit
    lines = out.getvalue().splitlines()
    assert len(lines) == 2 and "incumbent 9" in lines[-1] and "gap 10.00 %" in lines[-1]


def test_off_mode_and_per_item_events_print_nothing():
    p = Progress()
    out = io.StringIO()
    with TerminalProgress(p, out, mode="off"):
        p(0.5, "x")
    with TerminalProgress(p, out, mode="lines"):
        p.update(None, "compiling", phase="build", node="S1", state="output")
    assert out.getvalue() == ""


def test_bar_mode_redraws_in_place_and_erases_itself():
    p = Progress()
    out = io.StringIO()
    with TerminalProgress(p, out, mode="bar", label="plan"):
        p.update(0.5, "solving", phase="solve", incumbent=50.0, bound=100.0)
    text = out.getvalue()
    assert text.startswith("\r") and "[############------------]  50%" in text
    assert "incumbent 50" in text and text.endswith("\r\x1b[K") and "\n" not in text


def test_a_line_said_during_the_bar_goes_above_it_and_the_bar_comes_back():
    p = Progress()
    out = io.StringIO()
    with TerminalProgress(p, out, mode="bar", label="deploy") as view:
        view.say("before the bar")
        p.update(0.25, "17/68 switches", phase="prepare")
        view.say("[C5] connect: failed — refused")
        drawn = out.getvalue()
    assert drawn.startswith("before the bar\n")
    bar = "\rdeploy [######------------------]  25% prepare: 17/68 switches"
    # the failure is a whole line of its own, then the same bar again below it
    after = drawn.split("\r\x1b[K[C5] connect: failed — refused\n", 1)
    assert len(after) == 2 and after[0].startswith("before the bar\n" + bar)
    assert after[1].startswith(bar)
    quiet = io.StringIO()
    with TerminalProgress(p, quiet, mode="off") as view:
        view.say("a warning")
        view.say("inaplanner: SIGINT: cancelling", always=True)
    assert quiet.getvalue() == "inaplanner: SIGINT: cancelling\n"


def test_describe():
    ev = ProgressEvent(0.5, "solving", "solve", incumbent=1.0, bound=2.0)
    assert describe(ev) == "solve: solving (incumbent 1, bound 2, gap 50.00 %)"
    assert describe(ProgressEvent(message="x", phase="x")) == "x"


# ------------------------------------------------------------------------------ the real command


def test_plan_shows_phases_on_stderr_and_only_the_result_on_stdout(tmp_path):
    out = tmp_path / "plan.json"
    run = subprocess.run(_cli("plan", str(FAT_TREE_K4), "--planner", "aro", "-o", str(out)),
                         capture_output=True, text=True, timeout=300, env=_env())
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith("planner aro: objective (MJMT) ")
    assert all(line.startswith("  job ") for line in lines[1:-1]) and len(lines) == 4
    assert lines[-1] == f"wrote {out}"
    assert "HiGHS" not in run.stdout and "Running" not in run.stdout
    err = run.stderr.splitlines()
    assert len(err) >= 3 and all(line.startswith("inaplanner: plan aro: ") for line in err)
    assert len({re.search(r"%\s+([\w ]+?)[:(\[]", line).group(1) for line in err}) >= 3
    assert any("incumbent" in line and "bound" in line for line in err)


def test_quiet_prints_nothing_on_stderr(tmp_path):
    common = [str(FAT_TREE_K4), "--planner", "grid", "-o", str(tmp_path / "p.json")]
    for args in (["-q", "plan", *common], ["plan", *common, "--quiet"]):  # before or after
        run = subprocess.run(_cli(*args), capture_output=True, text=True, timeout=300, env=_env())
        assert run.returncode == 0, run.stderr
        assert run.stderr == "" and run.stdout.startswith("planner grid: objective")


def test_compare_and_memsim_report_progress(tmp_path):
    run = subprocess.run(_cli("compare", str(FAT_TREE_K4), "--planners", "ecmp,grid"),
                         capture_output=True, text=True, timeout=300, env=_env())
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[0].split()[0] == "planner"
    assert any("compare:" in line and "ecmp" in line for line in run.stderr.splitlines())
    assert any("compare:" in line and "grid" in line for line in run.stderr.splitlines())
    run = subprocess.run(_cli("memsim", "dnn-a", "--jobs", "2", "--workers-per-job", "2",
                              "--iterations", "1", "--policies", "switchml,esa", "--processes", "2"),
                         capture_output=True, text=True, timeout=300, env=_env())
    assert run.returncode == 0, run.stderr
    err = run.stderr.splitlines()
    assert err and all(line.startswith("inaplanner: memsim: ") for line in err)
    assert any("simulate" in line and "100%" in line for line in err)
    assert "esa" in run.stdout and "inaplanner:" not in run.stdout


def test_a_terminal_gets_a_bar(tmp_path):
    master, slave = os.openpty()
    try:
        proc = subprocess.Popen(
            _cli("plan", str(FAT_TREE_K4), "--planner", "grid", "-o", str(tmp_path / "p.json")),
            stdout=subprocess.PIPE, stderr=slave, stdin=subprocess.DEVNULL, env=_env())
        os.close(slave)
        slave = -1
        got = b""
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(master, 4096)
                except OSError:  # EIO: the child closed the terminal
                    break
                if not chunk:
                    break
                got += chunk
            elif proc.poll() is not None:
                break
        stdout = proc.stdout.read().decode()
        assert proc.wait(60) == 0
    finally:
        os.close(master)
        if slave >= 0:
            os.close(slave)
    text = got.decode(errors="replace")
    assert "\r" in text and re.search(r"\[#*-*\] +\d+%", text), text
    assert "\n" not in text.replace("\r\n", "").strip("\n")  # redrawn in place, no lines
    assert stdout.startswith("planner grid: objective")


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_cancels_and_exits_130(tmp_path):
    scenario = tmp_path / "k8.json"
    subprocess.run(_cli("generate", "fat-tree", "--k", "8", "--jobs", "6", "--workers-per-job", "16",
                        "-o", str(scenario)), check=True, capture_output=True, timeout=120)
    out = tmp_path / "plan.json"
    proc = subprocess.Popen(
        _cli("plan", str(scenario), "--planner", "aro", "--param", "exact=always", "--param", "gap=0",
             "--time-limit", "120", "-o", str(out)),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
    first = proc.stderr.readline()  # the work has started (the Ctrl-C handler is in place)
    assert first.startswith("inaplanner: plan aro: ")
    proc.send_signal(signal.SIGINT)
    try:
        code = proc.wait(60)
    finally:
        if proc.poll() is None:
            proc.kill()
    rest = proc.stderr.read()
    assert code == 130, rest
    assert "inaplanner: cancelled" in rest and "Traceback" not in rest
    assert proc.stdout.read() == "" and not Path(out).exists()


def test_log_flags_route_the_solver_log_to_stderr_never_stdout(tmp_path):
    common = ["plan", str(FAT_TREE_K4), "--planner", "grid", "-o", str(tmp_path / "p.json")]
    run = subprocess.run(_cli("-vv", *common), capture_output=True, text=True, timeout=300, env=_env())
    assert run.returncode == 0, run.stderr
    assert "inaplanner: INFO: inaplanner.cli: " in run.stderr  # -v: info
    assert "inaplanner: DEBUG: inaplanner.solver: " in run.stderr  # -vv: HiGHS' log, as debug
    assert run.stdout.startswith("planner grid: objective") and "HiGHS" not in run.stdout
    run = subprocess.run(_cli(*common, "--log-level", "info"), capture_output=True, text=True,
                         timeout=300, env=_env())
    assert "INFO: inaplanner.cli" in run.stderr and "DEBUG" not in run.stderr
    run = subprocess.run(_cli(*common), capture_output=True, text=True, timeout=300, env=_env())
    assert "INFO" not in run.stderr and "DEBUG" not in run.stderr


def test_configure_logging_keeps_one_handler():
    import logging

    from inaplanner.cli import configure_logging

    root = logging.getLogger()
    configure_logging(logging.INFO)
    configure_logging(logging.DEBUG)
    assert sum(type(h).__name__ == "_StderrHandler" for h in root.handlers) == 1
    assert logging.getLogger("inaplanner").level == logging.DEBUG
    configure_logging(logging.WARNING)
    assert logging.getLogger("inaplanner").level == logging.WARNING


def test_fresh_drops_the_last_works_incumbent_and_bound():
    p = Progress()
    p.update(0.4, phase="aro", incumbent=66.8, bound=100.2)
    part = p.span(0.5, 1.0)
    part.update(0.0, "", phase="grid", fresh=True)  # through a span, like compare's next planner
    assert (p.last.incumbent, p.last.bound, p.last.phase, p.last.fraction) == (None, None, "grid", 0.5)
    part.update(0.2, incumbent=0.5)
    assert (p.last.incumbent, p.last.bound) == (0.5, None)


def test_a_mip_reporter_reports_what_it_is_told_to():
    from inaplanner.planners.solver import mip_reporter

    p = Progress()
    p.update(0.1, phase="fallback", incumbent=0.52)
    mip_reporter(p, reports="bound")(0.0, 701.4)  # a model's solution is not a plan's score
    assert (p.last.incumbent, p.last.bound, p.last.phase) == (0.52, 701.4, "solve")
    mip_reporter(p, reports="none")(1.0, 0.0)  # nor is another objective's bound its bound
    assert (p.last.incumbent, p.last.bound) == (0.52, 701.4)
    mip_reporter(p)(3.0, 600.0)
    assert (p.last.incumbent, p.last.bound) == (3.0, 600.0)
