"""The SQLite recording at scale: format version 2 (the links written once, then per poll only
``rates(seq, link, direction, gbps)`` from the snapshot's arrays) replays exactly what was
written; version 1 files (the link's names and capacity in every rate row) still load as before;
an interrupted run keeps every poll written; bad files end in one ValidationError naming the
table and the row. (The timing at fat-tree k=64 is the recorder's docstring, not a test.)"""

from __future__ import annotations

import json
import math
import pickle
import re
import signal
import sqlite3
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from inaplanner.errors import ValidationError
from inaplanner.monitor.recording import LinkInfo, Recording, SqliteRecorder, load_recording
from inaplanner.monitor.series import Snapshot

LINKS = {(0, 0): LinkInfo("S1", "L1", 100.0), (0, 1): LinkInfo("L1", "S1", 100.0),
         (1, 0): LinkInfo("S1", "L2,\"x\"", 40.0), (1, 1): LinkInfo("L2,\"x\"", "S1", 40.0),
         (2, 0): LinkInfo("S2", "L\u00e9", 0.5), (2, 1): LinkInfo("L\u00e9", "S2", 0.5),
         (5, 1): LinkInfo("S3", "L4", 10.0),  # (links 3, 4 and (5, 0): not in the scenario)
         (6, 0): LinkInfo("S4", "L5", 1.0)}  # (never measured)


def polled(t, rates, stale=(), order=None):
    """A snapshot as the poller makes it: the rates as a dict and as arrays (``order``: the keys'
    order in the arrays; the poller's is its probes')."""
    keys = list(rates) if order is None else order
    arrays = (np.array([k[0] for k in keys], dtype=np.intp),
              np.array([k[1] for k in keys], dtype=np.intp),
              np.array([rates[k] for k in keys], dtype=float))
    return Snapshot(t, 1.7e9 + t, dict(rates), tuple(stale), (), arrays)


def bits(rates):
    return {k: struct.pack("<d", v) for k, v in rates.items()}


def same(got: Recording, want: list[Snapshot]) -> None:
    """The polls, exactly: times, stale switches, every rate bit for bit, in link order."""
    assert [(s.t, s.wall, s.stale) for s in got.snapshots] == [(s.t, s.wall, s.stale)
                                                               for s in want]
    for g, w in zip(got.snapshots, want, strict=True):
        assert bits(g.rates) == bits(w.rates)
        assert list(g.rates) == sorted(w.rates)


SNAPS = [
    polled(0.0, {(0, 0): 0.1 + 0.2, (0, 1): 0.0, (1, 0): 5e-324, (2, 1): 40.000000000000014}),
    # stale switches; link 1 not measured; (2, 0) only in this poll; a direction missing
    polled(1.0, {(2, 1): -0.0, (0, 0): 1.7976931348623157e308, (2, 0): 1e-17}, ("S2", "L\u00e9"),
           order=[(2, 1), (0, 0), (2, 0)]),
    polled(2.25, {(0, 1): 3.0, (5, 1): 2.5, (1, 1): 99.99999999999999}, ("S2",)),
    Snapshot(3.5, 1.7e9 + 3.5, {(1, 0): 12.5, (0, 0): 0.125}),  # no arrays: made from the dict
    polled(4.0, {}, ("S1", "S2", "S3")),  # nobody answered
]


def record(path, snaps, links=LINKS, meta=None):
    rec = SqliteRecorder(path, {"scenario": "x"} if meta is None else meta, links)
    for s in snaps:
        rec.write(s)
    rec.close()


def test_a_recording_replays_exactly_what_was_written(tmp_path):
    path = tmp_path / "run.sqlite"
    record(path, SNAPS, meta={"scenario": "x", "interval": 1.5})
    got = load_recording(path)
    same(got, SNAPS)
    assert got.meta == {"format": "inaplanner-monitor-recording", "version": 2, "scenario": "x",
                        "interval": 1.5}
    assert got.links == LINKS  # every link of the run, measured or not
    assert got.series((2, 1)) == ([0.0, 1.0], [40.000000000000014, -0.0])
    db = sqlite3.connect(path)
    # the links once; per poll only what changes, in link order
    assert [r[1] for r in db.execute("PRAGMA table_info(rates)")] == ["seq", "link", "direction",
                                                                       "gbps"]
    assert db.execute("SELECT link, direction FROM rates WHERE seq = 2 ORDER BY rowid").fetchall() \
        == [(0, 0), (2, 0), (2, 1)]
    # and the view that names them, for sqlite3
    assert db.execute("SELECT seq, t, src, dst, capacity, gbps FROM rates_named WHERE link = 1 "
                      "ORDER BY seq, direction").fetchall() == [
        (1, 0.0, "S1", 'L2,"x"', 40.0, 5e-324), (3, 2.25, 'L2,"x"', "S1", 40.0, 99.99999999999999),
        (4, 3.5, "S1", 'L2,"x"', 40.0, 12.5)]
    db.close()


def test_a_link_measured_but_not_known_and_a_non_finite_rate(tmp_path):
    """A measured link the recorder was not given is recorded as ``?`` (as version 1 did); a
    non-finite rate is left out (a replay refuses it)."""
    path = tmp_path / "run.sqlite"
    snaps = [polled(0.0, {(0, 0): 1.0, (9, 1): 2.0, (0, 1): math.inf}),
             polled(1.0, {(9, 1): 3.0, (0, 1): math.nan, (3, 0): 4.0})]
    record(path, snaps, links={(0, 0): LINKS[0, 0]})
    got = load_recording(path)
    assert [s.rates for s in got.snapshots] == [{(0, 0): 1.0, (9, 1): 2.0},
                                                {(3, 0): 4.0, (9, 1): 3.0}]
    unknown = LinkInfo("?", "?", 0.0)
    assert got.links == {(0, 0): LINKS[0, 0], (3, 0): unknown, (9, 1): unknown}


def v1_file(path, polls):
    """A version 1 recording, as the code before version 2 wrote it: ``polls`` of (t, wall,
    stale, [(link, direction, src, dst, capacity, gbps)])."""
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);"
        "CREATE TABLE ticks(seq INTEGER PRIMARY KEY, t REAL, wall REAL, stale TEXT);"
        "CREATE TABLE rates(seq INTEGER, link INTEGER, direction INTEGER, src TEXT, "
        "dst TEXT, capacity REAL, gbps REAL);")
    meta = {"format": "inaplanner-monitor-recording", "version": 1, "scenario": "old"}
    db.executemany("INSERT INTO meta VALUES (?, ?)", [(k, json.dumps(v)) for k, v in
                                                      sorted(meta.items())])
    for seq, (t, wall, stale, rows) in enumerate(polls, start=1):
        db.execute("INSERT INTO ticks VALUES (?, ?, ?, ?)", (seq, t, wall, " ".join(stale)))
        db.executemany("INSERT INTO rates VALUES (?, ?, ?, ?, ?, ?, ?)",
                       [(seq, *row) for row in rows])
        db.commit()
    db.close()


def test_a_version_1_file_loads_as_before(tmp_path):
    path = tmp_path / "old.sqlite"
    v1_file(path, [
        (0.5, 1000.5, (), [(0, 0, "S1", "L1", 100.0, 0.1 + 0.2), (0, 1, "L1", "S1", 100.0, 2.0),
                           (7, 0, "?", "?", 0.0, 1e-17)]),
        # (a link's names and capacity: as first seen)
        (1.5, 1001.5, ("S2", "L3"), [(0, 1, "L1b", "S1", 50.0, 3.5), (2, 1, "L3", "S2", 0.5, 0.25)]),
        (2.5, 1002.5, ("S2",), []),
    ])
    got = load_recording(path)
    assert got == Recording(
        {"format": "inaplanner-monitor-recording", "version": 1, "scenario": "old"},
        [Snapshot(0.5, 1000.5, {(0, 0): 0.1 + 0.2, (0, 1): 2.0, (7, 0): 1e-17}),
         Snapshot(1.5, 1001.5, {(0, 1): 3.5, (2, 1): 0.25}, ("S2", "L3")),
         Snapshot(2.5, 1002.5, {}, ("S2",))],
        {(0, 0): LinkInfo("S1", "L1", 100.0), (0, 1): LinkInfo("L1", "S1", 100.0),
         (7, 0): LinkInfo("?", "?", 0.0), (2, 1): LinkInfo("L3", "S2", 0.5)})
    assert [list(s.rates) for s in got.snapshots] == [[(0, 0), (0, 1), (7, 0)], [(0, 1), (2, 1)],
                                                      []]
    db = sqlite3.connect(path)
    db.execute("UPDATE rates SET src = 'L\x01' WHERE link = 2")  # still checked, row by row
    db.commit()
    db.close()
    with pytest.raises(ValidationError, match=r"old\.sqlite: rates of tick 2: src 'L\\x01' holds "
                                              r"the control character U\+0001$"):
        load_recording(path)


def test_a_recording_not_closed_keeps_every_poll_written(tmp_path):
    """Each poll is committed as it is written: read from another connection while the recorder
    is still open, and after the process that wrote it was killed without closing it."""
    path = tmp_path / "open.sqlite"
    rec = SqliteRecorder(path, {}, LINKS)
    for s in SNAPS[:2]:
        rec.write(s)
    same(load_recording(path), SNAPS[:2])  # (not closed)
    rec.write(SNAPS[2])
    same(load_recording(path), SNAPS[:3])
    rec.close()

    killed = tmp_path / "killed.sqlite"
    (tmp_path / "polls.pickle").write_bytes(pickle.dumps((LINKS, SNAPS[:2])))
    script = textwrap.dedent(f"""
        import os, pickle, signal
        from inaplanner.monitor.recording import SqliteRecorder
        with open({str(tmp_path / "polls.pickle")!r}, "rb") as fh:
            links, snaps = pickle.load(fh)
        rec = SqliteRecorder({str(killed)!r}, {{}}, links)
        for snap in snaps:
            rec.write(snap)
        os.kill(os.getpid(), signal.SIGKILL)  # no close, no exit handlers
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == -signal.SIGKILL, done.stderr
    same(load_recording(killed), SNAPS[:2])


BAD = [  # (SQL that breaks a good file, what the error says)
    ("UPDATE rates SET link = 3 WHERE seq = 2 AND link = 2 AND direction = 0",
     r"table rates, tick 2, link 3 direction 0: the link is not in table links"),
    ("UPDATE rates SET direction = 0 WHERE seq = 3 AND link = 5",
     r"table rates, tick 3, link 5 direction 0: the link is not in table links"),
    ("UPDATE rates SET direction = 2 WHERE seq = 3 AND link = 5",
     r"table rates, tick 3, link 5 direction 2: direction must be an integer in 0\.\.1"),
    ("UPDATE rates SET link = 'x' WHERE seq = 1 AND link = 0 AND direction = 1",
     r"table rates, tick 1, link x direction 1: link must be an integer in 0\.\.4194304"),
    ("UPDATE rates SET gbps = 9e999 WHERE seq = 2 AND link = 0",
     r"table rates, tick 2, link 0 direction 0: gbps inf is not a finite number"),
    ("UPDATE rates SET gbps = NULL WHERE seq = 1 AND link = 1",
     r"table rates, tick 1, link 1 direction 0: gbps must be a number, got None"),
    ("UPDATE rates SET gbps = 'fast' WHERE seq = 3 AND link = 0",
     r"table rates, tick 3, link 0 direction 1: gbps must be a number, got 'fast'"),
    ("UPDATE rates SET seq = 99 WHERE seq = 3 AND link = 5",
     r"table rates, tick 99, link 5 direction 1: rate row for unknown tick 99"),
    ("UPDATE links SET capacity = -9e999 WHERE link = 2 AND direction = 1",
     r"table links, link 2 direction 1: capacity -inf is not a finite number"),
    ("UPDATE links SET src = 'S\x07' WHERE link = 1 AND direction = 0",
     r"table links, link 1 direction 0: src 'S\\x07' holds the control character U\+0007"),
    ("UPDATE links SET dst = x'00ff' WHERE link = 0 AND direction = 1",
     r"table links, link 0 direction 1: dst must be text, got bytes"),
    ("UPDATE links SET link = 4194305 WHERE link = 5",
     r"table links, link 4194305 direction 1: link must be an integer in 0\.\.4194304"),
    ("UPDATE ticks SET wall = 9e999 WHERE seq = 2", r"ticks seq 2: wall inf is not a finite"),
    ("UPDATE meta SET value = '3' WHERE key = 'version'",
     r"table meta: format version 3 is newer than this inaplanner reads \(2\)"),
    ("DROP TABLE links", r"cannot read the recording: no such table: links"),
]


@pytest.mark.parametrize(("sql", "why"), BAD, ids=[b[1].split(":")[0] for b in BAD])
def test_bad_recordings_are_refused_in_one_line(tmp_path, sql, why):
    path = tmp_path / "bad.sqlite"
    record(path, SNAPS)
    db = sqlite3.connect(path)
    assert db.execute(sql).rowcount != 0
    db.commit()
    db.close()
    with pytest.raises(ValidationError) as err:
        load_recording(path)
    text = str(err.value)
    assert "\n" not in text
    assert text.startswith(f"{path}: ")
    assert re.search(why, text), text



# ---- a replay holds arrays, not a dict a poll (fat-tree k=64: 79 MB a poll, 3.1 MB now) ---------

def _reads(rates, keys):
    """What the table, the series and the alerts read of a poll's rates, for ``keys``."""
    return ([(k in rates, rates.get(k), rates.get(k, "none")) for k in keys],
            list(rates), [rates[k] for k in rates], len(rates), dict(rates.items()))


@pytest.mark.parametrize("fmt", ["sqlite", "csv", "v1"])
def test_a_replayed_poll_reads_as_its_dict_from_arrays_shared_between_polls(tmp_path, fmt):
    from inaplanner.monitor.recording import open_recorder
    from inaplanner.monitor.series import PollRates

    rng = np.random.default_rng(5)
    same_links = {k: float(v) for k, v in zip(LINKS, rng.random(len(LINKS)) * 50, strict=True)}
    snaps = SNAPS + [polled(5.0, same_links), polled(6.0, {k: v + 1 for k, v in same_links.items()})]
    path = tmp_path / ("run.csv" if fmt == "csv" else "run.sqlite")
    if fmt == "v1":
        unknown = LinkInfo("?", "?", 0.0)
        v1_file(path, [(s.t, s.wall, s.stale,
                        [(*k, LINKS.get(k, unknown).src, LINKS.get(k, unknown).dst,
                          LINKS.get(k, unknown).capacity, v) for k, v in sorted(s.rates.items())])
                       for s in snaps])
    else:
        r = open_recorder(path, {}, LINKS)
        for s in snaps:
            r.write(s)
        r.close()
    got = load_recording(path)
    probe = [*LINKS, (3, 0), (5, 0), (0, 2), (-1, 0), (10**9, 1), (np.int64(0), np.int8(1)), "x",
             (0,), (0, 0, 0), (0.5, 0), None]
    for g, w in zip(got.snapshots, snaps, strict=True):
        assert isinstance(g.rates, PollRates)  # no dict kept
        want = dict(sorted(w.rates.items()))
        assert _reads(g.rates, probe) == _reads(want, probe)
        li, d, v = g.arrays()
        assert list(zip(li.tolist(), d.tolist(), strict=True)) == list(want)
        assert v.tolist() == list(want.values())
        with pytest.raises(KeyError):
            g.rates[3, 0]
    # the last two polls measured the same links: one set of keys for both
    assert got.snapshots[-1].rates.keys_ is got.snapshots[-2].rates.keys_
    assert got.snapshots[0].rates.keys_ is not got.snapshots[1].rates.keys_


def test_a_tick_whose_rows_are_not_together_still_loads_exactly(tmp_path):
    """The recorder writes a poll's rows together; a file whose rows of one tick are split (by
    hand, another tool) is read as before, each poll whole."""
    path = tmp_path / "split.sqlite"
    record(path, SNAPS[:3])
    db = sqlite3.connect(path)
    rows = db.execute("SELECT seq, link, direction, gbps FROM rates ORDER BY rowid").fetchall()
    db.execute("DELETE FROM rates")
    first = [r for r in rows if r[0] == 1]
    rest = [r for r in rows if r[0] != 1]
    db.executemany("INSERT INTO rates VALUES (?, ?, ?, ?)", first[:2] + rest + first[2:])
    db.commit()
    db.close()
    same(load_recording(path), SNAPS[:3])


def test_a_link_twice_in_one_poll_reads_as_before(tmp_path):
    """A link given twice in one tick (not what the recorder writes): the last value, in the
    place of the first, as the dict the reading made before."""
    path = tmp_path / "twice.sqlite"
    record(path, SNAPS[:3])
    db = sqlite3.connect(path)
    db.execute("INSERT INTO rates VALUES (3, 0, 1, 7.5)")  # (0, 1) again in poll 3 (t=2.25)
    db.commit()
    db.close()
    got = load_recording(path).snapshots[2]
    assert list(got.rates.items()) == [((0, 1), 7.5), ((1, 1), 99.99999999999999), ((5, 1), 2.5)]
    li, d, v = got.arrays()
    assert (li.tolist(), d.tolist(), v.tolist()) == ([0, 1, 5], [1, 1, 1], [7.5, 99.99999999999999, 2.5])


def test_reading_a_recording_reports_each_poll_and_stops_when_cancelled(tmp_path):
    from inaplanner.errors import Cancelled
    from inaplanner.progress import Progress

    for name in ("run.sqlite", "run.csv"):
        from inaplanner.monitor.recording import open_recorder

        path = tmp_path / name
        r = open_recorder(path, {}, LINKS)
        for s in SNAPS:
            r.write(s)
        r.close()
        seen = []
        progress = Progress()
        progress.subscribe(lambda ev: seen.append((ev.fraction, ev.message)))  # noqa: B023
        same(load_recording(path, progress), SNAPS)
        assert seen == [(i / 5, f"read poll {i} of 5") for i in range(1, 6)]
        stopping = Progress()
        stopping.subscribe(lambda ev, p=stopping: p.cancel() if ev.message == "read poll 2 of 5" else None)
        with pytest.raises(Cancelled):
            load_recording(path, stopping)


def test_open_replay_takes_every_poll_and_refuses_another_scenarios_recording(tmp_path):
    """What the Monitor dock's helper thread makes of a recording (Qt-free): the model with every
    poll's alerts, as when the polls are added one by one."""
    from inaplanner.monitor.alerts import AlertRule
    from inaplanner.monitor.recording import open_recorder
    from inaplanner.topologies import leaf_spine
    from inaplanner.views.monitor import MonitorModel, open_replay

    sc = leaf_spine(2, 3, 2)
    infos = {}
    for li, lk in enumerate(sc.links):
        infos[li, 0] = LinkInfo(lk.a, lk.b, lk.capacity)
        infos[li, 1] = LinkInfo(lk.b, lk.a, lk.capacity)
    rule = AlertRule(threshold=0.5, deviation=0.3, hold_s=0.0)
    path = tmp_path / "run.sqlite"
    r = open_recorder(path, {}, infos)
    snaps = [Snapshot(float(i), 1.7e9 + i, {k: (0.9 if (i + k[0]) % 3 == 0 else 0.05) * v.capacity
                                            for k, v in infos.items()}) for i in range(6)]
    for s in snaps:
        r.write(s)
    r.close()
    opened = open_replay(sc, None, rule, str(path))
    model = MonitorModel(sc, None, rule, history=6)
    alerts = [a for s in snaps for a in model.add(s)]
    assert alerts and [a.text() for a in opened.alerts] == [a.text() for a in alerts]
    assert len(opened.recording.snapshots) == 6 and len(opened.model.snapshots) == 6
    with pytest.raises(ValidationError, match=r"run\.sqlite.*the recording's links do not match "
                                              r"the open scenario"):
        open_replay(leaf_spine(3, 2, 2), None, rule, str(path))
