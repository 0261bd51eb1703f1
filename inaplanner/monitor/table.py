"""The terminal view of monitoring: the most loaded links of a snapshot as a text table."""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np

from inaplanner.monitor.alerts import Alert, deviation_share, ranked
from inaplanner.monitor.recording import LinkInfo
from inaplanner.monitor.series import Snapshot


def _util(v: float, cap: float) -> float:
    return v / cap if cap > 0 else (math.inf if v > 0 else 0.0)


Key = tuple[int, int]


def most_loaded(links: np.ndarray, directions: np.ndarray, load: np.ndarray, cap: np.ndarray,
                name_of: Callable[[Key], str], n: int) -> list[Key]:
    """The ``n`` measured directed links ``(links[i], directions[i])`` with the highest load /
    capacity, ties by name, then in the order given (a link of capacity 0 with load counts as
    infinitely loaded). The terminal's table and the Monitor mode's both rank with this, from
    :meth:`Snapshot.arrays`. Only the links that can be among the first ``n`` are named and
    sorted: ranking all of fat-tree k=64's 393,216 directed links by sorting rows took 1.6 s of
    the window's thread at every poll, and a look-up per link 0.15 s."""
    if n <= 0 or not load.size:
        return []
    with np.errstate(divide="ignore", invalid="ignore"):
        util = np.where(cap > 0, load / np.where(cap > 0, cap, 1.0),
                        np.where(load > 0, math.inf, 0.0))
    if load.size > n:  # every link at least as loaded as the n-th: the ties stay in
        nth = np.partition(-util, n - 1)[n - 1]
        chosen = np.flatnonzero(-util <= nth)
    else:
        chosen = np.arange(load.size)
    keys = [(int(links[i]), int(directions[i])) for i in chosen.tolist()]
    ranked = sorted(((-float(util[i]), name_of(key), key)
                     for i, key in zip(chosen.tolist(), keys, strict=True)),
                    key=lambda r: (r[0], r[1]))
    return [key for _, _, key in ranked[:n]]


def top_rows(snap: Snapshot, links: dict[tuple[int, int], LinkInfo],
             planned: np.ndarray | None = None, n: int = 10,
             capacity: np.ndarray | None = None) -> list[dict]:
    """The ``n`` measured directed links with the highest load / capacity (ties by name).
    ``capacity`` (Gbps by link index, every link of the snapshot in it) saves looking each
    measured link up in ``links`` for its capacity."""
    unknown = LinkInfo("?", "?", 0.0)
    li, d, load = snap.arrays()
    if capacity is not None:
        cap = np.asarray(capacity, dtype=float)[li]
    else:
        cap = np.fromiter((links.get(k, unknown).capacity for k in snap.rates), dtype=float,
                          count=load.size)
    rows = []
    for key in most_loaded(li, d, load, cap, lambda k: links.get(k, unknown).name, n):
        v = snap.rates[key]
        info = links.get(key, unknown)
        row = {"key": key, "link": info.name, "observed": v, "capacity": info.capacity,
               "util": _util(v, info.capacity), "planned": None, "deviation": None}
        if planned is not None and 0 <= key[0] < planned.shape[0]:
            p = float(planned[key])
            row["planned"] = p
            row["deviation"] = deviation_share(v, p)
        rows.append(row)
    return rows


def render_table(snap: Snapshot, links: dict[tuple[int, int], LinkInfo],
                 planned: np.ndarray | None = None, n: int = 10, alerts: list[Alert] | None = None,
                 title: str = "", max_alerts: int = 10,
                 listing: Callable[[list[str]], str] = ", ".join,
                 capacity: np.ndarray | None = None) -> str:
    """A fixed-width table: link, observed Gbps, capacity, utilisation, planned and deviation.
    ``listing`` writes the switches not answering (the CLI names a few and counts the rest);
    ``capacity`` as in :func:`top_rows`."""
    stamp = time.strftime("%H:%M:%S", time.localtime(snap.wall)) if snap.wall else "-"
    head = f"{title + '  ' if title else ''}t={snap.t:8.2f}s  {stamp}  " \
           f"{len(snap.rates)} directed links measured"
    lines = [head]
    if snap.stale:
        lines.append("not answering: " + listing(list(snap.stale)))
    cols = f"{'link':<24} {'observed':>10} {'capacity':>9} {'util':>7}"
    if planned is not None:
        cols += f" {'planned':>10} {'vs plan':>8}"
    lines += [cols, "-" * len(cols)]
    for r in top_rows(snap, links, planned, n, capacity):
        util = "inf" if math.isinf(r["util"]) else f"{100 * r['util']:.1f}%"
        line = f"{r['link'][:24]:<24} {r['observed']:>10.4g} {r['capacity']:>9.4g} {util:>7}"
        if planned is not None:
            dev = r["deviation"]
            dev_text = "-" if dev is None else ("new" if math.isinf(dev) else f"{100 * dev:+.1f}%")
            line += f" {r['planned']:>10.4g} {dev_text:>8}"
        lines.append(line)
    if not snap.rates:
        lines.append("(no rates yet: the first poll of each switch sets its baseline)")
    alerts = ranked(alerts or [])  # the largest departures from the plan first
    for a in alerts[:max_alerts]:
        lines.append(f"ALERT {a.kind}: {a.text()}")
    if len(alerts) > max_alerts:
        lines.append(f"... and {len(alerts) - max_alerts} more alerts")
    return "\n".join(lines)
