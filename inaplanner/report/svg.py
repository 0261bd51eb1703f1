"""A small SVG writer (no Qt) and the two drawings of reports: the topology with a load overlay and a
grouped bar chart for comparisons.

The topology drawing shows every link as two parallel strokes, one per direction (the stroke on
the right of travel carries that direction), coloured by load / capacity with the canvas overlay's
scale (:mod:`inaplanner.report.colours`) and as wide as the capacity allows; each element has a
tooltip (``<title>``) with its figures.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape
from typing import Any

import numpy as np

from inaplanner.model import Scenario, Switch
from inaplanner.report.colours import LEGEND, util_colour
from inaplanner.report.fmt import num, pct

FONT = "DejaVu Sans, Helvetica, Arial, sans-serif"


def _attr(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.2f}".rstrip("0").rstrip(".")
    return escape(str(value), quote=True)


class Svg:
    """Collects SVG elements; :meth:`to_string` gives the document (inline or standalone)."""

    def __init__(self, width: float, height: float) -> None:
        self.width = width
        self.height = height
        self.parts: list[str] = []

    def _el(self, tag: str, attrs: dict[str, object], title: str | None = None,
            text: str | None = None) -> None:
        a = " ".join(f'{k.replace("_", "-")}="{_attr(v)}"' for k, v in attrs.items() if v is not None)
        inner = ""
        if title:
            inner += f"<title>{escape(title)}</title>"
        if text is not None:
            inner += escape(text)
        self.parts.append(f"<{tag} {a}>{inner}</{tag}>" if inner else f"<{tag} {a}/>")

    def line(self, x1: float, y1: float, x2: float, y2: float, stroke: str, width: float = 1.0,
             dash: str | None = None, title: str | None = None, opacity: float | None = None) -> None:
        self._el("line", {"x1": x1, "y1": y1, "x2": x2, "y2": y2, "stroke": stroke,
                          "stroke_width": width, "stroke_dasharray": dash,
                          "stroke_linecap": "round", "stroke_opacity": opacity}, title)

    def rect(self, x: float, y: float, w: float, h: float, fill: str, stroke: str | None = None,
             stroke_width: float = 1.0, rx: float = 0.0, title: str | None = None) -> None:
        self._el("rect", {"x": x, "y": y, "width": w, "height": h, "fill": fill, "stroke": stroke,
                          "stroke_width": stroke_width if stroke else None, "rx": rx or None}, title)

    def circle(self, cx: float, cy: float, r: float, fill: str, stroke: str | None = None,
               stroke_width: float = 1.0, title: str | None = None) -> None:
        self._el("circle", {"cx": cx, "cy": cy, "r": r, "fill": fill, "stroke": stroke,
                            "stroke_width": stroke_width if stroke else None}, title)

    def text(self, x: float, y: float, text: str, size: float = 11.0, anchor: str = "middle",
             fill: str = "#222", weight: str | None = None, title: str | None = None) -> None:
        self._el("text", {"x": x, "y": y, "font_size": size, "text_anchor": anchor, "fill": fill,
                          "font_weight": weight, "font_family": FONT}, title, text)

    def to_string(self, standalone: bool = False) -> str:
        ns = ' xmlns="http://www.w3.org/2000/svg"' if standalone else ""  # HTML5 needs none
        head = (f'<svg{ns} width="{_attr(float(self.width))}" '
                f'height="{_attr(float(self.height))}" viewBox="0 0 {_attr(float(self.width))} '
                f'{_attr(float(self.height))}" role="img">')
        body = head + "".join(self.parts) + "</svg>"
        return ('<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n") if standalone else body


def text_width(text: str, size: float) -> float:
    """A rough width of ``text`` at ``size`` px (DejaVu Sans averages ~0.6 em per character)."""
    return 0.6 * size * len(text)


# ---------------------------------------------------------------------------------------------
# topology


def node_positions(sc: Scenario) -> dict[str, tuple[float, float]]:
    """Every node's position: the scenario's own, or the automatic layout (on a copy)."""
    if all(n.pos is not None for n in sc.nodes):
        return {n.id: (float(n.pos[0]), float(n.pos[1])) for n in sc.nodes}  # type: ignore[index]
    from inaplanner.io.native import copy_scenario
    from inaplanner.topologies import auto_layout

    copy = copy_scenario(sc)
    return {k: (float(v[0]), float(v[1])) for k, v in auto_layout(copy).items()}


def _legend_items(with_loads: bool) -> list[tuple[str, str, str]]:
    items: list[tuple[str, str, str]] = []
    if with_loads:
        items.append(("text", "", "load / capacity:"))
        items += [("line", colour, label) for colour, label in LEGEND]
    items += [("prog", "", "programmable"), ("switch", "", "switch"), ("ps", "", "PS"),
              ("host", "", "worker / host")]
    return items


def _legend_width(item: tuple[str, str, str]) -> float:
    return text_width(item[2], 10) + (10 if item[0] == "text" else 32)


def _legend_rows(legend: list[tuple[str, str, str]], width: float) -> int:
    """How many rows :func:`_draw_legend` wraps ``legend`` into at ``width``."""
    rows, lx = 1, 10.0
    for item in legend:
        w_item = _legend_width(item)
        if lx > 10.0 and lx + w_item > width - 10:
            rows, lx = rows + 1, 10.0
        lx += w_item
    return rows


def _draw_legend(svg: Svg, legend: list[tuple[str, str, str]], width: float, ly: float) -> None:
    """The legend items in rows from ``ly`` down, wrapped to ``width``."""
    lx = 10.0
    for item in legend:
        kind, colour, label = item
        w_item = _legend_width(item)
        if lx > 10.0 and lx + w_item > width - 10:
            lx, ly = 10.0, ly + 18
        if kind == "line":
            svg.line(lx, ly, lx + 18, ly, colour, 4.0)
        elif kind in ("prog", "switch"):
            fill, stroke, sw = ("#d6e6fa", "#1f5fa8", 2.0) if kind == "prog" else ("#eceff1", "#607d8b", 1.0)
            svg.rect(lx + 1, ly - 6, 16, 12, fill, stroke, sw, rx=2)
        elif kind in ("ps", "host"):
            svg.circle(lx + 8, ly, 6, "#fff0d9" if kind == "ps" else "#ffffff", "#455a64")
        svg.text(lx + (22 if kind != "text" else 0), ly + 4, label, size=10, anchor="start")
        lx += w_item


def topology_svg(
    sc: Scenario,
    loads: np.ndarray | None = None,
    switch_loads: dict[str, tuple[float, float | None]] | None = None,
    *,
    width: float = 900.0,
    max_height: float = 700.0,
    link_labels: bool | None = None,
    standalone: bool = False,
    caption: str = "",
) -> str:
    """The topology with the load overlay. ``loads`` is (L, 2) Gbps per directed link
    ``[a->b, b->a]`` (from :attr:`Evaluation.link_load`, or observed rates); None draws the bare
    topology. ``switch_loads`` maps programmable switches to (aggregation load, capacity or None).
    ``link_labels`` (default: when at most 40 links) writes "load/capacity" beside each link."""
    pos = node_positions(sc)
    n_nodes = max(1, len(sc.nodes))
    r = 14.0 if n_nodes <= 40 else 9.0 if n_nodes <= 150 else 5.0
    margin = 3.5 * r + 10.0
    legend = _legend_items(loads is not None)
    legend_h = 12.0 + 18.0 * _legend_rows(legend, width)
    xs = [p[0] for p in pos.values()] or [0.0]
    ys = [p[1] for p in pos.values()] or [0.0]
    span_x = max(xs) - min(xs) or 1.0
    span_y = max(ys) - min(ys) or 1.0
    scale = (width - 2 * margin) / span_x
    if span_y * scale > max_height - 2 * margin - legend_h:
        scale = (max_height - 2 * margin - legend_h) / span_y
    height = span_y * scale + 2 * margin + legend_h
    if max(ys) == min(ys):
        height = 2 * margin + legend_h + 40.0
    ox = (width - span_x * scale) / 2 - min(xs) * scale
    oy = margin - min(ys) * scale + (20.0 if max(ys) == min(ys) else 0.0)

    def at(node: str) -> tuple[float, float]:
        x, y = pos[node]
        return ox + x * scale, oy + y * scale

    svg = Svg(width, height)
    svg.rect(0, 0, width, height, fill="#ffffff")
    caps = [lk.capacity for lk in sc.links if lk.capacity > 0]
    cap_max = max(caps) if caps else 1.0
    labels = link_labels if link_labels is not None else len(sc.links) <= 40
    ps_nodes = {ps for j in sc.jobs for ps in j.parameter_servers}
    worker_nodes = {w for j in sc.jobs for w in j.workers}

    for li, lk in enumerate(sc.links):
        (x1, y1), (x2, y2) = at(lk.a), at(lk.b)
        length = math.hypot(x2 - x1, y2 - y1) or 1.0
        nx, ny = -(y2 - y1) / length, (x2 - x1) / length  # left normal of a->b
        w = 1.2 + 3.0 * math.sqrt(lk.capacity / cap_max) if lk.capacity > 0 else 1.0
        off = w / 2 + 0.8
        best: tuple[float, str] | None = None
        for d, (src, dst) in enumerate(((lk.a, lk.b), (lk.b, lk.a))):
            sign = -1.0 if d == 0 else 1.0  # right of travel
            dx, dy = sign * nx * off, sign * ny * off
            if loads is None:
                colour, title = "#8a94a3", f"{src}->{dst}: capacity {num(lk.capacity)} Gbps"
            else:
                load = float(loads[li, d])
                util = load / lk.capacity if lk.capacity > 0 else (math.inf if load > 0 else 0.0)
                colour = util_colour(util)
                title = f"{src}->{dst}: {num(load, 4)}/{num(lk.capacity, 4)} Gbps ({pct(util)})"
                if best is None or util > best[0]:
                    best = (util, f"{num(load, 3)}/{num(lk.capacity, 3)}")
            svg.line(x1 + dx, y1 + dy, x2 + dx, y2 + dy, colour, w, title=title)
        if labels and best is not None and best[0] > 0:
            mx, my = (x1 + x2) / 2 + nx * (off + 7), (y1 + y2) / 2 + ny * (off + 7)
            svg.text(mx, my + 3, best[1], size=8.5, fill="#37474f")

    font = 10.0 if r >= 14 else 8.0 if r >= 9 else 0.0
    for n in sc.nodes:
        x, y = at(n.id)
        if isinstance(n, Switch):
            fill, stroke = ("#d6e6fa", "#1f5fa8") if n.programmable else ("#eceff1", "#607d8b")
            title = f"switch {n.id}" + (f" (programmable, {n.pipelines} pipelines)"
                                         if n.programmable else "")
            agg = (switch_loads or {}).get(n.id)
            sw_stroke = stroke
            if agg is not None:
                load, cap = agg
                title += f"; aggregation {num(load, 4)}" + (f"/{num(cap, 4)}" if cap else "") + " Gbps"
                if cap:
                    sw_stroke = util_colour(load / cap) if load > 0 else stroke
            svg.rect(x - 1.4 * r, y - 0.9 * r, 2.8 * r, 1.8 * r, fill, sw_stroke,
                     2.0 if n.programmable else 1.0, rx=3.0, title=title)
            if font:
                svg.text(x, y + font * 0.35, n.id, size=font, weight="bold")
            if agg is not None and agg[0] > 0 and font:
                load, cap = agg
                svg.text(x, y - 0.9 * r - 3, f"agg {num(load, 3)}" + (f"/{num(cap, 3)}" if cap else ""),
                         size=8.0, fill="#1f5fa8")
        else:
            role = "parameter server" if n.id in ps_nodes else "worker" if n.id in worker_nodes else "host"
            fill = "#fff0d9" if n.id in ps_nodes else "#ffffff"
            svg.circle(x, y, 0.8 * r, fill, "#455a64", 1.2, title=f"{role} {n.id}")
            if font:
                svg.text(x, y + 0.8 * r + font + 1, n.id, size=font * 0.9)

    # legend: one or two rows along the bottom, wrapped to the width
    _draw_legend(svg, legend, width, height - legend_h + 12)
    if caption:
        svg.text(10, 16, caption, size=11, anchor="start", fill="#444")
    return svg.to_string(standalone)


# ---------------------------------------------------------------------------------------------
# chart

PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf")


def nice_step(span: float, ticks: int = 5) -> float:
    """A round tick step (1, 2 or 5 times a power of ten) giving about ``ticks`` ticks."""
    if span <= 0 or not math.isfinite(span):
        return 1.0
    raw = span / ticks
    power = 10.0 ** math.floor(math.log10(raw))
    for m in (1.0, 2.0, 5.0, 10.0):
        if raw <= m * power:
            return m * power
    return 10.0 * power


def bar_chart_svg(categories: list[str], series: list[tuple[str, list[float]]], *,
                  title: str = "", unit: str = "", width: float = 720.0, height: float = 300.0,
                  standalone: bool = False) -> str:
    """Grouped vertical bars: one group per category, one bar per series, values written on top."""
    svg = Svg(width, height)
    svg.rect(0, 0, width, height, fill="#ffffff")
    left, right, top, bottom = 60.0, 15.0, 30.0 if title else 12.0, 60.0
    if len(series) > 1:
        bottom += 18.0
    plot_w, plot_h = width - left - right, height - top - bottom
    values = [v for _, vals in series for v in vals if math.isfinite(v)]
    vmax = max([0.0, *values])
    step = nice_step(vmax)
    top_v = step * max(1, math.ceil(vmax / step - 1e-9)) if vmax > 0 else 1.0
    if title:
        svg.text(width / 2, 18, title, size=13, weight="bold")
    y_of = lambda v: top + plot_h * (1 - v / top_v)  # noqa: E731
    t = 0.0
    while t <= top_v + 1e-9 * top_v:
        y = y_of(t)
        svg.line(left, y, left + plot_w, y, "#e0e0e0", 1.0)
        svg.text(left - 6, y + 4, num(t, 4), size=10, anchor="end", fill="#555")
        t += step
    if unit:
        svg.text(14, top + plot_h / 2, unit, size=10, fill="#555")
    svg.line(left, top + plot_h, left + plot_w, top + plot_h, "#333", 1.0)
    groups = max(1, len(categories))
    group_w = plot_w / groups
    bar_w = max(2.0, min(48.0, 0.8 * group_w / max(1, len(series))))
    for ci, cat in enumerate(categories):
        gx = left + ci * group_w + (group_w - bar_w * len(series)) / 2
        for si, (name, vals) in enumerate(series):
            v = vals[ci] if ci < len(vals) else 0.0
            v = v if math.isfinite(v) else 0.0
            y = y_of(max(v, 0.0))
            colour = PALETTE[si % len(PALETTE)]
            svg.rect(gx + si * bar_w, y, bar_w - 1, top + plot_h - y, colour,
                     title=f"{cat} {name}: {num(v)} {unit}".strip())
            if bar_w >= 14:
                svg.text(gx + si * bar_w + bar_w / 2, y - 3, num(v, 4), size=9, fill="#333")
        label = cat if len(cat) * 6 <= group_w else cat[: max(3, int(group_w / 6) - 1)] + "…"
        svg.text(left + ci * group_w + group_w / 2, top + plot_h + 14, label, size=10,
                 title=cat)
    if len(series) > 1:
        lx, ly = left, height - 12
        for si, (name, _) in enumerate(series):
            svg.rect(lx, ly - 9, 12, 10, PALETTE[si % len(PALETTE)])
            svg.text(lx + 16, ly, name, size=10, anchor="start")
            lx += 28 + text_width(name, 10)
    return svg.to_string(standalone)


# ---------------------------------------------------------------------------------------------
# the topology at pod level (large networks)


TICK_STEPS = (1, 2, 4, 5, 8, 10, 16, 20, 25, 32, 50, 64, 100, 128, 200, 256, 500, 1000)


def _box_width(slot: float) -> float:
    """The width of a group's box in a row slot ``slot`` wide."""
    return max(6.0, min(130.0, slot - 8.0))


def _row_ticks(row: Sequence[Any], slot: float) -> list[int]:
    """Which boxes of a row get their number written beside them: none when every box has room for
    its name (``pod 12`` or ``12``), else the first and every ``step``-th, the smallest step at
    which the numbers do not touch (``1, 8, 16, 24, ...``)."""
    bw = _box_width(slot)
    shorts = [g.id.split()[-1] for g in row]
    if not row or all(text_width(t, 10) <= bw - 2 for t in shorts):
        return []
    need = max(text_width(t, 9) for t in shorts) + 4
    step = next((s for s in TICK_STEPS if s * slot >= need), len(row))
    picked = [0]
    for i in range(step - 1, len(row), step):
        if (i - picked[-1]) * slot >= need:
            picked.append(i)
    return picked


def grouped_topology_svg(sc: Scenario, loads: np.ndarray | None = None, *, width: float = 900.0,
                         caption: str = "", standalone: bool = False) -> str:
    """The network at pod level (:mod:`inaplanner.views.groups`): planes/spines on top, pods or
    racks below, each a box named and counted (switches, hosts, workers, PSs); links between
    groups as bundles coloured by their worst link's load/capacity and, where there is room,
    labelled with max / mean. A box's border takes the colour of the worst link inside it."""
    from inaplanner.views.groups import bundles, inner_util, roles
    from inaplanner.views.semantic import network_grouping

    grouping = network_grouping(sc)
    cap = np.array([lk.capacity for lk in sc.links], dtype=float)
    util = None
    if loads is not None:
        with np.errstate(divide="ignore", invalid="ignore"):
            util = np.where(cap[:, None] > 0, np.asarray(loads) / np.where(cap[:, None] > 0, cap[:, None], 1.0),
                            np.where(np.asarray(loads) > 0, np.inf, 0.0))
    bds = bundles(sc, grouping, util)
    inner = inner_util(sc, grouping, util) if util is not None else {}
    who = roles(sc, grouping)
    tiers = sorted({g.tier for g in grouping.groups}, reverse=True)
    rows = [[g for g in grouping.groups if g.tier == t] for t in tiers]
    margin, row_gap, box_h = 14.0, 110.0, 46.0
    legend = _legend_items(loads is not None)
    if loads is not None:
        legend.append(("text", "", "bundle labels: busiest link / mean"))
    legend_h = 12.0 + 18.0 * _legend_rows(legend, width)
    top_pad = 24.0 if caption else 8.0
    # boxes too narrow for their names (64 pods on a page) are numbered along the row instead
    ticks = [_row_ticks(row, (width - 2 * margin) / max(1, len(row))) for row in rows]
    tick_h = 12.0 if ticks and ticks[-1] else 0.0
    height = top_pad + len(rows) * box_h + (len(rows) - 1) * row_gap + tick_h + legend_h + 2 * margin
    svg = Svg(width, height)
    svg.rect(0, 0, width, height, fill="#ffffff")
    centre: dict[str, tuple[float, float, float]] = {}  # group -> (x, y_top, box width)
    for ri, row in enumerate(rows):
        n = max(1, len(row))
        slot = (width - 2 * margin) / n
        bw = _box_width(slot)
        y = top_pad + margin + ri * (box_h + row_gap)
        for gi, g in enumerate(row):
            x = margin + slot * gi + slot / 2
            centre[g.id] = (x, y, bw)
    # bundles first, under the boxes; labels only where they fit (the worst bundles first), never
    # on top of another label
    placed: list[tuple[float, float, float, float]] = []

    def free(box: tuple[float, float, float, float]) -> bool:
        x0, y0, x1, y1 = box
        return all(x1 < a0 - 2 or x0 > a1 + 2 or y1 < b0 - 1 or y0 > b1 + 1 for a0, b0, a1, b1 in placed)

    lines = []
    for bd in bds:
        xa, ya, _ = centre[bd.a]
        xb, yb, _ = centre[bd.b]
        if ya > yb:
            xa, ya, xb, yb = xb, yb, xa, ya
        y1, y2 = ya + box_h, yb
        colour = "#8a94a3" if util is None else util_colour(bd.max_util)
        w = 1.0 + 1.5 * math.log2(1 + len(bd.links))
        title = f"{bd.a} - {bd.b}: {len(bd.links)} links, {num(bd.capacity)} Gbps"
        if util is not None:
            title += f"; load/capacity max {pct(bd.max_util)}, mean {pct(bd.mean_util)}"
        svg.line(xa, y1, xb, y2, colour, w, title=title, opacity=0.85)
        lines.append((bd, xa, y1, xb, y2))
    if util is not None:
        for bd, xa, y1, xb, y2 in sorted(lines, key=lambda t: -t[0].max_util):
            if y1 == y2 + box_h or bd.max_util <= 0:  # an idle bundle says it by its grey
                continue
            text = bd.label.replace("max ", "").replace("mean ", "")
            tw = text_width(text, 8.0)
            for t in (0.75, 0.6, 0.45, 0.3, 0.85):
                cx, cy = xa + (xb - xa) * t, y1 + (y2 - y1) * t
                box = (cx - tw / 2, cy - 10, cx + tw / 2, cy)
                if box[0] >= 2 and box[2] <= width - 2 and free(box):
                    placed.append(box)
                    svg.rect(box[0] - 1, box[1], tw + 2, 11, "#ffffff")
                    svg.text(cx, cy - 2, text, size=8.0, fill="#37474f")
                    break
    for g in grouping.groups:
        x, y, bw = centre[g.id]
        border = "#607d8b" if util is None else util_colour(inner.get(g.id, 0.0))
        prog = any(getattr(sc.node(s), "programmable", False) for s in g.switches)
        fill = "#d6e6fa" if prog else "#eceff1"
        w_, ps = who.get(g.id, (0, 0))
        parts = [f"{len(g.switches)} switches", f"{g.hosts} hosts"]
        if w_ or ps:
            parts.append(f"{w_} workers, {ps} PS")
        title = f"{g.id}: " + ", ".join(parts) + (f"; worst link inside {pct(inner[g.id])}"
                                                    if g.id in inner else "")
        svg.rect(x - bw / 2, y, bw, box_h, fill, border, 2.0 if prog else 1.2, rx=4.0, title=title)
        name = g.id if text_width(g.id, 11) <= bw - 4 else g.id.split()[-1]
        if text_width(name, 10) <= bw - 2:
            svg.text(x, y + 15, name, size=11 if name == g.id else 10, weight="bold")
        line2 = f"{g.hosts}h" + (f" {w_}W" if w_ else "") + (f" {ps}PS" if ps else "")
        if g.hosts and text_width(line2, 9) <= bw - 2:
            svg.text(x, y + 29, line2, size=9, fill="#37474f")
        if len(g.switches) > 1 and text_width(f"{len(g.switches)} sw", 9) <= bw - 2:
            svg.text(x, y + 41, f"{len(g.switches)} sw", size=9, fill="#607d8b")
    for ri, row in enumerate(rows):
        for gi in ticks[ri]:
            x, y, _bw = centre[row[gi].id]
            ty = y - 3 if ri == 0 and len(rows) > 1 else y + box_h + 10
            svg.text(x, ty, row[gi].id.split()[-1], size=9, fill="#37474f", title=row[gi].id)
    _draw_legend(svg, legend, width, height - legend_h + 10)
    what = {"fat-tree": "pods and core planes", "leaf-spine": "racks (a leaf and its hosts) and spines",
            "flat": "every node"}[grouping.kind]
    head = (caption + " · " if caption else "") + f"at pod level: {what}; h hosts, W workers, PS parameter servers"
    svg.text(10, 16, head, size=11, anchor="start", fill="#444")
    return svg.to_string(standalone)
