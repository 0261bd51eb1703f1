"""A window's long file work off its thread: opening, saving, exporting and generating a
scenario, the autosave, the Deploy dialog's reads.

At fat-tree k=64 (70,656 nodes, 196,608 links, a 35 MB file) reading and checking a scenario
takes 5-8 s, writing it 4-6 s, an autosave 3.4 s and a GraphML export 16 s. On the window's
thread each of them froze the window with no word of what it did; the autosave did it every
minute of editing. Here the work runs in a :class:`FileJob` (a ``QThread``, as the report
export: the Qt-free steps of ``io`` run there), while the status bar shows what it does with a
busy bar and **Stop**.

What stays on the window's thread is what touches the document or Qt's items: the snapshot of the
scenario a save writes (shared with the autosave and the planner runs of the same state, see
:func:`snapshot`), and putting an opened scenario in place.

A caller that needs the outcome (File > Open, Save, the close dialog's Save) waits in a local
event loop, like a modal dialog: the window goes on painting, zooming and answering meanwhile.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QEventLoop, QThread
from PySide6.QtWidgets import QLabel, QProgressBar, QStatusBar, QToolButton, QWidget

from inaplanner.errors import InaplannerError
from inaplanner.io.atomic import atomic_write_text
from inaplanner.io.native import check_writable, dumps_pretty, scenario_to_dict
from inaplanner.model.document import ScenarioDocument


class Stopped(Exception):
    """Raised by a job's work at a step boundary after :meth:`FileJob.stop`."""


def snapshot(document: ScenarioDocument) -> dict[str, Any]:
    """The canonical file document of ``document``'s scenario, made once per state of the
    document (0.2 s in the window at fat-tree k=64): a save, the autosave and the planner runs of
    one state share it. Nobody may modify it."""
    return document.memo("file document", lambda: scenario_to_dict(document.scenario))


def describe(exc: BaseException, path: str = "") -> str:
    """One line for a failed file job: the library's own message, or the file and the system's
    reason, or (a bug) the exception's type and text."""
    if isinstance(exc, InaplannerError):
        return str(exc)
    if isinstance(exc, OSError):
        where = exc.filename or path
        return f"{where}: {exc.strerror or exc}" if where else str(exc.strerror or exc)
    return f"{type(exc).__name__}: {exc}"


class FileJob(QThread):
    """``work(job)`` on a thread of its own. ``result`` or ``error`` hold the outcome when
    ``finished`` is emitted; ``stopped`` says Stop was asked (the work checks :meth:`check` between
    its steps and writes nothing after it: files are written atomically, at the end)."""

    def __init__(self, what: str, work: Callable[[FileJob], Any]) -> None:
        super().__init__()
        self.what = what
        self.work = work
        self.stopped = False
        self.result: Any = None
        self.error: BaseException | None = None

    def stop(self) -> None:
        self.stopped = True

    def check(self) -> None:
        """Between steps: end here when Stop was asked."""
        if self.stopped:
            raise Stopped

    def run(self) -> None:
        try:
            self.result = self.work(self)
        except Stopped:
            self.result = None
        except BaseException as exc:  # noqa: BLE001 - handed to the window's thread, which says it
            self.error = exc


def write_document(doc: dict[str, Any], path: str, job: FileJob, check: bool = True) -> str:
    """A job's work for a save: the document's own checks (``check``), the text, then the atomic
    write, with a stop point between each."""
    if check:
        check_writable(doc, path)
    job.check()
    text = dumps_pretty(doc)
    job.check()
    atomic_write_text(path, text)
    return path


def wait_for(job: FileJob) -> FileJob:
    """Start ``job`` and return once it has ended, the window's event loop running meanwhile (a
    local loop, as a modal dialog's): callers guard against being entered again."""
    loop = QEventLoop()
    job.finished.connect(loop.quit)
    job.start()
    if not job.isFinished():
        loop.exec()
    job.wait()
    return job


class BusyBar:
    """The status bar's part for a running file job: what it does, a busy bar, Stop."""

    def __init__(self, bar: QStatusBar) -> None:
        self.label = QLabel("")
        self.progress = QProgressBar()
        self.progress.setRange(0, 0)
        self.progress.setMaximumWidth(140)
        self.progress.setMaximumHeight(14)
        self.stop_button = QToolButton()
        self.stop_button.setText("Stop")
        self.stop_button.setToolTip("Stop it: nothing is opened or written")
        self.widgets: list[QWidget] = [self.label, self.progress, self.stop_button]
        for w in self.widgets:
            bar.addPermanentWidget(w)
            w.hide()

    def show(self, text: str) -> None:
        self.label.setText(text)
        for w in self.widgets:
            w.show()

    def hide(self) -> None:
        for w in self.widgets:
            w.hide()


class JobRunner:
    """Runs a window's file jobs, one at a time, and shows them in the status bar."""

    def __init__(self, status_bar: QStatusBar) -> None:
        self.busy = BusyBar(status_bar)
        self.busy.stop_button.clicked.connect(self.stop)
        self.current: FileJob | None = None

    @property
    def running(self) -> bool:
        return self.current is not None

    def run(self, what: str, work: Callable[[FileJob], Any]) -> FileJob:
        """Run ``work`` and wait for it with the window going on; the job once it has ended.

        A Stop waits for the step under way to end (at most a few seconds at k=64), so what
        the job did is known: a save that was already writing has written."""
        if self.current is not None:
            raise InaplannerError(f"{self.current.what} is under way: wait for it or Stop it")
        job = FileJob(what, work)
        self.current = job
        self.busy.show(what + "…")
        try:
            wait_for(job)
        finally:
            self.current = None
            self.busy.hide()
        return job

    def stop(self) -> None:
        job = self.current
        if job is not None and not job.stopped:
            job.stop()
            self.busy.label.setText(f"stopping {job.what}…")

    def finish(self, timeout_ms: int = 60_000) -> None:
        """The window closes: stop what runs and wait for its thread."""
        job = self.current
        if job is not None:
            job.stop()
            job.wait(timeout_ms)


def base(path: str) -> str:
    return os.path.basename(path) or path
