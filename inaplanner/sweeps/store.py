"""Where sweep results go as they arrive: one SQLite file.

Why SQLite (and not Parquet or CSV): it is in Python's standard library (the local sweep needs no
extra dependency), every result row is committed in its own transaction, so a sweep killed at any
moment leaves only whole rows (a resumed sweep skips exactly the finished cases; CSV can end in a
half line, Parquet cannot be appended to row by row without rewriting files), and any tool reads
it (``sqlite3``, pandas ``read_sql``, DuckDB). ``inaplanner sweep --csv`` exports a table.

The file holds the sweep's identity (scenario hash, planners, parameters, generators); resuming
with a different scenario or settings is refused rather than mixing results.
"""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from inaplanner.errors import InaplannerError

_COLUMNS = ("case_id", "planner", "generator", "element", "members", "weight", "status",
            "objective", "bound", "gap", "seconds", "feasible", "job_throughput", "error", "worker")
_JSON = ("members", "job_throughput")


class ResultStore:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self.db = sqlite3.connect(str(self.path), timeout=30)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
            self.db.execute(
                "CREATE TABLE IF NOT EXISTS results (case_id TEXT, planner TEXT, generator TEXT, "
                "element TEXT, members TEXT, weight INTEGER, status TEXT, objective REAL, bound REAL, "
                "gap REAL, seconds REAL, feasible INTEGER, job_throughput TEXT, error TEXT, worker TEXT, "
                "PRIMARY KEY (case_id, planner))")
            self.db.commit()
        except sqlite3.DatabaseError as exc:
            raise InaplannerError(f"{self.path}: not a sweep result file ({exc})") from None

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> ResultStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- identity -------------------------------------------------------------------------
    def meta(self) -> dict[str, Any]:
        return {k: json.loads(v) for k, v in self.db.execute("SELECT key, value FROM meta")}

    def bind(self, identity: dict[str, Any]) -> None:
        """Record the sweep's identity, or check that it is the one already recorded."""
        have = self.meta().get("identity")
        if have is not None and have != identity:
            diff = sorted(k for k in set(have) | set(identity) if have.get(k) != identity.get(k))
            raise InaplannerError(
                f"{self.path}: holds results of another sweep (different {', '.join(diff)}); "
                "choose another output file or delete this one")
        if have is None:
            self.db.execute("INSERT OR REPLACE INTO meta VALUES ('identity', ?)", (json.dumps(identity),))
            self.db.commit()

    # ---- rows -----------------------------------------------------------------------------
    def done(self) -> set[tuple[str, str]]:
        return {(c, p) for c, p in self.db.execute("SELECT case_id, planner FROM results")}

    def add(self, row: dict[str, Any]) -> None:
        values = [json.dumps(row.get(c)) if c in _JSON else row.get(c) for c in _COLUMNS]
        if values[_COLUMNS.index("feasible")] is not None:
            values[_COLUMNS.index("feasible")] = int(bool(row["feasible"]))
        self.db.execute(f"INSERT OR REPLACE INTO results VALUES ({','.join('?' * len(_COLUMNS))})", values)
        self.db.commit()

    def rows(self) -> list[dict[str, Any]]:
        out = []
        for rec in self.db.execute(f"SELECT {', '.join(_COLUMNS)} FROM results ORDER BY rowid"):
            row = dict(zip(_COLUMNS, rec, strict=True))
            for c in _JSON:
                row[c] = json.loads(row[c]) if row[c] else ([] if c == "members" else {})
            if row["feasible"] is not None:
                row["feasible"] = bool(row["feasible"])
            out.append(row)
        return out


def load_results(path: str | Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(meta, rows) of a finished or interrupted sweep file."""
    p = Path(path)
    if not p.is_file():
        raise InaplannerError(f"{p}: no such sweep result file")
    with ResultStore(p) as st:
        meta = st.meta()
        if "identity" not in meta:
            raise InaplannerError(f"{p}: not a sweep result file (no sweep identity)")
        return meta, st.rows()


def write_csv(rows: Iterable[dict[str, Any]], path: str | Path) -> None:
    from inaplanner.io.atomic import atomic_write_text

    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(_COLUMNS))
    w.writeheader()
    for r in rows:
        w.writerow({k: json.dumps(r[k]) if k in _JSON else r[k] for k in _COLUMNS})
    atomic_write_text(Path(path), buf.getvalue())
