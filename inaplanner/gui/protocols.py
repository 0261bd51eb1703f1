"""What one part of the GUI needs from the part that owns it, as typing protocols.

* :class:`PanelHost`: the main window builds its panels (file commands, inspector, jobs panel,
  autosave) and hands itself in; the panels are typed against this protocol instead of importing
  ``MainWindow``, which imports them.
* :class:`SceneControl`: the canvas scene builds its graphics items and hands itself in; the items
  (``gui/canvas/items.py``) read the scene's arrays through this protocol instead of importing
  ``scene.py``, which imports them.

So there is no import cycle inside ``gui/`` (tests/house/test_layers.py checks it). This module
imports no GUI module but the theme (for a type).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from PySide6.QtCore import SignalInstance
from PySide6.QtGui import QUndoStack
from PySide6.QtWidgets import QMessageBox

if TYPE_CHECKING:
    from inaplanner.gui.theme import CanvasColours
    from inaplanner.model import Scenario
    from inaplanner.model.document import ScenarioDocument
    from inaplanner.views.overlay import Overlay


class Discardable(Protocol):
    """The window's autosave as the file commands see it."""

    def discard(self) -> None: ...


class CanvasLike(Protocol):
    """The window's canvas as the panels see it."""

    selection_changed: SignalInstance

    def canvas_scene(self) -> Any: ...

    def selected_nodes(self) -> list[str]: ...


class PanelHost(Protocol):
    """The window a panel lives in (a ``QMainWindow``, also the panels' Qt parent)."""

    document: ScenarioDocument
    undo_stack: QUndoStack
    editor: Any  # inaplanner.gui.editor.Editor
    canvas: CanvasLike
    autosave: Discardable

    def scenario(self) -> Scenario: ...

    def show_error(self, title: str, message: str) -> None: ...

    def status(self, message: str, timeout_ms: int = 8000) -> None: ...

    def guard(self, title: str, fn: Callable[[], Any]) -> Any: ...

    def ask(self, key: str, title: str, text: str, buttons: QMessageBox.StandardButton,
            default: QMessageBox.StandardButton) -> QMessageBox.StandardButton: ...

    def set_document(self, scenario: Scenario, path: str | None, modified: bool = False,
                     validated: bool = False) -> None: ...

    def confirm_discard(self) -> bool: ...

    def update_title(self) -> None: ...


class SceneControl(Protocol):
    """The canvas scene as its graphics items see it: arrays per node and link, the overlay and
    the selection (``inaplanner.gui.canvas.scene.CanvasScene``)."""

    colours: CanvasColours
    overlay: Overlay | None
    selected_links: set[int]
    node_ids: list[str]
    node_index: dict[str, int]
    node_is_switch: list[bool]
    node_xy: np.ndarray
    node_colour: list[str]
    link_segments: np.ndarray
    link_capacity: np.ndarray
    link_layer: Any  # the scene's inaplanner.gui.canvas.items.LinkLayer

    def selected_node_ids(self) -> list[str]: ...

    def node_label(self, node_id: str) -> str: ...

    def node_tooltip(self, node_id: str) -> str: ...

    def link_label(self, index: int) -> str: ...

    def link_tooltip(self, index: int) -> str: ...

    def port_labels(self) -> np.ndarray: ...
