"""The Deploy dialog on the main window against real emulated P4Runtime switches (gRPC on
127.0.0.1, started by the dialog's own button): menu action, dry-run diff tree, a deployment off
the UI thread read back from the switches, cancel with rollback, bad inputs refused with one error
and nothing changed, emulators stopped when the dialog closes."""

from __future__ import annotations

import gc
import json
import threading
import time
from pathlib import Path

import pytest

from inaplanner.dataplane.entries import build_entities
from inaplanner.dataplane.p4info import DEFAULT_P4INFO, P4InfoIndex, parse_p4info_text
from inaplanner.deploy.deployer import desired_from_spec
from inaplanner.deploy.p4rt import P4RTConnectionRefused, P4RTSession, describe_entity, probe_tcp
from inaplanner.deploy.state import diff_state
from inaplanner.io.native import save_plan
from inaplanner.testbed.inventory import load_inventory


def _inventory(dialog):
    return load_inventory(dialog.testbed_edit.text())


def _contract_index() -> P4InfoIndex:
    return P4InfoIndex(parse_p4info_text(DEFAULT_P4INFO.read_text(), str(DEFAULT_P4INFO)))


def _untouched(dialog) -> bool:
    return all(not h.state.pipeline_set and h.state.write_requests == 0
               for h in dialog.emulated.handles.values())


def test_deploy_menu_action_opens_the_dialog_with_the_selected_result(qtbot, window, scenario, h):
    action = window.actions_by_name["deploy"]
    assert action in window.menu("Deploy").actions()
    assert action.shortcut().toString() == "Ctrl+Shift+D"
    assert action.toolTip().startswith("Deploy a plan onto a testbed") and "(Ctrl+Shift+D)" in \
        action.toolTip()
    assert window.actions_by_name["deploy_emulated"] in window.menu("Deploy").actions()
    result = h.add_result(window, scenario, h.make_plan(scenario))
    action.trigger()
    dlg = window.deploy.dialog
    assert dlg.isVisible()
    assert dlg.result_radio.isChecked() and dlg.result_label.text() == result.title
    assert dlg.inputs().plan is result.plan
    # a plan file typed in switches the source to the file
    qtbot.keyClicks(dlg.plan_edit, "x.json")
    assert dlg.file_radio.isChecked()
    dlg.reject()


def test_dry_run_shows_the_expected_adds_and_changes_nothing(qtbot, window, scenario, dialog, h):
    plan = h.make_plan(scenario)
    h.add_result(window, scenario, plan)
    dialog.use_selected_result()
    report = h.run(qtbot, dialog, dialog.dry_run_button)
    assert report is not None and report.ok and report.dry_run
    assert window.errors == []
    spec = build_entities(scenario, plan, _inventory(dialog))
    index = _contract_index()
    for sid, sw in spec.switches.items():
        want = [describe_entity(e, index) for e in sw.entities]
        got = dialog.change_texts(sid)
        assert sorted(got["add"]) == sorted(want), sid
        assert got["modify"] == [] and got["delete"] == []
    # hand-checked on L1: H1 and H2 (ports 1, 2) merge there for j0; j1's H2 too; up to the spines
    l1 = dialog.change_texts("L1")["add"]
    assert len(l1) == len(spec.switches["L1"].entities) >= 6
    assert sum(t.startswith("table InaIngress.ina_aggregate [") for t in l1) == 3
    assert any(t.startswith("multicast group ") for t in l1)
    top = dialog.changes_tree.topLevelItem(0)
    assert top.text(0) == "L1 — pipeline: install" and top.text(1) == str(len(l1))
    assert dialog.tabs.currentWidget() is dialog.changes_tree
    assert dialog.headline.text().startswith("Dry run: ")
    assert _untouched(dialog)


def test_deploy_runs_off_the_ui_thread_and_the_switches_read_back(qtbot, window, scenario, dialog,
                                                                   h):
    plan = h.make_plan(scenario)
    h.add_result(window, scenario, plan)
    dialog.use_selected_result()
    ticks = []

    def tick() -> None:
        ticks.append(time.monotonic())

    from PySide6.QtCore import QTimer

    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(tick)
    timer.start()
    report = h.run(qtbot, dialog, dialog.deploy_button)
    timer.stop()
    assert report is not None and report.ok, report and report.text()
    assert window.errors == []
    assert len(ticks) >= 2  # the event loop kept turning while the deployment ran
    inv = _inventory(dialog)
    want = desired_from_spec(build_entities(scenario, plan, inv))
    for sid, ents in want.switches.items():
        handle = dialog.emulated.handles[sid]
        with P4RTSession(handle.address, 1, primary=False, label=sid) as s:
            assert diff_state(s.read_state(), ents).empty, sid
    for hid, data in want.hosts.items():
        assert inv.local_path(inv.hosts[hid].config_path).read_bytes() == data
        assert json.loads(data)["format"] == "inaplanner-worker"
    # progress table: one row per switch and worker, each in its final state
    table = dialog.progress_table
    rows = {table.item(r, 0).text(): table.item(r, 3).text() for r in range(table.rowCount())}
    assert {s: rows[s] for s in want.switches} == {s: "deployed" for s in want.switches}
    assert {w: rows[w] for w in want.hosts} == {w: "configured" for w in want.hosts}
    summary = dialog.summary_table
    statuses = {summary.item(r, 0).text(): summary.item(r, 2).text()
                for r in range(summary.rowCount())}
    assert statuses["L1"] == "deployed" and statuses["H1"] == "configured"
    assert dialog.tabs.currentWidget() is summary
    assert dialog.headline.text().startswith("Deployed: 5 switch(es) changed")
    # the run's overall progress reached the bar (busy until the first one): all done
    assert (dialog.busy.maximum(), dialog.busy.value()) == (1000, 1000)
    log = dialog.log_view.toPlainText()
    assert "[L1] write done: " in log and "[L1] verify done: " in log
    # a second dry run now finds nothing to change
    report = h.run(qtbot, dialog, dialog.dry_run_button)
    assert report.ok and all(dialog.change_texts(s) == {"add": [], "modify": [], "delete": []}
                             for s in want.switches)
    assert all(r.diff["unchanged"] == len(want.switches[s]) for s, r in report.switches.items())


def test_cancel_during_deploy_rolls_every_switch_back(qtbot, window, scenario, dialog, h,
                                                      tmp_path: Path):
    h.add_result(window, scenario, h.make_plan(scenario))
    dialog.use_selected_result()
    assert h.run(qtbot, dialog, dialog.deploy_button).ok
    before = h.held(dialog)
    inv = _inventory(dialog)
    workers_before = {w: inv.local_path(x.config_path).read_bytes() for w, x in inv.hosts.items()
                      if inv.local_path(x.config_path).exists()}
    assert workers_before

    # plan B from a file; L1 is a slow switch: its first update waits until Cancel is pressed
    other = tmp_path / "other.plan.json"
    save_plan(h.make_plan(scenario, spines=("S2", "S1"), rate=5.0), other)
    dialog.use_plan_file(other)
    dialog.batch_spin.setValue(1)
    reached = threading.Event()
    gc_during_run: list[bool] = []

    def slow(_update) -> bool:
        gc_during_run.append(gc.isenabled())
        reached.set()
        deadline = time.monotonic() + 15
        while not dialog.call.cancel_requested and time.monotonic() < deadline:
            time.sleep(0.01)
        return False

    dialog.emulated.handles["L1"].fail_on(slow)
    with qtbot.waitSignal(dialog.run_ended, timeout=30_000):
        dialog.deploy_button.click()
        qtbot.waitUntil(reached.is_set, timeout=15_000)
        dialog.cancel_button.click()
        assert dialog.cancel_button.text() == "Cancelling…" and not dialog.cancel_button.isEnabled()
    dialog.emulated.handles["L1"].fail_on(None)
    report = dialog.report
    assert report is not None and not report.ok and "cancelled" in report.error
    assert report.switches["L1"].status == "rolled back"
    assert h.held(dialog) == before
    assert {w: inv.local_path(x.config_path).read_bytes() for w, x in inv.hosts.items()
            if inv.local_path(x.config_path).exists()} == workers_before
    assert window.errors == []  # a cancel is not an error
    # no automatic garbage collection on worker threads while the run went on: the UI thread's
    # timer collects instead (inaplanner.gui.gcguard)
    assert gc_during_run and not any(gc_during_run)
    assert dialog.headline.text().startswith("Cancelled; ")
    assert "rolled back" in dialog.headline.text()
    assert "cancel requested" in dialog.log_view.toPlainText()
    assert "[L1] rollback done" in dialog.log_view.toPlainText()
    assert dialog.cancel_button.text() == "Cancel" and dialog.deploy_button.isEnabled()


@pytest.mark.parametrize("breakage", ["not toml", "unknown switch"])
def test_bad_testbed_file_shows_one_error_and_changes_nothing(qtbot, window, scenario, dialog, h,
                                                              tmp_path: Path, breakage: str):
    h.add_result(window, scenario, h.make_plan(scenario))
    dialog.use_selected_result()
    good = Path(dialog.testbed_edit.text()).read_text()
    bad = tmp_path / "testbed.toml"
    if breakage == "not toml":
        bad.write_text(good.replace('[[switch]]\nid = "L1"', '[[switch]\nid = "L1"', 1))
    else:
        bad.write_text(good.replace('id = "L2"', 'id = "X9"', 1))
    dialog.testbed_edit.setText(str(bad))
    dialog.deploy_button.click()  # refused at once (not TOML) or by the deployer's first check
    qtbot.waitUntil(lambda: bool(window.errors) and not dialog.running, timeout=10_000)
    qtbot.wait(100)  # and no second error follows
    assert len(window.errors) == 1
    title, message = window.errors[0]
    assert title == "Cannot deploy" and str(bad) in message
    assert ("not valid TOML" in message) if breakage == "not toml" else ("'X9'" in message)
    assert window.last_error == (title, message)
    assert _untouched(dialog)
    assert not (tmp_path / "workers").exists()
    assert not dialog.running and dialog.deploy_button.isEnabled()


def test_plan_for_another_scenario_is_refused(qtbot, window, scenario, dialog, h, tmp_path: Path):
    other = h.make_scenario()
    other.node("L1").programmable = False  # another scenario: another hash
    other.touch()
    path = tmp_path / "elsewhere" / "p.plan.json"
    path.parent.mkdir()
    save_plan(h.make_plan(scenario), path)
    data = json.loads(path.read_text())
    data["scenario_sha256"] = "0" * 64
    path.write_text(json.dumps(data))
    dialog.use_plan_file(path)
    assert dialog.dry_run() is False
    assert len(window.errors) == 1 and "made for another scenario" in window.errors[0][1]
    assert _untouched(dialog)


def test_closing_stops_the_emulators_and_waits_for_a_running_deploy(qtbot, window, scenario,
                                                                   dialog, h):
    h.add_result(window, scenario, h.make_plan(scenario))
    dialog.use_selected_result()
    addresses = [x.address for x in dialog.emulated.handles.values()]
    folder = Path(dialog.testbed_edit.text()).parent
    reached = threading.Event()

    def slow(_update) -> bool:
        reached.set()
        deadline = time.monotonic() + 15
        while not dialog.call.cancel_requested and time.monotonic() < deadline:
            time.sleep(0.01)
        return False

    dialog.emulated.handles["L1"].fail_on(slow)
    with qtbot.waitSignal(dialog.run_ended, timeout=30_000):
        dialog.deploy_button.click()
        qtbot.waitUntil(reached.is_set, timeout=15_000)
        dialog.reject()  # Close while deploying: cancel first, close once rolled back
        assert dialog.isVisible() and dialog.call.cancel_requested
    assert not dialog.isVisible()
    assert dialog.report is not None and "cancelled" in dialog.report.error
    assert dialog.emulated is None and not folder.exists()
    for address in addresses:
        with pytest.raises(P4RTConnectionRefused):
            probe_tcp(address, "emulator", 2.0)
    assert window.errors == []


def test_the_emulated_testbed_starts_off_the_ui_thread_and_cancel_keeps_none(qtbot, window,
                                                                             monkeypatch):
    """Start emulated testbed runs in a job (the scenario's copy and 1,026 switches take 6 s at
    fat-tree k=64): the window's loop turns meanwhile, Cancel stops it at its next switch and
    stops those already started, and an edit made meanwhile is not in what it emulates."""
    from PySide6.QtCore import QTimer

    from inaplanner.emulator import target

    real = target.start_emulator
    started: list = []
    first = threading.Event()
    gate = threading.Event()

    def held(*args, **kwargs):
        if started:
            gate.wait(10)  # the second switch waits for the test's Cancel
        handle = real(*args, **kwargs)
        started.append(handle)
        first.set()
        return handle

    monkeypatch.setattr(target, "start_emulator", held)
    window.deploy.deploy_action.trigger()
    dialog = window.deploy.dialog
    turns = []

    def on_turn() -> None:  # on the window's thread, while the job starts the switches
        turns.append(dialog.cancel_button.isEnabled())
        if first.is_set() and not gate.is_set():
            dialog.cancel()
            gate.set()

    def start_with(turn) -> bool:  # Start emulated testbed, ``turn`` called every 10 ms meanwhile
        timer = QTimer()
        timer.timeout.connect(turn)
        timer.start(10)
        try:
            return dialog.start_emulated()
        finally:
            timer.stop()

    assert start_with(on_turn) is False
    assert turns and turns[0] is True  # Cancel was offered while it started
    assert len(started) == 2 and all(h.stopped.is_set() for h in started)
    for h in started:
        with pytest.raises(P4RTConnectionRefused):
            probe_tcp(h.address, "emulator", 2.0)
    assert dialog.emulated is None and dialog.testbed_edit.text() == ""
    assert "cancelled" in dialog.headline.text() and window.errors == []
    assert dialog.emulate_button.isEnabled() and not dialog.cancel_button.isEnabled()

    # an edit made while it starts is not in what it emulates: the scenario as the click saw it
    started.clear()
    first.clear()
    gate.clear()
    before = sorted(s.id for s in window.scenario().switches() if s.programmable)

    def edit_on_turn() -> None:
        if first.is_set() and not gate.is_set():
            window.editor.set_programmable("L1", False)
            gate.set()

    assert start_with(edit_on_turn) is True
    assert not window.scenario().node("L1").programmable and "L1" in before
    assert sorted(dialog.emulated.handles) == before
