"""What the Deploy dialog shows, as plain data (no Qt): one progress row per switch and worker,
the dry run's changes per switch, the final per-node summary, and log lines.

The deployer (:mod:`inaplanner.deploy.deployer`) reports :class:`~inaplanner.progress.ProgressEvent`
events (``node``, ``phase`` = the step, ``state`` in start / done / failed / skipped / info /
progress / output) and ends with a :class:`~inaplanner.deploy.results.DeployReport`; these
functions turn both into rows.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from inaplanner.deploy.results import DeployReport
from inaplanner.progress import ProgressEvent

#: Row states shown before / while the run goes (the final ones are the report's statuses).
WAITING, RUNNING = "waiting", "running"

#: What a dry-run change line starts with (see ``deployer._change_lines``), by change kind.
CHANGE_PREFIXES = {"+ ": "add", "~ ": "modify", "- ": "delete"}
CHANGE_KINDS = ("add", "modify", "delete")


@dataclass
class Row:
    """One line of the progress table."""

    node: str
    kind: str  # "switch", "host" or "plan"
    step: str = ""
    state: str = WAITING
    detail: str = ""
    fraction: float | None = None

    def state_text(self) -> str:
        if self.state == RUNNING and self.fraction is not None:
            return f"{RUNNING} {self.fraction:.0%}"
        return self.state


class ProgressBoard:
    """The progress table's rows: switches first (in the order given), then workers, each row
    updated by the events of its node. ``apply`` returns the index of the row it changed."""

    def __init__(self, switches: Sequence[str] = (), hosts: Sequence[str] = ()) -> None:
        self.rows: list[Row] = []
        self._index: dict[str, int] = {}
        for sid in switches:
            self._add(sid, "switch")
        for hid in hosts:
            self._add(hid, "host")

    def _add(self, node: str, kind: str) -> int:
        self._index[node] = len(self.rows)
        self.rows.append(Row(node, kind))
        return self._index[node]

    def row(self, node: str) -> Row:
        return self.rows[self._index[node]]

    def index_of(self, node: str) -> int | None:
        return self._index.get(node)

    def apply(self, p: ProgressEvent) -> int | None:
        """Fold one event into its node's row (a new row for a node not listed yet); None when
        the event changes no row (streamed build output goes to the log only; the run's overall
        progress, an event without a node, goes to the headline)."""
        if p.state == "output" or not p.node:
            return None
        i = self._index.get(p.node)
        if i is None:
            kind = "plan" if p.node == "plan" else ("host" if p.phase == "config" else "switch")
            i = self._add(p.node, kind)
        row = self.rows[i]
        if p.state == "info":
            row.detail = p.message
            return i
        row.step = p.phase
        if p.state in ("start", "progress"):
            row.state = RUNNING
            row.fraction = p.fraction if p.state == "progress" else None
        else:
            row.state = p.state
            row.fraction = None
        row.detail = p.message
        return i

    def finish(self, report: DeployReport) -> None:
        """Put each node's final status from the report (nodes it does not name: "not used")."""
        for row in self.rows:
            row.fraction = None
            sw = report.switches.get(row.node)
            host = report.hosts.get(row.node)
            if sw is not None:
                row.state = sw.status
                if sw.error:
                    row.detail = f"{sw.step}: {sw.error}"
                elif sw.rollback:
                    row.detail = f"rollback: {sw.rollback}"
            elif host is not None:
                row.state = host.status
                if host.error:
                    row.detail = host.error
            elif row.kind != "plan":
                row.state = "not used"

    def stop_running(self, state: str = "stopped") -> None:
        """After a run that ended without a report: rows still running get ``state``."""
        for row in self.rows:
            if row.state == RUNNING:
                row.state = state
                row.fraction = None


def log_line(p: ProgressEvent, now: float | None = None) -> str:
    """One line of the live log for an event (build output indented under its switch)."""
    stamp = time.strftime("%H:%M:%S", time.localtime(now))
    if p.state == "output":
        return f"{stamp} [{p.node}]   | {p.message}"
    return f"{stamp} [{p.node}] {p.phase} {p.state}" + (f": {p.message}" if p.message else "")


@dataclass
class SwitchChanges:
    """What a dry run found for one switch."""

    switch: str
    status: str
    pipeline: str  # "", "install" or "replace (why)"
    changes: dict[str, list[str]] = field(default_factory=lambda: {k: [] for k in CHANGE_KINDS})
    unchanged: int = 0
    error: str = ""

    def count(self, kind: str) -> int:
        return len(self.changes[kind])

    def title(self) -> str:
        parts = [self.switch]
        if self.pipeline:
            parts.append(f"pipeline: {self.pipeline}")
        if self.error:
            parts.append(f"error: {self.error}")
        elif not any(self.changes.values()) and not self.pipeline:
            parts.append("no change")
        return " — ".join(parts)


def split_change(line: str) -> tuple[str, str]:
    """(kind, entity text) of one change line such as ``"+ table X [...] -> a(1)"``."""
    for prefix, kind in CHANGE_PREFIXES.items():
        if line.startswith(prefix):
            return kind, line[len(prefix):]
    return "modify", line


def switch_changes(report: DeployReport) -> list[SwitchChanges]:
    """Per switch of a dry-run report, its adds, modifies and deletes (entity texts)."""
    out = []
    for sid, r in report.switches.items():
        sc = SwitchChanges(sid, r.status, r.pipeline_change, unchanged=r.diff.get("unchanged", 0),
                           error=r.error)
        for line in r.changes:
            kind, text = split_change(line)
            sc.changes[kind].append(text)
        out.append(sc)
    return out


@dataclass(frozen=True)
class SummaryRow:
    kind: str  # "switch" or "host"
    node: str
    status: str
    changes: str
    note: str


def summary_rows(report: DeployReport) -> list[SummaryRow]:
    """The final per-switch (then per-worker) result table."""
    rows = []
    for sid, r in report.switches.items():
        counts = ", ".join(f"{k} {v}" for k, v in r.diff.items() if v and k != "unchanged")
        if r.pipeline_pushed:
            counts = "pipeline pushed" + (f"; {counts}" if counts else "")
        elif r.pipeline_change:
            counts = f"pipeline: {r.pipeline_change}" + (f"; {counts}" if counts else "")
        notes = []
        if r.error:
            notes.append(f"error at {r.step}: {r.error}")
        if r.rollback:
            notes.append(f"rollback: {r.rollback}")
        rows.append(SummaryRow("switch", sid, r.status, counts or "none", "; ".join(notes)))
    for hid, h in report.hosts.items():
        rows.append(SummaryRow("host", hid, h.status, h.path, h.error))
    return rows


def headline(report: DeployReport, cancelled: bool = False) -> str:
    """One sentence on how the run ended."""
    secs = f"{report.seconds:.2f} s"
    touched = [r for r in report.switches.values() if r.status in ("rolled back", "rollback failed")]
    if report.dry_run:
        if not report.ok:
            return f"Dry run failed: {report.error}"
        counts = {k: 0 for k in ("insert", "modify", "delete")}
        for r in report.switches.values():
            for k in counts:
                counts[k] += r.diff.get(k, 0)
        return (f"Dry run: {counts['insert']} to add, {counts['modify']} to modify, "
                f"{counts['delete']} to delete on {len(report.switches)} switch(es); nothing was "
                f"changed ({secs})")
    if report.ok:
        done = sum(r.status == "deployed" for r in report.switches.values())
        same = sum(r.status == "unchanged" for r in report.switches.values())
        return (f"Deployed: {done} switch(es) changed, {same} unchanged, "
                f"{len(report.hosts)} worker(s) configured ({secs})")
    failed_rollback = [r.switch for r in touched if r.status == "rollback failed"]
    tail = (f"; ROLLBACK FAILED on {', '.join(failed_rollback)}" if failed_rollback
            else f"; {len(touched)} switch(es) rolled back" if touched else "; nothing was changed")
    if cancelled:
        return f"Cancelled{tail} ({secs})"
    return f"Failed: {report.error}{tail} ({secs})"
