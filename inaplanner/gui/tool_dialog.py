"""A Tools-menu entry that opens one long-lived dialog, and stops its work with the window.

The Tools dialogs (memory sharing, resilience sweep) run work off the UI thread; the plug-in that
owns such a dialog adds the menu action, opens (or raises) the one dialog, and cancels its work when
the window goes away.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtWidgets import QDialog


class ToolDialogPlugin:
    """What ``install`` leaves on the window (``window.<attribute>``)."""

    def __init__(self, window: Any, attribute: str, factory: Callable[[Any], QDialog], *, name: str,
                 text: str, shortcut: str, tip: str) -> None:
        self.window = window
        self.factory = factory
        self.dialog: Any = None
        self.action = window.action(name, text, self.open, shortcut, tip)
        window.menu("Tools").addAction(self.action)
        setattr(window, attribute, self)
        window.destroyed.connect(lambda *_: self.shutdown())

    def open(self) -> Any:
        if self.dialog is None:
            self.dialog = self.factory(self.window)
        refresh = getattr(self.dialog, "refresh", None)
        if refresh is not None:
            refresh()
        self.dialog.show()
        self.dialog.raise_()
        return self.dialog

    def shutdown(self) -> None:
        """Stop the dialog's work (the window is closing)."""
        if self.dialog is not None:
            try:
                self.dialog.cancel()
                wait = getattr(self.dialog, "wait", None)
                if wait is not None:
                    wait(10.0)
            except RuntimeError:  # already gone with its window
                pass
