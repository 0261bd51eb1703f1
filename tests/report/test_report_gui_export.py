"""File > Export report… in the desktop app (pytest-qt, offscreen), with real planner runs."""

from __future__ import annotations

import pytest
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
    dialog.export_button.click()  # written off the UI thread
    assert dialog.job is not None and not dialog.export_button.isEnabled() and dialog.busy.isVisible()
    qtbot.waitUntil(lambda: dialog.job is None, timeout=30000)
    assert w.last_error is None and dialog.export_button.isEnabled() and not dialog.busy.isVisible()
    html = (tmp_path / "review.html").read_text()
    for r in results:
        assert r.title in html and num(r.objective) in html
    assert "hand" in html and "Comparison" in html and "Differences from" in html

    dialog.format_combo.setCurrentText("pdf")
    assert dialog.output_edit.text().endswith("review.pdf")  # the suffix follows the format
    dialog.export_button.click()
    qtbot.waitUntil(lambda: dialog.job is None, timeout=30000)
    assert (tmp_path / "review.pdf").read_bytes().startswith(b"%PDF")
    assert "wrote 1 file(s)" in dialog.note.text()

    # reopened: the results are listed again, added files kept
    again = open_export_dialog(w)
    assert again is dialog and dialog.plans.count() == 3
    for i in range(dialog.plans.count()):
        dialog.plans.item(i).setCheckState(Qt.CheckState.Unchecked)
    dialog.export_button.click()
    assert w.last_error == ("Export report", "check at least one plan to export")


def test_an_export_can_be_stopped_and_then_writes_nothing(make_window, grid, gplan, tmp_path, qtbot,
                                                           monkeypatch):
    """Stop ends the export at its next step (the report is built, then written atomically):
    nothing is written, the dialog says so, and the next export runs."""
    import threading

    from inaplanner.gui import export

    gate = threading.Event()
    real = export.build_report

    def held(*args, **kwargs):  # the job is inside its first step when Stop is pressed
        gate.wait(10)
        return real(*args, **kwargs)

    monkeypatch.setattr(export, "build_report", held)
    w = make_window(grid)
    dialog = open_export_dialog(w)
    save_plan(gplan, tmp_path / "hand.json")
    assert dialog.add_plan_file(str(tmp_path / "hand.json"))
    dialog.format_combo.setCurrentText("pdf")
    dialog.output_edit.setText(str(tmp_path / "stopped.pdf"))
    dialog.export_button.click()
    dialog.stop()  # while the report is built: the job sees it when that step ends
    assert dialog.note.text() == "stopping after building the report…"
    gate.set()
    qtbot.waitUntil(lambda: dialog.job is None, timeout=30000)
    assert not (tmp_path / "stopped.pdf").exists() and not any(tmp_path.glob("stopped*"))
    assert dialog.note.text() == "export stopped: nothing written" and w.last_error is None
    dialog.export_button.click()
    qtbot.waitUntil(lambda: dialog.job is None, timeout=30000)
    assert (tmp_path / "stopped.pdf").read_bytes().startswith(b"%PDF")
    assert dialog.note.text().startswith("wrote 1 file(s)")


def test_the_plans_are_checked_in_the_job_on_a_copy_of_the_scenario(make_window, grid, gplan, tmp_path,
                                                                     qtbot, monkeypatch):
    """Export's click hashes nothing on the window's thread (0.6 s at fat-tree k=64); the job
    reports a plan file made for another version, and an edit made while it runs is not in the
    report (the job works on the state the click saw)."""
    import threading
    from dataclasses import replace

    from inaplanner.gui import export

    gate = threading.Event()
    real_build, real_sha, real_doc_sha = export.build_report, export.scenario_sha256, export.document_sha256
    hashed_on: list[str] = []

    def held(*args, **kwargs):
        gate.wait(10)
        return real_build(*args, **kwargs)

    def sha(*args):
        hashed_on.append(threading.current_thread().name)
        return real_sha(*args)

    def doc_sha(*args):
        hashed_on.append(threading.current_thread().name)
        return real_doc_sha(*args)

    monkeypatch.setattr(export, "build_report", held)
    monkeypatch.setattr(export, "scenario_sha256", sha)
    monkeypatch.setattr(export, "document_sha256", doc_sha)
    w = make_window(grid)
    dialog = open_export_dialog(w)
    save_plan(gplan, tmp_path / "hand.json")
    save_plan(replace(gplan, scenario_sha256="0" * 64), tmp_path / "older.json")
    assert dialog.add_plan_file(str(tmp_path / "hand.json"))
    assert dialog.add_plan_file(str(tmp_path / "older.json"))
    dialog.format_combo.setCurrentText("html")
    dialog.output_edit.setText(str(tmp_path / "copy.html"))
    dialog.export_button.click()
    assert dialog.job is not None and hashed_on == []
    w.editor.rename("S1", "Sx1")  # while the job runs
    gate.set()
    qtbot.waitUntil(lambda: dialog.job is None, timeout=30000)
    assert w.last_error is None
    assert hashed_on and threading.main_thread().name not in hashed_on
    assert "older was made for another version of the scenario" in dialog.note.text()
    assert "hand was made" not in dialog.note.text() and "wrote 1 file(s)" in dialog.note.text()
    html = (tmp_path / "copy.html").read_text()
    assert "S1" in html and "Sx1" not in html


def test_a_result_planned_on_another_scenario_is_refused(grid, gplan):
    from types import SimpleNamespace

    from inaplanner.errors import InaplannerError
    from inaplanner.gui.export import checked_pairs
    from inaplanner.io.native import scenario_from_dict, scenario_to_dict

    same = scenario_from_dict(scenario_to_dict(grid))  # another object, the same scenario
    other = scenario_from_dict(scenario_to_dict(grid))
    other.links[0].capacity *= 2
    other.touch()
    first = SimpleNamespace(title="#1 atp", scenario=grid, plan=gplan)
    notes: list[str] = []
    sc, pairs = checked_pairs(grid, [("result", first), ("result", SimpleNamespace(
        title="#2 geryon", scenario=same, plan=gplan))], notes)
    assert sc is grid and [label for label, _ in pairs] == ["#1 atp", "#2 geryon"] and notes == []
    with pytest.raises(InaplannerError, match="#3 ecmp was planned on another scenario"):
        checked_pairs(grid, [("result", first), ("result", SimpleNamespace(
            title="#3 ecmp", scenario=other, plan=gplan))], notes)
