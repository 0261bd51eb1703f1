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
import io
import json
import math
import os
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from inaplanner.errors import InaplannerError, ValidationError
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
        self._quoted: dict[str, str] = {}  # switch names as csv fields
        self._w.writerow(COLUMNS)
        self._fh.flush()

    def write(self, snap: Snapshot) -> None:
        """A tick row, then a row per measured link. The rate rows are written as text, the
        names quoted as the csv module quotes them (:meth:`_quoted`): a csv row per link took
        1.5 s a poll at fat-tree k=64 (393,216 directed links)."""
        self._w.writerow([repr(snap.t), repr(snap.wall), "tick", "", "", "", "", "", "",
                          " ".join(snap.stale)])
        head = f"{snap.t!r},{snap.wall!r},rate"
        unknown = LinkInfo("?", "?", 0.0)
        quoted = self._quoted
        rows = []
        for (li, d), v in sorted(snap.rates.items()):
            info = self.links.get((li, d), unknown)
            src, dst = quoted.get(info.src), quoted.get(info.dst)
            if src is None or dst is None:
                src, dst = self._quote(info.src), self._quote(info.dst)
            rows.append(f"{head},{li},{d},{src},{dst},{float(info.capacity)!r},{float(v)!r},\n")
        self._fh.write("".join(rows))
        self._fh.flush()

    def _quote(self, name: str) -> str:
        """``name`` as a field the csv module writes (quoted when it holds a comma, a quote or
        a line break), remembered."""
        text = self._quoted.get(name)
        if text is None:
            out = io.StringIO()
            csv.writer(out, lineterminator="\n").writerow([name, ""])
            text = self._quoted[name] = out.getvalue()[:-2]  # less the "," and the "\n"
        return text

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


#: Largest link index a recording may name (replay sizes arrays by it).
MAX_LINK_INDEX = 2**22


def load_recording(path: str | os.PathLike[str]) -> Recording:
    """Read a CSV or SQLite recording; one ValidationError naming the file, the row and the cause
    when it is bad (too large, not UTF-8, non-finite numbers, link indices out of range...)."""
    from inaplanner.io.limits import check_size

    p = Path(path)
    if not p.is_file():
        raise ValidationError("no such recording", source=str(p))
    check_size(p, "recording")
    return _load_sqlite(p) if is_sqlite(p) else _load_csv(p)


def _finite(text: Any, what: str) -> float:
    if isinstance(text, (bytes, bytearray)) or text is None or isinstance(text, bool):
        raise ValueError(f"{what} must be a number, got {text!r}")
    try:
        value = float(text)
    except OverflowError:
        raise ValueError(f"{what} is out of range") from None
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a number, got {str(text)[:40]!r}") from None
    if not math.isfinite(value):
        raise ValueError(f"{what} {str(text)[:40]} is not a finite number")
    return value


def _index(text: Any, what: str, hi: int) -> int:
    if isinstance(text, (bytes, bytearray, float)) or text is None or isinstance(text, bool):
        raise ValueError(f"{what} must be an integer, got {text!r}")
    s = str(text).strip()
    if not s.isdigit() or len(s) > 12 or int(s) > hi:
        raise ValueError(f"{what} must be an integer in 0..{hi}, got {s[:40]!r} (out of range)")
    return int(s)


def _name(text: Any, what: str) -> str:
    from inaplanner.io.limits import bad_id_char

    if not isinstance(text, str):
        raise ValueError(f"{what} must be text, got {type(text).__name__}")
    ch = bad_id_char(text)
    if ch is not None:
        raise ValueError(f"{what} {text[:40]!r} holds the control character U+{ord(ch):04X}")
    return text


def _meta(text: str, p: Path, where: str) -> dict[str, Any]:
    from inaplanner.io.limits import parse_json

    meta = parse_json(text, str(p), where)
    if not isinstance(meta, dict):
        raise ValidationError("metadata must be a JSON object", where, str(p))
    return meta


def _load_csv(p: Path) -> Recording:
    from inaplanner.io.limits import decode_utf8, read_bytes

    text = decode_utf8(read_bytes(p, "recording"), str(p))
    lines = text.splitlines()
    if not lines or not lines[0].startswith(f"# {FORMAT}"):
        raise ValidationError("not an inaplanner monitoring recording (first line should be "
                              f"'# {FORMAT} v{VERSION}')", "line 1", str(p))
    meta: dict[str, Any] = {}
    body_start = 0
    for i, line in enumerate(lines):
        if not line.startswith("#"):
            body_start = i
            break
        if line.startswith("# {"):
            meta = _meta(line[2:], p, f"line {i + 1}: metadata")
    else:
        body_start = len(lines)
    rec = Recording(meta)
    reader = csv.reader(lines[body_start:])
    try:
        header = next(reader, None)
    except csv.Error as exc:
        raise ValidationError(f"bad CSV: {exc}", f"line {body_start + 1}", str(p)) from None
    if header != COLUMNS:
        raise ValidationError(f"expected the header {','.join(COLUMNS)}", f"line {body_start + 1}",
                              str(p))
    current: Snapshot | None = None
    n = body_start + 1
    try:
        for n, row in enumerate(reader, start=body_start + 2):  # noqa: B007 (n: in the error)
            if len(row) != len(COLUMNS):
                raise ValueError(f"expected {len(COLUMNS)} fields, got {len(row)}")
            t, wall, kind = _finite(row[0], "t"), _finite(row[1], "wall"), row[2]
            if kind == "tick":
                stale = tuple(_name(s, "stale switch") for s in row[9].split())
                current = Snapshot(t, wall, {}, stale)
                rec.snapshots.append(current)
            elif kind == "rate":
                if current is None or current.t != t:
                    raise ValueError("a rate row before its tick row")
                key = (_index(row[3], "link", MAX_LINK_INDEX), _index(row[4], "direction", 1))
                current.rates[key] = _finite(row[8], "gbps")
                rec.links.setdefault(key, LinkInfo(_name(row[5], "src"), _name(row[6], "dst"),
                                                   _finite(row[7], "capacity")))
            else:
                raise ValueError(f"unknown kind {kind[:40]!r}")
    except (ValueError, csv.Error) as exc:
        raise ValidationError(str(exc), f"line {n}", str(p)) from None
    return rec


def _load_sqlite(p: Path) -> Recording:
    from inaplanner.io.limits import parse_json

    source = str(p)
    try:
        db = sqlite3.connect(f"file:{p}?mode=ro", uri=True)
        try:
            meta: dict[str, Any] = {}
            for k, v in db.execute("SELECT key, value FROM meta"):
                if not isinstance(k, str) or not isinstance(v, str):
                    raise ValidationError("metadata keys and values must be text", "table meta",
                                          source)
                meta[k] = parse_json(v, source, f"table meta, key {k[:40]!r}")
            if meta.get("format") != FORMAT:
                raise ValidationError("not an inaplanner monitoring recording", "table meta",
                                      source)
            rec = Recording(meta)
            by_seq: dict[int, Snapshot] = {}
            row_id = "ticks"
            try:
                for seq, t, wall, stale in db.execute(
                        "SELECT seq, t, wall, stale FROM ticks ORDER BY seq"):
                    row_id = f"ticks seq {seq}"
                    names = stale if isinstance(stale, str) else ("" if stale is None else None)
                    if names is None:
                        raise ValueError("stale must be text")
                    snap = Snapshot(_finite(t, "t"), _finite(wall, "wall"), {},
                                    tuple(_name(s, "stale switch") for s in names.split()))
                    by_seq[seq] = snap
                    rec.snapshots.append(snap)
                row_id = "rates"
                for seq, li, d, src, dst, cap, v in db.execute(
                        "SELECT seq, link, direction, src, dst, capacity, gbps FROM rates "
                        "ORDER BY rowid"):
                    row_id = f"rates of tick {seq}"
                    snap = by_seq.get(seq) if isinstance(seq, int) else None
                    if snap is None:
                        raise ValueError(f"rate row for unknown tick {str(seq)[:40]}")
                    key = (_index(li, "link", MAX_LINK_INDEX), _index(d, "direction", 1))
                    snap.rates[key] = _finite(v, "gbps")
                    rec.links.setdefault(key, LinkInfo(_name(src, "src"), _name(dst, "dst"),
                                                       _finite(cap, "capacity")))
            except (ValueError, TypeError) as exc:
                raise ValidationError(str(exc), row_id, source) from None
        finally:
            db.close()
    except sqlite3.Error as exc:
        raise ValidationError(f"cannot read the recording: {exc}", source=source) from None
    except UnicodeDecodeError:
        raise ValidationError("cannot read the recording: text in it is not UTF-8",
                              source=source) from None
    return rec
