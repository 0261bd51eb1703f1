"""Planner runs off the UI thread, napari style: a worker reports progress and log lines and can be
told to stop; the UI side sees only Qt signals delivered on its own thread.

A :class:`PlannerRun` is one run as the UI sees it; a QThreadPool thread drives it through
:func:`~inaplanner.views.execution.run_request` (in that thread, or in a child process: see
:mod:`~inaplanner.views.execution` for the back ends and why ``auto`` prefers a process).
:class:`RunManager` queues runs and starts up to ``max_parallel`` of them side by side.
"""

from __future__ import annotations

import time
from collections import deque
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal, Slot

from inaplanner.planners import CancelToken
from inaplanner.views.execution import BACKENDS, ChildPool, resolve_backend, run_request
from inaplanner.views.runs import PlanResult, RunRequest

QUEUED, RUNNING, CANCELLING, FINISHED, FAILED, CANCELLED = (
    "queued", "running", "cancelling", "finished", "failed", "cancelled",
)
ENDED = (FINISHED, FAILED, CANCELLED)

__all__ = ["BACKENDS", "ENDED", "PlannerRun", "RunManager"]


# ---- UI side ------------------------------------------------------------------------------------


class _Job(QRunnable):
    def __init__(self, run: PlannerRun, pool: ChildPool) -> None:
        super().__init__()
        self.setAutoDelete(True)
        self._run = run
        self._pool = pool

    def run(self) -> None:  # pool thread
        r = self._run
        try:
            outcome = run_request(r.request, r.backend, r._report.emit, r.token, self._pool)
        except Exception as exc:  # the machinery itself failed
            outcome = ("error", f"{type(exc).__name__}: {exc}")
        r._report.emit(*outcome)


class PlannerRun(QObject):
    """One run as the UI sees it: state, progress, log, and the result when it is done.

    Signals are delivered on the UI thread: ``progressed(fraction, message)``, ``logged(line)``,
    ``state_changed(state)``, then exactly one of ``finished(result)``, ``failed(message)``,
    ``cancelled()``, followed by ``ended(run)``.
    """

    progressed = Signal(float, str)
    logged = Signal(str)
    state_changed = Signal(str)
    finished = Signal(object)
    failed = Signal(str)
    cancelled = Signal()
    ended = Signal(object)

    _report = Signal(str, object)  # from the worker thread to this object's thread

    def __init__(self, request: RunRequest, backend: str = "auto", parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.request = request
        self.backend = resolve_backend(backend, request.planner)
        self.token = CancelToken()
        self.state = QUEUED
        self.fraction: float | None = None
        self.message = "queued"
        self.incumbent: float | None = None  # the planner's best objective so far, its bound, gap
        self.bound: float | None = None
        self.gap: float | None = None
        self.lines: list[str] = []
        self.result: PlanResult | None = None
        self.error: str | None = None
        self.started_at: float | None = None
        self.ended_at: float | None = None
        self._report.connect(self._on_report)

    @property
    def title(self) -> str:
        return self.request.title

    @property
    def done(self) -> bool:
        return self.state in ENDED

    def cancel(self) -> None:
        """Ask the run to stop. A queued run ends at once; a running one within about a second."""
        if self.done:
            return
        self.token.cancel()
        if self.state == QUEUED:
            self._end(CANCELLED)
        elif self.state == RUNNING:
            self._set_state(CANCELLING)
            self.message = "cancelling"

    def _set_state(self, state: str) -> None:
        self.state = state
        self.state_changed.emit(state)

    def _start(self, threads: QThreadPool, children: ChildPool) -> None:
        self.started_at = time.monotonic()
        self.message = "starting"
        self._set_state(RUNNING)
        threads.start(_Job(self, children))

    @Slot(str, object)
    def _on_report(self, kind: str, payload: Any) -> None:
        if self.done:
            return
        if kind == "progress":
            self.fraction, self.message = float(payload[0]), payload[1]
            if len(payload) >= 5:  # (fraction, message, incumbent, bound, gap) from views.runs
                self.incumbent, self.bound, self.gap = payload[2], payload[3], payload[4]
            self.progressed.emit(self.fraction, self.message)
        elif kind == "log":
            for line in payload if isinstance(payload, list) else [payload]:
                self.lines.append(line)
                self.logged.emit(line)
        elif kind == "result":
            if self.token.cancelled:  # came in after cancel: dropped, never shown
                self._end(CANCELLED)
                return
            self.result = payload
            self.result.log = list(self.lines)
            self._end(FINISHED)
        elif kind == "cancelled":
            self._end(CANCELLED)
        elif kind == "error":
            self.error = str(payload)
            self.lines.append(f"error: {payload}")
            self.logged.emit(f"error: {payload}")
            self._end(CANCELLED if self.token.cancelled else FAILED)

    def _end(self, state: str) -> None:
        self.ended_at = time.monotonic()
        self.message = {FINISHED: "done", FAILED: self.error or "failed", CANCELLED: "cancelled"}[state]
        self._set_state(state)
        if state == FINISHED:
            self.finished.emit(self.result)
        elif state == FAILED:
            self.failed.emit(self.error or "failed")
        else:
            self.cancelled.emit()
        self.ended.emit(self)


class RunManager(QObject):
    """Queues runs and keeps up to ``max_parallel`` of them going. ``finished(result)`` fires for
    every run that produced a result; ``run_added``/``run_ended`` track the queue."""

    run_added = Signal(object)
    run_ended = Signal(object)
    finished = Signal(object)
    busy_changed = Signal(bool)

    def __init__(self, max_parallel: int = 1, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(32)
        self._pool.setExpiryTimeout(5000)
        self.children = ChildPool()
        self._max_parallel = max(1, int(max_parallel))
        self._pending: deque[PlannerRun] = deque()
        self.runs: list[PlannerRun] = []

    @property
    def max_parallel(self) -> int:
        return self._max_parallel

    def set_max_parallel(self, n: int) -> None:
        self._max_parallel = max(1, int(n))
        self._pump()

    def running(self) -> list[PlannerRun]:
        return [r for r in self.runs if r.state in (RUNNING, CANCELLING)]

    def active(self) -> list[PlannerRun]:
        return [r for r in self.runs if not r.done]

    @property
    def busy(self) -> bool:
        return bool(self.active())

    def submit(self, request: RunRequest, backend: str = "auto") -> PlannerRun:
        run = PlannerRun(request, backend, self)
        run.ended.connect(self._on_ended)
        run.finished.connect(self.finished)
        was_busy = self.busy
        self.runs.append(run)
        self._pending.append(run)
        self.run_added.emit(run)
        if not was_busy:
            self.busy_changed.emit(True)
        self._pump()
        return run

    def cancel_all(self) -> None:
        for run in list(self.runs):
            run.cancel()

    def forget_ended(self) -> None:
        """Drop the runs that ended (their results stay wherever they were delivered)."""
        for r in self.runs:
            if r.done:
                r.deleteLater()
        self.runs = [r for r in self.runs if not r.done]

    def _pump(self) -> None:
        while self._pending and len(self.running()) < self._max_parallel:
            run = self._pending.popleft()
            if run.state == QUEUED:
                run._start(self._pool, self.children)

    @Slot(object)
    def _on_ended(self, run: PlannerRun) -> None:
        if run in self._pending:
            self._pending.remove(run)
        self.run_ended.emit(run)
        self._pump()
        if not self.busy:
            self.busy_changed.emit(False)

    def prewarm(self) -> None:
        """Start a planner process ahead of the first process run."""
        self.children.prewarm()

    def shutdown(self, wait_ms: int = 3000) -> None:
        """Cancel everything, wait for the worker threads, stop waiting children (exit)."""
        self.cancel_all()
        self._pool.waitForDone(wait_ms)
        self.children.close()
