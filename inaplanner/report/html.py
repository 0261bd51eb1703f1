"""The review report as one self-contained HTML file (inline CSS and SVG, no external asset).

The same writer produces the variant Qt's rich-text engine lays out for the PDF
(``target="qt"``): Qt does not draw inline SVG or ``<details>``, so drawings become ``<img>``
references to resources the PDF writer rasterises, collapsible blocks become plain sections, and
``page-break-before`` starts each plan on a new page.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from html import escape

from inaplanner.report.colours import util_colour
from inaplanner.report.data import PlanReport, Report
from inaplanner.report.diff import PlanDiff
from inaplanner.report.fmt import delta, num, pct, signed
from inaplanner.report.svg import bar_chart_svg, grouped_topology_svg, topology_svg
from inaplanner.views.groups import worth_grouping

CSS = """
body{font-family:"DejaVu Sans",Helvetica,Arial,sans-serif;font-size:14px;color:#1d2329;
 margin:24px auto;max-width:1100px;padding:0 16px;line-height:1.4}
h1{font-size:24px;margin:0 0 4px}h2{font-size:20px;border-bottom:2px solid #1f5fa8;
 padding-bottom:3px;margin-top:34px}h3{font-size:16px;margin:20px 0 6px}
.meta{color:#5f6b76;font-size:12px}
table{border-collapse:collapse;margin:6px 0 12px}
th,td{border:1px solid #c9d1d9;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#eef3f8}td.n{text-align:right;font-variant-numeric:tabular-nums}
.kv th{width:190px}
.bad{color:#c62828;font-weight:bold}.good{color:#2e7d32;font-weight:bold}
.swatch{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:4px}
details{margin:4px 0 8px}summary{cursor:pointer;font-weight:bold}
.figure{overflow-x:auto;border:1px solid #e3e8ee;padding:4px;margin:8px 0}
code{font-family:"DejaVu Sans Mono",monospace;font-size:12px}
.m{font-weight:bold;color:#1f5fa8}
"""


@dataclass
class Rendered:
    """HTML text and, for the Qt variant, the drawings it refers to (name -> SVG document)."""

    html: str
    images: dict[str, tuple[str, float]] = field(default_factory=dict)  # name -> (svg, width px)


class _Writer:
    def __init__(self, report: Report, target: str) -> None:
        self.r = report
        self.qt = target == "qt"
        self.out: list[str] = []
        self.images: dict[str, tuple[str, float]] = {}

    # ---- helpers -------------------------------------------------------------------------------
    def w(self, text: str) -> None:
        self.out.append(text)

    def figure(self, name: str, svg: str, width: float, alt: str) -> None:
        if self.qt:
            self.images[name] = (svg, width)
            self.w(f'<p><img src="{escape(name)}" width="{int(width)}" alt="{escape(alt)}"></p>')
        else:
            self.w(f'<div class="figure" role="figure" aria-label="{escape(alt)}">{svg}</div>')

    def table(self, head: list[str], rows: list[list[str]], numeric: set[int] | None = None,
              raw: bool = False) -> None:
        numeric = numeric or set()
        attrs = ' border="1" cellspacing="0" cellpadding="3"' if self.qt else ""
        self.w(f"<table{attrs}><thead><tr>" + "".join(f"<th>{escape(h)}</th>" for h in head)
               + "</tr></thead><tbody>")
        for row in rows:
            cells = []
            for i, c in enumerate(row):
                body = c if raw else escape(c)
                cls = (' align="right"' if self.qt else ' class="n"') if i in numeric else ""
                cells.append(f"<td{cls}>{body}</td>")
            self.w("<tr>" + "".join(cells) + "</tr>")
        self.w("</tbody></table>")

    def kv(self, rows: list[tuple[str, str]], raw: bool = False) -> None:
        attrs = ' border="1" cellspacing="0" cellpadding="3"' if self.qt else ""
        self.w(f'<table class="kv"{attrs}><tbody>')
        for k, v in rows:
            self.w(f"<tr><th>{escape(k)}</th><td>{v if raw else escape(v)}</td></tr>")
        self.w("</tbody></table>")

    def open_fold(self, summary: str, open_: bool = False) -> None:
        if self.qt:
            self.w(f"<h3>{escape(summary)}</h3>")
        else:
            self.w(f"<details{' open' if open_ else ''}><summary>{escape(summary)}</summary>")

    def close_fold(self) -> None:
        if not self.qt:
            self.w("</details>")

    def page_break(self) -> str:
        return ' style="page-break-before: always"' if self.qt else ""

    # ---- document ------------------------------------------------------------------------------
    def render(self) -> Rendered:
        r = self.r
        self.w('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">')
        self.w(f"<title>{escape(r.title)}</title>")
        if not self.qt:
            self.w('<meta name="viewport" content="width=device-width, initial-scale=1">')
            self.w(f"<style>{CSS}</style>")
        self.w("</head><body>")
        self.w(f"<h1>{escape(r.title)}</h1>")
        plans = ", ".join(p.label for p in r.plans)
        self.w(f'<p class="meta">Generated by inaplanner {escape(r.version)} on {escape(r.created)}'
               f" &middot; plans: {escape(plans)}</p>")
        self.scenario_section()
        if len(r.plans) > 1:
            self.comparison_section()
        for i, pr in enumerate(r.plans):
            self.plan_section(i, pr)
        if r.routes == "appendix":
            self.w(f'<h2 id="routes"{self.page_break()}>Appendix: routes</h2>')
            for pr in r.plans:
                self.routes(pr)
        self.w("</body></html>\n")
        return Rendered("\n".join(self.out), self.images)

    def scenario_section(self) -> None:
        r = self.r
        self.w('<h2 id="scenario">Scenario</h2>')
        self.kv(r.scenario_summary())
        if r.scenario.jobs:
            self.w("<h3>Jobs</h3>")
            self.table(["job", "workers", "parameter servers", "model (MB)", "weight"],
                       [[j["job"], str(j["workers"]), j["ps"], num(j["model_mb"]), num(j["weight"])]
                        for j in r.job_rows()], numeric={1, 3, 4})
        prog = r.programmable_switches()
        if prog:
            self.w("<h3>Programmable switches</h3>")
            # one row per configuration: a datacenter has hundreds of identical switches
            configs: dict[tuple, list[str]] = {}
            for sw in prog:
                key = (sw.tier or "-", sw.pipelines,
                       "line rate" if sw.aggregation_capacity is None else num(sw.aggregation_capacity),
                       "-" if sw.aggregators is None else str(sw.aggregators), sw.target or "-",
                       getattr(sw, "max_fan_in", None) or 32)
                configs.setdefault(key, []).append(sw.id)
            rows = []
            for (tier, pipes, capacity, aggs, target, fan_in), ids in configs.items():
                names = ", ".join(ids[:8]) + (f" and {len(ids) - 8} more" if len(ids) > 8 else "")
                rows.append([str(len(ids)), names, tier, str(pipes), capacity, aggs, str(fan_in), target])
            self.table(["count", "switches", "tier", "pipelines", "aggregation capacity (Gbps)",
                        "aggregators", "max fan-in", "target"], rows, numeric={0, 3, 4, 5, 6})

    def comparison_section(self) -> None:
        r = self.r
        self.w('<h2 id="comparison">Comparison</h2>')
        jobs = [j.id for j in r.scenario.jobs]
        # short headers: a PDF page holds this table only when no header has to break
        head = ["plan", "status", "objective", "bound", "gap", "s", "ok", "max util"] \
            + [f"{j}" for j in jobs]
        rows = []
        for p in r.plans:
            ev = p.evaluation
            label = p.label if p.label == p.plan.planner.name else f"{p.label} ({p.plan.planner.name})"
            rows.append([label, p.status, num(ev.objective, 4), num(p.plan.bound, 4), pct(p.gap),
                         num(p.plan.planner.seconds, 3), "yes" if ev.feasible else "no",
                         pct(p.max_utilisation)] + [num(ev.job_throughput.get(j, 0.0), 4) for j in jobs])
        self.table(head, rows, numeric={2, 3, 4, 5, 7, *range(8, 8 + len(jobs))})
        self.w('<p class="meta">objective and job throughput in Gbps; s: planner seconds; ok: '
               "feasible by the evaluator; max util: the busiest link's load/capacity.</p>")
        labels = [p.label for p in r.plans]
        w = 340 if self.qt else 520

        def objective_chart() -> None:
            chart = bar_chart_svg(labels, [("objective", [p.evaluation.objective for p in r.plans])],
                                  title="Objective per plan", unit="Gbps", width=520, height=280)
            self.figure("chart-objective", chart, w, "objective per plan")

        def jobs_chart() -> None:
            series = [(j, [p.evaluation.job_throughput.get(j, 0.0) for p in r.plans]) for j in jobs]
            chart = bar_chart_svg(labels, series, title="Job throughput per plan", unit="Gbps",
                                  width=520, height=280)
            self.figure("chart-jobs", chart, w, "job throughput per plan")

        if len(jobs) > 1:
            self.columns(objective_chart, jobs_chart)
        else:
            objective_chart()

    def columns(self, *parts: Callable[[], None], widths: tuple[int, ...] | None = None) -> None:
        """Blocks side by side (each a callable writing HTML): a page's width holds two narrow
        tables, which would otherwise each take a page's height."""
        cells = []
        for part in parts:
            mark = len(self.out)
            part()
            cells.append("\n".join(self.out[mark:]))
            del self.out[mark:]
        if self.qt:
            shares = widths or tuple(100 // max(1, len(cells)) for _ in cells)
            self.w('<table width="100%" cellspacing="0" cellpadding="0" border="0"><tr>'
                   + "".join(f'<td valign="top" width="{w}%">{c}</td>' for w, c in zip(shares, cells, strict=True))
                   + "</tr></table>")
        else:
            self.w('<div style="display:flex;flex-wrap:wrap;gap:0 28px;align-items:flex-start">'
                   + "".join(f"<div>{c}</div>" for c in cells) + "</div>")

    def plan_section(self, i: int, p: PlanReport) -> None:
        ev = p.evaluation
        info = p.plan.planner
        self.w(f'<h2 id="plan-{i + 1}"{self.page_break()}>Plan {i + 1}: {escape(p.label)}</h2>')
        params = "; ".join(f"{k} = {_param(v)}" for k, v in sorted(info.params.items())) \
            if info.params else "(defaults)"

        def planner() -> None:
            self.w("<h3>Planner</h3>")
            self.kv([
                ("planner", info.name),
                ("parameters", params),
                ("seed", "-" if info.seed is None else str(info.seed)),
                ("solver", info.solver or "-"),
                ("status", info.status),
                ("seconds", num(info.seconds, 4)),
                ("bound", num(p.plan.bound)),
                ("gap to bound", pct(p.gap)),
            ])

        def result() -> None:
            verdict = ('<span class="good">feasible</span>' if ev.feasible else
                       '<span class="bad">invalid</span>' if not ev.valid else
                       '<span class="bad">infeasible</span>')
            self.w("<h3>Result</h3>")
            self.kv([
                ("objective", f"<b>{escape(num(ev.objective))}</b> Gbps ({escape(ev.objective_kind)})"),
                ("verdict", verdict),
                ("max link utilisation", escape(pct(p.max_utilisation))),
                ("aggregates formed", escape(str(len(ev.aggregates)))),
            ], raw=True)
            weights = {j.id: j.weight for j in self.r.scenario.jobs}
            self.table(["job", "weight", "throughput (Gbps)", "weighted"],
                       [[j, num(weights.get(j, 1.0)), num(t), num(weights.get(j, 1.0) * t)]
                        for j, t in ev.job_throughput.items()], numeric={1, 2, 3})
            self.table(["task (job/PS)", "rate per worker (Gbps)"],
                       [[t["task"], num(t["rate"])] for t in p.task_rows()], numeric={1})

        self.columns(planner, result)
        for title, items in (("Errors", ev.errors), ("Violations", [str(v) for v in ev.violations]),
                             ("Warnings", ev.warnings)):
            if items:
                self.w(f"<p><b>{escape(title)} ({len(items)}):</b></p><ul>"
                       + "".join(f"<li>{escape(x)}</li>" for x in items[:20])
                       + (f"<li>... {len(items) - 20} more</li>" if len(items) > 20 else "")
                       + "</ul>")
        self.w("<h3>Topology and load</h3>")
        agg = {row["switch"]: (row["load"], row["capacity"]) for row in p.switch_rows()}
        caption = f"{p.label}: objective {num(ev.objective)} Gbps"
        if worth_grouping(self.r.scenario):
            svg = grouped_topology_svg(self.r.scenario, ev.link_load, width=900 if not self.qt else 820,
                                       caption=caption, standalone=self.qt)
        else:
            svg = topology_svg(self.r.scenario, ev.link_load, agg, width=900 if not self.qt else 820,
                               max_height=700 if not self.qt else 560, caption=caption,
                               standalone=self.qt)
        self.figure(f"topology-{i + 1}", svg, 680 if self.qt else 900, f"topology of {p.label}")

        d = 4 if self.qt else 6  # a PDF column is narrow: four significant digits

        def links() -> None:
            self.w("<h3>Ten most loaded links</h3>")
            self.table(["link", "load", "capacity", "util", "flows"],
                       [[self.swatch(row["utilisation"]) + escape(row["link"]), escape(num(row["load"], d)),
                         escape(num(row["capacity"], d)), escape(pct(row["utilisation"])),
                         str(row["flows"])] for row in p.top_links()], numeric={1, 2, 3, 4}, raw=True)

        def switches() -> None:
            rows = sorted(p.switch_rows(), key=lambda row: (-row["load"], row["switch"]))
            more = max(0, len(rows) - TOP_SWITCHES)
            rows = rows[:TOP_SWITCHES]
            self.w("<h3>Aggregation per switch" + (f" (the {TOP_SWITCHES} busiest of "
                                                    f"{TOP_SWITCHES + more})" if more else "") + "</h3>")
            if not rows:
                self.w("<p>No programmable switch.</p>")
                return
            self.table(["switch", "load", "capacity", "util", "aggr.", "fan-in", "pipelines"],
                       [[row["switch"], num(row["load"], d),
                         "line" if row["capacity"] is None else num(row["capacity"], d),
                         "-" if not row["capacity"] else pct(row["load"] / row["capacity"]),
                         str(row["aggregates"]),
                         f"{row.get('fan_in_used', '-')}/{row.get('max_fan_in', '-')}",
                         (",".join(str(x) for x in row["pipelines_used"]) or "none")
                         + f" of {row['pipelines']}"] for row in rows],
                       numeric={1, 2, 3, 4, 5})

        self.columns(links, switches, widths=(46, 54))
        self.w('<p class="meta">Loads in Gbps; util: load/capacity; line: aggregation at line rate; fan-in: most flows merged into '
               "one aggregate there / the switch's max_fan_in.</p>")
        n_routes = sum(len(tp.routes) for tp in p.plan.tasks)
        if self.r.routes == "csv":
            self.w(f"<p>Routes of the {n_routes} workers: in <code>{escape(self.r.routes_file)}</code>"
                   " (one row per worker: task, path, merges).</p>")
        elif self.r.routes == "none":
            self.w(f"<p>Routes of the {n_routes} workers: not included (<code>--routes appendix</code>"
                   " or <code>--routes csv</code> adds them).</p>")
        if i > 0 and i - 1 < len(self.r.diffs):
            self.diff_section(self.r.diffs[i - 1])

    def swatch(self, util: float) -> str:
        colour = util_colour(util)
        if self.qt:
            return f'<span style="color:{colour}">&#9632;</span> '
        return f'<span class="swatch" style="background:{colour}"></span>'

    def routes(self, p: PlanReport) -> None:
        rows = p.route_rows()
        self.w(f"<h3>Routes of {escape(p.label)} ({len(rows)} workers)</h3>")
        by_task: dict[str, list[dict]] = {}
        for row in rows:
            by_task.setdefault(row["task"], []).append(row)
        for task, items in by_task.items():
            self.open_fold(f"{task}: {len(items)} routes at {num(items[0]['rate'])} Gbps")
            self.table(["worker", "path (merges in bold)", "merge at", "hops"],
                       [[escape(x["worker"]), self.path_html(x["path"], x["merge_at"]),
                         escape(", ".join(x["merge_at"]) or "-"), str(x["hops"])] for x in items],
                       numeric={3}, raw=True)
            self.close_fold()

    @staticmethod
    def path_html(path: list[str], merges: list[str]) -> str:
        ms = set(merges)
        return " &rarr; ".join(f'<b class="m">{escape(n)}</b>' if n in ms else escape(n) for n in path)

    def diff_section(self, d: PlanDiff) -> None:
        self.open_fold(f"Differences from {d.label_a}", open_=True)
        if d.is_empty():
            self.w("<p>Same routes, merges, rates and link loads.</p>")
            self.close_fold()
            return
        def summary() -> None:
            self.kv([
                ("objective", f"{num(d.objective_a)} → {num(d.objective_b)} "
                              f"({delta(d.objective_a, d.objective_b)})"),
                ("tasks added / removed", f"{len(d.tasks_added)} / {len(d.tasks_removed)}"),
                ("rate changes", str(len(d.rate_changes))),
                ("routes moved", str(len(d.routes_moved))),
                ("merges changed", str(len(d.merges_changed))),
                ("directed links with another load", str(len(d.link_deltas))),
            ])
            if d.rate_changes:
                self.table(["task", f"rate {d.label_a}", f"rate {d.label_b}", "change"],
                           [[c.task, num(c.rate_a), num(c.rate_b), signed(c.delta)]
                            for c in d.rate_changes], numeric={1, 2, 3})

        def loads() -> None:
            if not d.link_deltas:
                return
            shown = d.link_deltas[:TOP_LINK_DELTAS]
            self.w(f"<h3>Largest load changes ({len(shown)} of {len(d.link_deltas)} links)</h3>")
            self.table(["link", f"load {d.label_a}", f"load {d.label_b}", "change", "capacity"],
                       [[x.link, num(x.load_a), num(x.load_b), signed(x.delta), num(x.capacity)]
                        for x in shown], numeric={1, 2, 3, 4})

        self.columns(summary, loads)
        changes = d.routes_moved + d.merges_changed
        if changes:
            # the moved routes of a datacenter are hundreds: a sample here, all in `inaplanner diff`
            limit = TOP_ROUTE_CHANGES if self.r.routes != "appendix" or self.qt else 200
            self.w(f"<h3>Routes moved or merged elsewhere ({min(limit, len(changes))} of "
                   f"{len(changes)}; all with <code>inaplanner diff</code>)</h3>")
            self.table(["task", "worker", "change", f"route in {d.label_a}", f"route in {d.label_b}"],
                       [[escape(c.task), escape(c.worker), escape(c.kind),
                         self.path_html(list(c.path_a), list(c.merges_a)) or "-",
                         self.path_html(list(c.path_b), list(c.merges_b)) or "-"]
                        for c in changes[:limit]], raw=True)
        self.close_fold()


TOP_SWITCHES = 10
TOP_LINK_DELTAS = 5
TOP_ROUTE_CHANGES = 5


def _param(value: object) -> str:
    """A planner parameter as a reader wants it: numbers through the one formatter."""
    if isinstance(value, bool) or value is None:
        return str(value).lower() if isinstance(value, bool) else "-"
    if isinstance(value, int | float):
        return num(value)
    if isinstance(value, list | tuple):
        return ", ".join(_param(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True)
    return str(value)


def render_html(report: Report, target: str = "browser") -> Rendered:
    """The report's HTML. ``target`` is ``"browser"`` (self-contained file) or ``"qt"`` (the
    subset QTextDocument lays out, with image references in :attr:`Rendered.images`)."""
    if target not in ("browser", "qt"):
        raise ValueError(f"unknown HTML target {target!r}")
    return _Writer(report, target).render()


def report_html(report: Report) -> str:
    """The self-contained HTML document."""
    return render_html(report).html
