"""The look and the command line: icons and desktop entry, shortcuts, hover tooltips, level of detail,
and `inaplanner gui` staying Qt-free until it runs."""

from __future__ import annotations

import configparser
import os
import subprocess
import sys

from PySide6.QtCore import QEvent, QPoint
from PySide6.QtGui import QHelpEvent, QIcon
from PySide6.QtWidgets import QApplication, QToolTip

from inaplanner import RESOURCES
from inaplanner.evaluate import evaluate
from inaplanner.gui.canvas import geometry as geo
from inaplanner.gui.theme import icon, icon_path
from inaplanner.views.overlay import overlay_from_evaluation


def test_icons_and_desktop_entry(qapp):
    for name in ("inaplanner", "host", "ps", "switch", "switch-programmable", "tool-select", "tool-pan",
                 "tool-host", "tool-switch", "tool-programmable", "tool-link", "undo", "redo", "save", "open"):
        assert icon_path(name), name
        ic = icon(name)
        assert isinstance(ic, QIcon) and not ic.pixmap(24, 24).isNull(), name
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str
    entry.read(RESOURCES / "inaplanner.desktop")
    d = entry["Desktop Entry"]
    assert d["Type"] == "Application" and d["Exec"].startswith("inaplanner gui") and d["Icon"] == "inaplanner"
    # scenario files have a MIME type of their own (resources/inaplanner-mime.xml): the entry does
    # not claim every JSON file
    mime_types = d["MimeType"].rstrip(";").split(";")
    assert "application/x-inaplanner-scenario" in mime_types and "application/json" not in mime_types


def test_shortcuts_are_unique(window):
    seen: dict[str, str] = {}
    for name, act in window.actions_by_name.items():
        for seq in act.shortcuts():
            key = seq.toString()
            assert key not in seen, f"{name} and {seen.get(key)} share {key}"
            seen[key] = name
    assert len(seen) > 30
    for name, act in window.actions_by_name.items():
        assert act.shortcuts(), f"{name} has no shortcut"


def test_hover_shows_the_exact_figures(window, small, hand_plan, qtbot):
    window.set_document(small, None)
    window.show()
    qtbot.waitExposed(window)
    window.canvas.set_overlay(overlay_from_evaluation(evaluate(small, hand_plan(small, 25.0))))
    line = window.canvas.link_item(small.link_index("L2", "S1")).line()
    pos = window.canvas.mapFromScene(line.center())
    vp = window.canvas.viewport()
    QApplication.sendEvent(vp, QHelpEvent(QEvent.Type.ToolTip, pos, vp.mapToGlobal(pos)))
    assert "L2 -> S1: 25 Gbps (25.0 %), 1 flow(s)" in QToolTip.text()
    node = window.canvas.mapFromScene(window.canvas.node_item("L1").pos())
    QApplication.sendEvent(vp, QHelpEvent(QEvent.Type.ToolTip, node, vp.mapToGlobal(node)))
    assert QToolTip.text().startswith("switch L1 (leaf)") and "aggregation load" in QToolTip.text()
    QToolTip.hideText()
    _ = QPoint


def test_level_of_detail_drops_labels_and_draws_dots(window, small, hand_plan, qtbot):
    window.set_document(small, None)
    window.show()
    qtbot.waitExposed(window)
    canvas = window.canvas
    scene = canvas.canvas_scene()
    canvas.set_overlay(overlay_from_evaluation(evaluate(small, hand_plan(small, 25.0))))
    canvas.resetTransform()
    canvas.scale(1.2, 1.2)
    canvas.viewport().grab()
    assert canvas.lod() == "near" and scene.label_layer.drawn > len(small.nodes)
    assert not scene.simple and not scene.dots_layer.isVisible()
    canvas.resetTransform()
    canvas.scale(0.05, 0.05)
    canvas.viewport().grab()
    assert canvas.lod() == "far" and scene.label_layer.drawn == 0
    assert scene.simple and scene.dots_layer.isVisible()
    # zoomed out, the items still select (rubber band, select all) though the dots layer paints
    canvas.select(["H1", "L1"])
    assert sorted(canvas.selected_nodes()) == ["H1", "L1"]
    assert geo.lod_level(0.5) == "mid"
    # the links of the network are drawn as a handful of pen buckets, not one item per link
    assert scene.link_layer.bucket_count() <= 6


def test_cli_stays_qt_free_and_reports_bad_input(tmp_path):
    code = (
        "import sys\n"
        "from inaplanner.cli import build_parser\n"
        "p = build_parser()\n"
        "args = p.parse_args(['gui', 'x.json', '--plan', 'p.json', '--screenshot', 'o.png'])\n"
        "assert args.scenario == 'x.json' and args.plan == 'p.json' and args.screenshot == 'o.png'\n"
        "print(sorted(m for m in sys.modules if m.startswith('PySide6')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", INAPLANNER_RECOVERY_DIR=str(tmp_path / "rec"))
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    run = subprocess.run([sys.executable, "-m", "inaplanner", "gui", str(bad), "--screenshot", str(tmp_path / "o.png")],
                         capture_output=True, text=True, timeout=60, env=env)
    assert run.returncode == 2
    assert run.stderr.strip().splitlines()[-1].startswith("inaplanner: error: ") and "not valid JSON" in run.stderr
    assert not (tmp_path / "o.png").exists()
