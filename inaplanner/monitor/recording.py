"""Recording a monitoring run to CSV or SQLite, and reading it back for replay.

CSV (``.csv``): two comment lines (``#``), the second a JSON object with the run's metadata, then
a header and one row per poll (``kind=tick``: time and the switches that did not answer) followed
by one row per measured directed link (``kind=rate``). Floats are written with ``repr`` so a replay
gives back exactly the recorded series.

SQLite (``.sqlite``, ``.sqlite3``, ``.db``): tables ``meta(key, value)``, ``ticks(seq, t, wall,
stale)`` and ``rates(seq, link, direction, src, dst, capacity, gbps)``.

Both are written as the run goes (a tick is flushed or committed as soon as it is polled), so an
interrupted run keeps everything recorded so far.
"""

from __future__ import annotations

import csv
import json
import os
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from inaplanner.errors import InaplannerError
from inaplanner.monitor.series import Snapshot

FORMAT = "inaplanner-monitor-recording"
VERSION = 1
COLUMNS = ["t", "wall", "kind", "link", "direction", "src", "dst", "capacity", "gbps", "stale"]
SQLITE_SUFFIXES = (".sqlite", ".sqlite3", ".db")


@dataclass(frozen=True)
class LinkInfo:
    src: str
    dst: str
    capacity: float

    @property
    def name(self) -> str:
        return f"{self.src}->{self.dst}"


@dataclass
class Recording:
    meta: dict[str, Any]
    snapshots: list[Snapshot] = field(default_factory=list)
    links: dict[tuple[int, int], LinkInfo] = field(default_factory=dict)

    def series(self, key: tuple[int, int]) -> tuple[list[float], list[float]]:
        """(times, Gbps) of one directed link, over the polls that measured it."""
        ts, vs = [], []
        for s in self.snapshots:
            if key in s.rates:
                ts.append(s.t)
                vs.append(s.rates[key])
        return ts, vs


class Recorder(Protocol):
    def write(self, snap: Snapshot) -> None: ...
    def close(self) -> None: ...


def is_sqlite(path: str | os.PathLike[str]) -> bool:
    return Path(path).suffix.lower() in SQLITE_SUFFIXES


class CsvRecorder:
    def __init__(self, path: str | os.PathLike[str], meta: dict[str, Any],
                 links: dict[tuple[int, int], LinkInfo]) -> None:
        self.path = Path(path)
        self.links = links
        try:
            self._fh = open(self.path, "w", encoding="utf-8", newline="")
        except OSError as exc:
            raise InaplannerError(f"{self.path}: cannot write the recording: "
                                  f"{exc.strerror or exc}") from None
        self._fh.write(f"# {FORMAT} v{VERSION}\n")
        self._fh.write("# " + json.dumps({"format": FORMAT, "version": VERSION, **meta},
                                         sort_keys=True) + "\n")
        self._w = csv.writer(self._fh, lineterminator="\n")
        self._w.writerow(COLUMNS)
        self._fh.flush()

    def write(self, snap: Snapshot) -> None:
        self._w.writerow([repr(snap.t), repr(snap.wall), "tick", "", "", "", "", "", "",
                          " ".join(snap.stale)])
        for (li, d), v in sorted(snap.rates.items()):
            info = self.links.get((li, d), LinkInfo("?", "?", 0.0))
            self._w.writerow([repr(snap.t), repr(snap.wall), "rate", li, d, info.src, info.dst,
                              repr(float(info.capacity)), repr(float(v)), ""])
        self._fh.flush()

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.close()


class SqliteRecorder:
    def __init__(self, path: str | os.PathLike[str], meta: dict[str, Any],
                 links: dict[tuple[int, int], LinkInfo]) -> None:
        self.path = Path(path)
        self.links = links
        try:
            if self.path.exists():
                self.path.unlink()
            self._db = sqlite3.connect(str(self.path), check_same_thread=False)
            self._db.executescript(
                "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);"
                "CREATE TABLE ticks(seq INTEGER PRIMARY KEY, t REAL, wall REAL, stale TEXT);"
                "CREATE TABLE rates(seq INTEGER, link INTEGER, direction INTEGER, src TEXT, "
                "dst TEXT, capacity REAL, gbps REAL);"
            )
            full = {"format": FORMAT, "version": VERSION, **meta}
            self._db.executemany("INSERT INTO meta VALUES (?, ?)",
                                 [(k, json.dumps(v)) for k, v in sorted(full.items())])
            self._db.commit()
        except (OSError, sqlite3.Error) as exc:
            raise InaplannerError(f"{self.path}: cannot write the recording: {exc}") from None
        self._seq = 0

    def write(self, snap: Snapshot) -> None:
        self._seq += 1
        self._db.execute("INSERT INTO ticks VALUES (?, ?, ?, ?)",
                         (self._seq, snap.t, snap.wall, " ".join(snap.stale)))
        rows = []
        for (li, d), v in sorted(snap.rates.items()):
            info = self.links.get((li, d), LinkInfo("?", "?", 0.0))
            rows.append((self._seq, li, d, info.src, info.dst, float(info.capacity), float(v)))
        self._db.executemany("INSERT INTO rates VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
        self._db.commit()

    def close(self) -> None:
        try:
            self._db.close()
        except sqlite3.Error:
            pass


def open_recorder(path: str | os.PathLike[str], meta: dict[str, Any],
                  links: dict[tuple[int, int], LinkInfo]) -> Recorder:
    """A recorder for ``path``: SQLite by its suffix, else CSV."""
    cls = SqliteRecorder if is_sqlite(path) else CsvRecorder
    return cls(path, meta, links)


def load_recording(path: str | os.PathLike[str]) -> Recording:
    """Read a CSV or SQLite recording; one clear error naming the file and row when it is bad."""
    p = Path(path)
    if not p.is_file():
        raise InaplannerError(f"{p}: no such recording")
    return _load_sqlite(p) if is_sqlite(p) else _load_csv(p)


def _load_csv(p: Path) -> Recording:
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InaplannerError(f"{p}: cannot read: {exc}") from None
    lines = text.splitlines()
    if not lines or not lines[0].startswith(f"# {FORMAT}"):
        raise InaplannerError(f"{p}: not an inaplanner monitoring recording (first line should be "
                              f"'# {FORMAT} v{VERSION}')")
    meta: dict[str, Any] = {}
    body_start = 0
    for i, line in enumerate(lines):
        if not line.startswith("#"):
            body_start = i
            break
        if line.startswith("# {"):
            try:
                meta = json.loads(line[2:])
            except ValueError:
                raise InaplannerError(f"{p}: line {i + 1}: bad metadata JSON") from None
    else:
        body_start = len(lines)
    rec = Recording(meta)
    reader = csv.reader(lines[body_start:])
    header = next(reader, None)
    if header != COLUMNS:
        raise InaplannerError(f"{p}: line {body_start + 1}: expected the header {','.join(COLUMNS)}")
    current: Snapshot | None = None
    for n, row in enumerate(reader, start=body_start + 2):
        try:
            if len(row) != len(COLUMNS):
                raise ValueError(f"expected {len(COLUMNS)} fields, got {len(row)}")
            t, wall, kind = float(row[0]), float(row[1]), row[2]
            if kind == "tick":
                current = Snapshot(t, wall, {}, tuple(row[9].split()))
                rec.snapshots.append(current)
            elif kind == "rate":
                if current is None or current.t != t:
                    raise ValueError("a rate row before its tick row")
                key = (int(row[3]), int(row[4]))
                current.rates[key] = float(row[8])
                rec.links.setdefault(key, LinkInfo(row[5], row[6], float(row[7])))
            else:
                raise ValueError(f"unknown kind {kind!r}")
        except ValueError as exc:
            raise InaplannerError(f"{p}: line {n}: {exc}") from None
    return rec


def _load_sqlite(p: Path) -> Recording:
    try:
        db = sqlite3.connect(f"file:{p}?mode=ro", uri=True)
        try:
            meta = {k: json.loads(v) for k, v in db.execute("SELECT key, value FROM meta")}
            if meta.get("format") != FORMAT:
                raise InaplannerError(f"{p}: not an inaplanner monitoring recording")
            rec = Recording(meta)
            by_seq: dict[int, Snapshot] = {}
            for seq, t, wall, stale in db.execute("SELECT seq, t, wall, stale FROM ticks ORDER BY seq"):
                snap = Snapshot(float(t), float(wall), {}, tuple((stale or "").split()))
                by_seq[seq] = snap
                rec.snapshots.append(snap)
            for seq, li, d, src, dst, cap, v in db.execute(
                    "SELECT seq, link, direction, src, dst, capacity, gbps FROM rates ORDER BY rowid"):
                snap = by_seq.get(seq)
                if snap is None:
                    raise InaplannerError(f"{p}: rate row for unknown tick {seq}")
                snap.rates[(int(li), int(d))] = float(v)
                rec.links.setdefault((int(li), int(d)), LinkInfo(src, dst, float(cap)))
        finally:
            db.close()
    except sqlite3.Error as exc:
        raise InaplannerError(f"{p}: cannot read the recording: {exc}") from None
    return rec
