"""Opening, saving, exporting, generating and autosaving a datacenter-sized scenario, and the
Deploy dialog's reads, off the window's thread.

At fat-tree k=64 opening froze the window 7 s, saving 6 s, exporting GraphML 16 s and every
autosave 3.4 s. The tests use fat-tree k=24 (4,176 nodes, 10,368 links, 2.3 MB): large enough
that reading and writing take turns of the event loop, small enough for the suite. A timer on the
window's thread records what it sees while a file job runs and acts during it; with the work on
the window's thread it would never fire (every test here fails with the jobs run inline).
"""

from __future__ import annotations

import gc
import json
import time

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QMessageBox

import inaplanner.gui.files as files
from inaplanner.io.formats import import_scenario
from inaplanner.io.native import load_scenario, save_scenario, scenario_to_dict
from inaplanner.topologies import fat_tree


@pytest.fixture(scope="module")
def ft24_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("files") / "ft24.json"
    save_scenario(fat_tree(24), path)
    return path


class Watcher:
    """A 5 ms timer on the window's thread: counts its turns while a file job runs, notes what the
    status bar says, and runs ``action`` once at the first such turn."""

    def __init__(self, window, action=None) -> None:
        gc.collect()  # so that no pass of the UI thread's collector falls in the job
        self.window = window
        self.action = action
        self.turns = 0
        self.seen: set[str] = set()
        self.timer = QTimer()
        self.timer.setInterval(5)
        self.timer.timeout.connect(self._turn)
        self.timer.start()

    def _turn(self) -> None:
        jobs = self.window.files.jobs
        if not jobs.running:
            return
        self.turns += 1
        if jobs.busy.progress.isVisible():
            self.seen.add(jobs.busy.label.text())
        if self.action is not None:
            action, self.action = self.action, None
            action()

    def stop(self) -> None:
        self.timer.stop()


def held_until_stopped(window, work):
    """``work`` that, on the job's thread, first waits (30 s at most) for Stop: a Watcher's turn
    that presses it then comes before the job's first step point whatever the machine's speed
    or load (a fast machine read fat-tree k=24 to its end before the window's first turn)."""

    def run(*args, **kwargs):
        job = window.files.jobs.current
        end = time.monotonic() + 30
        while not job.stopped and time.monotonic() < end:
            time.sleep(0.005)
        return work(*args, **kwargs)

    return run


def test_a_large_file_opens_while_the_window_goes_on(make_window, ft24_file):
    window = make_window()
    window.show()
    watch = Watcher(window)
    assert window.files.open_path(str(ft24_file))
    watch.stop()
    assert watch.turns >= 1  # the window's event loop ran while the file was read
    assert "opening ft24.json…" in watch.seen
    assert not window.files.jobs.running and not window.files.jobs.busy.progress.isVisible()
    sc = window.scenario()
    assert len(sc.nodes) == 4176 and len(sc.links) == 10368
    assert window.document.path == str(ft24_file) and not window.is_modified()
    # the canvas's grouping and the tables' index were made on the job's thread, while reading,
    # and are the ones the window uses
    made = dict(sc.__dict__["_derived"])
    zoom = window.canvas.canvas_scene().zoom
    assert zoom is not None and zoom.grouping is made["grouping"]
    from inaplanner.views.hotlists import network_index
    from inaplanner.views.semantic import network_pods

    assert network_index(sc, network_pods(sc)) is made["hot lists index"]["last"]


def test_stop_and_edits_made_meanwhile_leave_the_document_alone(make_window, ft24_file, tmp_path, monkeypatch):
    window = make_window()
    window.show()
    path = tmp_path / "small.json"
    save_scenario(fat_tree(4), path)
    assert window.files.open_path(str(path))
    before = scenario_to_dict(window.scenario())

    watch = Watcher(window, window.files.jobs.stop)
    with monkeypatch.context() as m:
        m.setattr(files, "read_scenario", held_until_stopped(window, files.read_scenario))
        assert not window.files.open_path(str(ft24_file))
    watch.stop()
    assert watch.turns >= 1
    assert scenario_to_dict(window.scenario()) == before and window.document.path == str(path)
    assert "opening ft24.json stopped" in window.statusBar().currentMessage()
    assert window.last_error is None

    # an edit made while the file is read is not dropped without asking
    watch = Watcher(window, lambda: window.editor.set_link(0, capacity=7.0))
    window.answers["unsaved"] = QMessageBox.StandardButton.Cancel
    assert not window.files.open_path(str(ft24_file))
    watch.stop()
    assert window.scenario().links[0].capacity == 7.0 and window.is_modified()
    window.answers["unsaved"] = QMessageBox.StandardButton.Discard
    assert window.files.open_path(str(ft24_file), confirm=False)
    assert len(window.scenario().nodes) == 4176


def test_a_stop_after_the_last_step_point_still_opens_nothing(make_window, tmp_path, monkeypatch):
    """Stop pressed after the reading job passed its last step point, before the window used what
    it read (a fast machine reads fat-tree k=24 before the window's first turn): nothing is
    opened, as Stop promises. A save that has written when Stop comes keeps its file, and the
    window says it saved. The Stop is asked from inside the job, right after its real work."""
    window = make_window()
    window.show()
    small, other = tmp_path / "small.json", tmp_path / "other.json"
    save_scenario(fat_tree(4), small)
    save_scenario(fat_tree(6), other)
    assert window.files.open_path(str(small))
    before = scenario_to_dict(window.scenario())

    def late(work):
        def run(*args, **kwargs):
            out = work(*args, **kwargs)
            window.files.jobs.current.stop()  # the flag only: this is the job's thread
            return out
        return run

    monkeypatch.setattr(files, "read_scenario", late(files.read_scenario))
    assert not window.files.open_path(str(other))
    assert scenario_to_dict(window.scenario()) == before and window.document.path == str(small)
    assert "opening other.json stopped" in window.statusBar().currentMessage()

    monkeypatch.setattr(files, "write_document", late(files.write_document))
    out = tmp_path / "saved.json"
    assert window.files.save_to(str(out))
    assert scenario_to_dict(load_scenario(out)) == before and window.document.path == str(out)


def test_a_save_writes_what_was_there_when_it_started(make_window, ft24_file, tmp_path, monkeypatch):
    window = make_window()
    window.show()
    assert window.files.open_path(str(ft24_file))
    window.editor.set_link(0, capacity=11.0)
    out = tmp_path / "saved.json"
    watch = Watcher(window, lambda: window.editor.set_link(1, capacity=13.0))
    assert window.files.save_to(str(out))
    watch.stop()
    assert watch.turns >= 1 and "saving saved.json…" in watch.seen
    saved = load_scenario(out)
    assert saved.links[0].capacity == 11.0 and saved.links[1].capacity != 13.0
    # the edit made during the write is not in the file: the document still says so
    assert window.document.path == str(out)
    assert window.is_modified() and "*" in window.windowTitle()
    assert window.scenario().links[1].capacity == 13.0

    # Stop: nothing is written, the document stays as it was
    other = tmp_path / "stopped.json"
    watch = Watcher(window, window.files.jobs.stop)
    with monkeypatch.context() as m:
        m.setattr(files, "write_document", held_until_stopped(window, files.write_document))
        assert not window.files.save_to(str(other))
    watch.stop()
    assert not other.exists() and not list(tmp_path.glob("*.tmp*"))
    assert "nothing was written" in window.statusBar().currentMessage()
    assert window.document.path == str(out) and window.is_modified()

    # a clean save makes the document clean
    assert window.files.save()
    assert not window.is_modified() and load_scenario(out).links[1].capacity == 13.0


def test_the_autosave_writes_on_its_own_thread(make_window, ft24_file):
    window = make_window()
    assert window.files.open_path(str(ft24_file))
    window.editor.set_link(0, capacity=17.0)
    auto = window.autosave
    assert auto.save_now() == auto.path
    assert not auto.path.exists()  # returned at once: the text is made and written on a thread
    window.editor.set_link(0, capacity=19.0)  # after the snapshot: not in this file
    auto.wait()
    doc = json.loads(auto.path.read_text("utf-8"))
    assert doc["links"][0]["capacity"] == 17.0 and auto.saves == 1
    assert doc["x-inaplanner-recovery"]["path"] == str(ft24_file)
    auto.tick()  # the second edit is written by the next tick
    auto.wait()
    assert json.loads(auto.path.read_text("utf-8"))["links"][0]["capacity"] == 19.0
    assert auto.saves == 2


def test_an_export_writes_the_snapshot_while_the_window_goes_on(make_window, ft24_file, tmp_path, monkeypatch):
    window = make_window()
    window.show()
    assert window.files.open_path(str(ft24_file))
    out = tmp_path / "ft24.graphml"
    watch = Watcher(window, lambda: window.editor.set_link(0, capacity=23.0))
    assert window.files.export_to(str(out))
    watch.stop()
    assert watch.turns >= 1 and "exporting ft24.graphml…" in watch.seen
    back, _notes = import_scenario(out)
    assert len(back.nodes) == 4176 and len(back.links) == 10368
    assert back.links[0].capacity != 23.0  # the edit made meanwhile is not in it
    assert window.document.path == str(ft24_file)  # an export leaves the document's own file
    other = tmp_path / "stopped.gml"
    watch = Watcher(window, window.files.jobs.stop)
    with monkeypatch.context() as m:
        m.setattr(files, "export_document", held_until_stopped(window, files.export_document))
        assert not window.files.export_to(str(other))
    watch.stop()
    assert not other.exists() and "nothing was written" in window.statusBar().currentMessage()


def test_a_network_is_generated_while_the_window_goes_on(make_window):
    from inaplanner.gui.generate_dialog import GenerateSpec

    window = make_window()
    window.show()
    watch = Watcher(window)
    assert window.generate(GenerateSpec(kind="fat-tree", k=24, share=0.2, jobs=2, workers_per_job=50))
    watch.stop()
    assert watch.turns >= 1 and "generating fat-tree…" in watch.seen
    sc = window.scenario()
    assert len(sc.nodes) == 4176 and len(sc.jobs) == 2 and window.is_modified()
    window.undo_stack.undo()  # one undoable step
    assert len(window.scenario().nodes) == 0
    # a spec that cannot be built: one error, nothing changes
    assert not window.generate(GenerateSpec(kind="fat-tree", k=5))
    assert window.last_error[0] == "Cannot generate" and len(window.scenario().nodes) == 0


def test_the_deploy_dialog_reads_its_plan_and_testbed_while_the_window_goes_on(make_window, ft24_file,
                                                                             tmp_path):
    """The private copy of the scenario and the plan's hash check (4-6 s at k=64) and the testbed
    file (2.4 s) are read in a file job; a testbed that cannot be read is then one error."""
    from inaplanner.io.native import save_plan
    from inaplanner.planners import available, run_planner

    window = make_window(plugins=True)
    window.show()
    assert window.files.open_path(str(ft24_file))
    sc = window.scenario()
    from inaplanner.topologies import place_jobs

    place_jobs(sc, jobs=1, workers_per_job=8, seed=1)
    sc.touch()
    window.document.open(sc, str(ft24_file), validated=False)  # the jobs in the document
    plan_path = tmp_path / "p.plan.json"
    save_plan(run_planner(available()["random"], sc, {"seed": 1}), plan_path)
    window.deploy.deploy_action.trigger()
    dialog = window.deploy.dialog
    dialog.use_plan_file(plan_path)
    dialog.testbed_edit.setText(str(tmp_path / "missing.toml"))
    seen = []
    timer = QTimer()
    timer.setInterval(5)
    timer.timeout.connect(lambda: seen.append(dialog.headline.text()) if dialog._reading is not None else None)
    gc.collect()  # so that no pass of the UI thread's collector falls in the read
    timer.start()
    assert dialog.dry_run() is False
    timer.stop()
    assert len(seen) >= 1 and seen[0] == "Reading the plan and the testbed…"
    title, message = window.last_error
    assert title == "Cannot dry run" and "missing.toml" in message
    assert dialog.dry_run_button.isEnabled() and not dialog.running
