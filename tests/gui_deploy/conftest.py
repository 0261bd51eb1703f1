"""Fixtures of the Deploy dialog tests: the main window offscreen with every plug-in, a small
leaf-spine with two jobs, hand-made plans, the dialog on an emulated testbed it started itself
(real gRPC P4Runtime emulators on 127.0.0.1), and read-backs of what the switches hold."""

from __future__ import annotations

import gc
import time
from pathlib import Path
from typing import Any

import networkx as nx
import pytest

from inaplanner.deploy.deployer import entities_text
from inaplanner.deploy.p4rt import P4RTSession
from inaplanner.io.native import scenario_sha256, scenario_to_dict
from inaplanner.model import Job, Plan, PlannerInfo, Route, Scenario, TaskPlan
from inaplanner.topologies import leaf_spine, mark_programmable


def make_scenario() -> Scenario:
    """Leaves L1..L3, spines S1 S2 (all programmable), hosts H1..H6 (two per leaf);
    j0: H1..H4 -> PS H5, j1: H2 H6 -> PS H3."""
    sc = leaf_spine(3, 2, 2, name="deploy-gui")
    mark_programmable(sc, tiers=["leaf", "spine"])
    sc.jobs = [Job("j0", ["H1", "H2", "H3", "H4"], ["H5"], model_mb=100.0),
               Job("j1", ["H2", "H6"], ["H3"], model_mb=50.0)]
    sc.touch()
    sc.validate()
    return sc


def make_plan(sc: Scenario, spines: tuple[str, ...] = ("S1", "S2"), rate: float = 2.0) -> Plan:
    """Each worker goes to its leaf, then over a spine (job i takes ``spines[i % n]``) to the PS's
    leaf; workers merge at their leaf."""
    g = sc.graph()
    tasks = []
    for i, job in enumerate(sc.jobs):
        spine = spines[i % len(spines)]
        for ps in job.parameter_servers:
            ps_leaf = next(iter(g.neighbors(ps)))
            routes = []
            for w in job.workers:
                leaf = next(iter(g.neighbors(w)))
                path = [w, leaf, ps] if leaf == ps_leaf else [w, leaf, spine, ps_leaf, ps]
                assert nx.is_path(g, path)
                routes.append(Route(w, path, [leaf]))
            tasks.append(TaskPlan(job.id, ps, rate, routes))
    return Plan(scenario_sha256(sc), PlannerInfo("hand", status="heuristic"), tasks)


@pytest.fixture(autouse=True)
def _qt_garbage_on_the_main_thread(qapp):
    """After each test (and after qtbot closed its widgets): run the deferred deletions and collect
    garbage here, so that no dead Qt wrapper is left for a worker thread's collection."""
    yield
    from PySide6.QtCore import QCoreApplication, QEvent

    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    gc.collect()


@pytest.fixture
def scenario() -> Scenario:
    return make_scenario()


@pytest.fixture
def window(qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scenario: Scenario):
    """The main window with every plug-in; ``window.errors`` records each error shown (the real
    ``show_error`` still runs, headless)."""
    from inaplanner.gui.main_window import MainWindow
    from inaplanner.model.document import ScenarioDocument

    monkeypatch.setenv("INAPLANNER_RECOVERY_DIR", str(tmp_path / "recovery"))
    w = MainWindow(ScenarioDocument(scenario), theme_mode="light")
    w.headless_errors = True
    errors: list[tuple[str, str]] = []
    real = w.show_error

    def show_error(title: str, message: str) -> None:
        errors.append((title, message))
        real(title, message)

    w.show_error = show_error
    w.errors = errors
    qtbot.addWidget(w)
    yield w
    w.deploy.shutdown()
    w.planning.shutdown()
    monitor = getattr(w, "monitor", None)
    if monitor is not None and hasattr(monitor, "shutdown"):
        monitor.shutdown()
    w.autosave.finish()


def _add_result(window: Any, sc: Scenario, plan: Plan) -> Any:
    """Put ``plan`` in the planning Results list (as a finished run would) and select it."""
    from inaplanner.views.runs import RunRequest, finish

    request = RunRequest("hand", {}, scenario_to_dict(sc))
    result = finish(request, sc, sc, plan, time.perf_counter())
    window.planning.results_panel.add(result)
    window.planning.results_panel.select(result)
    return result


@pytest.fixture
def dialog(qtbot, window):
    """The Deploy dialog, opened from the menu, on an emulated testbed started with its button."""
    window.deploy.deploy_action.trigger()
    dlg = window.deploy.dialog
    with qtbot.waitSignal(dlg.emulated_changed, timeout=10_000):
        dlg.emulate_button.click()
    assert dlg.emulated is not None
    yield dlg
    for h in (dlg.emulated.handles.values() if dlg.emulated is not None else ()):
        h.fail_on(None)
    if dlg.running:
        with qtbot.waitSignal(dlg.run_ended, timeout=20_000):
            dlg.cancel()
    dlg.reject()


def _held(dialog: Any) -> dict[str, list[str]]:
    """What every emulated switch holds, read back over P4Runtime: pipeline cookie and entities."""
    out = {}
    for sid, h in dialog.emulated.handles.items():
        with P4RTSession(h.address, 1, primary=False, label=sid) as s:
            pipe = s.get_pipeline()
            if pipe is None:
                out[sid] = ["no pipeline"]
                continue
            out[sid] = [f"cookie {pipe.cookie.cookie}"] + entities_text(s.read_state())
    return out


def _run(qtbot: Any, dialog: Any, button: Any, timeout: int = 20_000) -> Any:
    """Click ``button`` (Dry run or Deploy) and wait for the run to end; its report (or None)."""
    with qtbot.waitSignal(dialog.run_ended, timeout=timeout):
        button.click()
        assert dialog.running  # the work goes on off the UI thread
    return dialog.report


class Helpers:
    """The helpers above, handed to tests as the ``h`` fixture (importlib mode: no conftest
    imports)."""

    make_scenario = staticmethod(make_scenario)
    make_plan = staticmethod(make_plan)
    add_result = staticmethod(_add_result)
    held = staticmethod(_held)
    run = staticmethod(_run)


@pytest.fixture
def h() -> type[Helpers]:
    return Helpers
