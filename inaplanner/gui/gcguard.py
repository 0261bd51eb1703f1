"""Process-wide Qt safety: Python's garbage collector on the UI thread only, and no mime data left
on the clipboard when the interpreter exits.

Python's cyclic garbage collector, run on the UI thread only.

When automatic collection fires on a worker thread (a planner run, a deploy, a poll), it can free
Qt widgets there; their C++ destructors take Qt's locks and then wait for the GIL that the UI thread
holds while it waits for those locks: a deadlock, or a crash at exit. So, as pyqtgraph's
GarbageCollector does, automatic collection is switched off and a UI-thread timer collects
generation by generation when the counts pass the usual thresholds.
"""

from __future__ import annotations

import atexit
import gc

import shiboken6
from PySide6.QtCore import QCoreApplication, QObject, QTimer
from PySide6.QtGui import QGuiApplication

_INSTALLED: MainThreadGC | None = None


class MainThreadGC(QObject):
    def __init__(self, interval_ms: int = 500, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.threshold = gc.get_threshold()
        gc.disable()
        self.timer = QTimer(self)
        self.timer.timeout.connect(self.check)
        self.timer.start(interval_ms)

    def check(self) -> None:
        c0, c1, c2 = gc.get_count()
        t0, t1, t2 = self.threshold
        if c2 > t2:
            gc.collect(2)
        elif c1 > t1:
            gc.collect(1)
        elif c0 > t0:
            gc.collect(0)


def ensure_main_thread_gc() -> MainThreadGC | None:
    """Install the UI-thread collector once per application (a no-op without a Qt application)."""
    global _INSTALLED
    app = QCoreApplication.instance()
    if app is None:
        return None
    if _INSTALLED is None or not shiboken6.isValid(_INSTALLED) or _INSTALLED.parent() is not app:
        _INSTALLED = MainThreadGC(parent=app)
    return _INSTALLED


_CLIPBOARD_HOOK = False


def _clear_clipboard() -> None:
    app = QGuiApplication.instance()
    if app is not None and shiboken6.isValid(app):
        QGuiApplication.clipboard().clear()


def clear_clipboard_at_exit() -> None:
    """Mime data we put on the clipboard must be gone before the application object is destroyed
    during interpreter shutdown, or Qt frees it twice (a segfault at exit, seen with PySide6 6.11
    offscreen). Registered once, when something is first copied."""
    global _CLIPBOARD_HOOK
    if not _CLIPBOARD_HOOK:
        atexit.register(_clear_clipboard)
        _CLIPBOARD_HOOK = True
