"""Fixtures of the GUI core tests: the main window offscreen (no plug-ins, light colours), isolated
settings and recovery directories, small scenarios and a hand-made plan, and an Xvfb server for the
screenshot test."""

from __future__ import annotations

import os
import select
import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from inaplanner.io.native import scenario_sha256, scenario_to_dict
from inaplanner.model import Plan, PlannerInfo, Route, Scenario, TaskPlan
from inaplanner.topologies import leaf_spine


@pytest.fixture
def recovery_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "recovery"
    monkeypatch.setenv("INAPLANNER_RECOVERY_DIR", str(d))
    return d


@pytest.fixture
def make_window(qtbot, recovery_dir: Path):
    """Build main windows (offscreen, no plug-ins, errors recorded instead of dialogs)."""
    from PySide6.QtWidgets import QMessageBox

    from inaplanner.gui.main_window import MainWindow

    made = []

    def make(document=None, **kwargs):
        kwargs.setdefault("plugins", False)
        kwargs.setdefault("theme_mode", "light")
        w = MainWindow(document, **kwargs)
        w.headless_errors = True
        w.answers["unsaved"] = QMessageBox.StandardButton.Discard
        qtbot.addWidget(w)
        made.append(w)
        return w

    yield make
    for w in made:
        w.autosave.finish()


@pytest.fixture
def window(make_window):
    return make_window()


@pytest.fixture
def small() -> Scenario:
    """Leaf-spine 2x1x2: leaves L1, L2 (2 pipelines, programmable), spine S1, hosts H1..H4;
    job0: workers H2, H3, H4 -> PS H1."""
    sc = leaf_spine(2, 1, 2, host_capacity=100.0, fabric_capacity=100.0, name="small")
    for leaf in ("L1", "L2"):
        sw = sc.node(leaf)
        sw.programmable = True
        sw.pipelines = 2
    from inaplanner.model import Job

    sc.jobs.append(Job("job0", ["H2", "H3", "H4"], ["H1"]))
    sc.touch()
    sc.validate()
    return sc


@pytest.fixture
def hand_plan() -> Callable[[Scenario, float], Plan]:
    """A plan made by hand for the ``small`` scenario: H2 merges at L1; H3 and H4 merge at L2,
    whose aggregate(s) cross L2-S1-L1 and merge again at L1."""

    def make(sc: Scenario, rate: float) -> Plan:
        routes = [
            Route("H2", ["H2", "L1", "H1"], ["L1"]),
            Route("H3", ["H3", "L2", "S1", "L1", "H1"], ["L2", "L1"]),
            Route("H4", ["H4", "L2", "S1", "L1", "H1"], ["L2", "L1"]),
        ]
        return Plan(scenario_sha256(sc), PlannerInfo("by-hand", status="heuristic"),
                    [TaskPlan("job0", "H1", rate, routes)])

    return make


@pytest.fixture
def canonical() -> Callable[[Scenario], dict]:
    return scenario_to_dict


@pytest.fixture
def xvfb() -> Iterator[str]:
    """A real X server (Xvfb) on a display it picks itself (``-displayfd``: no clash with other
    tests starting X servers at the same time); yields the DISPLAY string."""
    binary = shutil.which("Xvfb")
    assert binary, "Xvfb is not installed (apt-get install xvfb)"
    read_fd, write_fd = os.pipe()
    proc = subprocess.Popen([binary, "-displayfd", str(write_fd), "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
                            pass_fds=(write_fd,), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    os.close(write_fd)
    try:
        number = b""
        deadline = time.monotonic() + 15
        while not number.endswith(b"\n") and time.monotonic() < deadline:
            ready, _, _ = select.select([read_fd], [], [], 0.2)
            if not ready:
                continue
            chunk = os.read(read_fd, 16)
            if not chunk:
                break
            number += chunk
        if not number.strip():
            raise RuntimeError(f"Xvfb did not start: {proc.stderr.read().decode(errors='replace') if proc.poll() is not None else 'timeout'}")
        display = f":{int(number)}"
        sock = f"/tmp/.X11-unix/X{int(number)}"
        while time.monotonic() < deadline:  # the display is announced once it accepts clients
            s = socket.socket(socket.AF_UNIX)
            try:
                s.connect(sock)
                break
            except OSError:
                time.sleep(0.05)
            finally:
                s.close()
        yield display
    finally:
        os.close(read_fd)
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
