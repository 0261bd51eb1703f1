"""Tools > Resilience Sweep: runs in worker processes (never on the UI thread), paints the
criticality overlay, selects the failed element on the canvas, opens a case as a what-if, and
Cancel stops the worker processes."""

from __future__ import annotations

import os
import time

import numpy as np

from inaplanner.sweeps import BASELINE, SweepSpec, run_sweep
from inaplanner.sweeps.backends import LocalPool
from inaplanner.sweeps.view import criticality_overlay
from inaplanner.views.whatif import FailLink

from .conftest import small_leaf_spine


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is gone for our purposes
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except OSError:
        return False


def test_the_sweep_dialog_runs_and_shows_the_criticality_overlay(make_window, qtbot, tmp_path):
    sc = small_leaf_spine()
    w = make_window(sc)
    assert "inaplanner.gui.sweep" not in w.plugin_errors
    w.actions_by_name["sweep"].trigger()
    dlg = w.sweep.dialog
    dlg.output.setText(str(tmp_path / "gui.sqlite"))
    dlg.workers.setValue(2)
    dlg.time_limit.setValue(5)
    assert dlg.run()
    assert not dlg.run_button.isEnabled()
    qtbot.waitUntil(lambda: not dlg.running and dlg.run_button.isEnabled(), timeout=120_000)
    assert dlg.rows and "runs done" in dlg.status.text()
    # the overlay on the canvas is the core's criticality overlay for these rows
    ov = w.canvas.overlay
    assert ov is not None and ov.title.startswith("criticality (random)")
    expected = criticality_overlay(w.scenario(), dlg.rows, "random")
    assert np.array_equal(ov.link_class, expected.link_class)
    worker = sc.jobs[0].workers[0]
    i = next(i for i, lk in enumerate(sc.links) if worker in (lk.a, lk.b))
    assert ov.link(i).lost == 1.0 and "training stops" in ov.link(i).tooltip
    # the most critical row comes first; selecting it selects its element on the canvas
    assert dlg.table.rowCount() == len([r for r in dlg.rows if r["case_id"] != BASELINE.id])
    dlg.select_row(0)
    first = dlg._table_rows[0]
    assert first.relative == 0.0
    assert w.canvas.selected_links() or w.canvas.selected_nodes()
    # double-click: the case becomes the What-if dock's change list
    dlg.open_as_what_if(0)
    panel = w.planning.whatif_panel
    assert [c.describe() for c in panel.changes] == [FailLink(*first.element.split("-")).describe()] or \
        len(panel.changes) == 1


def test_cancel_from_the_gui_stops_the_worker_processes(make_window, qtbot, tmp_path):
    sc = small_leaf_spine()
    w = make_window(sc)
    dlg = w.sweep.open()
    dlg.output.setText(str(tmp_path / "gui.sqlite"))
    for name, box in dlg.planner_boxes.items():
        box.setChecked(name in ("random", "aro"))
    for name, box in dlg.case_boxes.items():
        box.setChecked(name in ("single-link", "single-switch"))
    dlg.collapse.setChecked(False)
    dlg.workers.setValue(2)
    assert dlg.run()
    qtbot.waitUntil(lambda: len(dlg.backend.pids) == 2, timeout=60_000)
    pids = list(dlg.backend.pids)
    assert all(_alive(p) for p in pids)
    dlg.cancel_button.click()
    qtbot.waitUntil(lambda: not dlg.running, timeout=30_000)
    qtbot.waitUntil(lambda: "Cancelled" in dlg.status.text(), timeout=10_000)
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(p) for p in pids)
    assert dlg.run_button.isEnabled()


def test_the_criticality_overlay_colours_members_of_collapsed_cases(tmp_path):
    sc = small_leaf_spine()
    rows = run_sweep(SweepSpec(sc, ["single-link"], ["aggtree"], time_limit=5, collapse=True),
                     str(tmp_path / "c.sqlite"), LocalPool(2))
    ov = criticality_overlay(sc, rows, "aggtree")
    assert not np.isnan(ov.lost).any()  # every link is coloured, collapsed or not
    collapsed = [r for r in rows if r["weight"] > 1]
    assert collapsed
