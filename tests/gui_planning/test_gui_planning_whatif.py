"""What-if: changes go to a copy, planners re-run on it and are compared with the baseline, and the
original scenario changes only when the user applies."""

from __future__ import annotations

import pytest

from inaplanner.errors import InaplannerError
from inaplanner.io.native import scenario_to_dict
from inaplanner.model import Job
from inaplanner.topologies import aro_fig1, leaf_spine
from inaplanner.views.whatif import (
    AddJob,
    FailLink,
    FailSwitch,
    RemoveJob,
    SetCapacity,
    check_changes,
    display_copy,
    what_if,
)


def test_fail_link_keeps_the_pipeline_of_other_ports():
    sc = leaf_spine(2, 2, 2)
    leaf = sc.node("L1")
    leaf.programmable, leaf.pipelines = True, 2
    sc.touch()
    before = scenario_to_dict(sc)
    assert sc.port_pipeline_map("L1") == {1: 0, 2: 0, 3: 1, 4: 1}
    changed = what_if(sc, [FailLink("H1", "L1")])
    assert changed.link_between("H1", "L1") is None
    # the default split of the 3 remaining ports would move port 3 to pipeline 0
    assert changed.port_pipeline_map("L1") == {1: 0, 2: 0, 3: 1, 4: 1}
    assert scenario_to_dict(sc) == before


def test_fail_switch_and_display_copy():
    sc = aro_fig1()
    changed = what_if(sc, [FailSwitch("S0"), SetCapacity("L0", "S1", 2.5)])
    assert not changed.has_node("S0") and len(changed.links) == len(sc.links) - 4
    assert changed.link_between("L0", "S1").capacity == 2.5
    shown = display_copy(sc, [FailSwitch("S0"), SetCapacity("L0", "S1", 2.5)])
    assert [(lk.a, lk.b) for lk in shown.links] == [(lk.a, lk.b) for lk in sc.links]
    assert shown.link_between("L1", "S0").capacity == 0.0
    assert shown.link_between("L0", "S1").capacity == 2.5
    assert sc.link_between("L0", "S1").capacity == 1.0


def test_job_changes_and_refusals():
    sc = aro_fig1()
    changed = what_if(sc, [RemoveJob("job0"), AddJob(Job("job0", ["W0", "W4"], ["PS"]))])
    assert changed.job("job0").workers == ["W0", "W4"] and sc.job("job0").workers[0] == "W0"
    assert len(sc.job("job0").workers) == 5
    with pytest.raises(InaplannerError, match="no link L0 - L1"):
        what_if(sc, [SetCapacity("L0", "L1", 1.0)])
    with pytest.raises(InaplannerError, match="unknown node 'W9'"):
        what_if(sc, [AddJob(Job("job1", ["W9"], ["PS"]))])
    with pytest.raises(InaplannerError, match="no job 'nope'"):
        what_if(sc, [RemoveJob("nope")])


def test_what_if_round_leaves_the_original_until_applied(qtbot, standalone):
    ctrl = standalone
    sc = ctrl.holder["sc"]
    before = scenario_to_dict(sc)
    panel = ctrl.whatif_panel
    panel.refresh()
    panel.kind_combo.setCurrentText("Fail link")
    panel.choose_link(panel.fail_link_combo, "L0", "S0")
    panel.add_button.click()
    assert panel.changes == [FailLink("L0", "S0")]
    assert panel.changes_list.item(0).text() == "fail link L0 - S0"
    panel.set_checked_planners(["test-tree"])
    with qtbot.waitSignal(panel.round_done, timeout=15_000):
        panel.run_button.click()
    pair = panel.pairs[0]
    # no baseline existed: it was run too; the tree now avoids the failed link and goes via S1,
    # which merges everything: rate 1 instead of 1/3
    assert pair.baseline.objective == pytest.approx(1 / 3)
    assert pair.what_if.objective == pytest.approx(1.0)
    assert pair.what_if.label == "what-if 1"
    assert [panel.table.item(0, c).text() for c in range(4)] == ["test-tree", "0.333333", "1", "+0.666667"]
    assert panel.table.item(0, 5).text() == "5"
    d = panel.diff_view.diff
    failed = {c.link: c for c in d.link_deltas}["S0->L0"]
    assert (failed.load_a, failed.load_b, failed.capacity) == (pytest.approx(1.0), 0.0, 0.0)
    assert scenario_to_dict(sc) == before  # the original is untouched

    # the what-if result paints on the canvas's links: the failed link shows 0/0
    ctrl.results_panel.select(pair.what_if)
    overlay = ctrl.recorder.overlays[-1]
    assert overlay.link_count == len(sc.links)
    assert overlay.link(sc.link_index("L0", "S0")).label == "0/0"
    assert overlay.link(sc.link_index("L0", "S1")).label == "1/1"

    # a second round reuses the baseline result
    with qtbot.waitSignal(panel.round_done, timeout=15_000):
        runs = panel.run()
    assert len(runs) == 1 and panel.pairs[0].baseline is pair.baseline

    panel.apply_button.click()
    applied, text = ctrl.recorder.applied[-1]
    assert text == "What-if: fail link L0 - S0"
    assert applied.link_between("L0", "S0") is None and len(applied.links) == len(sc.links) - 1
    assert panel.changes == [] and panel.changes_list.count() == 0


def test_bad_change_is_refused(qtbot, standalone):
    ctrl = standalone
    panel = ctrl.whatif_panel
    panel.kind_combo.setCurrentText("Add job")
    panel.job_id_edit.setText("job1")
    panel.job_workers_edit.setText("W0, H77")
    panel.job_ps_edit.setText("PS")
    panel.add_button.click()
    assert panel.changes == []
    title, message = ctrl.recorder.errors[-1]
    assert title == "Cannot add the change" and "H77" in message
    panel.run_button.click()
    assert ctrl.recorder.errors[-1][1] == "check at least one planner to run"


def test_changes_are_checked_in_order():
    sc = aro_fig1()
    check_changes(sc, [SetCapacity("L0", "S0", 5.0), FailLink("L0", "S0")])
    with pytest.raises(InaplannerError, match="no link L0 - S0 \\(any more\\)"):
        check_changes(sc, [FailLink("L0", "S0"), SetCapacity("L0", "S0", 5.0)])
    with pytest.raises(InaplannerError, match="no link L1 - S1"):
        check_changes(sc, [FailSwitch("S1"), FailLink("L1", "S1")])
    with pytest.raises(InaplannerError, match="already exists"):
        check_changes(sc, [AddJob(Job("job0", ["W0"], ["PS"]))])
    check_changes(sc, [RemoveJob("job0"), AddJob(Job("job0", ["W0"], ["PS"]))])
    with pytest.raises(InaplannerError, match="'L1' is not a host"):
        check_changes(sc, [AddJob(Job("job9", ["L1"], ["PS"]))])


def test_task_filter_falls_back_when_a_result_lacks_the_task(qtbot, standalone):
    ctrl = standalone
    sc = leaf_spine(3, 2, 2, host_capacity=10.0, fabric_capacity=10.0)
    sc.jobs += [Job("a", ["H3", "H4"], ["H1"]), Job("b", ["H5", "H6"], ["H2"])]
    sc.validate()
    ctrl.holder["sc"] = sc
    panel = ctrl.whatif_panel
    panel.refresh()
    panel.add_change(RemoveJob("b"))
    with qtbot.waitSignal(panel.round_done, timeout=15_000):
        panel.run(["test-tree"])
    pair = panel.pairs[0]
    assert [str(t) for t in pair.what_if.evaluation.tasks] == ["a/H1"]
    ctrl.results_panel.select(pair.baseline)
    ctrl.results_panel.set_task_filter("b/H2")
    assert ctrl.recorder.overlays[-1].task_filter == "b/H2"
    ctrl.results_panel.select(pair.what_if)
    assert ctrl.recorder.overlays[-1].task_filter is None
    assert "has no task b/H2" in ctrl.last_note
    assert [j.id for j in ctrl.holder["sc"].jobs] == ["a", "b"]


def test_qt_free_parts_import_without_qt():
    """A planner child process and other tools use these without loading Qt."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "import inaplanner.views.execution, inaplanner.views.whatif\n"
        "import inaplanner.views.compare, inaplanner.views.diffing\n"
        "print(sorted(m for m in sys.modules if m.startswith(('PySide6', 'pyqtgraph'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
