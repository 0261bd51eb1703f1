"""Fixtures of the truth tests: the main window offscreen (no plug-ins, errors recorded instead of
dialogs) with isolated settings and recovery directories, as in the GUI core tests."""

from __future__ import annotations

import os
import tempfile

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
_STATE = tempfile.mkdtemp(prefix="inaplanner-truth-")
os.environ.setdefault("XDG_CONFIG_HOME", os.path.join(_STATE, "config"))
os.environ.setdefault("XDG_STATE_HOME", os.path.join(_STATE, "state"))

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402


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
