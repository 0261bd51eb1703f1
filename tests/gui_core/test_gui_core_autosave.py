"""Safety of work: a real process crashes with unsaved work; the next window restores it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from PySide6.QtWidgets import QMessageBox

from inaplanner.gui.autosave import EVERY_COMMANDS, orphans
from inaplanner.io.native import load_scenario, save_scenario

CRASHING_SESSION = textwrap.dedent(
    """
    import os, sys
    from PySide6.QtWidgets import QApplication
    app = QApplication([])
    from inaplanner.gui.main_window import MainWindow
    w = MainWindow(plugins=False, theme_mode="light")
    w.headless_errors = True
    assert w.files.open_path(sys.argv[1])
    for i in range(int(sys.argv[2])):
        w.editor.set_link(0, capacity=float(i + 1))
    w.editor.set_node("L1", pipelines=3, port_pipeline=None)
    w.autosave.wait()  # written on a thread of its own: the crash comes once it has ended
    print(w.autosave.saves, flush=True)
    os._exit(17)  # a crash: no close, no clean-up
    """
)


def crash(tmp_path, scenario_path, recovery_dir, edits):
    script = tmp_path / "session.py"
    script.write_text(CRASHING_SESSION)
    env = dict(os.environ, INAPLANNER_RECOVERY_DIR=str(recovery_dir), QT_QPA_PLATFORM="offscreen")
    proc = subprocess.run([sys.executable, str(script), str(scenario_path), str(edits)], env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 17, proc.stderr
    return int(proc.stdout.strip())


def test_restore_after_a_crash(make_window, small, tmp_path, recovery_dir):
    path = tmp_path / "work.json"
    save_scenario(small, path)
    # 20 commands: the 20th triggers an autosave; the 21st edit comes after it and is lost
    saves = crash(tmp_path, path, recovery_dir, EVERY_COMMANDS - 1)
    assert saves == 1
    left = orphans(recovery_dir)
    assert len(left) == 1
    w = make_window()
    w.answers["restore"] = QMessageBox.StandardButton.Yes
    assert w.autosave.offer_restore()
    sc = w.scenario()
    assert sc.links[0].capacity == float(EVERY_COMMANDS - 1)
    assert sc.node("L1").pipelines == 3  # the 20th command was autosaved
    assert "x-inaplanner-recovery" not in sc.extra
    assert w.document.path == str(path)
    assert w.is_modified() and "*" in w.windowTitle()
    # the original file is untouched until the user saves
    assert load_scenario(path).links[0].capacity == 100.0
    assert orphans(recovery_dir) == []
    # undoing new edits never makes restored work look saved
    w.editor.set_link(1, capacity=5.0)
    w.undo_stack.undo()
    assert w.is_modified()
    assert w.files.save()
    assert not w.is_modified() and load_scenario(path).node("L1").pipelines == 3
    assert not w.autosave.path.exists()


def test_declining_removes_the_recovery_file_and_a_clean_close_leaves_none(make_window, small, tmp_path, recovery_dir):
    path = tmp_path / "work.json"
    save_scenario(small, path)
    crash(tmp_path, path, recovery_dir, EVERY_COMMANDS + 5)
    w = make_window()
    w.answers["restore"] = QMessageBox.StandardButton.No
    assert not w.autosave.offer_restore()
    assert orphans(recovery_dir) == []
    assert w.scenario().nodes == []
    # unsaved work is written by the timer's tick, and removed when the window closes cleanly
    w.set_document(small, str(path))
    w.editor.set_link(0, capacity=1.0)
    w.autosave.tick()
    w.autosave.wait()
    assert w.autosave.path.exists()
    w.answers["unsaved"] = QMessageBox.StandardButton.Cancel
    assert not w.close()  # cancelled: stays open, file kept
    assert w.autosave.path.exists()
    w.answers["unsaved"] = QMessageBox.StandardButton.Discard
    assert w.close()
    assert not w.autosave.path.exists()
