"""Planner panel and runs: a run off the UI thread delivers its result, the overlay follows the
selected result, runs queue and go side by side, cancel stops a long HiGHS solve."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from inaplanner.gui.planning.workers import CANCELLED, FINISHED, QUEUED, RUNNING
from inaplanner.model import Job
from inaplanner.topologies import leaf_spine
from inaplanner.views.execution import Throttle
from inaplanner.views.overlay import colour_of
from inaplanner.views.runs import relative_gap


def test_form_is_generated_from_declared_params(standalone):
    panel = standalone.planner_panel
    assert "test-tree" in panel.planners and "test-long-mip" in panel.planners
    panel.select_planner("test-tree")
    form = panel.form()
    # the planner's own parameter, then the common ones (seed, time_limit, limit_kind)
    assert list(form.editors) == ["delay", "avoid", "seed", "time_limit", "limit_kind"]
    assert form.editors["delay"].maximum() == 60.0
    assert form.editors["delay"].toolTip() == "seconds of simulated work"
    assert form.editors["time_limit"].value() == 60.0
    form.editors["seed"].setValue(7)
    request = panel.make_request()
    form.editors["avoid"].setText("S0")
    request = panel.make_request()
    assert request.params == {"delay": 0.0, "avoid": "S0", "seed": 7, "time_limit": 60.0,
                              "limit_kind": "wall"}


def test_run_delivers_result_and_overlay(qtbot, standalone):
    ctrl = standalone
    ctrl.planner_panel.select_planner("test-tree")
    with qtbot.waitSignal(ctrl.finished, timeout=10_000) as blocker:
        run = ctrl.run()
    result = blocker.args[0]
    assert run.state == FINISHED and run.result is result
    # ARO Fig. 1 with the tree plan: L1 and L2 merge their workers, W4 goes raw, so the PS link
    # carries 3 flows and the max-min rate is 1/3
    assert result.objective == pytest.approx(1 / 3)
    row = [ctrl.results_panel.model.cell(result, c) for c in range(8)]
    assert row[1:4] == ["test-tree", "baseline", "0.333333"]
    # the bound is the access link (1 Gbps): gap (1 - 1/3) / 1
    assert row[4:7] == ["1", "66.67 %", "heuristic"]
    assert any("planning" in line for line in result.log)

    ctrl.results_panel.select(result)
    overlay = ctrl.recorder.overlays[-1]
    sc = ctrl.holder["sc"]
    ps_link = sc.link_index("PS", "L0")
    assert overlay.link(ps_link).label == "1/1"
    assert overlay.link(ps_link).colour == colour_of(1.0)  # full: the dark end of the load ramp
    idle = sc.link_index("L0", "S1")
    assert overlay.link(idle).label == "0/1"
    assert overlay.switch("L1").label.startswith("0.667/")  # 2 flows x 1/3 merged at L1


def test_task_filter_reaches_the_overlay(qtbot, standalone):
    ctrl = standalone
    sc = leaf_spine(3, 2, 2, host_capacity=10.0, fabric_capacity=10.0)
    sc.nodes[0].programmable = True
    sc.jobs += [Job("a", ["H3", "H4"], ["H1"]), Job("b", ["H5", "H6"], ["H2"])]
    sc.touch()
    sc.validate()
    ctrl.holder["sc"] = sc
    ctrl.planner_panel.select_planner("test-tree")
    with qtbot.waitSignal(ctrl.finished, timeout=10_000) as blocker:
        ctrl.run()
    ctrl.results_panel.select(blocker.args[0])
    combo = ctrl.results_panel.task_combo
    assert [combo.itemText(i) for i in range(combo.count())] == ["All tasks", "a/H1", "b/H2"]
    assert ctrl.recorder.overlays[-1].task_filter is None
    ctrl.results_panel.set_task_filter("b/H2")
    overlay = ctrl.recorder.overlays[-1]
    assert overlay.task_filter == "b/H2"
    assert [overlay.tasks[i] for i in overlay.visible_tasks()] == ["b/H2"]
    ctrl.results_panel.set_task_filter(None)
    assert ctrl.recorder.overlays[-1].task_filter is None


def test_cancel_stops_a_long_solve_and_adds_no_result(qtbot, standalone):
    ctrl = standalone
    panel = ctrl.planner_panel
    panel.select_planner("test-long-mip")
    got = []
    ctrl.finished.connect(got.append)
    run = ctrl.run()
    qtbot.waitUntil(lambda: run.message == "solving", timeout=10_000)
    qtbot.wait(300)  # well inside HiGHS's branch and bound (the limit is 60 s)
    assert run.state == RUNNING
    with qtbot.waitSignal(run.cancelled, timeout=3_000):
        run.cancel()
    assert run.state == CANCELLED
    qtbot.wait(200)
    assert got == [] and ctrl.results_panel.results == []
    assert not ctrl.manager.busy


def test_runs_queue_one_after_another(qtbot, standalone):
    ctrl = standalone
    panel = ctrl.planner_panel
    panel.select_planner("test-tree")
    panel.form().editors["delay"].setValue(0.4)
    first = ctrl.run()
    second = ctrl.run()
    assert first.state == RUNNING and second.state == QUEUED
    with qtbot.waitSignal(ctrl.manager.busy_changed, timeout=10_000):
        pass
    assert [r.id for r in ctrl.results_panel.results] == [first.request.id, second.request.id]
    assert second.started_at >= first.ended_at


def test_runs_side_by_side_and_cancel_while_queued(qtbot, standalone):
    ctrl = standalone
    panel = ctrl.planner_panel
    panel.select_planner("test-tree")
    panel.form().editors["delay"].setValue(0.5)
    panel.parallel_spin.setValue(2)
    a, b, c = ctrl.run(), ctrl.run(), ctrl.run()
    assert (a.state, b.state, c.state) == (RUNNING, RUNNING, QUEUED)
    c.cancel()
    assert c.state == CANCELLED
    with qtbot.waitSignal(ctrl.manager.busy_changed, timeout=10_000):
        pass
    assert a.state == b.state == FINISHED
    # both ran at the same time
    assert b.started_at < a.ended_at and a.started_at < b.ended_at
    assert len(ctrl.results_panel.results) == 2


def test_bad_input_is_refused_with_one_message(qtbot, standalone):
    ctrl = standalone
    ctrl.holder["sc"].jobs.clear()
    ctrl.planner_panel.select_planner("test-tree")
    ctrl.planner_panel.run_button.click()
    assert ctrl.recorder.errors[-1][1].startswith("the scenario has no jobs")
    assert ctrl.manager.runs == []


def test_planner_error_marks_the_run_failed(qtbot, standalone):
    ctrl = standalone
    sc = ctrl.holder["sc"]
    # a worker cut off from the PS: the tree planner cannot route it
    sc.links = [lk for lk in sc.links if "W4" not in (lk.a, lk.b)]
    sc.touch()
    ctrl.planner_panel.select_planner("test-tree")
    run = ctrl.run()
    with qtbot.waitSignal(run.failed, timeout=10_000) as blocker:
        pass
    assert "KeyError" in blocker.args[0] and "W4" in blocker.args[0]
    assert ctrl.results_panel.results == []


def test_throttle_sends_few_reports_and_never_drops_the_last():
    sent = []
    with Throttle(lambda kind, payload: sent.append((kind, payload))) as emit:
        for i in range(1000):
            emit("progress", (i / 999, f"step {i}"))
            emit("log", f"line {i}")
    progress = [p for k, p in sent if k == "progress"]
    lines = [line for k, batch in sent if k == "log" for line in batch]
    assert len(progress) < 50 and progress[-1] == (1.0, "step 999")
    assert lines == [f"line {i}" for i in range(1000)]  # every line, in order, in few batches
    assert sum(1 for k, _ in sent if k == "log") < 50


def test_relative_gap():
    assert relative_gap(3.0, 4.0) == pytest.approx(0.25)
    assert relative_gap(3.0, None) is None
    assert relative_gap(0.0, 0.0) == 0.0
    assert relative_gap(-2.0, -1.0) == pytest.approx(1.0)  # two below a bound of -1


def test_a_request_goes_to_the_child_in_parts_and_comes_back_whole():
    """Pickling a k=64 request in one piece held the GIL ~1 s: its long lists go in parts over
    the real pipe, and the child's side puts the same document back together."""
    import multiprocessing
    import threading

    from inaplanner.io.native import scenario_to_dict
    from inaplanner.topologies import fat_tree
    from inaplanner.views.execution import receive_request, send_request
    from inaplanner.views.runs import RunRequest

    sc = fat_tree(4)
    doc = scenario_to_dict(sc)
    request = RunRequest("random", {"seed": 3}, doc, label="x")
    reader, writer = multiprocessing.Pipe(duplex=False)
    got: list = []
    t = threading.Thread(target=lambda: got.append(receive_request(reader)))
    t.start()
    sent: list = []

    class Counting:
        def send(self, message):
            sent.append(message[0])
            writer.send(message)

    send_request(Counting(), request, chunk=5)
    t.join(10)
    assert sent == ["run"] + ["part"] * (-(-len(doc["nodes"]) // 5) + -(-len(doc["links"]) // 5))
    back = got[0]
    assert back.scenario_doc == doc and back.id == request.id and back.params == {"seed": 3}
    assert request.scenario_doc is doc and len(doc["links"]) == 48  # the sender's is untouched
    # the older single message is still understood
    writer.send(("run", request, {}))
    assert receive_request(reader).scenario_doc == doc
    assert not reader.poll(0.1)


def test_a_result_says_why_its_limit_stopped_the_planner(qtbot):
    """A run its limit cut short carries the planner's reason, and the results list shows it in
    the row's tooltip; a run that ended by itself has none."""
    from inaplanner.gui.planning.results import ResultsModel
    from inaplanner.io.native import scenario_to_dict
    from inaplanner.progress import CancelToken
    from inaplanner.topologies import fat_tree, mark_programmable, place_jobs
    from inaplanner.views.runs import RunRequest, execute

    sc = fat_tree(8)
    mark_programmable(sc, 0.2, pipelines=4, seed=1)
    place_jobs(sc, 2, 2, 50, seed=1)
    doc = scenario_to_dict(sc)

    def quiet(kind, payload):
        return None

    cut = execute(RunRequest("inart", {"seed": 0, "time_limit": 0.1}, doc), quiet, CancelToken())
    whole = execute(RunRequest("inart", {"seed": 0}, doc), quiet, CancelToken())  # about 1.3 s
    assert cut.status == "timeout" and cut.stopped and "time limit" in cut.stopped
    assert whole.stopped is None
    model = ResultsModel()
    model.add(cut)
    model.add(whole)

    def tip(row):
        return model.data(model.index(row, 0), Qt.ItemDataRole.ToolTipRole)

    assert f"stopped: {cut.stopped}" in tip(0).splitlines()
    assert not any(line.startswith("stopped:") for line in tip(1).splitlines())
