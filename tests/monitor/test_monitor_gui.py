"""Monitor mode in the desktop app (pytest-qt, offscreen) against emulated switches following a
deployed plan: the canvas paints the observed load with the planner overlay's colour scale, the
table puts planned and observed side by side, series are plotted, alerts fire, a recording
replays, a switch that stops answering is shown."""

from __future__ import annotations

import math

import numpy as np

from inaplanner.monitor.drive import drive_plan, parse_hot
from inaplanner.monitor.recording import load_recording
from inaplanner.views.monitor import MonitorOverlay
from inaplanner.views.overlay import colour_of


def row_of(panel, name):
    for r in range(panel.table.rowCount()):
        if panel.table.item(r, 0).text() == name:
            return [panel.table.item(r, c).text() for c in range(panel.table.columnCount())]
    raise AssertionError(f"no row {name}")


def test_monitor_mode_live_alerts_recording_and_replay(make_window, deployed, tmp_path, qtbot):
    sc, plan, tb = deployed
    hot = parse_hot(["L2->S1=2"], sc)
    planned = drive_plan(tb.handles, sc, tb.inventory, plan, hot=hot)
    (key,) = hot
    li = key[0]
    w = make_window(sc)
    panel = w.monitor

    assert panel.start() is False  # no testbed chosen yet: one clear error
    assert "testbed" in w.last_error[1]

    panel.testbed_edit.setText(str(tb.path))
    panel.set_plan(plan, "hand plan")
    panel.interval_spin.setValue(0.2)
    panel.window_spin.setValue(1.0)
    panel.hold_spin.setValue(0.3)
    panel.record_check.setChecked(True)
    panel.record_edit.setText(str(tmp_path / "gui.csv"))
    alerts = []
    panel.alert.connect(alerts.append)
    ticks = []
    from PySide6.QtCore import QTimer

    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(1))
    timer.start(5)
    assert panel.start()
    # the testbed file is read and its switches mapped on a helper thread: the window turns
    assert panel.state == "starting" and not panel.start_button.isEnabled()
    qtbot.waitUntil(lambda: panel.state == "live", timeout=20000)
    timer.stop()
    assert ticks
    panel.mode_action.setChecked(True)  # View > Monitor mode
    assert not panel.dock.isHidden()  # Monitor mode shows the dock
    qtbot.waitUntil(lambda: len(panel.model.snapshots) >= 6
                    and any(a.kind == "deviation" and a.key == key for a in alerts), timeout=10000)

    snap = panel.current_snapshot()
    ov = w.canvas.overlay
    assert isinstance(ov, MonitorOverlay)
    assert ov.link_load[key] == snap.rates[key]
    obs = snap.rates[key]
    assert abs(obs - 2 * planned[key]) <= 0.15 * 2 * planned[key]  # the injected hot link
    util = max(v / sc.links[li].capacity for (i, _d), v in snap.rates.items() if i == li)
    assert w.canvas.link_item(li).colour() == colour_of(util).lower()
    assert "planned 3 Gbps" in w.canvas.link_item(li).toolTip()
    name = f"{sc.links[li].a}->{sc.links[li].b}" if key[1] == 0 else f"{sc.links[li].b}->{sc.links[li].a}"
    row = row_of(panel, name)
    assert row[1] == f"{obs:.4g}" and row[2] == "3" and row[3] == "10"
    assert row[5].startswith("+")
    assert any("deviates from plan" in panel.alerts_list.item(i).text()
               for i in range(panel.alerts_list.count()))

    panel.select_links([key])
    xs, ys = panel.plotted[key].getData()
    ts, vs = panel.model.series_of(key)
    assert np.array_equal(xs, ts) and np.array_equal(ys, vs) and len(vs) >= 4

    # a switch that stops answering is named, the others keep coming
    tb.handles["S2"].stop()
    qtbot.waitUntil(lambda: "not answering: S2" in panel.health_label.text(), timeout=5000)
    before = len(panel.model.snapshots)
    qtbot.waitUntil(lambda: len(panel.model.snapshots) >= before + 2, timeout=5000)
    assert panel.model.latest.stale == ("S2",)

    panel.stop()
    assert panel.state == "idle"
    panel.wait_stopped()
    panel.mode_action.setChecked(False)
    assert w.canvas.overlay is None  # back to the planner's (no result shown)

    rec = load_recording(tmp_path / "gui.csv")
    assert len(rec.snapshots) >= 5
    assert panel.open_recording(str(tmp_path / "gui.csv"))  # read on a helper thread
    qtbot.waitUntil(lambda: panel.state == "replay", timeout=20000)
    assert panel.slider.maximum() == len(rec.snapshots) - 1
    panel.mode_action.setChecked(True)
    panel.slider.setValue(0)
    assert all(math.isnan(v) for v in w.canvas.overlay.link_load.ravel())  # first poll: baselines
    assert row_of(panel, name)[1] == "-"
    last = len(rec.snapshots) - 1
    panel.slider.setValue(last)
    replayed = rec.snapshots[last]
    for k, v in replayed.rates.items():
        assert w.canvas.overlay.link_load[k] == v


def test_recording_of_another_scenario_is_refused(make_window, leafspine, tmp_path):
    from inaplanner.monitor.recording import LinkInfo, open_recorder
    from inaplanner.monitor.series import Snapshot

    sc, _plan = leafspine
    r = open_recorder(tmp_path / "other.csv", {}, {(0, 0): LinkInfo("X", "Y", 1.0)})
    r.write(Snapshot(0.0, 0.0, {(0, 0): 1.0}))
    r.close()
    w = make_window(sc)
    assert w.monitor.open_recording(str(tmp_path / "other.csv"), wait=True) is False
    assert "do not match the open scenario" in w.last_error[1]
    assert w.monitor.state == "idle" and w.monitor.recording is None


def test_a_poll_refills_the_table_without_holding_the_window(make_window, qtbot):
    """The table of the most loaded links is refilled at every poll. With its header sizing
    the columns to their contents at every cell set, refilling 200 rows held the window 8 s
    (at fat-tree k=32 the window stood still 16-33 s at a stretch); it is sized once now."""
    import time

    from inaplanner.monitor.series import Snapshot
    from inaplanner.topologies import fat_tree
    from inaplanner.views.monitor import MonitorModel

    sc = fat_tree(8)
    w = make_window(sc)
    w.show()
    panel = w.monitor
    panel.mode_action.setChecked(True)  # the dock, and its table, on screen
    panel.model = MonitorModel(sc, None, panel.rule())
    keys = [(li, d) for li in range(len(sc.links)) for d in (0, 1)]
    took = []
    for n in range(3):
        snap = Snapshot(float(n), 1e9 + n, {k: float((k[0] * 7 + k[1] + n) % 97) for k in keys})
        panel.model.add(snap)
        start = time.perf_counter()
        panel._refresh(snap)
        took.append(time.perf_counter() - start)
        qtbot.wait(50)  # the window's turn between polls: the header lays itself out
    assert panel.table.rowCount() == 200
    top = max(sc.links[li].capacity for li in range(len(sc.links)))
    assert float(row_of(panel, panel.table.item(0, 0).text())[1]) <= top
    # the first fill makes the cells; the next ones set them again (8 s each before)
    assert max(took[1:]) < 2.0, took


def test_a_bad_testbed_file_is_one_error_once_it_is_read(make_window, deployed, tmp_path, qtbot):
    """Starting reads the testbed file on a helper thread: a bad file is one error when that
    ends, and the dock is idle again; a stop while the file is read drops what it opened."""
    sc, plan, tb = deployed
    w = make_window(sc)
    panel = w.monitor
    bad = tmp_path / "bad.toml"
    bad.write_text("[[switch]]\nid = 'L1'\np4runtime = 'nowhere'\n")
    panel.testbed_edit.setText(str(bad))
    assert panel.start()
    qtbot.waitUntil(lambda: panel.state == "idle", timeout=20000)
    assert "bad.toml" in w.last_error[1] and panel.poller is None
    panel.testbed_edit.setText(str(tb.path))
    assert panel.start()
    panel.stop()
    panel.wait_stopped()
    qtbot.wait(100)  # the opening's answer arrives, and is dropped
    assert panel.state == "idle" and panel.poller is None and panel.model is None


def _recording_of(sc, path, polls: int, gbps: float = 1.0) -> None:
    from inaplanner.monitor.recording import LinkInfo, open_recorder
    from inaplanner.monitor.series import Snapshot

    infos = {}
    for li, lk in enumerate(sc.links):
        infos[li, 0] = LinkInfo(lk.a, lk.b, lk.capacity)
        infos[li, 1] = LinkInfo(lk.b, lk.a, lk.capacity)
    r = open_recorder(path, {}, infos)
    for i in range(polls):
        r.write(Snapshot(float(i), 1.7e9 + i, {k: gbps * (i + 1) for k in infos}))
    r.close()


def test_a_recording_is_read_without_holding_the_window(make_window, leafspine, tmp_path, qtbot,
                                                         monkeypatch):
    """A recording is read on a helper thread (about 1.1 s a poll at fat-tree k=64: a recording
    of its size limit held the window two minutes): the dock says how far it got, Stop cancels
    it, and a recording that cannot be opened leaves the replay shown before."""
    import threading

    from PySide6.QtCore import QTimer

    from inaplanner.monitor import recording

    sc, _plan = leafspine
    _recording_of(sc, tmp_path / "a.sqlite", 4)
    _recording_of(sc, tmp_path / "b.csv", 3, gbps=2.0)
    w = make_window(sc)
    panel = w.monitor
    release = threading.Event()
    real = recording._Polls._told

    def held(self):  # the reading waits after its first poll until released
        real(self)
        if self.read == 1:
            release.wait(30)

    monkeypatch.setattr(recording._Polls, "_told", held)
    ticks = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(1))
    timer.start(20)
    assert panel.open_recording(str(tmp_path / "a.sqlite")) is True
    assert panel.state == "opening" and not panel.start_button.isEnabled()
    qtbot.waitUntil(lambda: "read poll 1 of 4" in panel.health_label.text(), timeout=10000)
    before = len(ticks)
    qtbot.waitUntil(lambda: len(ticks) >= before + 5, timeout=10000)  # the window goes on
    panel.stop()  # cancels the reading
    assert panel.state == "idle" and panel.recording is None
    release.set()
    qtbot.wait(300)
    assert panel.state == "idle" and panel.recording is None  # what it read is dropped

    monkeypatch.setattr(recording._Polls, "_told", real)
    assert panel.open_recording(str(tmp_path / "b.csv"))
    qtbot.waitUntil(lambda: panel.state == "replay", timeout=20000)
    shown = panel.recording
    assert len(shown.snapshots) == 3 and panel.slider.maximum() == 2
    assert panel.current_snapshot().rates[0, 0] == 6.0

    (tmp_path / "bad.csv").write_text("not a recording\n")
    assert panel.open_recording(str(tmp_path / "bad.csv"))
    qtbot.waitUntil(lambda: panel.state != "opening", timeout=20000)
    assert "not an inaplanner monitoring recording" in w.last_error[1]
    assert panel.state == "replay" and panel.recording is shown  # the replay before comes back
    assert panel.slider.isEnabled()
    timer.stop()


def test_the_command_lines_replay_is_read_with_the_window_going_on(make_window, leafspine, tmp_path, qtbot,
                                                                   monkeypatch):
    """``inaplanner gui --replay`` waits for its recording (``wait=True``): it used to read it on
    the window's thread, which held a k=64 window about two minutes. Now the reading runs on a
    helper thread while the window goes on and the dock counts the polls; Stop ends the wait
    with nothing opened and no error."""
    import threading

    from PySide6.QtCore import QTimer

    from inaplanner.monitor import recording

    sc, _plan = leafspine
    _recording_of(sc, tmp_path / "a.csv", 4)
    w = make_window(sc)
    panel = w.monitor
    release = threading.Event()
    real = recording._Polls._told
    reader: list[str] = []

    def held(self):  # the reading waits after its first poll until released
        real(self)
        reader.append(threading.current_thread().name)
        if self.read == 1:
            release.wait(30)

    monkeypatch.setattr(recording._Polls, "_told", held)
    seen: list[str] = []
    ticks: list[int] = []

    def tick() -> None:  # runs only while the window's event loop turns
        ticks.append(1)
        seen.append(panel.health_label.text())
        if len(ticks) >= 10 and any("read poll 1 of 4" in t for t in seen):
            release.set()

    timer = QTimer()
    timer.timeout.connect(tick)
    timer.start(20)
    assert panel.open_recording(str(tmp_path / "a.csv"), wait=True) is True
    timer.stop()
    assert release.is_set()  # only the timer releases it: the loop turned during the reading
    assert reader and threading.current_thread().name not in reader
    assert panel.state == "replay" and panel.open_outcome == "opened"
    assert len(panel.recording.snapshots) == 4

    # Stop while it waits: nothing opened, no error, the replay shown before comes back
    release.clear()
    errors_before = getattr(w, "last_error", None)
    QTimer.singleShot(200, panel.stop)
    assert panel.open_recording(str(tmp_path / "a.csv"), wait=True) is False
    assert panel.open_outcome == "stopped"
    assert getattr(w, "last_error", None) == errors_before
    assert panel.state == "replay" and len(panel.recording.snapshots) == 4
    release.set()
    panel.wait_stopped()


def test_gui_replay_of_a_bad_recording_says_its_cause_in_one_line(tmp_path):
    """``inaplanner gui --replay`` of a file that is no recording: exit 2, one line naming the
    file and the cause (it said only "could not be opened on this scenario"), no screenshot."""
    import os
    import subprocess
    import sys

    bad = tmp_path / "bad.csv"
    bad.write_text("not a recording\n")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", INAPLANNER_RECOVERY_DIR=str(tmp_path / "rec"))
    run = subprocess.run([sys.executable, "-m", "inaplanner", "gui", "sample", "--replay", str(bad),
                          "--screenshot", str(tmp_path / "o.png")],
                         capture_output=True, text=True, timeout=120, env=env)
    assert run.returncode == 2, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("inaplanner: error: "), run.stderr
    assert "bad.csv" in lines[0] and "not an inaplanner monitoring recording" in lines[0]
    assert not (tmp_path / "o.png").exists()
