"""The canvas at datacenter scale in a real window: pods as boxes at fit that open on a
double-click, task focus, a finished run painted at once, the Links table linked to the canvas."""

from __future__ import annotations

import copy

import numpy as np
from PySide6.QtCore import QPoint, QPointF, Qt

from inaplanner.evaluate import evaluate
from inaplanner.gui.canvas.items import dimmed_colour
from inaplanner.views.overlay import overlay_from_evaluation
from inaplanner.views.semantic import OPEN_PIXELS


def _open(window, qtbot, sc):
    window.set_document(copy.deepcopy(sc), None)
    window.show()
    qtbot.waitExposed(window)
    window.canvas.fit()
    window.canvas.viewport().grab()  # one paint
    return window.canvas.canvas_scene()


def _dclick(qtbot, canvas, scene_point: QPointF) -> None:
    p = canvas.mapFromScene(scene_point)
    qtbot.mouseDClick(canvas.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(p.x(), p.y()))


def test_pods_collapse_at_fit_and_open_on_double_click(make_window, qtbot, ft8):
    window = make_window()
    scene = _open(window, qtbot, ft8)
    canvas = window.canvas
    pods = [f"pod {i}" for i in range(1, 9)]
    assert set(pods) <= set(canvas.closed_groups()) and canvas.open_groups() == []
    host = next(h for h in window.scenario().hosts())
    gid = scene.group_of(host.id)
    assert not canvas.node_item(host.id).isVisible()
    # at fit only bundles are drawn: pod to core plane, coloured links none
    assert scene.zstate.bundle_count == 8 * 4 and not scene.link_visible.any()
    z = scene.zoom
    x0, y0, x1, y1 = z.boxes[z.group_ids.index(gid)]
    _dclick(qtbot, canvas, QPointF((x0 + x1) / 2, (y0 + y1) / 2))
    assert canvas.open_groups() == [gid]
    assert canvas.node_item(host.id).isVisible()
    members = set(z.grouping.group(gid).members)
    inside = [i for i, lk in enumerate(window.scenario().links) if lk.a in members and lk.b in members]
    assert scene.link_visible[inside].all()
    # the opened pod can still be edited: drag one of its switches
    sw = z.grouping.group(gid).switches[0]
    before = window.scenario().node(sw).pos
    window.editor.move_nodes({sw: (before[0] + 5.0, before[1])})
    assert window.scenario().node(sw).pos == (before[0] + 5.0, before[1])
    # a second double-click (in the frame, away from nodes) closes it again
    x0, y0, x1, y1 = z.boxes[z.group_ids.index(gid)]
    _dclick(qtbot, canvas, QPointF(x0 + 3, y0 + 3))
    assert gid in canvas.closed_groups() and not canvas.node_item(host.id).isVisible()
    # zooming in far enough opens every pod by itself
    canvas.zoom_by(6.0)
    assert set(pods) <= set(canvas.open_groups())


def test_node_items_are_made_when_their_pod_first_opens(make_window, qtbot, ft8, ft8_plan):
    """A node's item is made (and styled as an eager one would be: kind, overlay, job highlight,
    a rename) the first time its pod opens; a closed pod's nodes have none."""
    window = make_window()
    scene = _open(window, qtbot, ft8)
    canvas = window.canvas
    sc = window.scenario()
    shown = {nid for nid, v in zip(scene.node_ids, scene.zstate.node_visible.tolist(), strict=True) if v}
    assert set(scene.items_by_id) == shown and len(shown) < len(sc.nodes)
    pods = [g for g in canvas.closed_groups() if g.startswith("pod ")]
    busy = {n for j in sc.jobs for n in (*j.workers, *j.parameter_servers)}
    gid = next(g for g in pods if any(s.programmable for s in map(sc.node, scene.zoom.grouping.group(g).switches)))
    members = scene.zoom.grouping.group(gid).members
    hosts = [m for m in members if m in {h.id for h in sc.hosts()}]
    renamed = next(h for h in hosts if h not in busy)
    lit = next(h for h in hosts if h != renamed)
    window.editor.rename(renamed, renamed + "-new")  # (an edit: clears any overlay, so first)
    ov = overlay_from_evaluation(evaluate(sc, ft8_plan))
    canvas.set_overlay(ov)
    scene.highlight({lit: "#123456"})
    assert any(s in ov.switches for s in scene.zoom.grouping.group(gid).switches)
    assert not set(members) & set(scene.items_by_id)  # styling and renaming made no item
    canvas.toggle_group(gid)
    members = scene.zoom.grouping.group(gid).members
    assert set(members) <= set(scene.items_by_id)
    c = window.colours
    pss = {p for j in sc.jobs for p in j.parameter_servers}
    for nid in members:
        item = scene.items_by_id[nid]
        node = sc.node(nid)
        assert item.isVisible() and item.node_id == nid
        if nid in {h.id for h in sc.hosts()}:
            want = c.ps if nid in pss else c.host
        else:
            want = c.programmable if node.programmable else c.switch
        assert item.brush().color().name() == want, nid
        so = ov.switch(nid)
        if nid == lit:
            assert item.pen().color().name() == "#123456"
        elif so is not None:
            assert item.pen().color().name() == so.colour, nid
    assert renamed + "-new" in members and renamed not in scene.items_by_id
    # a never-shown node asked for by id is made hidden; Find reveals and selects it
    other = next(g for g in canvas.closed_groups() if g.startswith("pod "))
    host = next(m for m in scene.zoom.grouping.group(other).members if m in {h.id for h in sc.hosts()})
    assert not canvas.node_item(host).isVisible()
    assert canvas.find(host) == host
    assert canvas.node_item(host).isVisible() and canvas.selected_nodes() == [host]


def test_task_focus_dims_the_other_tasks(make_window, qtbot, ft8, ft8_plan):
    window = make_window()
    scene = _open(window, qtbot, ft8)
    canvas = window.canvas
    ov = overlay_from_evaluation(evaluate(window.scenario(), ft8_plan))
    canvas.set_overlay(ov)
    canvas.zoom_by(6.0)  # every pod open: links drawn one by one
    canvas.viewport().grab()
    assert scene.flow_layer.segment_count() == 0  # all tasks: flow counts on links, no flows drawn
    canvas.setFocus()
    qtbot.keyClick(canvas.viewport(), Qt.Key.Key_T)
    assert canvas.focused_task() == ov.tasks[0]
    tree = set(ov.segments.link[ov.segments.task == 0].tolist())
    other = set(ov.segments.link[ov.segments.task == 1].tolist()) - tree
    assert tree and other
    li_on, li_off = min(tree), min(other)
    pale = dimmed_colour(scene.colours).name()
    assert canvas.link_item(li_off).colour() == pale  # dimmed
    assert canvas.link_item(li_on).colour() == ov.link_colour(li_on)
    assert scene.flow_layer.segment_count() == int((ov.segments.task == 0).sum())
    assert scene.focus_switches and scene.focus_switches <= set(ov.switches)
    # where the task's flows merge and on which pipeline: the evaluator's aggregates of this task
    ev = evaluate(window.scenario(), ft8_plan)
    mine = {a.switch for a in ev.aggregates if str(a.task) == ov.tasks[0]}
    assert scene.focus_switches == mine
    a = next(a for a in ev.aggregates if str(a.task) == ov.tasks[0])
    assert f"{a.inputs} -> 1 on P{a.pipeline}" in ov.merge_label(0, a.switch)
    assert canvas.legend_bar.isVisible() and "aggregated" in canvas.legend_bar.texts()
    # at fit, the bundles the task does not use are dimmed too
    canvas.fit()
    canvas.viewport().grab()
    dim = [c for c in scene.group_layer.bundle_colour if c == pale]
    assert 0 < len(dim) < scene.zstate.bundle_count
    # Shift+T goes back; past the first task: all tasks again
    qtbot.keyClick(canvas.viewport(), Qt.Key.Key_T, Qt.KeyboardModifier.ShiftModifier)
    # Qt keeps Shift as held after that click: release it, or later tests' selections extend
    qtbot.keyRelease(canvas.viewport(), Qt.Key.Key_Shift)
    assert canvas.focused_task() is None and scene.focus_links is None
    canvas.step_task(-1)
    assert canvas.focused_task() == ov.tasks[-1]


def test_a_finished_run_paints_the_canvas(make_window, qtbot, ft8):
    window = make_window(plugins=True)
    _open(window, qtbot, ft8)
    ctrl = window.planning
    ctrl.planner_panel.select_planner("aggtree")
    ctrl.planner_panel.backend_combo.setCurrentText("thread")
    assert ctrl.compare_panel.stack.currentWidget() is ctrl.compare_panel.hint  # a hint before any run
    with qtbot.waitSignal(ctrl.finished, timeout=60_000) as blocker:
        ctrl.run_action.trigger()
    first = blocker.args[0]
    # painted without touching the results list
    qtbot.waitUntil(lambda: window.canvas.overlay is not None, timeout=5_000)
    assert window.canvas.overlay is ctrl.last_overlay and ctrl.shown is first
    assert ctrl.compare_panel.stack.currentWidget() is ctrl.compare_panel.tabs
    assert "finished" in window.run_strip.text()
    # pinned: the next run is listed but the canvas keeps the pinned result
    ctrl.results_panel.set_pinned(True)
    with qtbot.waitSignal(ctrl.finished, timeout=60_000):
        ctrl.run_action.trigger()
    assert len(ctrl.results()) == 2 and ctrl.shown is first


def test_links_table_selects_on_the_canvas_and_back(make_window, qtbot, ft8, ft8_plan):
    window = make_window()
    scene = _open(window, qtbot, ft8)
    canvas = window.canvas
    ev = evaluate(window.scenario(), ft8_plan)
    canvas.set_overlay(overlay_from_evaluation(ev))
    panel = window.links_panel
    ids = panel.row_ids()
    assert len(ids) == 50
    util = np.nan_to_num(np.asarray(ev.link_utilisation, dtype=float)).max(axis=1)
    assert util[ids[0]] == util.max()
    # table -> canvas: the link is selected, its pod opened to show it
    panel.select_row(3)
    assert canvas.selected_links() == [ids[3]]
    assert scene.link_visible[ids[3]]
    # canvas -> table
    canvas.select(links=[ids[7]])
    rows = {i.row() for i in panel.table.selectionModel().selectedRows()}
    assert rows == {7}
    # sortable, and the switches table follows node selection
    panel.table.sortItems(0, Qt.SortOrder.AscendingOrder)
    names = [panel.table.item(r, 0).text() for r in range(panel.table.rowCount())]
    assert names == sorted(names)
    sw_panel = window.switches_panel
    sid = sw_panel.row_ids()[0]
    canvas.select([sid])
    assert {sw_panel.table.item(i.row(), 0).data(Qt.ItemDataRole.UserRole + 2)
            for i in sw_panel.table.selectionModel().selectedRows()} == {sid}
    sw_panel.select_row(1)
    assert canvas.selected_nodes() == [sw_panel.row_ids()[1]]


def test_run_strip_shows_incumbent_and_gap(make_window, qtbot):
    from inaplanner.topologies import aro_fig1

    window = make_window(plugins=True)
    _open(window, qtbot, aro_fig1())
    ctrl = window.planning
    ctrl.planner_panel.select_planner("aro")
    ctrl.planner_panel.backend_combo.setCurrentText("thread")
    with qtbot.waitSignal(ctrl.finished, timeout=60_000):
        ctrl.run_action.trigger()
    run = window.run_strip.run
    assert run is not None and run.incumbent is not None and run.bound is not None and run.gap is not None
    text = window.run_strip.text()
    assert "finished" in text and "incumbent" in text and "gap" in text
    assert window.canvas.overlay is ctrl.last_overlay is not None  # painted at once here too


def test_a_pod_opened_by_hand_stays_open_when_other_groups_cross_the_zoom_threshold(make_window, qtbot, ft8):
    """Zooming to an opened pod (gui --open "pod 1" at k=64) made the wider core planes open by
    their width, and every choice the user had made was dropped with it: the pod closed again.
    Only the groups that cross the threshold follow the zoom now."""
    window = make_window()
    scene = _open(window, qtbot, ft8)
    z = scene.zoom
    width = z.boxes[:, 2] - z.boxes[:, 0]
    pod = z.group_ids.index("pod 1")
    planes = [i for i, g in enumerate(z.group_ids) if g.startswith("plane ")]
    assert min(width[planes]) > 1.2 * width[pod]
    scene.open_group("pod 1")
    assert "pod 1" in scene.open_groups() and not any(scene.zstate.open[planes])
    scale = 1.1 * OPEN_PIXELS / min(width[planes])  # the planes open by width, pod 1 would not
    assert width[pod] * scale < OPEN_PIXELS
    scene.set_view_scale(scale)
    assert all(scene.zstate.open[planes]) and "pod 1" in scene.open_groups()
    assert "pod 2" not in scene.open_groups()
    # a pod the user opened that then crosses the threshold itself follows the zoom again
    scene.set_view_scale(1.1 * OPEN_PIXELS / width[pod])
    scene.set_view_scale(0.5 * OPEN_PIXELS / min(width))
    assert scene.open_groups() == []


def test_many_bundles_are_drawn_thin(make_window, qtbot, ft8, monkeypatch):
    """A fat-tree k=64 at fit has 2,048 bundles over pods 15 px wide: past THIN_BUNDLES every
    bundle is 1 px, or they paint the canvas over. Below it, width still tells the link count."""
    from inaplanner.gui.canvas import items

    window = make_window()
    scene = _open(window, qtbot, ft8)
    assert scene.zstate.bundle_count == 32 < items.THIN_BUNDLES

    def widths():
        scene.group_layer.rebuild()
        return {pen.widthF() for pen, _tiles in scene.group_layer._bundles}

    assert max(widths()) > 1.0
    monkeypatch.setattr(items, "THIN_BUNDLES", 31)
    assert widths() == {1.0}


def test_runs_on_one_state_of_the_scenario_share_its_snapshot(make_window, qtbot, ft8):
    """The scenario's document is built on the UI thread for each run (0.6 s at k=64): runs on
    one state share it, and an edit makes the next run take a new one that has the edit."""
    window = make_window(plugins=True)
    _open(window, qtbot, ft8)
    panel = window.planning.planner_panel
    panel.select_planner("random")
    first = panel.make_request()
    assert panel.make_request().scenario_doc is first.scenario_doc
    sw = window.scenario().switches()[0].id
    x, y = window.scenario().node(sw).pos
    window.editor.move_nodes({sw: (x + 7.0, y)})
    moved = panel.make_request()
    assert moved.scenario_doc is not first.scenario_doc and moved.version != first.version
    pos = {d["id"]: d.get("pos") for d in moved.scenario_doc["nodes"]}
    assert pos[sw] == [x + 7.0, y]
    assert {d["id"]: d.get("pos") for d in first.scenario_doc["nodes"]}[sw] == [x, y]
