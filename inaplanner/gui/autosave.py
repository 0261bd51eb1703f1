"""Safety of work: a recovery file written every minute and every 20 commands, offered back on the
next start after a crash, removed on a clean close.

Each running window owns ``recovery-<pid>-<n>.json`` in the recovery directory (``$INAPLANNER_RECOVERY_DIR``,
else the user's state directory). It is a normal scenario file (atomic write) with one extra key,
``x-inaplanner-recovery``, naming the file the user was editing. A recovery file whose process is no
longer running is an orphan: the next window offers to restore it.
"""

from __future__ import annotations

import itertools
import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QMessageBox

from inaplanner.errors import InaplannerError
from inaplanner.gui.editor import watch
from inaplanner.gui.filejobs import FileJob, describe, snapshot, write_document
from inaplanner.io.native import read_json, scenario_from_dict

if TYPE_CHECKING:
    from inaplanner.gui.protocols import PanelHost

INTERVAL_MS = 60_000
EVERY_COMMANDS = 20
RECOVERY_KEY = "x-inaplanner-recovery"
_counter = itertools.count(1)


def default_directory() -> Path:
    env = os.environ.get("INAPLANNER_RECOVERY_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "inaplanner" / "recovery"


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _pid_of(path: Path) -> int:
    parts = path.stem.split("-")
    try:
        return int(parts[1])
    except (IndexError, ValueError):
        return -1


def orphans(directory: Path) -> list[Path]:
    """Recovery files left by processes that are gone, newest first."""
    if not directory.is_dir():
        return []
    found = [p for p in directory.glob("recovery-*.json") if not _pid_alive(_pid_of(p))]
    return sorted(found, key=lambda p: p.stat().st_mtime, reverse=True)


def read_recovery(path: Path) -> tuple[Any, str | None]:
    """(scenario, the path the user was editing) from a recovery file."""
    doc = read_json(path)
    meta = doc.pop(RECOVERY_KEY, {}) if isinstance(doc, dict) else {}
    sc = scenario_from_dict(doc, str(path), tree_checked=True)
    original = meta.get("path") if isinstance(meta, dict) else None
    return sc, original if isinstance(original, str) else None


class Autosave(QObject):
    """Writes the window's scenario to its recovery file while there are unsaved changes."""

    def __init__(self, window: PanelHost, directory: str | os.PathLike[str] | None = None) -> None:
        super().__init__(window)
        self.window = window
        self.directory = Path(directory) if directory is not None else default_directory()
        self.path = self.directory / f"recovery-{os.getpid()}-{next(_counter)}.json"
        self.commands_since = 0
        self.saves = 0
        self._dirty = False
        self._job: FileJob | None = None  # the write under way
        self.timer = QTimer(self)
        self.timer.setInterval(INTERVAL_MS)
        self.timer.timeout.connect(self.tick)
        self.timer.start()
        window.undo_stack.indexChanged.connect(self._on_command)
        watch(self, window.document, self._mark)

    def _mark(self, _event: object = None) -> None:
        self._dirty = True

    def _on_command(self, _index: int) -> None:
        self._dirty = True
        self.commands_since += 1
        if self.commands_since >= EVERY_COMMANDS:
            self.save_now()

    def tick(self) -> None:
        """The timer: save when something changed since the last save."""
        if self._dirty:
            self.save_now()

    def save_now(self) -> Path | None:
        """Write the recovery file (only while the document has unsaved changes): the snapshot
        now, the text and the write on a thread of their own (3.4 s at fat-tree k=64, every minute
        of editing, used to freeze the window). While one is written the next waits for the
        timer. The path, or None when nothing is to be written."""
        self.commands_since = 0
        self._dirty = False
        doc = self.window.document
        if not doc.modified:
            self.discard()
            return None
        if self._job is not None:
            self._settle()
            if self._job is not None:  # still writing the one before
                self._dirty = True
                return self.path
        data = {**snapshot(doc), RECOVERY_KEY: {"path": doc.path, "pid": os.getpid(), "time": time.time()}}
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            self.window.status(f"autosave failed: {describe(exc, str(self.directory))}")
            return None
        target = str(self.path)
        job = FileJob("autosave", lambda job: write_document(data, target, job, check=False))
        job.finished.connect(self._settle)
        self._job = job
        job.start()
        return self.path

    def _settle(self) -> None:
        """The write ended: count it, or say why it failed (a full disk must not stop the work)."""
        job = self._job
        if job is None or not job.isFinished():
            return
        job.wait()
        self._job = None
        if job.error is not None:
            self.window.status(f"autosave failed: {describe(job.error, str(self.path))}")
        elif job.result is not None:
            self.saves += 1

    def wait(self) -> None:
        """Until the write under way has ended."""
        if self._job is not None:
            self._job.wait()
            self._settle()

    def discard(self) -> None:
        self.wait()  # a write ending later would bring the file back
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass
        except OSError:
            pass

    def finish(self) -> None:
        """A clean close: stop and remove the recovery file."""
        self.timer.stop()
        self.discard()

    # ---- after a crash -----------------------------------------------------------------------

    def orphans(self) -> list[Path]:
        return [p for p in orphans(self.directory) if p != self.path]

    def offer_restore(self) -> bool:
        """If a crashed session left a recovery file, ask whether to restore it (``answers['restore']``
        answers without a dialog). Restored work stays unsaved; the files are then removed."""
        found = self.orphans()
        if not found:
            return False
        newest = found[0]
        try:
            meta = json.loads(newest.read_text("utf-8")).get(RECOVERY_KEY, {})
        except (OSError, ValueError, AttributeError):
            meta = {}
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(newest.stat().st_mtime))
        what = meta.get("path") or "an unsaved scenario" if isinstance(meta, dict) else "a scenario"
        answer = self.window.ask(
            "restore",
            "Restore unsaved work?",
            f"inaplanner did not close cleanly. Restore the work on {what} autosaved at {when}?",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.Yes,
        )
        if answer != QMessageBox.StandardButton.Yes:
            for p in found:
                p.unlink(missing_ok=True)
            return False
        job = self.window.files.jobs.run(f"restoring {newest.name}", lambda _job: read_recovery(newest))
        if job.error is not None:
            self.window.show_error("Cannot restore", describe(job.error, str(newest)))
            if isinstance(job.error, InaplannerError):
                newest.rename(newest.with_suffix(".bad"))
            return False
        if job.stopped or job.result is None:
            self.window.status(f"restoring {newest.name} stopped: it is offered again at the next start")
            return False
        sc, original = job.result
        self.window.set_document(sc, original, modified=True)
        for p in found:
            p.unlink(missing_ok=True)
        self.save_now()
        self.window.status(f"restored unsaved work from {newest.name}")
        return True
