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

    def text(self, details: bool = False) -> str:
        head = ("dry run: " if self.dry_run else "") + (
            "ok" if self.ok else f"FAILED: {self.error}")
        lines = [head] + [f"  warning: {w}" for w in self.warnings]
        for r in self.switches.values():
            lines.append("  switch " + r.line())
            if details:
                lines += [f"    {c}" for c in r.changes]
        for h in self.hosts.values():
            lines.append("  host " + h.line())
        lines.append(f"  ({self.seconds:.2f} s)")
        return "\n".join(lines)
