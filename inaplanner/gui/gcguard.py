"""Process-wide Qt safety: Python's garbage collector on the UI thread only, and no mime data left
on the clipboard when the interpreter exits.

When automatic collection fires on a worker thread (a planner run, a deploy, a poll), it can free
Qt widgets there; their C++ destructors take Qt's locks and then wait for the GIL that the UI thread
holds while it waits for those locks: a deadlock, or a crash at exit. So automatic collection is
switched off and a UI-thread timer collects generation by generation when the counts pass the
usual thresholds: that is pyqtgraph's :class:`~pyqtgraph.util.garbage_collector.GarbageCollector`,
used here as is. This module only makes sure there is one per application.
"""

from __future__ import annotations

import atexit

import shiboken6
from pyqtgraph.util.garbage_collector import GarbageCollector
from PySide6.QtCore import QCoreApplication
from PySide6.QtGui import QGuiApplication

#: How often the UI thread looks at the collector's counts (seconds).
INTERVAL_S = 0.5

_INSTALLED: GarbageCollector | None = None


def ensure_main_thread_gc() -> GarbageCollector | None:
    """Start pyqtgraph's UI-thread collector once per application (a no-op without a Qt
    application). Call it from the UI thread: its timer lives in the calling thread. The timer is
    made a child of the application, so it goes with it and a new application gets a new one."""
    global _INSTALLED
    app = QCoreApplication.instance()
    if app is None:
        return None
    timer = None if _INSTALLED is None else _INSTALLED.timer
    if timer is None or not shiboken6.isValid(timer) or timer.parent() is not app:
        collector = GarbageCollector(interval=INTERVAL_S)
        collector.timer.setParent(app)
        _INSTALLED = collector
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
