"""Deploys that always end on one plan: the deployer runs as a real ``inaplanner deploy``
subprocess against an emulated testbed living in the test process; it is SIGKILLed at several
points (after the snapshot, in the middle of writing one switch, during a rollback), or sent
SIGTERM / Ctrl-C. Afterwards every switch is read back over P4Runtime: each holds exactly the old
or exactly the new plan, and all hold the same one (after ``inaplanner deploy --recover`` when the
process was killed)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from inaplanner.cli import main
from inaplanner.dataplane.entries import build_entities
from inaplanner.deploy.deployer import DeployOptions, deploy, desired_from_spec
from inaplanner.deploy.emulated import start_emulated_testbed
from inaplanner.deploy.journal import journal_path, read_journal
from inaplanner.deploy.p4rt import P4RTSession
from inaplanner.deploy.state import diff_state, is_default_entry
from inaplanner.io.native import save_plan, save_scenario
from tests.deploy.test_deploy_end_to_end import make_plan, make_scenario

WAIT = 60.0  # generous bounds for a loaded machine; nothing here asserts a duration


class Bed:
    """Emulated switches for every switch of the scenario, plans A (old) and B (new) on disk."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.sc = make_scenario()
        self.tb_path = tmp / "tb.toml"
        self.tb = start_emulated_testbed(self.sc, self.tb_path,
                                         switch_ids=[s.id for s in self.sc.switches()])
        self.inv = self.tb.inventory
        self.plans = {"A": make_plan(self.sc, ("S1", "S2")), "B": make_plan(self.sc, ("S2", "S1"))}
        save_scenario(self.sc, tmp / "sc.json")
        for name, plan in self.plans.items():
            save_plan(plan, tmp / f"{name}.json")
        self.wanted = {name: desired_from_spec(build_entities(self.sc, p, self.inv)).switches
                       for name, p in self.plans.items()}
        self.order = list(self.wanted["B"])  # the deployer's switch order
        self.defaults = sorted({e.table_entry.table_id for w in self.wanted.values()
                                for ents in w.values() for e in ents if is_default_entry(e)})
        self.stderr: list[str] = []
        self.proc: subprocess.Popen | None = None

    def deploy_in_process(self, name: str) -> None:
        report = deploy(self.sc, self.plans[name], self.inv, DeployOptions(batch_size=2))
        assert report.ok, report.text()

    def start(self, name: str, *extra: str) -> subprocess.Popen:
        """``inaplanner deploy`` of plan ``name`` in a subprocess, one switch at a time, two
        updates per batch; its stderr is collected line by line."""
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "inaplanner", "deploy", str(self.tmp / f"{name}.json"),
             "--testbed", str(self.tb_path), "--scenario", str(self.tmp / "sc.json"),
             "--parallel", "1", "--batch", "2", *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )

        def pump() -> None:
            assert self.proc is not None
            for line in self.proc.stderr:
                self.stderr.append(line)

        threading.Thread(target=pump, daemon=True).start()
        return self.proc

    def wait_stderr(self, text: str) -> None:
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            if any(text in line for line in self.stderr):
                return
            time.sleep(0.02)
        raise AssertionError(f"{text!r} never appeared on stderr:\n{''.join(self.stderr)}")

    def hook(self, fn) -> None:
        for sid, h in self.tb.handles.items():
            h.servicer.rpc_hook = (lambda rpc, req, sid=sid: fn(sid, rpc, req))

    def which(self) -> dict[str, set[str]]:
        """Per switch, the plans (A, B, "none": no entities) it holds exactly."""
        out = {}
        for sid, h in self.tb.handles.items():
            with P4RTSession(h.address, 1, primary=False, label=sid) as s:
                held = s.read_state(self.defaults) if s.get_pipeline(False) is not None else []
            match = {name for name, w in self.wanted.items()
                     if diff_state(held, w.get(sid, [])).empty}
            if not held:
                match.add("none")
            out[sid] = match
        return out

    def assert_one_plan(self, expected: str) -> None:
        which = self.which()
        assert all(expected in m for m in which.values()), which

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(WAIT)
        for h in self.tb.handles.values():
            h.servicer.rpc_hook = None
        self.tb.stop()


@pytest.fixture
def bed(tmp_path):
    b = Bed(tmp_path)
    yield b
    b.stop()


class Gate:
    """Blocks the emulator's handling of chosen RPCs until released; says when one arrived."""

    def __init__(self) -> None:
        self.reached = threading.Event()
        self.release = threading.Event()

    def block(self) -> None:
        self.reached.set()
        self.release.wait(WAIT)

    def wait(self) -> None:
        assert self.reached.wait(WAIT), "the deployer never got to the chosen point"


def _kill(bed: Bed, gate: Gate, release: bool = True) -> None:
    assert bed.proc is not None
    bed.proc.send_signal(signal.SIGKILL)
    bed.proc.wait(WAIT)
    if release:
        gate.release.set()  # the switch goes on with the write it had received, as real ones do


def _refused_then_recovered(bed: Bed, to: str, capsys) -> None:
    """A later deploy and monitor refuse with one line naming --recover; the recovery works;
    afterwards deploy is allowed again (the journal is gone)."""
    assert journal_path(bed.tb_path).exists()
    capsys.readouterr()
    code = main(["deploy", str(bed.tmp / "A.json"), "--testbed", str(bed.tb_path),
                 "--scenario", str(bed.tmp / "sc.json")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert "unfinished deployment" in err and "inaplanner deploy --recover --testbed" in err
    code = main(["monitor", "--testbed", str(bed.tb_path), "--scenario", str(bed.tmp / "sc.json"),
                 "--duration", "0.1"])
    err = capsys.readouterr().err
    assert code == 2 and "deploy --recover" in err, err
    code = main(["deploy", "--recover", "--testbed", str(bed.tb_path), "--to", to])
    out, err = capsys.readouterr()
    assert code == 0, out
    assert out.startswith(f"recovered: every switch holds the {to} plan")
    assert not journal_path(bed.tb_path).exists()
    # stderr (not a terminal): the overall progress, no line per switch (those are in -v)
    n = len(bed.tb.handles)
    stage = "roll back" if to == "old" else "complete"
    assert "inaplanner: recover: " in err and f"{stage}: {n}/{n} switches" in err, err
    assert all(line.startswith("inaplanner: recover: ") for line in err.splitlines()), err


def test_sigkill_after_the_snapshot_then_complete(bed, capsys):
    bed.deploy_in_process("A")
    gate = Gate()
    bed.hook(lambda sid, rpc, req: gate.block() if rpc != "Read" and not gate.reached.is_set()
             else None)
    bed.start("B")
    gate.wait()  # the first write of the deployment: the snapshot is over, nothing written
    j = read_journal(journal_path(bed.tb_path))  # written before the first write
    assert set(j.switches) == set(bed.order)
    # the first switch is marked before its first write goes out; the others were not started
    assert [j.switches[s].on for s in bed.order] == ["between"] + ["old"] * (len(bed.order) - 1)
    assert all(diff_state(j.switches[s].new, bed.wanted["B"][s]).empty for s in bed.order)
    _kill(bed, gate)
    bed.hook(lambda *a: None)
    _refused_then_recovered(bed, "new", capsys)
    bed.assert_one_plan("B")
    assert {p.name for p in (bed.tmp / "workers").iterdir()}  # worker files written (new)


@pytest.mark.parametrize("to", ["old", "new"])
def test_sigkill_in_the_middle_of_one_switch(bed, capsys, to):
    bed.deploy_in_process("A")
    k = bed.order[2]
    seen = {"n": 0}
    gate = Gate()

    def hook(sid, rpc, req):
        if sid == k and rpc == "Write":
            seen["n"] += 1
            if seen["n"] == 2:  # the first batch of switch k went in
                gate.block()

    bed.hook(hook)
    bed.start("B")
    gate.wait()
    _kill(bed, gate, release=False)
    which = bed.which()
    assert not all("A" in m for m in which.values()) and not all("B" in m for m in which.values())
    assert not ({"A", "B"} & which[k])  # switch k is between the plans
    gate.release.set()
    bed.hook(lambda *a: None)
    _refused_then_recovered(bed, to, capsys)
    bed.assert_one_plan("A" if to == "old" else "B")


def test_sigkill_during_the_rollback(bed, capsys):
    bed.deploy_in_process("A")
    first, last = bed.order[0], bed.order[-1]
    failed = threading.Event()
    gate = Gate()
    bed.tb.handles[last].fail_on(lambda u: failed.set() or "refused for the test")

    def hook(sid, rpc, req):
        if sid == first and rpc == "Write" and failed.is_set() and not gate.reached.is_set():
            gate.block()  # the rollback's first write

    bed.hook(hook)
    bed.start("B")
    gate.wait()
    _kill(bed, gate)
    j = read_journal(journal_path(bed.tb_path))
    assert j.switches[first].state == "rollback"
    bed.tb.handles[last].fail_on(None)
    bed.hook(lambda *a: None)
    _refused_then_recovered(bed, "old", capsys)
    bed.assert_one_plan("A")


def test_sigkill_of_a_first_deployment_rolls_back_to_empty_switches(bed, capsys):
    k = bed.order[1]
    gate = Gate()
    bed.hook(lambda sid, rpc, req: gate.block() if sid == k and rpc == "Write" else None)
    bed.start("A")
    gate.wait()
    _kill(bed, gate)
    bed.hook(lambda *a: None)
    _refused_then_recovered(bed, "old", capsys)
    bed.assert_one_plan("none")


def test_sigterm_rolls_back_like_a_first_ctrl_c(bed):
    bed.deploy_in_process("A")
    k = bed.order[2]
    gate = Gate()
    bed.hook(lambda sid, rpc, req: gate.block() if sid == k and rpc == "Write"
             and not gate.reached.is_set() else None)
    proc = bed.start("B")
    gate.wait()
    proc.send_signal(signal.SIGTERM)
    bed.wait_stderr("SIGTERM: cancelling")
    gate.release.set()
    out = proc.stdout.read()
    assert proc.wait(WAIT) == 1
    assert "FAILED" in out and "rolled back" in out, out
    bed.assert_one_plan("A")
    assert not journal_path(bed.tb_path).exists()


def test_sighup_rolls_back_too(bed):
    bed.deploy_in_process("A")
    gate = Gate()
    bed.hook(lambda sid, rpc, req: gate.block() if rpc == "Write" and sid == bed.order[1]
             and not gate.reached.is_set() else None)
    proc = bed.start("B")
    gate.wait()
    proc.send_signal(signal.SIGHUP)
    bed.wait_stderr("SIGHUP: cancelling")
    gate.release.set()
    assert proc.wait(WAIT) == 1
    bed.assert_one_plan("A")


def _ctrl_c_during_rollback(bed: Bed):
    """Deploy B over A; Ctrl-C in the middle of switch 3; hold the rollback's first write."""
    bed.deploy_in_process("A")
    k, first = bed.order[2], bed.order[0]
    stage1, stage2 = Gate(), Gate()
    cancelled = threading.Event()

    def hook(sid, rpc, req):
        if rpc != "Write":
            return
        if sid == k and not stage1.reached.is_set():
            stage1.block()
        elif sid == first and cancelled.is_set() and not stage2.reached.is_set():
            stage2.block()

    bed.hook(hook)
    proc = bed.start("B")
    stage1.wait()
    proc.send_signal(signal.SIGINT)
    bed.wait_stderr("SIGINT: cancelling")
    cancelled.set()
    stage1.release.set()
    stage2.wait()  # the rollback is running
    return proc, stage2


def test_second_ctrl_c_during_the_rollback_is_ignored(bed):
    proc, gate = _ctrl_c_during_rollback(bed)
    proc.send_signal(signal.SIGINT)
    bed.wait_stderr("Ctrl-C ignored: the rollback is running")
    proc.send_signal(signal.SIGTERM)
    bed.wait_stderr("SIGTERM ignored")
    gate.release.set()
    assert proc.wait(WAIT) == 1
    bed.assert_one_plan("A")
    assert not journal_path(bed.tb_path).exists()


def test_third_ctrl_c_aborts_and_says_where_each_switch_is(bed, capsys):
    proc, gate = _ctrl_c_during_rollback(bed)
    proc.send_signal(signal.SIGINT)
    bed.wait_stderr("Ctrl-C ignored")
    proc.send_signal(signal.SIGINT)
    assert proc.wait(WAIT) == 130
    gate.release.set()
    # the process has exited, but the thread reading its stderr may not have the last line yet
    bed.wait_stderr("aborted during the rollback")
    line = next(x for x in bed.stderr if "aborted during the rollback" in x)
    assert "new plan:" in line or "between plans:" in line
    assert "deploy --recover" in line
    _refused_then_recovered(bed, "old", capsys)
    bed.assert_one_plan("A")


def test_recover_without_a_journal_and_deploy_without_a_plan_are_one_line(bed, capsys):
    code = main(["deploy", "--recover", "--testbed", str(bed.tb_path)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "nothing to recover" in err
    code = main(["deploy", "--testbed", str(bed.tb_path)])
    err = capsys.readouterr().err
    assert code == 2 and "give PLAN (or --recover" in err
    bed.deploy_in_process("A")  # a clean end leaves no journal behind
    assert not journal_path(bed.tb_path).exists()
    bed.assert_one_plan("A")
