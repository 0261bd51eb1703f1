"""Opening, importing, saving and exporting scenario files; the recent-files list.

Every format goes through ``inaplanner.io``: native JSON (``load_scenario``/``save_scenario``, atomic)
and the foreign ones (GraphML, Topology Zoo GML, node-link JSON) through ``import_scenario`` /
``export_scenario``. A file that cannot be read shows ONE error dialog with the loader's message and
the open document stays exactly as it was.

Opening, saving and exporting run off the window's thread (:mod:`inaplanner.gui.filejobs`): at
fat-tree k=64 they froze the window 7, 6 and 16 s.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QFileDialog

from inaplanner.errors import InaplannerError, ValidationError
from inaplanner.gui.filejobs import FileJob, JobRunner, base, describe, snapshot, write_document
from inaplanner.io.formats import export_document, import_scenario, kind_of
from inaplanner.io.native import SCENARIO_FORMAT, read_json, scenario_from_dict
from inaplanner.model import Scenario
from inaplanner.topologies.layout import auto_layout
from inaplanner.views.semantic import prepare

if TYPE_CHECKING:
    from inaplanner.gui.protocols import PanelHost

OPEN_FILTER = "Scenarios (*.json *.graphml *.gml);;inaplanner JSON (*.json);;GraphML (*.graphml);;GML (*.gml);;All files (*)"
SAVE_FILTER = "inaplanner JSON (*.json)"
EXPORT_FILTER = "GraphML (*.graphml);;GML (*.gml);;inaplanner JSON (*.json)"
MAX_RECENT = 10


def settings() -> QSettings:
    return QSettings("inaplanner", "inaplanner")


def read_scenario(path: str, step: Callable[[], None] = lambda: None,
                  ahead: bool = False) -> tuple[Scenario, list[str], bool]:
    """(scenario, notes, is_native) for any supported file; raises ValidationError on a bad one.
    Nodes without positions are laid out (noted). ``step()`` is called between the steps (a file
    job's stop point); ``ahead`` also makes what the canvas derives from the network (on the
    job's thread, not the window's)."""
    kind = kind_of(path)
    native = False
    if kind == "json":
        doc = read_json(path)
        step()
        if isinstance(doc, dict) and doc.get("format") == SCENARIO_FORMAT:
            sc, notes, native = scenario_from_dict(doc, path, tree_checked=True), [], True
        else:
            sc, notes = import_scenario(path)
    else:
        sc, notes = import_scenario(path)
    step()
    if any(n.pos is None for n in sc.nodes):
        auto_layout(sc)
        notes = [*notes, "nodes had no positions: laid out automatically"]
    if ahead:
        step()
        prepare(sc)
    return sc, list(notes), native


class FileController:
    """File actions of a window."""

    def __init__(self, window: PanelHost) -> None:
        self.window = window
        self.jobs = JobRunner(window.statusBar())
        self.last_notes: list[str] = []

    # ---- opening -------------------------------------------------------------------------------

    def new(self) -> None:
        if self.window.confirm_discard():
            self.window.set_document(Scenario("untitled"), None)

    def open_dialog(self) -> None:
        if not self.window.confirm_discard():
            return
        path, _ = QFileDialog.getOpenFileName(self.window, "Open scenario", self._start_dir(), OPEN_FILTER)
        if path:
            self.open_path(path, confirm=False)

    def open_path(self, path: str, confirm: bool = True) -> bool:
        """Open or import ``path``. A native file keeps its path (Save writes it back); an imported
        one has none until saved. On a bad file: one error dialog, the document unchanged."""
        if confirm and not self.window.confirm_discard():
            return False
        path = os.fspath(path)
        loaded = self.read(path)
        if loaded is None:
            return False
        sc, notes, native = loaded
        self.window.set_document(sc, path if native else None, validated=True)
        self.last_notes = notes
        self.add_recent(path)
        msg = f"opened {os.path.basename(path)}: {len(sc.nodes)} nodes, {len(sc.links)} links, {len(sc.jobs)} jobs"
        if notes:
            msg += " (" + "; ".join(notes[:3]) + ("; ..." if len(notes) > 3 else "") + ")"
        self.window.status(msg)
        return True

    def read(self, path: str) -> tuple[Scenario, list[str], bool] | None:
        """:func:`read_scenario` in a file job while the window goes on; None when it failed (one
        error dialog) or was stopped. Edits made meanwhile are not dropped unasked."""
        doc = self.window.document
        generation = doc.generation
        loaded = self.work(f"opening {base(path)}", "Cannot open file",
                           lambda job: read_scenario(path, job.check, ahead=True), path,
                           stopped=f"opening {base(path)} stopped: the scenario is as it was",
                           discard_on_stop=True)
        if loaded is None or (doc.generation != generation and not self.window.confirm_discard()):
            return None
        return loaded

    def work(self, what: str, title: str, fn: Callable[[FileJob], Any], path: str = "",
             stopped: str = "", discard_on_stop: bool = False) -> Any:
        """``fn(job)`` in a file job while the window goes on: its result, or None when it failed
        (one error dialog with ``title``; ``path`` names the file of a system error) or was
        stopped (the status bar says ``stopped``, or that ``what`` stopped).

        ``discard_on_stop``: work with no effect outside the job (opening, generating) whose Stop
        came after its last step point, while the window had not yet used the result, is
        stopped all the same, as Stop's tooltip says: nothing is opened. Work that writes keeps
        its result: what it wrote is written, and the window says so."""
        try:
            job = self.jobs.run(what, fn)
        except InaplannerError as exc:  # another file job is under way
            self.window.status(str(exc))
            return None
        if job.error is not None:
            self.window.show_error(title, describe(job.error, path))
            return None
        if job.result is None or (discard_on_stop and job.stopped):
            self.window.status(stopped or f"{what} stopped")
            return None
        return job.result

    # ---- saving --------------------------------------------------------------------------------

    def save(self) -> bool:
        path = self.window.document.path
        if not path:
            return self.save_as_dialog()
        return self.save_to(path)

    def save_as_dialog(self) -> bool:
        start = self.window.document.path or os.path.join(self._start_dir(), _safe_name(self.window.scenario().name) + ".json")
        path, _ = QFileDialog.getSaveFileName(self.window, "Save scenario", start, SAVE_FILTER)
        if not path:
            return False
        if not path.lower().endswith(".json"):
            path += ".json"
        return self.save_to(path)

    def save_to(self, path: str) -> bool:
        """Save as native JSON (atomic); the document then belongs to ``path`` and is clean.

        The snapshot is taken now; the checks, the text and the write run in a file job. Edits
        made while it runs are not in the file, so the document then stays modified."""
        path = os.fspath(path)
        if kind_of(path) != "json":
            exc = ValidationError("save writes inaplanner JSON (.json); use Export for GraphML or GML", source=path)
            self.window.show_error("Cannot save", str(exc))
            return False
        document = self.window.document
        doc = snapshot(document)
        generation = document.generation
        if self.work(f"saving {base(path)}", "Cannot save", lambda job: write_document(doc, path, job),
                     path, stopped=f"saving {base(path)} stopped: nothing was written") is None:
            return False
        self.add_recent(path)
        if document.generation != generation:
            document.path = path
            self.window.update_title()
            self.window.status(f"saved {path}, without the edits made while it was written (still unsaved)")
            return True
        self.window.undo_stack.setClean()
        document.set_clean(path)
        self.window.update_title()
        self.window.autosave.discard()
        self.window.status(f"saved {path}")
        return True

    def export_dialog(self) -> bool:
        start = os.path.join(self._start_dir(), _safe_name(self.window.scenario().name) + ".graphml")
        path, _ = QFileDialog.getSaveFileName(self.window, "Export scenario", start, EXPORT_FILTER)
        return bool(path) and self.export_to(path)

    def export_to(self, path: str) -> bool:
        """Write the scenario in the format of the extension; the document keeps its own path.
        The snapshot is written in a file job (GraphML of fat-tree k=64 takes 17 s)."""
        doc = snapshot(self.window.document)
        if self.work(f"exporting {base(path)}", "Cannot export",
                     lambda job: export_document(doc, path, step=job.check) or path, path,
                     stopped=f"exporting {base(path)} stopped: nothing was written") is None:
            return False
        self.window.status(f"exported {path}")
        return True

    # ---- recent files --------------------------------------------------------------------------

    def recent(self) -> list[str]:
        value = settings().value("recent_files", [])
        if isinstance(value, str):
            value = [value]
        return [str(p) for p in (value or []) if p]

    def add_recent(self, path: str) -> None:
        full = os.path.abspath(path)
        paths = [full] + [p for p in self.recent() if p != full]
        s = settings()
        s.setValue("recent_files", paths[:MAX_RECENT])
        s.sync()

    def _start_dir(self) -> str:
        recent = self.recent()
        return os.path.dirname(recent[0]) if recent else os.getcwd()


def _safe_name(name: str) -> str:
    keep = "".join(c if c.isalnum() or c in "-_." else "_" for c in name.strip())
    return keep or "scenario"
