"""The GUI's log file: in the platform's state folder (QStandardPaths), at the command line's level."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="XDG_STATE_HOME is Linux's")
def test_gui_logs_to_the_state_folder_at_the_cli_level(tmp_path):
    env = dict(os.environ, XDG_STATE_HOME=str(tmp_path / "state"),
               XDG_CONFIG_HOME=str(tmp_path / "config"), XDG_DATA_HOME=str(tmp_path / "data"),
               INAPLANNER_RECOVERY_DIR=str(tmp_path / "recovery"), QT_QPA_PLATFORM="offscreen")
    log = tmp_path / "state" / "inaplanner" / "inaplanner" / "inaplanner.log"

    def gui(*flags: str) -> None:
        run = subprocess.run([sys.executable, "-m", "inaplanner", *flags, "gui", "--screenshot",
                              str(tmp_path / "shot.png"), "--size", "400x300"],
                             capture_output=True, text=True, timeout=180, env=env)
        assert run.returncode == 0, run.stderr

    gui()  # default level WARNING: the file is there, the INFO line is not
    assert log.exists() and "started" not in log.read_text()
    gui("--log-level", "INFO")
    text = log.read_text()
    assert "INFO inaplanner.gui: inaplanner " in text and "started" in text and str(log) in text
