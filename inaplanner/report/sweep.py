"""The review report of a resilience sweep: per planner the no-failure objective and the spread
over failures, the distribution chart (share of cases at or below each relative objective), and
the critical-element table. One self-contained HTML file, in the plan report's style."""

from __future__ import annotations

import math
from html import escape
from typing import Any

from inaplanner.report.html import CSS
from inaplanner.report.svg import PALETTE, Svg, nice_step
from inaplanner.sweeps.engine import summarise
from inaplanner.sweeps.view import distribution
from inaplanner.views.fmt import num, pct


def distribution_svg(rows: list[dict[str, Any]], width: float = 720.0, height: float = 320.0) -> str:
    """A step chart per planner of the weighted empirical distribution of the relative objective."""
    planners = list(dict.fromkeys(r["planner"] for r in rows))
    svg = Svg(width, height)
    svg.rect(0, 0, width, height, fill="#ffffff")
    left, right, top, bottom = 60.0, 20.0, 16.0, 58.0
    pw, ph = width - left - right, height - top - bottom
    curves = [(p, *distribution(rows, p)) for p in planners]
    xmax = max([1.0, *(float(x.max()) for _, x, _ in curves if x.size)])
    step = nice_step(xmax, 5)
    xmax = step * math.ceil(xmax / step - 1e-9)

    def X(v: float) -> float:  # noqa: N802 - a coordinate
        return left + pw * v / xmax

    def Y(v: float) -> float:  # noqa: N802
        return top + ph * (1 - v)

    t = 0.0
    while t <= xmax + 1e-9:
        svg.line(X(t), top, X(t), top + ph, "#e0e0e0", 1.0)
        svg.text(X(t), top + ph + 14, pct(t, 0), size=10, fill="#555")
        t += step
    for f in (0.0, 0.25, 0.5, 0.75, 1.0):
        svg.line(left, Y(f), left + pw, Y(f), "#e0e0e0", 1.0)
        svg.text(left - 6, Y(f) + 4, pct(f, 0), size=10, anchor="end", fill="#555")
    svg.text(left + pw / 2, top + ph + 30, "objective relative to no failure", size=11, fill="#333")
    for i, (p, x, y) in enumerate(curves):
        colour = PALETTE[i % len(PALETTE)]
        prev_x, prev_y = 0.0, 0.0
        for xv, yv in zip(x, y, strict=True):
            svg.line(X(prev_x), Y(prev_y), X(float(xv)), Y(prev_y), colour, 2.0)
            svg.line(X(float(xv)), Y(prev_y), X(float(xv)), Y(float(yv)), colour, 2.0)
            prev_x, prev_y = float(xv), float(yv)
        svg.line(X(prev_x), Y(prev_y), X(xmax), Y(prev_y), colour, 2.0)
        lx = left + i * 130
        svg.rect(lx, height - 16, 12, 10, colour)
        svg.text(lx + 16, height - 7, p, size=11, anchor="start")
    return svg.to_string()


def sweep_html(meta: dict[str, Any], rows: list[dict[str, Any]], title: str | None = None) -> str:
    ident = meta.get("identity", {})
    s = summarise(rows)
    title = title or "Resilience sweep"
    out = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{escape(title)}</title>"
           f"<style>{CSS}</style></head><body>", f"<h1>{escape(title)}</h1>",
           f"<p class='meta'>scenario {escape(str(ident.get('scenario_sha256', ''))[:16])}… · cases: "
           f"{escape(', '.join(ident.get('generators', [])))} · planners: "
           f"{escape(', '.join(ident.get('planners', [])))} · "
           f"{'symmetric cases collapsed' if ident.get('collapse') else 'every case run'} · "
           f"{len(rows)} runs</p>",
           "<h2>Per planner</h2><table><tr><th>planner</th><th>no failure</th><th>worst</th>"
           "<th>5th percentile</th><th>median</th><th>cases</th><th>errors</th><th>worst element</th></tr>"]
    for p, e in s["planners"].items():
        def cell(x: float | None) -> str:
            return "-" if x is None else pct(x)

        out.append(f"<tr><td>{escape(p)}</td><td class='n'>{num(e['baseline'], 4)}</td>"
                   f"<td class='n'>{cell(e['worst'])}</td><td class='n'>{cell(e['p5'])}</td>"
                   f"<td class='n'>{cell(e['median'])}</td><td class='n'>{e['cases']}</td>"
                   f"<td class='n'>{e['errors']}</td><td>{escape(e.get('worst_element', '-'))}</td></tr>")
    out.append("</table><p class='meta'>Relative objective: the objective under the failure over "
               "the same planner's objective without failure. A disconnected job counts as 0. Runs "
               "that ended in an error are left out of the figures and listed below.</p>")
    out.append("<h2>Distribution</h2><div class='figure'>" + distribution_svg(rows) + "</div>")
    out.append("<h2>Most critical elements</h2><table><tr><th>element</th><th>case</th>"
               + "".join(f"<th>lost ({escape(p)})</th>" for p in s["planners"]) + "<th>symmetric</th></tr>")
    for c in s["critical"]:
        out.append(f"<tr><td>{escape(c['element'])}</td><td>{escape(c['generator'])}</td>"
                   + "".join(f"<td class='n'>{pct(c['loss'][p]) if p in c['loss'] else '-'}</td>"
                             for p in s["planners"])
                   + f"<td class='n'>{max(0, len(c['members']) - 1) or ''}</td></tr>")
    out.append("</table>")
    errors = [r for r in rows if r["status"] == "error"]
    if errors:
        out.append("<h2>Runs that ended in an error</h2><table><tr><th>element</th><th>planner</th>"
                   "<th>error</th></tr>")
        for r in errors:
            out.append(f"<tr><td>{escape(r['element'])}</td><td>{escape(r['planner'])}</td>"
                       f"<td>{escape(r['error'])}</td></tr>")
        out.append("</table>")
    out.append("</body></html>")
    return "\n".join(out)
