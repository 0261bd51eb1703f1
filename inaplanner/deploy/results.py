"""What a deployment reports: per-switch and per-host results, the final report, and the error
type that names the switch (or host), the step and the cause.

Progress goes through the program's one protocol, :mod:`inaplanner.progress`: each event is a
:class:`~inaplanner.progress.ProgressEvent` with ``node`` (the switch, worker or ``plan``),
``phase`` (the step: connect, build, pipeline, write, verify, config, ...), ``state`` (start, done,
failed, skipped, info, progress, output), ``message`` and, for long steps, ``fraction``."""

from __future__ import annotations

from dataclasses import dataclass, field

from inaplanner.errors import InaplannerError
from inaplanner.progress import ProgressEvent

#: the deploy's progress event is the protocol's event (the same class, under its former name)
Progress = ProgressEvent
#: switches (and hosts) a report lists by default; the rest are counted ("... and N more")
LISTED = 20
#: outcomes a report always lists, first
PROBLEMS = ("failed", "rolled back", "rollback failed")


class DeployError(InaplannerError):
    """A failed step: names the switch (or host), the step and the cause."""

    def __init__(self, node: str, step: str, cause: str) -> None:
        self.node = node
        self.step = step
        self.cause = cause
        super().__init__(f"{node}: {step}: {cause}")


@dataclass
class SwitchResult:
    switch: str
    status: str = "pending"  # deployed, unchanged, rolled back, rollback failed, failed, not touched,
    #                          dry run
    step: str = ""  # the last step started
    error: str = ""
    pipeline_pushed: bool = False
    pipeline_change: str = ""  # dry run: "", "install", "replace"
    diff: dict[str, int] = field(default_factory=dict)
    written: int = 0
    rollback: str = ""  # what the rollback did
    changes: list[str] = field(default_factory=list)  # dry run: one line per update

    def line(self) -> str:
        counts = ", ".join(f"{k} {v}" for k, v in self.diff.items() if v)
        parts = [f"{self.switch}: {self.status}"]
        if self.pipeline_change:
            parts.append(f"pipeline: {self.pipeline_change}")
        elif self.pipeline_pushed:
            parts.append("pipeline pushed")
        if counts:
            parts.append(counts)
        if self.error:
            parts.append(f"error at {self.step}: {self.error}")
        if self.rollback:
            parts.append(f"rollback: {self.rollback}")
        return "; ".join(parts)


@dataclass
class HostResult:
    host: str
    status: str = "pending"  # configured, unchanged, restored, failed, not touched, dry run
    path: str = ""
    error: str = ""

    def line(self) -> str:
        return f"{self.host}: {self.status} ({self.path})" + (f"; {self.error}" if self.error else "")


@dataclass
class DeployReport:
    ok: bool
    dry_run: bool
    switches: dict[str, SwitchResult]
    hosts: dict[str, HostResult]
    error: str = ""
    seconds: float = 0.0
    log_path: str = ""
    warnings: list[str] = field(default_factory=list)

    def text(self, details: bool = False, listed: int | None = LISTED,
             more: str = "--all") -> str:
        """The report: the verdict, one line of totals, the warnings, then a line per switch
        (with ``details``, the dry run's changes under it) and per host. ``listed`` caps the
        warnings, the switches and the hosts shown (None: all); switches with a problem come
        first and are always shown. ``more`` names what lists the rest ("" says nothing)."""
        def rest(what: str) -> str:
            return f"; {more} lists every {what}" if more else ""

        head = ("dry run: " if self.dry_run else "") + (
            "ok" if self.ok else f"FAILED: {self.error}")
        lines = [head, "  " + self.totals()]
        warnings = self.warnings if listed is None else self.warnings[:listed]
        lines += [f"  warning: {w}" for w in warnings]
        if len(warnings) < len(self.warnings):
            lines.append(f"  ... and {len(self.warnings) - len(warnings)} more warnings"
                         + rest("warning"))
        results = sorted(self.switches.values(), key=lambda r: r.status not in PROBLEMS)
        shown = [r for i, r in enumerate(results)
                 if listed is None or i < listed or r.status in PROBLEMS]
        for r in shown:
            lines.append("  switch " + r.line())
            if details:
                lines += [f"    {c}" for c in r.changes]
        if len(shown) < len(results):
            lines.append(f"  ... and {len(results) - len(shown)} more switches "
                         f"({_counts(r.status for r in results[len(shown):])})"
                         + rest("switch"))
        hosts = list(self.hosts.values())
        for h in hosts if listed is None else hosts[:listed]:
            lines.append("  host " + h.line())
        if listed is not None and len(hosts) > listed:
            lines.append(f"  ... and {len(hosts) - listed} more hosts "
                         f"({_counts(h.status for h in hosts[listed:])})" + rest("host"))
        lines.append(f"  ({self.seconds:.2f} s)")
        return "\n".join(lines)

    def totals(self) -> str:
        """One line: switches and hosts by outcome, and the changes written (or to write)."""
        changes: dict[str, int] = {}
        for r in self.switches.values():
            for k, v in r.diff.items():
                changes[k] = changes.get(k, 0) + v
        parts = [f"{len(self.switches)} switches: {_counts(r.status for r in self.switches.values())}"]
        pushed = sum(1 for r in self.switches.values() if r.pipeline_pushed or r.pipeline_change)
        if pushed:
            parts.append(f"pipeline {'to push' if self.dry_run else 'pushed'} on {pushed}")
        moved = ", ".join(f"{k} {v}" for k, v in changes.items() if v)
        if moved:
            parts.append(moved)
        if self.hosts:
            parts.append(f"{len(self.hosts)} hosts: {_counts(h.status for h in self.hosts.values())}")
        return "; ".join(parts)


def _counts(statuses) -> str:
    """"12 deployed, 3 unchanged": how many of each, in order of first appearance."""
    seen: dict[str, int] = {}
    for status in statuses:
        s = status.split(":")[0]  # "dry run: would write 1060 bytes" counts as "dry run"
        seen[s] = seen.get(s, 0) + 1
    return ", ".join(f"{n} {s}" for s, n in seen.items()) or "none"
