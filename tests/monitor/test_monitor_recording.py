"""Recording a run to CSV and SQLite, and replaying it: the same series comes back."""

from __future__ import annotations

import time

import pytest

from inaplanner.errors import InaplannerError
from inaplanner.monitor.drive import drive_plan
from inaplanner.monitor.poller import Poller
from inaplanner.monitor.recording import (
    CsvRecorder,
    LinkInfo,
    SqliteRecorder,
    load_recording,
    open_recorder,
)
from inaplanner.monitor.series import Snapshot


class Tee:
    def __init__(self, *recorders):
        self.recorders = recorders

    def write(self, snap):
        for r in self.recorders:
            r.write(snap)

    def close(self):
        for r in self.recorders:
            r.close()


def as_tuples(snaps):
    return [(s.t, s.wall, dict(s.rates), tuple(s.stale)) for s in snaps]


def test_replay_of_a_recorded_run_gives_the_same_series(deployed, tmp_path):
    sc, plan, tb = deployed
    drive_plan(tb.handles, sc, tb.inventory, plan, noise=0.05)
    poller = Poller(sc, tb.inventory, interval=0.1, backoff_base=0.05, backoff_max=0.1)
    links = poller.link_infos()
    meta = {"scenario": sc.name}
    rec = Tee(open_recorder(tmp_path / "run.csv", meta, links),
              open_recorder(tmp_path / "run.sqlite", meta, links))
    assert isinstance(rec.recorders[0], CsvRecorder) and isinstance(rec.recorders[1], SqliteRecorder)
    poller.recorder = rec
    try:
        for i in range(5):
            if i == 3:
                tb.handles["S2"].stop()  # a stale switch shows in the recording too
            poller.poll_once()
            time.sleep(0.12)
    finally:
        poller.stop()
        rec.close()
    live = as_tuples(poller.history)
    assert len(live) == 5 and live[3][3] == ("S2",)
    assert any(s[2] for s in live)
    for name in ("run.csv", "run.sqlite"):
        replay = load_recording(tmp_path / name)
        assert as_tuples(replay.snapshots) == live, name
        assert replay.meta["scenario"] == sc.name
        key = next(iter(live[-1][2]))
        assert replay.links[key] == links[key]
        ts, vs = replay.series(key)
        assert vs == [s[2][key] for s in live if key in s[2]]
        assert ts == [s[0] for s in live if key in s[2]]


def test_recording_files_are_checked(tmp_path):
    bad = tmp_path / "x.csv"
    bad.write_text("t,wall\n1,2\n")
    with pytest.raises(InaplannerError, match="not an inaplanner monitoring recording"):
        load_recording(bad)
    with pytest.raises(InaplannerError, match="no such recording"):
        load_recording(tmp_path / "missing.csv")
    path = tmp_path / "ok.csv"
    r = open_recorder(path, {}, {(0, 0): LinkInfo("A", "B", 10.0)})
    r.write(Snapshot(0.5, 1.0, {(0, 0): 1.25}, ()))
    r.close()
    text = path.read_text().replace("rate,0,0", "rate,zero,0")
    path.write_text(text)
    with pytest.raises(InaplannerError, match=r"ok\.csv: line 5"):
        load_recording(path)


def test_csv_rate_rows_are_what_the_csv_module_writes(tmp_path):
    """The rate rows are written as text, not through the csv module (a row per link took 1.5 s
    a poll at fat-tree k=64): the file is still byte for byte what the csv module writes, names
    with commas and quotes included, and replays to the same rates."""
    import csv
    import io

    links = {(0, 0): LinkInfo("A", "B,1", 10.0), (0, 1): LinkInfo("B,1", "A", 10.0),
             (2, 1): LinkInfo('say "hi"', "C", 0.5), (3, 0): LinkInfo("D", "E", 40.0)}
    snaps = [Snapshot(0.5, 1e9 + 0.5, {(2, 1): 0.1 + 0.2, (0, 0): 1.25, (9, 0): 3.0}, ("S2",)),
             Snapshot(1.5, 1e9 + 1.5, {(0, 1): 1e-17, (3, 0): 40.000000000000014}, ())]
    path = tmp_path / "run.csv"
    rec = CsvRecorder(path, {"scenario": "x"}, links)
    for snap in snaps:
        rec.write(snap)
    rec.close()
    want = io.StringIO()
    w = csv.writer(want, lineterminator="\n")
    for snap in snaps:
        w.writerow([repr(snap.t), repr(snap.wall), "tick", "", "", "", "", "", "",
                    " ".join(snap.stale)])
        for (li, d), v in sorted(snap.rates.items()):
            info = links.get((li, d), LinkInfo("?", "?", 0.0))
            w.writerow([repr(snap.t), repr(snap.wall), "rate", li, d, info.src, info.dst,
                        repr(float(info.capacity)), repr(float(v)), ""])
    assert path.read_text().split("\n", 3)[3] == want.getvalue()
    assert as_tuples(load_recording(path).snapshots) == as_tuples(snaps)
