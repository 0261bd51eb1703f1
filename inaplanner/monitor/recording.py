"""Recording a monitoring run to CSV or SQLite, and reading it back for replay.

CSV (``.csv``): two comment lines (``#``), the second a JSON object with the run's metadata, then
a header and one row per poll (``kind=tick``: time and the switches that did not answer) followed
by one row per measured directed link (``kind=rate``). Floats are written with ``repr`` so a replay
gives back exactly the recorded series.

SQLite (``.sqlite``, ``.sqlite3``, ``.db``), format version 2 (``version`` in ``meta``):

- ``meta(key, value)``: the run's metadata, each value as JSON;
- ``links(link, direction, src, dst, capacity)``: every directed link of the run, written once
  when the recording starts (a link measured but not known then is added as ``?``, ``?``, 0);
- ``ticks(seq, t, wall, stale)``: one row per poll (``stale``: the switches that did not answer,
  space-separated);
- ``rates(seq, link, direction, gbps)``: one row per measured directed link of poll ``seq``, in
  link order; ``gbps`` is stored untyped so every float comes back bit for bit;
- the view ``rates_named(seq, t, link, direction, src, dst, capacity, gbps)`` joins the three, for
  reading a recording with ``sqlite3`` (``SELECT * FROM rates_named WHERE src = 'S1'``).

Version 1 (before the ``links`` table) repeated the link in every row: ``rates(seq, link,
direction, src, dst, capacity, gbps)``; it is still read.

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
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import chain, repeat
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from inaplanner.errors import InaplannerError, ValidationError
from inaplanner.monitor.series import RateKeys, Snapshot, compact, set_arrays
from inaplanner.progress import Progress

FORMAT = "inaplanner-monitor-recording"
VERSION = 1  # of the CSV format
SQLITE_VERSION = 2  # of the SQLite format (1: the link's names and capacity in every rate row)
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


def _link_order(li: Any, d: Any, v: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A poll's (link, direction, Gbps) arrays in link order (the poller's usually are)."""
    li, d = np.asarray(li, dtype=np.int64), np.asarray(d, dtype=np.int64)
    v = np.asarray(v, dtype=float)
    if li.size > 1 and not ((li[1:] > li[:-1]) | ((li[1:] == li[:-1]) & (d[1:] > d[:-1]))).all():
        order = np.lexsort((d, li))
        li, d, v = li[order], d[order], v[order]
    return li, d, v


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
        self._fields: dict[tuple[int, int], str] = {}  # a directed link's fields before its rate
        self._w.writerow(COLUMNS)
        self._fh.flush()

    def write(self, snap: Snapshot) -> None:
        """A tick row, then a row per measured link, in link order. A link's fields up to its
        rate are made once (:meth:`_fields`) and each poll's rows from the snapshot's arrays: a
        csv row per link took 1.5 s a poll at fat-tree k=64 (393,216 directed links), the rows
        from the ``rates`` dict 0.8 s."""
        self._w.writerow([repr(snap.t), repr(snap.wall), "tick", "", "", "", "", "", "",
                          " ".join(snap.stale)])
        head = f"{snap.t!r},{snap.wall!r},rate"
        li, d, v = _link_order(*snap.arrays())
        fields = self._fields
        rows = []
        for a, b, x in zip(li.tolist(), d.tolist(), v.tolist(), strict=True):
            f = fields.get((a, b))
            if f is None:
                f = self._link_fields(a, b)
            rows.append(f"{head},{f},{x!r},\n")
        self._fh.write("".join(rows))
        self._fh.flush()

    def _link_fields(self, li: int, d: int) -> str:
        """``link,direction,src,dst,capacity`` of a directed link as csv text, remembered."""
        info = self.links.get((li, d), LinkInfo("?", "?", 0.0))
        text = self._fields[li, d] = \
            f"{li},{d},{self._quote(info.src)},{self._quote(info.dst)},{float(info.capacity)!r}"
        return text

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
    """The SQLite recording (format version 2, see the module's docstring).

    The links are written once, when the recording starts; a poll is one transaction of its tick
    and its rates, committed before :meth:`write` returns. Fat-tree k=64 (393,216 directed links
    a poll): 0.15 s and 9 MB a poll (the links: 0.9 s and 10 MB once), where the version 1 rows
    (each with its link's names and capacity, from the ``rates`` dict) took 1.0-1.5 s and 14 MB.

    The journal is SQLite's default (a rollback journal, ``synchronous=FULL``): a committed poll
    is in the ``.sqlite`` file itself, so the file of an interrupted run holds every poll written
    so far, even copied alone, and opens read-only. WAL would keep the polls in ``-wal`` until a
    checkpoint and a read-only open would need its ``-shm``; ``synchronous=NORMAL`` or ``OFF``
    saved nothing measurable (the time is in the inserts, not the syncs).
    """

    #: Rows per INSERT statement: one statement per row took twice as long at k=64.
    ROWS_PER_INSERT = 500
    #: Page cache (KiB), above a poll's 9 MB at k=64: with SQLite's default 2 MB, pages spilled
    #: to the file mid-transaction (a poll 0.16 s, one in ten over 0.29 s; 0.14 and 0.21 s).
    CACHE_KIB = 32 * 1024

    def __init__(self, path: str | os.PathLike[str], meta: dict[str, Any],
                 links: dict[tuple[int, int], LinkInfo]) -> None:
        self.path = Path(path)
        self.links = links
        known = [(int(li), int(d)) for li, d in links if 0 <= li <= MAX_LINK_INDEX and d in (0, 1)]
        #: (link, direction) in the links table; grown when a poll measures an unknown link
        self._known = np.zeros((1 + max((li for li, _ in known), default=-1), 2), dtype=bool)
        for li, d in known:
            self._known[li, d] = True
        try:
            if self.path.exists():
                self.path.unlink()
            self._db = sqlite3.connect(str(self.path), check_same_thread=False)
            self._db.execute(f"PRAGMA cache_size = -{self.CACHE_KIB}")
            limit = self._db.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER)
            self._rows_per_insert = max(1, min(self.ROWS_PER_INSERT, limit // 5))
            self._db.executescript(
                "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);"
                "CREATE TABLE links(link INTEGER, direction INTEGER, src TEXT, dst TEXT, "
                "capacity REAL, PRIMARY KEY(link, direction)) WITHOUT ROWID;"
                "CREATE TABLE ticks(seq INTEGER PRIMARY KEY, t REAL, wall REAL, stale TEXT);"
                # no index (rows are appended in poll order); gbps untyped: a REAL column
                # stores -0.0 as the integer 0
                "CREATE TABLE rates(seq INTEGER, link INTEGER, direction INTEGER, gbps);"
                "CREATE VIEW rates_named AS SELECT r.seq AS seq, k.t AS t, r.link AS link, "
                "r.direction AS direction, l.src AS src, l.dst AS dst, l.capacity AS capacity, "
                "r.gbps AS gbps FROM rates AS r JOIN ticks AS k ON k.seq = r.seq "
                "JOIN links AS l ON l.link = r.link AND l.direction = r.direction;"
            )
            full = {"format": FORMAT, "version": SQLITE_VERSION, **meta}
            with self._db:
                self._db.executemany("INSERT INTO meta VALUES (?, ?)",
                                     [(k, json.dumps(v)) for k, v in sorted(full.items())])
                self._insert("links", 5, chain.from_iterable(
                    (int(li), int(d), info.src, info.dst, float(info.capacity))
                    for (li, d), info in sorted(links.items())
                    if 0 <= li <= MAX_LINK_INDEX and d in (0, 1)))
        except (OSError, sqlite3.Error) as exc:
            raise InaplannerError(f"{self.path}: cannot write the recording: {exc}") from None
        self._seq = 0

    def write(self, snap: Snapshot) -> None:
        """The poll's tick row and a row per measured link (from :meth:`Snapshot.arrays`, in
        link order; a non-finite rate is left out, as a replay would refuse it), committed."""
        li, d, v = _link_order(*snap.arrays())
        finite = np.isfinite(v)
        if not finite.all():
            li, d, v = li[finite], d[finite], v[finite]
        # keys no replay reads are recorded all the same, as they were measured
        valid = (li >= 0) & (li <= MAX_LINK_INDEX) & ((d == 0) | (d == 1))
        known = self._known
        inside = valid & (li < known.shape[0])
        unknown = ~inside
        unknown[inside] = ~known[li[inside], d[inside]]
        seq = self._seq + 1
        with self._db:  # one transaction: committed, or rolled back if any insert fails
            self._db.execute("INSERT INTO ticks VALUES (?, ?, ?, ?)",
                             (seq, snap.t, snap.wall, " ".join(snap.stale)))
            if unknown.any():
                self._db.executemany("INSERT OR IGNORE INTO links VALUES (?, ?, '?', '?', 0.0)",
                                     zip(li[unknown].tolist(), d[unknown].tolist(), strict=True))
            self._insert("rates", 4, chain.from_iterable(
                zip(repeat(seq), li.tolist(), d.tolist(), v.tolist(), strict=False)))
        self._seq = seq
        if unknown.any():
            new = unknown & valid
            top = int(li[new].max(initial=-1))
            if top >= known.shape[0]:
                self._known = known = np.vstack(
                    [known, np.zeros((top + 1 - known.shape[0], 2), dtype=bool)])
            known[li[new], d[new]] = True

    def _insert(self, table: str, width: int, values: Iterable[Any]) -> None:
        """Insert the rows of ``width`` columns whose values ``values`` lists one after another,
        :attr:`ROWS_PER_INSERT` rows per statement."""
        flat = list(values)
        rows = len(flat) // width
        per = self._rows_per_insert
        step = per * width
        whole = rows - rows % per
        if whole:
            sql = f"INSERT INTO {table} VALUES " + ",".join(
                ["(" + ",".join("?" * width) + ")"] * per)
            self._db.executemany(sql, (flat[i:i + step] for i in range(0, whole * width, step)))
        if rows > whole:
            sql = f"INSERT INTO {table} VALUES " + ",".join(
                ["(" + ",".join("?" * width) + ")"] * (rows - whole))
            self._db.execute(sql, flat[whole * width:])

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


def load_recording(path: str | os.PathLike[str], progress: Progress | None = None) -> Recording:
    """Read a CSV or SQLite recording; one ValidationError naming the file, the row and the cause
    when it is bad (too large, not UTF-8, non-finite numbers, link indices out of range...).
    ``progress`` is told each poll read (about 1.1 s a poll at fat-tree k=64) and its cancel
    stops the reading (:class:`~inaplanner.errors.Cancelled`)."""
    from inaplanner.io.limits import check_size

    p = Path(path)
    if not p.is_file():
        raise ValidationError("no such recording", source=str(p))
    check_size(p, "recording")
    rec = _load_sqlite(p, progress) if is_sqlite(p) else _load_csv(p, progress)
    _Polls(rec, progress, len(rec.snapshots)).done_all()  # (polls without rates)
    return rec


class _Polls:
    """Each poll's rates made arrays (:func:`~inaplanner.monitor.series.compact`) as soon as its
    rows are read, so a replay holds at most one poll's dict at a time: fat-tree k=64 took 79 MB
    a poll (a 12-poll recording 998 MB to read), now 3.1 MB (251 MB)."""

    def __init__(self, rec: Recording, progress: Progress | None = None, total: int = 0) -> None:
        self.rec = rec
        self.keys: RateKeys | None = None
        self.progress = progress
        self.total = total
        self.read = 0

    def done(self, snap: Snapshot | None) -> None:
        if snap is not None and isinstance(snap.rates, dict):
            self.keys = compact(snap, self.keys)
            self._told()

    def take(self, snap: Snapshot | None, links: list[int], directions: list[int],
             gbps: list[float]) -> None:
        """``snap``'s rows, read as lists (format version 2): no dict of tuples is made (at
        fat-tree k=64 reading 12 polls took 12.9 s instead of 15.6 s, and the window's pauses
        while a recording was read, up to 0.79 s, went with it). Rows of a poll read before, or a
        link twice, go through the dict as before (the last value, in the first place)."""
        if snap is None:
            return
        li = np.array(links, dtype=np.intp)
        d = np.array(directions, dtype=np.intp)
        code = 2 * li + d
        if isinstance(snap.rates, dict) and not snap.rates and (
                code.size < 2 or bool((code[1:] > code[:-1]).all())
                or np.unique(code).size == code.size):
            self.keys = set_arrays(snap, li, d, np.array(gbps, dtype=float), self.keys)
            self._told()
            return
        self.reopen(snap).update(zip(zip(links, directions, strict=True), gbps, strict=True))
        self.done(snap)

    def _told(self) -> None:
        self.read += 1
        if self.progress is not None:
            total = max(self.total, self.read)
            self.progress.update(self.read / total, f"read poll {self.read:,} of {total:,}")
            self.progress.check()

    def reopen(self, snap: Snapshot) -> dict[tuple[int, int], float]:
        """The dict to add ``snap``'s rows to (its rows were not together: made again)."""
        if not isinstance(snap.rates, dict):
            snap.rates, snap.measured = dict(snap.rates), None
        return snap.rates

    def done_all(self) -> None:
        self.read = sum(1 for snap in self.rec.snapshots if not isinstance(snap.rates, dict))
        for snap in self.rec.snapshots:
            self.done(snap)


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


def _load_csv(p: Path, progress: Progress | None = None) -> Recording:
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
    polls = _Polls(rec, progress, sum(1 for line in lines[body_start:] if ",tick," in line))
    n = body_start + 1
    try:
        for n, row in enumerate(reader, start=body_start + 2):  # noqa: B007 (n: in the error)
            if len(row) != len(COLUMNS):
                raise ValueError(f"expected {len(COLUMNS)} fields, got {len(row)}")
            t, wall, kind = _finite(row[0], "t"), _finite(row[1], "wall"), row[2]
            if kind == "tick":
                stale = tuple(_name(s, "stale switch") for s in row[9].split())
                polls.done(current)
                current = Snapshot(t, wall, {}, stale)
                rec.snapshots.append(current)
            elif kind == "rate":
                if current is None or current.t != t:
                    raise ValueError("a rate row before its tick row")
                key = (_index(row[3], "link", MAX_LINK_INDEX), _index(row[4], "direction", 1))
                polls.reopen(current)[key] = _finite(row[8], "gbps")
                rec.links.setdefault(key, LinkInfo(_name(row[5], "src"), _name(row[6], "dst"),
                                                   _finite(row[7], "capacity")))
            else:
                raise ValueError(f"unknown kind {kind[:40]!r}")
    except (ValueError, csv.Error) as exc:
        raise ValidationError(str(exc), f"line {n}", str(p)) from None
    polls.done(current)
    return rec


def _load_sqlite(p: Path, progress: Progress | None = None) -> Recording:
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
            version = meta.get("version")
            if isinstance(version, (int, float)) and not isinstance(version, bool) \
                    and version > SQLITE_VERSION:
                raise ValidationError(f"format version {version} is newer than this inaplanner "
                                      f"reads ({SQLITE_VERSION})", "table meta", source)
            rec = Recording(meta)
            by_seq = _ticks(db, rec, source)
            # version 2, or its links table (version 1 was read whatever its meta said)
            if version == SQLITE_VERSION or db.execute(
                    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'links'"
            ).fetchone() is not None:
                _links(db, rec, source)
                _rates(db, rec, by_seq, source, progress)
            else:
                _rates_v1(db, rec, by_seq, source, progress)
        finally:
            db.close()
    except sqlite3.Error as exc:
        raise ValidationError(f"cannot read the recording: {exc}", source=source) from None
    except UnicodeDecodeError:
        raise ValidationError("cannot read the recording: text in it is not UTF-8",
                              source=source) from None
    return rec


def _ticks(db: sqlite3.Connection, rec: Recording, source: str) -> dict[Any, Snapshot]:
    """The polls (table ``ticks``), appended to ``rec``; by their ``seq``."""
    by_seq: dict[Any, Snapshot] = {}
    row_id = "ticks"
    try:
        for seq, t, wall, stale in db.execute("SELECT seq, t, wall, stale FROM ticks ORDER BY seq"):
            row_id = f"ticks seq {seq}"
            names = stale if isinstance(stale, str) else ("" if stale is None else None)
            if names is None:
                raise ValueError("stale must be text")
            snap = Snapshot(_finite(t, "t"), _finite(wall, "wall"), {},
                            tuple(_name(s, "stale switch") for s in names.split()))
            by_seq[seq] = snap
            rec.snapshots.append(snap)
    except (ValueError, TypeError) as exc:
        raise ValidationError(str(exc), row_id, source) from None
    return by_seq


class _Names(dict[Any, str]):
    """Switch names checked (:func:`_name`) once each: a k=64 recording names 5,120 switches in
    393,216 rows."""

    def check(self, text: Any, what: str) -> str:
        name = self.get(text) if isinstance(text, str) else None
        if name is None:
            name = self[text] = _name(text, what)
        return name


def _links(db: sqlite3.Connection, rec: Recording, source: str) -> None:
    """The directed links (table ``links``, format version 2) into ``rec.links``."""
    links = rec.links
    names = _Names()
    name = names.get  # (only text is in it: a name checked)
    li: Any = None
    d: Any = None
    try:
        for li, d, src, dst, cap in db.execute(
                "SELECT link, direction, src, dst, capacity FROM links"):
            if type(li) is not int or not 0 <= li <= MAX_LINK_INDEX or (d != 0 and d != 1) \
                    or type(d) is not int:
                li, d = _index(li, "link", MAX_LINK_INDEX), _index(d, "direction", 1)
            if type(cap) is not float or cap - cap != 0.0:  # (not finite: NaN)
                cap = _finite(cap, "capacity")
            n = len(links)
            links[li, d] = LinkInfo(name(src) or names.check(src, "src"),
                                    name(dst) or names.check(dst, "dst"), cap)
            if len(links) == n:
                raise ValueError("the link is listed twice")
    except (ValueError, TypeError) as exc:
        raise ValidationError(str(exc), f"table links, link {str(li)[:40]} direction "
                                        f"{str(d)[:40]}", source) from None


def _rates(db: sqlite3.Connection, rec: Recording, by_seq: dict[Any, Snapshot],
           source: str, progress: Progress | None = None) -> None:
    """The measured rates (table ``rates``, format version 2) into the polls ``by_seq``: a link
    must be in the ``links`` table (:func:`_links`). About 1 s a poll at fat-tree k=64, 0.47 s of
    it SQLite handing over the rows."""
    links = rec.links
    seq: Any = None
    li: Any = None
    d: Any = None
    current: Any = None
    polls, snap = _Polls(rec, progress, len(by_seq)), None
    lis: list[int] = []
    ds: list[int] = []
    vs: list[float] = []
    try:
        for seq, li, d, v in db.execute("SELECT seq, link, direction, gbps FROM rates "
                                        "ORDER BY rowid"):
            if seq != current or type(seq) is not int:
                polls.take(snap, lis, ds, vs)
                lis, ds, vs = [], [], []
                snap = by_seq.get(seq) if type(seq) is int else None
                if snap is None:
                    raise ValueError(f"rate row for unknown tick {str(seq)[:40]}")
                current = seq
            if type(li) is not int or type(d) is not int or (li, d) not in links:
                li, d = (_index(li, "link", MAX_LINK_INDEX), _index(d, "direction", 1))
                if (li, d) not in links:
                    raise ValueError("the link is not in table links")
            if type(v) is not float or v - v != 0.0:  # (not finite: NaN)
                v = _finite(v, "gbps")
            lis.append(li)
            ds.append(d)
            vs.append(v)
        polls.take(snap, lis, ds, vs)
    except (ValueError, TypeError) as exc:
        raise ValidationError(str(exc), f"table rates, tick {str(seq)[:40]}, link "
                                        f"{str(li)[:40]} direction {str(d)[:40]}",
                              source) from None


def _rates_v1(db: sqlite3.Connection, rec: Recording, by_seq: dict[Any, Snapshot],
              source: str, progress: Progress | None = None) -> None:
    """The measured rates of format version 1 (a link's names and capacity in each row) into the
    polls ``by_seq``, and the links into ``rec.links`` (each as first seen)."""
    links = rec.links
    names = _Names()
    seq: Any = "rates"
    current: Any = None
    rates: dict[tuple[int, int], float] = {}
    polls, snap = _Polls(rec, progress, len(by_seq)), None
    try:
        for seq, li, d, src, dst, cap, v in db.execute(
                "SELECT seq, link, direction, src, dst, capacity, gbps FROM rates "
                "ORDER BY rowid"):
            if type(seq) is not int or seq != current:
                polls.done(snap)
                snap = by_seq.get(seq) if isinstance(seq, int) else None
                if snap is None:
                    raise ValueError(f"rate row for unknown tick {str(seq)[:40]}")
                current, rates = seq, polls.reopen(snap)
            if type(li) is not int or not 0 <= li <= MAX_LINK_INDEX or (d != 0 and d != 1) \
                    or type(d) is not int:
                li, d = _index(li, "link", MAX_LINK_INDEX), _index(d, "direction", 1)
            if type(v) is not float or v - v != 0.0:  # (not finite: NaN)
                v = _finite(v, "gbps")
            rates[li, d] = v
            src, dst = names.check(src, "src"), names.check(dst, "dst")
            if type(cap) is not float or cap - cap != 0.0:
                cap = _finite(cap, "capacity")
            if (li, d) not in links:
                links[li, d] = LinkInfo(src, dst, cap)
        polls.done(snap)
    except (ValueError, TypeError) as exc:
        raise ValidationError(str(exc), f"rates of tick {seq}" if seq != "rates" else "rates",
                              source) from None
