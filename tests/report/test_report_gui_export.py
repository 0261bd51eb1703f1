"""File > Export report… in the desktop app (pytest-qt, offscreen), with real planner runs."""

from __future__ import annotations

from PySide6.QtCore import Qt

from inaplanner.gui.export import open_export_dialog
from inaplanner.io.native import save_plan
from inaplanner.report.fmt import num


def test_export_dialog_writes_reports_of_the_chosen_results(make_window, grid, gplan, tmp_path, qtbot):
    w = make_window(grid)
    assert w.export_action.text() == "Export &report…"
    assert w.export_action in w.menu("File").actions()
    w.planning.planner_panel.backend_combo.setCurrentText("thread")  # no process start-up
    for name in ("atp", "geryon"):
        w.planning.run(name)
    qtbot.waitUntil(lambda: len(w.planning.results()) == 2, timeout=20000)
    results = w.planning.results()

    w.export_action.trigger()
    dialog = w.export_dialog
    assert dialog.plans.count() == 2
    for i in range(2):
        dialog.plans.item(i).setCheckState(Qt.CheckState.Checked)
    save_plan(gplan, tmp_path / "hand.json")
    assert dialog.add_plan_file(str(tmp_path / "hand.json"))
    assert dialog.plans.count() == 3

    dialog.format_combo.setCurrentText("html")
    dialog.output_edit.setText(str(tmp_path / "review.html"))
    dialog.export_button.click()
    assert w.last_error is None
    html = (tmp_path / "review.html").read_text()
    for r in results:
        assert r.title in html and num(r.objective) in html
    assert "hand" in html and "Comparison" in html and "Differences from" in html

    dialog.format_combo.setCurrentText("pdf")
    assert dialog.output_edit.text().endswith("review.pdf")  # the suffix follows the format
    dialog.export_button.click()
    assert (tmp_path / "review.pdf").read_bytes().startswith(b"%PDF")
    assert "wrote 1 file(s)" in dialog.note.text()

    # reopened: the results are listed again, added files kept
    again = open_export_dialog(w)
    assert again is dialog and dialog.plans.count() == 3
    for i in range(dialog.plans.count()):
        dialog.plans.item(i).setCheckState(Qt.CheckState.Unchecked)
    dialog.export_button.click()
    assert w.last_error == ("Export report", "check at least one plan to export")
