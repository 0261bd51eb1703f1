"""max_fan_in in the desktop planner: the inspector edits it (one switch and a multi-selection),
each edit one undo step; a bad value is refused with nothing changed; the tooltip shows it."""

from __future__ import annotations

from inaplanner.io.native import scenario_to_dict
from inaplanner.model import Job
from inaplanner.topologies import leaf_spine


def small():
    sc = leaf_spine(2, 1, 2, name="small")
    for leaf in ("L1", "L2"):
        sc.node(leaf).programmable = True
    sc.jobs.append(Job("job0", ["H2", "H3", "H4"], ["H1"]))
    sc.touch()
    sc.validate()
    return sc


def test_inspector_edits_max_fan_in_of_one_switch_with_undo(window, qtbot):
    window.set_document(small(), None)
    before = scenario_to_dict(window.scenario())
    window.canvas.select(["L1"])
    qtbot.waitUntil(lambda: window.inspector.nodes == ["L1"])
    field = window.inspector.fields["max_fan_in"]
    assert field.isEnabled() and field.text() == "" and "32" in field.placeholderText()
    assert "max fan-in 32 (default)" in window.canvas.node_item("L1").toolTip()

    # as a user does: type, then finish editing
    field.setText("8")
    field.editingFinished.emit()
    assert window.scenario().node("L1").max_fan_in == 8
    assert window.undo_stack.count() == 1
    assert field.text() == "8"
    assert "max fan-in 8" in window.canvas.node_item("L1").toolTip()
    assert "(default)" not in window.canvas.node_item("L1").toolTip()

    # clearing it means null (32)
    assert window.inspector.edit("max_fan_in", "")
    assert window.scenario().node("L1").max_fan_in is None
    window.undo_stack.undo()
    assert window.scenario().node("L1").max_fan_in == 8
    window.undo_stack.undo()
    assert scenario_to_dict(window.scenario()) == before
    window.undo_stack.redo()
    assert window.scenario().node("L1").max_fan_in == 8


def test_a_bad_max_fan_in_is_refused_and_nothing_changes(window, qtbot):
    window.set_document(small(), None)
    before = scenario_to_dict(window.scenario())
    window.canvas.select(["L2"])
    qtbot.waitUntil(lambda: window.inspector.nodes == ["L2"])
    for bad in ("0", "-4", "many", "100000"):
        assert not window.inspector.edit("max_fan_in", bad)
        assert "max" in window.last_error[0] and ("max_fan_in" in window.last_error[1]
                                                  or "max fan-in" in window.last_error[1])
        assert scenario_to_dict(window.scenario()) == before
        assert window.undo_stack.count() == 0
        assert window.inspector.fields["max_fan_in"].text() == ""  # the field shows the model again


def test_inspector_bulk_edits_max_fan_in_in_one_undo_step(window, qtbot):
    window.set_document(small(), None)
    before = scenario_to_dict(window.scenario())
    window.canvas.select(["L1", "L2", "S1", "H1"])
    window.inspector.refresh()
    assert window.inspector.stack.currentWidget() is window.inspector.bulk_page
    assert window.inspector.edit("bulk_max_fan_in", "4")
    sc = window.scenario()
    assert [sc.node(x).max_fan_in for x in ("L1", "L2", "S1")] == [4, 4, 4]
    assert window.undo_stack.count() == 1
    window.inspector.refresh()
    assert window.inspector.fields["bulk_max_fan_in"].text() == "4"
    # a mixed selection shows the field empty
    window.undo_stack.undo()
    assert scenario_to_dict(window.scenario()) == before
    window.canvas.select(["L1"])
    qtbot.waitUntil(lambda: window.inspector.nodes == ["L1"])
    assert window.inspector.edit("max_fan_in", "6")
    window.canvas.select(["L1", "L2"])
    window.inspector.refresh()
    assert window.inspector.fields["bulk_max_fan_in"].text() == ""
    # a bad bulk value changes none of them
    assert not window.inspector.edit("bulk_max_fan_in", "0")
    assert [window.scenario().node(x).max_fan_in for x in ("L1", "L2")] == [6, None]
