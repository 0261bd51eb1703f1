"""One progress and cancel protocol for everything long: planners, deploys, memory simulation, sweeps.

A :class:`Progress` is one Qt-free object that the work reports to and that any number of views
watch: the terminal (:mod:`inaplanner.cli.progress` draws a bar on a TTY and one line per phase
otherwise), the GUI (a Qt signal bridge subscribes to it) and tests. It is modelled on napari's
``progress``: one object, several displays. It also carries the cancel request, so a view that can
stop the work (Cancel button, Ctrl-C) and the work that must honour it share one object.

The work calls::

    progress.update(0.3, "solving", phase="solve", incumbent=50.1, bound=100.2)
    progress(0.3, "solving")           # the short form: fraction and message
    progress.check()                   # raises Cancelled when cancel was requested
    sub = progress.span(0.2, 0.9)      # a child that maps its own 0..1 into 0.2..0.9

Watchers call ``progress.subscribe(fn)``; ``fn`` gets a :class:`ProgressEvent` (a frozen snapshot)
on every update, on the thread that called ``update``. A view on another thread must hand it over
itself (the GUI queues it to the UI thread).

``node`` and ``state`` let one object carry the parallel per-item progress of a deploy (one row a
switch: ``state`` in start / done / failed / skipped / info / progress / output).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Any

from inaplanner.errors import Cancelled

__all__ = ["CancelToken", "Progress", "ProgressEvent", "Tally", "as_progress",
           "current_progress"]


class CancelToken:
    """A flag long work checks between steps and that solvers poll from their callbacks."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def __call__(self) -> bool:  # usable wherever a ``() -> bool`` cancel check is expected
        return self._event.is_set()

    def wait(self, timeout: float) -> bool:
        """Sleep up to ``timeout`` seconds, waking at once on cancel; True when cancelled."""
        return self._event.wait(timeout)

    def check(self) -> None:
        """Raise :class:`~inaplanner.errors.Cancelled` when cancel was requested."""
        if self._event.is_set():
            raise Cancelled("cancelled")


@dataclass(frozen=True)
class ProgressEvent:
    """One report: what the work is doing and how far it is.

    ``fraction`` is in [0, 1] or None (unknown). ``phase`` is a short name that changes rarely
    ("candidates", "model", "solve", "rounding", "evaluate"); ``message`` the current detail.
    ``incumbent``/``bound`` are the best objective found and the proven bound (planners);
    ``node``/``state`` name an item of parallel work (deploys). ``elapsed`` is seconds since the
    progress object was made.
    """

    fraction: float | None = None
    message: str = ""
    phase: str = ""
    incumbent: float | None = None
    bound: float | None = None
    node: str = ""
    state: str = ""
    elapsed: float = 0.0

    @property
    def gap(self) -> float | None:
        """Relative gap between bound and incumbent (maximisation), or None when unknown."""
        if self.incumbent is None or self.bound is None:
            return None
        if not (math.isfinite(self.incumbent) and math.isfinite(self.bound)):
            return None
        denom = max(abs(self.bound), 1e-12)
        return max(0.0, (self.bound - self.incumbent) / denom)


Listener = Callable[[ProgressEvent], None]


class Progress:
    """Reports of one piece of long work, and its cancel request (see the module docstring)."""

    def __init__(self, cancel: CancelToken | None = None, *, _parent: Progress | None = None,
                 _lo: float = 0.0, _hi: float = 1.0) -> None:
        self._parent = _parent
        self._lo, self._hi = _lo, _hi
        self.token: CancelToken = cancel if cancel is not None else (
            _parent.token if _parent is not None else CancelToken())
        self._listeners: list[Listener] = []
        self._lock = threading.Lock()
        self._start: float = time.monotonic() if _parent is None else _parent._start
        self.last = ProgressEvent()

    # ----------------------------------------------------------------- the work's side
    def update(self, fraction: float | None = None, message: str | None = None, *,
               phase: str | None = None, incumbent: float | None = None,
               bound: float | None = None, node: str | None = None,
               state: str | None = None, fresh: bool = False) -> None:
        """Report; omitted fields keep their last value. An event of one item of parallel work
        (``node`` given) carries only what its call gives and does not change the overall state.
        ``fresh``: a new piece of work starts (``compare``'s next planner), so the last one's
        incumbent and bound are dropped, not shown as this one's."""
        if self._parent is not None:
            mapped = None if fraction is None else self._lo + (self._hi - self._lo) * _clip(fraction)
            self._parent.update(mapped, message, phase=phase, incumbent=incumbent, bound=bound,
                                node=node, state=state, fresh=fresh)
            return
        with self._lock:
            ev = ProgressEvent() if node else self.last
            if fresh:
                ev = replace(ev, incumbent=None, bound=None)
            changes: dict[str, Any] = {"elapsed": time.monotonic() - self._start,
                                       "node": node or "", "state": state or ""}
            if fraction is not None:
                changes["fraction"] = _clip(fraction)
            if message is not None:
                changes["message"] = message
            if phase is not None:
                changes["phase"] = phase
            if incumbent is not None:
                changes["incumbent"] = incumbent
            if bound is not None:
                changes["bound"] = bound
            ev = replace(ev, **changes)
            if not node:  # per-item events do not become the overall state
                self.last = ev
            listeners = list(self._listeners)
        for fn in listeners:
            fn(ev)

    def __call__(self, fraction: float | None, message: str = "") -> None:
        """The short form ``progress(fraction, message)``."""
        self.update(fraction, message)

    def span(self, lo: float, hi: float) -> Progress:
        """A child whose fractions 0..1 map to ``lo..hi`` of this one (same cancel, same watchers)."""
        return Progress(_parent=self, _lo=lo, _hi=hi)

    def check(self) -> None:
        """Raise :class:`~inaplanner.errors.Cancelled` when cancel was requested."""
        self.token.check()

    @property
    def cancelled(self) -> bool:
        return self.token.cancelled

    # ----------------------------------------------------------------- the watchers' side
    def cancel(self) -> None:
        self.token.cancel()

    def subscribe(self, fn: Listener) -> Callable[[], None]:
        """Call ``fn`` on every report; returns a function that stops it."""
        root = self._root()
        with root._lock:
            root._listeners.append(fn)

        def unsubscribe() -> None:
            with root._lock:
                if fn in root._listeners:
                    root._listeners.remove(fn)

        return unsubscribe

    @contextmanager
    def active(self) -> Iterator[Progress]:
        """Make this the :func:`current_progress` of the running thread/context while the block
        runs: code deep below (the solver boundary) reports to it without being handed it."""
        reset = _CURRENT.set(self)
        try:
            yield self
        finally:
            _CURRENT.reset(reset)

    def _root(self) -> Progress:
        p = self
        while p._parent is not None:
            p = p._parent
        return p


_CURRENT: ContextVar[Progress | None] = ContextVar("inaplanner_progress", default=None)


def current_progress() -> Progress | None:
    """The :class:`Progress` made active by :meth:`Progress.active` in this context, or None
    (``run_planner`` activates the planner's, so the solver wrappers can report incumbent and
    bound from their callbacks)."""
    return _CURRENT.get()


def _clip(x: float) -> float:
    if not math.isfinite(x):
        return 0.0
    return min(1.0, max(0.0, float(x)))


def as_progress(obj: Any = None, cancel: CancelToken | None = None) -> Progress:
    """A :class:`Progress` for ``obj``: itself, or one that forwards ``(fraction, message)`` to a
    plain callable (older callers pass ``lambda f, m: ...``), or a silent one for None."""
    if isinstance(obj, Progress):
        return obj
    p = Progress(cancel)
    if obj is not None:
        fn = obj
        p.subscribe(lambda ev: fn(ev.fraction if ev.fraction is not None else 0.0, ev.message)
                    if not ev.node else None)
    return p


class Tally:
    """The overall progress of one stage of parallel work over items (a deployment's prepare,
    apply, workers, rollback, dry run; a recovery's switches and worker files): items finished
    of the stage's total, reported to ``progress`` as an event without a node (``phase`` = the
    stage, ``message`` = "40/68 switches, 1 failed") that the terminal's bar and the Deploy
    dialog's headline show, while each item's own steps go to its row. Thread-safe: the items
    finish on the work's threads."""

    def __init__(self, progress: Progress, name: str, unit: str) -> None:
        self.progress, self.name, self.unit = progress, name, unit
        self._lock = threading.Lock()
        self.total = self.done = self.failed = self.stopped = 0

    def begin(self, total: int) -> None:
        with self._lock:
            self.total, self.done, self.failed, self.stopped = total, 0, 0, 0
            if total:
                self._report()

    def finished(self, ok: bool, stopped: bool = False) -> None:
        """One item ended (``done`` counts them all, for the fraction): ``ok``, or failed, or
        ``stopped`` early (cancel, another's failure)."""
        with self._lock:
            self.done += 1
            if stopped:
                self.stopped += 1
            elif not ok:
                self.failed += 1
            self._report()

    def text(self) -> str:
        """``40/68 switches, 1 failed, 3 stopped``: the items that went through, of all."""
        parts = [f"{self.done - self.failed - self.stopped}/{self.total} {self.unit}"]
        if self.failed:
            parts.append(f"{self.failed} failed")
        if self.stopped:
            parts.append(f"{self.stopped} stopped")
        return ", ".join(parts)

    def _report(self) -> None:
        try:
            self.progress.update(self.done / self.total if self.total else 1.0, self.text(),
                                 phase=self.name)
        except Exception:  # noqa: BLE001, S110 - a broken listener must not break the run
            pass
