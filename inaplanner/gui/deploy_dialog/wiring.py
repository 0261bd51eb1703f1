"""The Deploy menu on the main window: Deploy… opens the dialog, Start emulated testbed opens it
and starts emulated switches for the open scenario. The dialog is made on first use and kept;
on application exit a running deployment is cancelled (rolled back) and emulators are stopped."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QApplication

from inaplanner.gui.deploy_dialog.dialog import DeployDialog

DEPLOY_SHORTCUT = "Ctrl+Shift+D"


class DeployPlugin:
    """What ``install`` leaves on the window (``window.deploy``)."""

    def __init__(self, window: Any) -> None:
        self.window = window
        self.dialog: DeployDialog | None = None
        menu = window.menu("Deploy")
        self.deploy_action = window.action(
            "deploy", "&Deploy…", self.open, DEPLOY_SHORTCUT,
            "Deploy a plan onto a testbed: dry-run diff, install with progress, cancel and "
            "rollback")
        self.emulate_action = window.action(
            "deploy_emulated", "Start &emulated testbed", self.open_emulated, None,
            "Start emulated P4Runtime switches for the open scenario and open the Deploy dialog "
            "on them (no hardware needed)")
        menu.addAction(self.deploy_action)
        menu.addAction(self.emulate_action)

    def open(self) -> DeployDialog:
        """Show the dialog (made on first use), with the currently selected result."""
        if self.dialog is None:
            self.dialog = DeployDialog(self.window)
            planning = getattr(self.window, "planning", None)
            if planning is not None:
                planning.results_panel.current_changed.connect(
                    lambda _r: self.dialog.refresh_sources() if self.dialog is not None else None)
        self.dialog.refresh_sources()
        self.dialog.show()
        self.dialog.raise_()
        self.dialog.activateWindow()
        return self.dialog

    def open_emulated(self) -> DeployDialog:
        dialog = self.open()
        dialog.start_emulated()
        return dialog

    def shutdown(self) -> None:
        """Cancel a running deployment (it rolls back), wait for it, stop the emulators."""
        dialog = self.dialog
        if dialog is None:
            return
        try:
            dialog.shutdown()
        except RuntimeError:  # the dialog went with its window: only the emulators are left
            tb = getattr(dialog, "emulated", None)
            if tb is not None:
                tb.stop()


def install(window: Any) -> DeployPlugin:
    """Plug-in entry (``PLUGIN_MODULES`` of the main window): add the Deploy menu (Deploy…, Start
    emulated testbed) to ``window``; return the plug-in object (``window.deploy``)."""
    plugin = DeployPlugin(window)
    window.deploy = plugin
    app = QApplication.instance()
    if app is not None:
        app.aboutToQuit.connect(plugin.shutdown)
    window.destroyed.connect(lambda *_: plugin.shutdown())
    return plugin
