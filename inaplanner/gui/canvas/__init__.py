"""The network canvas: a scene that mirrors the document, a view with tools, and overlay painting."""

from inaplanner.gui.canvas.items import LinkItem, NodeItem
from inaplanner.gui.canvas.scene import CanvasScene
from inaplanner.gui.canvas.view import TOOLS, Canvas

__all__ = ["TOOLS", "Canvas", "CanvasScene", "LinkItem", "NodeItem"]
