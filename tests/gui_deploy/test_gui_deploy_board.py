"""The Deploy dialog's plain-data side: progress rows from deployer events, dry-run changes per
switch, the summary and the headline (tiny hand-made events and reports)."""

from __future__ import annotations

from inaplanner.deploy.results import DeployReport, HostResult, SwitchResult
from inaplanner.progress import ProgressEvent
from inaplanner.views.deploy_board import (
    ProgressBoard,
    headline,
    log_line,
    split_change,
    summary_rows,
    switch_changes,
)


def event(node: str, step: str, state: str, message: str = "",
          fraction: float | None = None) -> ProgressEvent:
    """A deployer's event: the step is the protocol's ``phase``."""
    return ProgressEvent(fraction, message, step, node=node, state=state)


def test_progress_rows_follow_the_events_of_their_node():
    board = ProgressBoard(["S1", "S2"], ["W1"])
    assert [(r.node, r.kind, r.state) for r in board.rows] == [
        ("S1", "switch", "waiting"), ("S2", "switch", "waiting"), ("W1", "host", "waiting")]
    assert board.apply(event("S2", "build", "start")) == 1
    assert board.apply(event("S2", "build", "output", "compiling")) is None  # log only
    assert board.row("S2").state_text() == "running" and board.row("S2").step == "build"
    board.apply(event("S2", "write", "progress", "3/4", 0.75))
    assert board.row("S2").state_text() == "running 75%" and board.row("S2").detail == "3/4"
    board.apply(event("S2", "connect", "info", "primary"))
    assert board.row("S2").step == "write" and board.row("S2").detail == "primary"
    board.apply(event("S2", "verify", "failed", "read back differs"))
    assert (board.row("S2").state, board.row("S2").fraction) == ("failed", None)
    # a node not listed gets a row of its own, after the others
    assert board.apply(event("W9", "config", "start")) == 3
    assert board.row("W9").kind == "host"
    assert board.apply(event("plan", "entries", "info", "warning: x")) == 4
    assert board.row("plan").kind == "plan"
    # the run's overall progress (no node) is the headline's, not a row
    assert board.apply(ProgressEvent(0.4, "30/68 switches", "prepare")) is None
    assert len(board.rows) == 5


def test_finish_puts_the_report_status_on_every_row():
    board = ProgressBoard(["S1", "S2", "S3"], ["W1"])
    board.apply(event("S1", "write", "progress", "1/2", 0.5))
    report = DeployReport(False, False, {
        "S1": SwitchResult("S1", "rolled back", step="write", rollback="3 entities as before"),
        "S2": SwitchResult("S2", "failed", step="pipeline", error="INVALID_ARGUMENT: no"),
    }, {"W1": HostResult("W1", "not touched", "w1.json")}, error="switch S2: pipeline: no")
    board.finish(report)
    assert [(r.node, r.state) for r in board.rows] == [
        ("S1", "rolled back"), ("S2", "failed"), ("S3", "not used"), ("W1", "not touched")]
    assert board.row("S1").detail == "rollback: 3 entities as before"
    assert board.row("S2").detail == "pipeline: INVALID_ARGUMENT: no"
    assert board.row("S1").fraction is None


def test_dry_run_changes_split_by_kind():
    r = SwitchResult("S1", "dry run", pipeline_change="install",
                     diff={"insert": 2, "modify": 1, "delete": 1, "unchanged": 4},
                     changes=["- table T [a=1]", "~ table T [a=2] -> x(1)", "+ multicast group 1 [1]",
                              "+ table T [a=3] -> x(2)"])
    report = DeployReport(True, True, {"S1": r, "S2": SwitchResult("S2", "dry run")}, {})
    s1, s2 = switch_changes(report)
    assert s1.changes == {"add": ["multicast group 1 [1]", "table T [a=3] -> x(2)"],
                          "modify": ["table T [a=2] -> x(1)"], "delete": ["table T [a=1]"]}
    assert s1.unchanged == 4 and s1.title() == "S1 — pipeline: install"
    assert s2.title() == "S2 — no change"
    assert split_change("+ x") == ("add", "x") and split_change("- y") == ("delete", "y")
    assert headline(report).startswith("Dry run: 2 to add, 1 to modify, 1 to delete on 2 switch")


def test_summary_and_headlines():
    ok = DeployReport(True, False, {
        "S1": SwitchResult("S1", "deployed", pipeline_pushed=True,
                           diff={"insert": 5, "modify": 0, "delete": 0, "unchanged": 0}),
        "S2": SwitchResult("S2", "unchanged", diff={"insert": 0, "unchanged": 3}),
    }, {"W1": HostResult("W1", "configured", "/w1.json")}, seconds=1.5)
    rows = summary_rows(ok)
    assert [(r.node, r.status, r.changes) for r in rows] == [
        ("S1", "deployed", "pipeline pushed; insert 5"), ("S2", "unchanged", "none"),
        ("W1", "configured", "/w1.json")]
    assert headline(ok) == "Deployed: 1 switch(es) changed, 1 unchanged, 1 worker(s) configured (1.50 s)"
    bad = DeployReport(False, False, {
        "S1": SwitchResult("S1", "rolled back", rollback="ok"),
        "S2": SwitchResult("S2", "rollback failed", rollback="FAILED: gone"),
    }, {}, error="S1: cancelled before write", seconds=0.25)
    assert headline(bad, cancelled=True) == "Cancelled; ROLLBACK FAILED on S2 (0.25 s)"
    assert headline(bad).startswith("Failed: S1: cancelled before write; ROLLBACK FAILED on S2")
    nothing = DeployReport(False, False, {"S1": SwitchResult("S1", "failed")}, {}, error="e")
    assert headline(nothing) == "Failed: e; nothing was changed (0.00 s)"
    assert log_line(event("S1", "build", "output", "ok"), 0.0).endswith("[S1]   | ok")
    assert log_line(event("S1", "write", "done", "3 updates"), 0.0).endswith(
        "[S1] write done: 3 updates")
