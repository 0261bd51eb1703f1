"""The planning parts on the main window: docks and Plan menu, a run painting the canvas, a what-if
applied as one undoable step, a built-in planner in a child process (run and cancel)."""

from __future__ import annotations

import pytest

from inaplanner.gui.main_window import MainWindow
from inaplanner.io.native import load_plan, scenario_sha256, scenario_to_dict
from inaplanner.model.document import ScenarioDocument
from inaplanner.topologies import grid_fig1, leaf_spine, mark_programmable, place_jobs
from inaplanner.views.overlay import colour_of
from inaplanner.views.whatif import FailLink, FailSwitch


@pytest.fixture
def window(qtbot, test_planners, aro_scenario):
    w = MainWindow(ScenarioDocument(aro_scenario))
    w.headless_errors = True
    qtbot.addWidget(w)
    yield w
    w.planning.shutdown()


def test_docks_and_plan_menu(window):
    ctrl = window.planning
    assert window.plugins["inaplanner.gui.planning.wiring"] is ctrl
    titles = {d.windowTitle() for d in (ctrl.planner_dock, ctrl.results_dock, ctrl.compare_dock, ctrl.whatif_dock)}
    assert titles == {"Planner", "Results", "Compare", "What-if"}
    texts = [a.text() for a in window.menu("Plan").actions() if a.text()]
    assert texts[:2] == ["&Run planner", "&Cancel all runs"] and "&What-if..." in texts
    assert ctrl.run_action.shortcut().toString() == "Ctrl+R"
    ctrl.whatif_action.trigger()
    assert not ctrl.whatif_dock.isHidden()


def test_run_from_the_menu_paints_the_canvas(qtbot, window):
    ctrl = window.planning
    ctrl.planner_panel.select_planner("test-tree")
    with qtbot.waitSignal(ctrl.finished, timeout=10_000) as blocker:
        ctrl.run_action.trigger()
    result = blocker.args[0]
    ctrl.results_panel.select(result)
    assert window.canvas.overlay is ctrl.last_overlay
    sc = window.scenario()
    item = window.canvas.link_item(sc.link_index("PS", "L0"))
    assert item.label_text() == "1/1"
    assert item.colour() == colour_of(1.0)
    assert window.canvas.link_item(sc.link_index("L1", "S0")).label_text() == "0.333/1"
    ctrl.results_panel.clear_overlay_button.click()
    assert window.canvas.overlay is None

    # an edit after the run: the plan is shown on the current scenario, with a note
    window.editor.set_link(sc.link_index("PS", "L0"), capacity=2.0)
    ctrl.results_panel.select(result)
    assert window.canvas.link_item(sc.link_index("PS", "L0")).label_text() == "1/2"
    assert "changed since this run" in ctrl.last_note


def test_what_if_apply_is_one_undo_step(qtbot, window):
    ctrl = window.planning
    before = scenario_to_dict(window.scenario())
    panel = ctrl.whatif_panel
    panel.add_change(FailLink("L0", "S0"))
    assert scenario_to_dict(window.scenario()) == before
    steps = window.undo_stack.count()
    panel.apply_button.click()
    assert window.undo_stack.count() == steps + 1
    assert window.scenario().link_between("L0", "S0") is None
    window.undo_stack.undo()
    assert scenario_to_dict(window.scenario()) == before
    window.undo_stack.redo()
    assert window.scenario().link_between("L0", "S0") is None


def test_fail_what_is_selected_on_the_canvas(window):
    panel = window.planning.whatif_panel
    sc = window.scenario()
    window.canvas.select(nodes=["S1"], links=[sc.link_index("L1", "S1"), sc.link_index("L0", "S0")])
    panel.fail_selected_button.click()
    # the L1 - S1 link goes with its switch
    assert panel.changes == [FailSwitch("S1"), FailLink("L0", "S0")]
    window.canvas.select()
    panel.fail_selected_button.click()
    assert window.last_error == ("Cannot add the change", "select links or switches on the canvas first")


def test_save_plan_and_clear_finished_runs(qtbot, window, tmp_path):
    ctrl = window.planning
    ctrl.planner_panel.select_planner("test-tree")
    with qtbot.waitSignal(ctrl.finished, timeout=10_000) as blocker:
        ctrl.run()
    ctrl.results_panel.select(blocker.args[0])
    ctrl.results_panel.save_current(str(tmp_path / "tree.plan.json"))
    saved = load_plan(tmp_path / "tree.plan.json")
    assert saved.planner.name == "test-tree" and saved.tasks == blocker.args[0].plan.tasks
    assert saved.scenario_sha256 == scenario_sha256(window.scenario())
    assert ctrl.planner_panel.runs_view.topLevelItemCount() == 1
    ctrl.planner_panel.clear_button.click()
    assert ctrl.planner_panel.runs_view.topLevelItemCount() == 0 and ctrl.manager.runs == []
    assert len(ctrl.results_panel.results) == 1


def test_builtin_planner_runs_in_a_child_process(qtbot, window):
    """GRID Fig. 1 (section 2.2): GRID reaches rate 3; the child process gives the same plan as a
    run in a thread."""
    window.set_document(grid_fig1(), None)
    ctrl = window.planning
    panel = ctrl.planner_panel
    panel.select_planner("grid")
    objectives = {}
    for backend in ("auto", "thread"):
        panel.backend_combo.setCurrentText(backend)
        with qtbot.waitSignal(ctrl.finished, timeout=60_000) as blocker:
            run = ctrl.run()
        objectives[run.backend] = blocker.args[0].objective
    assert objectives == {"process": pytest.approx(3.0), "thread": pytest.approx(3.0)}
    assert ctrl.results_panel.results[0].plan.tasks == ctrl.results_panel.results[1].plan.tasks


def test_cancel_a_process_run(qtbot, window):
    sc = leaf_spine(24, 12, 24)
    mark_programmable(sc, 0.5, seed=1)
    place_jobs(sc, jobs=6, tasks_per_job=2, workers_per_job=40, seed=1)
    window.set_document(sc, None)
    ctrl = window.planning
    ctrl.planner_panel.select_planner("grid-exact")
    run = ctrl.run()
    assert run.backend == "process"
    qtbot.waitUntil(lambda: run.fraction is not None, timeout=60_000)  # the child is planning
    with qtbot.waitSignal(run.cancelled, timeout=3_000):
        run.cancel()
    assert ctrl.results_panel.results == [] and not ctrl.manager.busy
