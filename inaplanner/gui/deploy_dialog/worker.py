"""A call that runs off the UI thread, with progress events and a cancel flag, seen from the UI
thread only through Qt signals (the same napari-style split as
:mod:`inaplanner.gui.planning.workers`, whose ``PlannerRun`` is tied to planner requests, so
this is the small general form a deployment needs).

The function gets ``(progress, cancel)``: ``progress(event)`` may be called from any thread (the
deployer calls it from its per-switch threads); ``cancel`` is a
:class:`~inaplanner.progress.CancelToken` the UI sets. Exactly one of ``finished(result)`` or ``failed(message)`` follows, then ``ended()``.

Python's automatic cyclic garbage collection must never run on the worker thread
(:func:`inaplanner.gui.gcguard.ensure_main_thread_gc` keeps it on the UI thread). Otherwise an
allocation on a worker thread may start a collection there that frees dead Qt wrappers (a closed window's widgets): their C++
destructors then run on the worker thread, hold Qt's locks and wait for the GIL, while the UI
thread holds the GIL and waits for those locks — a deadlock we saw in the tests. (pyqtgraph's
``GarbageCollector`` keeps collection on the UI thread for the same reason.)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal, Slot

from inaplanner.errors import InaplannerError
from inaplanner.gui.gcguard import ensure_main_thread_gc
from inaplanner.progress import CancelToken

Work = Callable[[Callable[[Any], None], CancelToken], Any]


class _Job(QRunnable):
    def __init__(self, call: BackgroundCall) -> None:
        super().__init__()
        self.setAutoDelete(True)
        self._call = call

    def run(self) -> None:  # pool thread
        call = self._call
        try:
            outcome: tuple[str, Any] = ("result", call.work(call._emit_progress, call.cancel_event))
        except InaplannerError as exc:
            outcome = ("error", str(exc))
        except BaseException as exc:  # noqa: BLE001 - never let anything end the thread silently
            outcome = ("error", f"{type(exc).__name__}: {exc}")
        try:
            call._report.emit(*outcome)
        except RuntimeError:  # the UI side is gone (window closed during shutdown)
            pass


class BackgroundCall(QObject):
    """One call of ``work`` on ``pool``. Signals arrive on the thread this object lives in."""

    progressed = Signal(object)
    finished = Signal(object)
    failed = Signal(str)
    ended = Signal()

    _report = Signal(str, object)  # worker thread -> this object's thread

    def __init__(self, work: Work, pool: QThreadPool, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.work = work
        self.pool = pool
        self.cancel_event = CancelToken()
        self.running = False
        self.done = False
        self._report.connect(self._on_report)

    def start(self) -> None:
        self.running = True
        ensure_main_thread_gc()
        self.pool.start(_Job(self))

    def cancel(self) -> None:
        """Ask the call to stop (it polls the flag between steps and batches)."""
        self.cancel_event.cancel()

    def abandon(self) -> None:
        """Stop listening (application exit, after the pool was waited for): no more signals."""
        if not self.done:
            self.done = True
            self.running = False

    @property
    def cancel_requested(self) -> bool:
        return self.cancel_event.cancelled

    def _emit_progress(self, event: Any) -> None:
        try:
            self._report.emit("progress", event)
        except RuntimeError:
            pass

    @Slot(str, object)
    def _on_report(self, kind: str, payload: Any) -> None:
        if self.done:
            return
        if kind == "progress":
            self.progressed.emit(payload)
            return
        self.running = False
        self.done = True
        if kind == "result":
            self.finished.emit(payload)
        else:
            self.failed.emit(str(payload))
        self.ended.emit()
