"""Fixtures of the canvas-at-scale tests: the main window offscreen (light colours, errors recorded),
a fat-tree k=8 with jobs, and a real planner's plan on it."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from inaplanner.model import Plan, Scenario
from inaplanner.topologies import fat_tree, mark_programmable, place_jobs


@pytest.fixture(autouse=True)
def _collect_on_the_main_thread():
    yield
    gc.collect()


@pytest.fixture
def make_window(qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from PySide6.QtWidgets import QMessageBox

    from inaplanner.gui.main_window import MainWindow

    monkeypatch.setenv("INAPLANNER_RECOVERY_DIR", str(tmp_path / "recovery"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # no settings leak to others
    made = []

    def make(plugins: bool = False) -> MainWindow:
        w = MainWindow(plugins=plugins, theme_mode="light")
        w.headless_errors = True
        w.answers["unsaved"] = QMessageBox.StandardButton.Discard
        w.resize(1600, 1000)
        qtbot.addWidget(w)
        made.append(w)
        return w

    yield make
    for w in made:
        planning = getattr(w, "planning", None)
        if planning is not None:
            planning.shutdown()
        w.autosave.finish()


@pytest.fixture(scope="module")
def ft8() -> Scenario:
    """Fat-tree k=8 (128 hosts, 80 switches), half the switches programmable, 2 jobs x 2 PSs."""
    sc = fat_tree(8)
    mark_programmable(sc, 0.5, seed=1, pipelines=2)
    place_jobs(sc, jobs=2, tasks_per_job=2, workers_per_job=16, seed=1)
    sc.validate()
    return sc


@pytest.fixture(scope="module")
def ft8_plan(ft8: Scenario) -> Plan:
    """A real planner's plan (AggTree) on ``ft8``."""
    from inaplanner.planners import available, run_planner

    return run_planner(available()["aggtree"], ft8, {"time_limit": 30})
