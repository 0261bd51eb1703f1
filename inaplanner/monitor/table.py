"""The terminal view of monitoring: the most loaded links of a snapshot as a text table."""

from __future__ import annotations

import math
import time

import numpy as np

from inaplanner.monitor.alerts import Alert, deviation_share, ranked
from inaplanner.monitor.recording import LinkInfo
from inaplanner.monitor.series import Snapshot


def _util(v: float, cap: float) -> float:
    return v / cap if cap > 0 else (math.inf if v > 0 else 0.0)


def top_rows(snap: Snapshot, links: dict[tuple[int, int], LinkInfo],
             planned: np.ndarray | None = None, n: int = 10) -> list[dict]:
    """The ``n`` measured directed links with the highest load / capacity (ties by name)."""
    rows = []
    for key, v in snap.rates.items():
        info = links.get(key, LinkInfo("?", "?", 0.0))
        row = {"key": key, "link": info.name, "observed": v, "capacity": info.capacity,
               "util": _util(v, info.capacity), "planned": None, "deviation": None}
        if planned is not None and 0 <= key[0] < planned.shape[0]:
            p = float(planned[key])
            row["planned"] = p
            row["deviation"] = deviation_share(v, p)
        rows.append(row)
    rows.sort(key=lambda r: (-r["util"], r["link"]))
    return rows[:n]


def render_table(snap: Snapshot, links: dict[tuple[int, int], LinkInfo],
                 planned: np.ndarray | None = None, n: int = 10, alerts: list[Alert] | None = None,
                 title: str = "", max_alerts: int = 10) -> str:
    """A fixed-width table: link, observed Gbps, capacity, utilisation, planned and deviation."""
    stamp = time.strftime("%H:%M:%S", time.localtime(snap.wall)) if snap.wall else "-"
    head = f"{title + '  ' if title else ''}t={snap.t:8.2f}s  {stamp}  " \
           f"{len(snap.rates)} directed links measured"
    lines = [head]
    if snap.stale:
        lines.append("not answering: " + ", ".join(snap.stale))
    cols = f"{'link':<24} {'observed':>10} {'capacity':>9} {'util':>7}"
    if planned is not None:
        cols += f" {'planned':>10} {'vs plan':>8}"
    lines += [cols, "-" * len(cols)]
    for r in top_rows(snap, links, planned, n):
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
