"""Fixtures of the truth tests: the main window offscreen (no plug-ins, errors recorded instead of
dialogs) with isolated settings and recovery directories, as in the GUI core tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def window(qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from PySide6.QtWidgets import QMessageBox

    from inaplanner.gui.main_window import MainWindow

    monkeypatch.setenv("INAPLANNER_RECOVERY_DIR", str(tmp_path / "recovery"))
    w = MainWindow(None, plugins=False, theme_mode="light")
    w.headless_errors = True
    w.answers["unsaved"] = QMessageBox.StandardButton.Discard
    qtbot.addWidget(w)
    yield w
    w.autosave.finish()
