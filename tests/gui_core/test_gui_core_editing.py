"""Drawing and editing through the window as a user does: tools on the canvas, the inspector, the
jobs panel; every step undone and redone."""

from __future__ import annotations

from PySide6.QtCore import Qt

from inaplanner.io.native import scenario_to_dict
from inaplanner.model import Switch


def snap(window) -> dict:
    return scenario_to_dict(window.scenario())


def click(qtbot, canvas, scene_xy, modifier=Qt.KeyboardModifier.NoModifier):
    pos = canvas.mapFromScene(*scene_xy)
    qtbot.mouseClick(canvas.viewport(), Qt.MouseButton.LeftButton, modifier, pos)


def drag(qtbot, canvas, a_xy, b_xy):
    a = canvas.mapFromScene(*a_xy)
    b = canvas.mapFromScene(*b_xy)
    qtbot.mousePress(canvas.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, a)
    qtbot.mouseMove(canvas.viewport(), b)
    qtbot.mouseRelease(canvas.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, b)


def test_build_mark_programmable_edit_ports_undo_redo_every_step(window, qtbot):
    window.show()
    canvas = window.canvas
    canvas.resize(800, 600)
    canvas.setSceneRect(-400, -300, 800, 600)
    canvas.resetTransform()
    canvas.centerOn(0, 0)
    states = [snap(window)]

    # the palette tools, with the mouse
    window.tool_actions["host"].trigger()
    click(qtbot, canvas, (-150, 100))
    click(qtbot, canvas, (-50, 100))
    click(qtbot, canvas, (50, 100))
    states += [snap(window)] * 0
    assert [n.id for n in window.scenario().nodes] == ["H1", "H2", "H3"]
    window.tool_actions["switch"].trigger()
    click(qtbot, canvas, (-100, 0))
    assert window.scenario().node("S1").kind == "switch"
    window.tool_actions["link"].trigger()
    for h in ("H1", "H2", "H3"):
        node = window.scenario().node(h)
        drag(qtbot, canvas, node.pos, window.scenario().node("S1").pos)
    assert [(lk.a, lk.b, lk.b_port) for lk in window.scenario().links] == [
        ("H1", "S1", 1), ("H2", "S1", 2), ("H3", "S1", 3)]
    assert window.undo_stack.count() == 7

    # the inspector: programmable, 2 pipelines, then move port 1 to pipeline 1
    window.tool_actions["select"].trigger()
    click(qtbot, canvas, window.scenario().node("S1").pos)
    qtbot.waitUntil(lambda: window.inspector.nodes == ["S1"])
    assert window.inspector.edit("programmable", True)
    assert window.inspector.edit("pipelines", 2)
    sw = window.scenario().node("S1")
    assert isinstance(sw, Switch) and sw.programmable and sw.pipelines == 2
    window.inspector.refresh()
    # the table shows the default split: ports 1,2 -> P0; port 3 -> P1 (floor(i*2/3))
    assert window.inspector.port_rows() == [(1, "H1", 0, 0), (2, "H2", 0, 0), (3, "H3", 1, 1)]
    spin = window.inspector.port_table.cellWidget(0, 2)
    spin.setValue(1)  # what the user does in the table
    assert window.scenario().port_pipeline_map("S1") == {1: 1, 2: 0, 3: 1}
    window.inspector.refresh()
    assert window.inspector.port_rows()[0] == (1, "H1", 1, 0)
    assert window.inspector.port_state.text() == "custom map"

    # a refused edit: one error, nothing changes
    before = snap(window)
    count = window.undo_stack.count()
    assert not window.inspector.edit("aggregation_capacity", "fast")
    assert "not a number" in window.last_error[1]
    assert snap(window) == before and window.undo_stack.count() == count

    # a job from the jobs panel
    jid = window.jobs_panel.new_job(["H1", "H2"], ["H3"])
    assert jid == "job0"
    assert window.jobs_panel.edit("model_mb", 548.0)
    job = window.scenario().job("job0")
    assert (job.workers, job.parameter_servers, job.model_mb) == (["H1", "H2"], ["H3"], 548.0)
    # the selected job is highlighted on the canvas
    scene = canvas.canvas_scene()
    assert scene.highlighted == {"H1": "#1e88e5", "H2": "#1e88e5", "H3": "#e65100"}
    assert canvas.node_item("H3").pen().color().name() == "#e65100"

    # record every state by walking the history back, then check redo walks it forward exactly
    n = window.undo_stack.count()
    assert n == 12
    forward = [snap(window)]
    for _ in range(n):
        window.actions_by_name["undo"].trigger()
        forward.append(snap(window))
    assert forward[-1] == states[0]
    assert window.scenario().nodes == []
    for i in range(n):
        window.actions_by_name["redo"].trigger()
        assert snap(window) == forward[n - 1 - i]
    assert window.undo_stack.index() == n


def test_delete_copy_paste_align_and_bulk_edit(window, small, qtbot):
    window.set_document(small, None)
    canvas = window.canvas
    before = snap(window)
    # bulk edit of both leaves: one undo step
    canvas.select(["L1", "L2"])
    window.inspector.refresh()
    assert window.inspector.stack.currentWidget() is window.inspector.bulk_page
    assert window.inspector.edit("bulk_pipelines", 4)
    assert [window.scenario().node(x).pipelines for x in ("L1", "L2")] == [4, 4]
    assert window.undo_stack.count() == 1
    window.undo_stack.undo()
    assert snap(window) == before

    # copy the leaves with their hosts: the links among them come along, with fresh ids
    canvas.select(["L2", "H3", "H4"])
    text = window.copy()
    assert text is not None
    new = window.paste(text)
    assert new == ["L3", "H5", "H6"]
    sc = window.scenario()
    assert sc.link_between("H5", "L3") is not None and sc.link_between("H6", "L3") is not None
    assert sc.link_between("L3", "S1") is None  # S1 was not copied
    assert sorted(canvas.selected_nodes()) == ["H5", "H6", "L3"]

    # align the pasted nodes on one row
    window.align("vcentre")
    ys = {sc.node(i).pos[1] for i in new}
    assert len(ys) == 1

    # delete a selected link and a node (with its links and its place in jobs)
    i = sc.link_index("H2", "L1")
    canvas.select(["H4"], [i])
    window.delete_selection()
    sc = window.scenario()
    assert not sc.has_node("H4") and sc.link_between("H2", "L1") is None
    assert sc.job("job0").workers == ["H2", "H3"]
    # one undo brings both back, as they were
    window.undo_stack.undo()
    assert sc.has_node("H4") and sc.link_between("H2", "L1") is not None
    assert window.scenario().job("job0").workers == ["H2", "H3", "H4"]


def test_click_selects_a_link_and_the_inspector_edits_it(window, small, qtbot):
    window.set_document(small, None)
    window.show()
    canvas = window.canvas
    canvas.fit()
    i = small.link_index("L1", "S1")
    line = canvas.link_item(i).line()
    mid = ((line.x1() + line.x2()) / 2, (line.y1() + line.y2()) / 2)
    click(qtbot, canvas, mid)
    assert canvas.selected_links() == [i]
    assert canvas.link_item(i).isSelected()
    assert canvas.link_item(i).colour() == window.colours.link_selected
    qtbot.waitUntil(lambda: window.inspector.links == [i])
    assert window.inspector.edit("capacity", 40.0)
    assert window.inspector.edit("background_ba", 5.0)
    lk = window.scenario().links[i]
    assert (lk.capacity, lk.background) == (40.0, (0.0, 5.0))
    assert "40 Gbps" in canvas.link_item(i).toolTip()


def test_dragging_nodes_is_one_undoable_move_and_snaps_to_grid(window, small, qtbot):
    window.set_document(small, None)
    window.show()
    canvas = window.canvas
    canvas.resetTransform()
    window.actions_by_name["snap"].setChecked(True)
    start = small.node("H1").pos
    canvas.centerOn(*start)
    canvas.select(["H1"])
    drag(qtbot, canvas, start, (start[0] + 47, start[1] + 13))
    pos = window.scenario().node("H1").pos
    assert pos[0] % 20 == 0 and pos[1] % 20 == 0 and pos != start
    assert window.undo_stack.count() == 1 and window.undo_stack.text(0).startswith("Move")
    # the link follows the node
    i = small.link_index("H1", "L1")
    line = canvas.link_item(i).line()
    assert (line.x1(), line.y1()) == pos
    window.undo_stack.undo()
    assert window.scenario().node("H1").pos == start
    assert canvas.node_item("H1").pos().toTuple() == start


def test_layout_find_generate_and_theme(window, qtbot):
    from inaplanner.gui.generate_dialog import GenerateDialog

    dlg = GenerateDialog(window)
    dlg.set_values(kind="fat-tree", k=4, share=0.5, pipelines=2, seed=3, jobs=1, workers_per_job=4)
    sc = dlg.build_scenario()
    assert len(sc.hosts()) == 16 and sum(s.programmable for s in sc.switches()) >= 10
    window.load_generated(sc)
    assert window.scenario() is sc and window.undo_stack.count() == 1
    # a new layout is one undo step
    before = {n.id: n.pos for n in sc.nodes}
    window.relayout("force")
    assert {n.id: n.pos for n in sc.nodes} != before
    window.undo_stack.undo()
    assert {n.id: n.pos for n in sc.nodes} == before
    # find centres and selects
    window.show()
    assert window.canvas.find("e2_1") == "E2_1"
    assert window.canvas.selected_nodes() == ["E2_1"]
    assert window.canvas.find("nothing-like-this") is None
    # dark colours repaint the canvas
    window.set_theme("dark")
    assert window.canvas.canvas_scene().backgroundBrush().color().name() == "#1e2126"
    ps = sc.jobs[0].parameter_servers[0]
    plain = next(h.id for h in sc.hosts() if all(h.id not in (*j.workers, *j.parameter_servers) for j in sc.jobs))
    assert window.canvas.node_item(plain).brush().color().name() == window.colours.host
    assert window.canvas.node_item(ps).brush().color().name() == window.colours.ps
    window.set_theme("light")


def test_every_action_has_a_tooltip_and_the_tools_have_shortcuts(window):
    for name, act in window.actions_by_name.items():
        assert act.toolTip(), name
    for tool, act in window.tool_actions.items():
        assert not act.shortcut().isEmpty(), tool
    assert window.actions_by_name["undo"].shortcut().toString() == "Ctrl+Z"
    assert "Ctrl+Shift+Z" in [s.toString() for s in window.actions_by_name["redo"].shortcuts()]


def test_plugins_install_through_the_hook(make_window, tmp_path, monkeypatch):
    pkg = tmp_path / "plugpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "extra.py").write_text(
        "from PySide6.QtWidgets import QLabel\n"
        "def install(window):\n"
        "    window.menu('Tools').addAction('Hello')\n"
        "    return window.add_dock('Extra', QLabel('extra'))\n"
    )
    (pkg / "broken.py").write_text("def install(window):\n    raise RuntimeError('half-built plug-in')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import inaplanner.gui.main_window as mw

    monkeypatch.setattr(mw, "PLUGIN_MODULES", ("plugpkg.extra", "plugpkg.missing", "plugpkg.broken"))
    w = make_window(plugins=True)
    assert w.plugins["plugpkg.extra"].windowTitle() == "Extra"
    assert w.plugins["plugpkg.extra"].content.text() == "extra"
    assert "plugpkg.missing" not in w.plugins and "plugpkg.missing" not in w.plugin_errors
    assert "half-built plug-in" in w.plugin_errors["plugpkg.broken"]
    assert [a.text() for a in w.menu("Tools").actions()] == ["Hello"]


def test_rubber_band_selects_nodes(window, small, qtbot):
    window.set_document(small, None)
    window.show()
    qtbot.waitExposed(window)
    canvas = window.canvas
    canvas.resetTransform()
    xs = {h: small.node(h).pos for h in ("H1", "H2", "H3", "H4")}
    left = min(p[0] for p in xs.values()) - 20
    right = (xs["H2"][0] + xs["H3"][0]) / 2
    y = xs["H1"][1]
    canvas.centerOn(right, y)
    drag(qtbot, canvas, (left, y - 15), (right, y + 15))
    assert sorted(canvas.selected_nodes()) == ["H1", "H2"]
    assert window.undo_stack.count() == 0  # selecting is not an edit
