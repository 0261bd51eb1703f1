"""The terminal's view of a :class:`~inaplanner.progress.Progress`.

* stderr is a terminal: one bar, redrawn in place with ``\\r`` at most ten times a second
  (fraction, phase or message, incumbent, bound and gap, elapsed seconds), erased when the work ends
  so the command's own output starts on a clean line;
* stderr is a file or a pipe: one line per phase change (for work that reports only messages, per
  message change, at most one a second), plus one line when the incumbent or the bound improves,
  at most one every two seconds; what a phase ended with, when the rate limit held it back, comes
  before the next phase's line;
* ``-q``: nothing.

The bar is a few lines of our own rather than tqdm or rich: the program's progress is one object
with a phase, an incumbent and a bound besides the fraction, and both libraries would need the same
formatting code around them while adding a dependency and its import time to every command.

:func:`cli_progress` is what a command uses: it makes the Progress, shows it, and turns the first
Ctrl-C into a cancel request through the Progress's token (the work stops at its next check and the
command exits 130); a second Ctrl-C interrupts at once.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

from inaplanner.progress import Progress, ProgressEvent
from inaplanner.views.fmt import progress_text

BAR_WIDTH = 24
REDRAW_S = 0.1
MESSAGE_LINE_S = 1.0
BOUND_LINE_S = 2.0


def _is_tty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _columns(stream: TextIO) -> int:
    try:
        columns = os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError):
        return 80
    return columns if columns >= 20 else 80  # a terminal without a size (0) or a silly one


def describe(ev: ProgressEvent) -> str:
    """``phase: message (incumbent X, bound Y, gap Z %)`` of one event."""
    return progress_text(ev.phase, ev.message, ev.incumbent, ev.bound, ev.gap)


class TerminalProgress:
    """Shows one Progress on ``stream`` as a bar (``mode="bar"``), lines (``"lines"``) or not at
    all (``"off"``); ``"auto"`` picks the bar on a terminal and lines otherwise. Use as a context
    manager (subscribes on enter, finishes and unsubscribes on exit)."""

    def __init__(self, progress: Progress, stream: TextIO | None = None, *, mode: str = "auto",
                 label: str = "") -> None:
        self.progress = progress
        self.stream = stream if stream is not None else sys.stderr
        if mode == "auto":
            mode = "bar" if _is_tty(self.stream) else "lines"
        if mode not in ("bar", "lines", "off"):
            raise ValueError(f"mode {mode!r}: one of auto, bar, lines, off")
        self.mode = mode
        self.label = label
        # re-entrant: a signal handler on the main thread may say() while that thread draws
        self._lock = threading.RLock()
        self._unsubscribe = None
        self._drawn = False
        self._bar_text = ""
        self._last_draw = -1e9
        self._last_phase: str | None = None
        self._last_message: str | None = None
        self._last_message_line = -1e9
        self._last_figures: tuple[float | None, float | None] = (None, None)
        self._last_figures_line = -1e9
        self._pending: ProgressEvent | None = None

    # ------------------------------------------------------------------ lifecycle
    def __enter__(self) -> TerminalProgress:
        if self.mode != "off":
            self._unsubscribe = self.progress.subscribe(self.on_event)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        with self._lock:
            if self.mode == "bar" and self._drawn:
                self._write("\r\x1b[K")
                self._drawn = False
            elif self.mode == "lines" and self._pending is not None:
                self._line(self._pending)  # the newest figures, held back by the rate limit
                self._pending = None

    # ------------------------------------------------------------------ events
    def on_event(self, ev: ProgressEvent) -> None:
        if ev.node:  # per-item rows (deploys) are the deploy board's business
            return
        with self._lock:
            if self.mode == "bar":
                self._bar(ev)
            elif self.mode == "lines":
                self._lines(ev)

    def _bar(self, ev: ProgressEvent) -> None:
        now = time.monotonic()
        phase_changed = ev.phase != self._last_phase
        self._last_phase = ev.phase
        if not phase_changed and now - self._last_draw < REDRAW_S:
            return
        self._last_draw = now
        width = _columns(self.stream)
        if ev.fraction is None:
            bar = "[" + "?".center(BAR_WIDTH) + "]     "
        else:
            done = int(round(ev.fraction * BAR_WIDTH))
            bar = f"[{'#' * done}{'-' * (BAR_WIDTH - done)}] {int(ev.fraction * 100):3d}%"
        text = " ".join(x for x in (self.label, bar, describe(ev), f"{ev.elapsed:.1f} s") if x)
        if len(text) > width - 1:
            text = text[: max(width - 2, 1)] + "…"
        self._bar_text = "\r" + text + "\x1b[K"
        self._write(self._bar_text)
        self._drawn = True

    def say(self, text: str, *, always: bool = False) -> None:
        """Write one whole line (a warning, a failure) on the stream; on a terminal above the
        bar, which is drawn again below it. Nothing with ``-q`` unless ``always``."""
        with self._lock:
            if self.mode == "bar" and self._drawn:
                self._write("\r\x1b[K" + text + "\n" + self._bar_text)
            elif self.mode != "off" or always:
                self._write(text + "\n")

    def _lines(self, ev: ProgressEvent) -> None:
        now = time.monotonic()
        figures = (ev.incumbent, ev.bound)
        if ev.phase != (self._last_phase or ""):
            show = True
            if self._pending is not None and self._pending.phase == self._last_phase:
                self._line(self._pending)  # how the phase ended, held back by the rate limit
        elif ev.message != (self._last_message or "") and ev.message:
            show = now - self._last_message_line >= MESSAGE_LINE_S
        elif figures != self._last_figures and figures != (None, None):
            show = now - self._last_figures_line >= BOUND_LINE_S
        else:
            show = False
        if not show:
            if figures != self._last_figures or ev.message != self._last_message:
                self._pending = ev
            return
        self._line(ev)
        self._pending = None

    def _line(self, ev: ProgressEvent) -> None:
        now = time.monotonic()
        if ev.message != self._last_message or ev.phase != self._last_phase:
            self._last_message_line = now
        if (ev.incumbent, ev.bound) != self._last_figures:
            self._last_figures_line = now
        self._last_phase, self._last_message = ev.phase, ev.message
        self._last_figures = (ev.incumbent, ev.bound)
        head = f"inaplanner: {self.label}: " if self.label else "inaplanner: "
        frac = "" if ev.fraction is None else f"{int(ev.fraction * 100):3d}% "
        self._write(f"{head}{frac}{describe(ev)} [{ev.elapsed:.1f} s]\n")

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # a closed pipe must not stop the work
            self.mode = "off"


@contextmanager
def cancel_on_sigint(progress: Progress, stream: TextIO | None = None,
                     note: str = "") -> Iterator[Progress]:
    """While the block runs, the first Ctrl-C asks ``progress`` to cancel (the work raises
    :class:`~inaplanner.errors.Cancelled` at its next check), the second raises KeyboardInterrupt.
    Outside the main thread it does nothing (signals are only delivered there)."""
    if threading.current_thread() is not threading.main_thread():
        yield progress
        return

    def on_sigint(signum: int, frame: object) -> None:
        if progress.cancelled:
            raise KeyboardInterrupt
        progress.cancel()
        try:
            what = f"cancelling ({note}); " if note else "cancelling; "
            (stream or sys.stderr).write(f"\ninaplanner: {what}Ctrl-C again to stop at once\n")
        except (OSError, ValueError):
            pass

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        yield progress
    finally:
        signal.signal(signal.SIGINT, previous)


def progress_mode(args: argparse.Namespace) -> str:
    """``off`` with ``-q``, else ``auto``."""
    return "off" if getattr(args, "quiet", None) else "auto"


@contextmanager
def cli_progress(args: argparse.Namespace, label: str = "") -> Iterator[Progress]:
    """A Progress for one command: shown on stderr as the root flags ask, cancelled by Ctrl-C."""
    progress = Progress()
    with TerminalProgress(progress, sys.stderr, mode=progress_mode(args), label=label), \
            cancel_on_sigint(progress):
        yield progress
