"""Opening, importing, saving and exporting scenario files; the recent-files list.

Every format goes through ``inaplanner.io``: native JSON (``load_scenario``/``save_scenario``, atomic)
and the foreign ones (GraphML, Topology Zoo GML, node-link JSON) through ``import_scenario`` /
``export_scenario``. A file that cannot be read shows ONE error dialog with the loader's message and
the open document stays exactly as it was.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QFileDialog

from inaplanner.errors import InaplannerError, ValidationError
from inaplanner.io.formats import export_scenario, import_scenario, kind_of
from inaplanner.io.native import SCENARIO_FORMAT, read_json, save_scenario, scenario_from_dict
from inaplanner.model import Scenario
from inaplanner.topologies.layout import auto_layout

if TYPE_CHECKING:
    from inaplanner.gui.protocols import PanelHost

OPEN_FILTER = "Scenarios (*.json *.graphml *.gml);;inaplanner JSON (*.json);;GraphML (*.graphml);;GML (*.gml);;All files (*)"
SAVE_FILTER = "inaplanner JSON (*.json)"
EXPORT_FILTER = "GraphML (*.graphml);;GML (*.gml);;inaplanner JSON (*.json)"
MAX_RECENT = 10


def settings() -> QSettings:
    return QSettings("inaplanner", "inaplanner")


def read_scenario(path: str) -> tuple[Scenario, list[str], bool]:
    """(scenario, notes, is_native) for any supported file; raises ValidationError on a bad one.
    Nodes without positions are laid out (noted)."""
    kind = kind_of(path)
    native = False
    if kind == "json":
        doc = read_json(path)
        if isinstance(doc, dict) and doc.get("format") == SCENARIO_FORMAT:
            sc, notes, native = scenario_from_dict(doc, path, tree_checked=True), [], True
        else:
            sc, notes = import_scenario(path)
    else:
        sc, notes = import_scenario(path)
    if any(n.pos is None for n in sc.nodes):
        auto_layout(sc)
        notes = [*notes, "nodes had no positions: laid out automatically"]
    return sc, list(notes), native


class FileController:
    """File actions of a window."""

    def __init__(self, window: PanelHost) -> None:
        self.window = window
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
        try:
            sc, notes, native = read_scenario(path)
        except InaplannerError as exc:
            self.window.show_error("Cannot open file", str(exc))
            return False
        except OSError as exc:
            self.window.show_error("Cannot open file", f"{path}: {exc.strerror or exc}")
            return False
        self.window.set_document(sc, path if native else None, validated=True)
        self.last_notes = notes
        self.add_recent(path)
        msg = f"opened {os.path.basename(path)}: {len(sc.nodes)} nodes, {len(sc.links)} links, {len(sc.jobs)} jobs"
        if notes:
            msg += " (" + "; ".join(notes[:3]) + ("; ..." if len(notes) > 3 else "") + ")"
        self.window.status(msg)
        return True

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
        """Save as native JSON (atomic); the document then belongs to ``path`` and is clean."""
        path = os.fspath(path)
        try:
            if kind_of(path) != "json":
                raise ValidationError("save writes inaplanner JSON (.json); use Export for GraphML or GML", source=path)
            save_scenario(self.window.scenario(), path)
        except InaplannerError as exc:
            self.window.show_error("Cannot save", str(exc))
            return False
        except OSError as exc:
            self.window.show_error("Cannot save", f"{path}: {exc.strerror or exc}")
            return False
        self.window.undo_stack.setClean()
        self.window.document.set_clean(path)
        self.window.update_title()
        self.window.autosave.discard()
        self.add_recent(path)
        self.window.status(f"saved {path}")
        return True

    def export_dialog(self) -> bool:
        base = os.path.join(self._start_dir(), _safe_name(self.window.scenario().name) + ".graphml")
        path, _ = QFileDialog.getSaveFileName(self.window, "Export scenario", base, EXPORT_FILTER)
        return bool(path) and self.export_to(path)

    def export_to(self, path: str) -> bool:
        """Write the scenario in the format of the extension; the document keeps its own path."""
        try:
            export_scenario(self.window.scenario(), path)
        except InaplannerError as exc:
            self.window.show_error("Cannot export", str(exc))
            return False
        except OSError as exc:
            self.window.show_error("Cannot export", f"{path}: {exc.strerror or exc}")
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
