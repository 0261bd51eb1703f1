"""Open, import, save, export, recent files and drag and drop; bad files leave the document alone."""

from __future__ import annotations

import json

from PySide6.QtCore import QMimeData, QPoint, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication

from inaplanner.io.formats import export_scenario
from inaplanner.io.native import load_scenario, save_scenario, scenario_to_dict


def test_a_bad_file_shows_one_error_and_changes_nothing(window, small, tmp_path):
    good = tmp_path / "good.json"
    save_scenario(small, good)
    assert window.files.open_path(str(good))
    window.editor.set_link(0, capacity=10.0)  # unsaved work
    before = scenario_to_dict(window.scenario())
    stack = (window.undo_stack.count(), window.undo_stack.index())
    cases = {
        "broken.json": ('{"format": "inaplanner-scenario", "nodes": [', "not valid JSON"),
        "badfield.json": (None, "pipelines"),
        "bad.graphml": ("<graphml><graph", "not valid GraphML"),
        "notes.txt": ("hello", "unknown file type"),
    }
    doc = scenario_to_dict(small)
    doc["nodes"][0]["pipelines"] = 0
    for name, (text, message) in cases.items():
        p = tmp_path / name
        p.write_text(json.dumps(doc) if text is None else text)
        window.last_error = None
        assert not window.files.open_path(str(p), confirm=False)
        title, msg = window.last_error
        assert title == "Cannot open file" and message in msg and name in msg
        assert scenario_to_dict(window.scenario()) == before
        assert window.document.path == str(good) and window.document.modified
        assert (window.undo_stack.count(), window.undo_stack.index()) == stack
    assert not window.files.open_path(str(tmp_path / "missing.json"), confirm=False)
    assert "no such file" in window.last_error[1]


def test_import_export_save_and_recent(window, small, tmp_path):
    graphml = tmp_path / "net.graphml"
    export_scenario(small, graphml)
    assert window.files.open_path(str(graphml))
    # an imported file has no native path until saved
    assert window.document.path is None
    assert sorted(n.id for n in window.scenario().nodes) == sorted(n.id for n in small.nodes)
    assert not window.is_modified()
    window.editor.set_node("L1", pipelines=4, port_pipeline=None)
    assert window.is_modified() and window.windowTitle().startswith("small *") or "*" in window.windowTitle()
    out = tmp_path / "saved.json"
    assert window.files.save_to(str(out))
    assert window.document.path == str(out) and not window.is_modified()
    assert load_scenario(out).node("L1").pipelines == 4
    # no temp files left beside it (atomic write renames)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["net.graphml", "recovery", "saved.json"] or \
        sorted(p.name for p in tmp_path.iterdir()) == ["net.graphml", "saved.json"]
    # undo after save: modified again; redo: back to the saved state, clean
    window.undo_stack.undo()
    assert window.is_modified()
    window.undo_stack.redo()
    assert not window.is_modified()
    # export keeps the document's own path
    gml = tmp_path / "copy.gml"
    assert window.files.export_to(str(gml))
    assert gml.exists() and window.document.path == str(out)
    assert not window.files.save_to(str(tmp_path / "x.gml"))
    assert "Export" in window.last_error[1]
    recent = window.files.recent()
    assert recent[0] == str(out) and str(graphml) in recent
    window._fill_recent()
    assert [a.text() for a in window.recent_menu.actions()][:2] == ["saved.json", "net.graphml"]


def test_import_topology_zoo_gml_and_node_link_json(window, tmp_path):
    gml = tmp_path / "zoo.gml"
    gml.write_text(
        'graph [\n  Network "Tiny"\n'
        '  node [ id 0 label "A" ]\n  node [ id 1 label "B" ]\n  node [ id 2 label "C" ]\n'
        '  edge [ source 0 target 1 LinkLabel "10 Gbps" ]\n  edge [ source 1 target 2 LinkSpeedRaw 40000000000 ]\n]\n'
    )
    assert window.files.open_path(str(gml))
    sc = window.scenario()
    assert len(sc.nodes) == 3 and sorted(lk.capacity for lk in sc.links) == [10.0, 40.0]
    assert all(n.pos is not None for n in sc.nodes)  # laid out on import
    assert window.document.path is None
    nl = tmp_path / "graph.json"
    nl.write_text(json.dumps({"directed": False, "multigraph": False, "graph": {},
                              "nodes": [{"id": "x"}, {"id": "y"}], "links": [{"source": "x", "target": "y"}]}))
    assert window.files.open_path(str(nl))
    assert sorted(n.id for n in window.scenario().nodes) == ["x", "y"]
    assert window.files.last_notes  # what was assumed is reported


def test_drag_a_file_onto_the_window(window, small, tmp_path):
    path = tmp_path / "dropped.json"
    small.name = "dropped scenario"
    save_scenario(small, path)
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    enter = QDragEnterEvent(QPoint(10, 10), Qt.DropAction.CopyAction, mime,
                            Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(window, enter)
    assert enter.isAccepted()
    event = QDropEvent(QPoint(10, 10).toPointF(), Qt.DropAction.CopyAction, mime,
                       Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(window, event)
    assert window.scenario().name == "dropped scenario"
    assert window.document.path == str(path)
