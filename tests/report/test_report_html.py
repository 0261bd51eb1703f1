"""The HTML report: well-formed, self-contained, and holding the evaluator's figures."""

from __future__ import annotations

import re
from html import unescape
from html.parser import HTMLParser

from inaplanner.evaluate import evaluate
from inaplanner.report import build_report, report_html
from inaplanner.report.fmt import num, pct

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}


class StrictParser(HTMLParser):
    """Records every tag and fails on any tag closed out of order or left open."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.problems: list[str] = []
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.styles: list[str] = []
        self._in_style = False
        self.rows: list[list[str]] = []  # every table row as its cells' text
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self.text.append(" ")
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th") and self.rows:
            self._cell = []
        if tag == "style":
            self._in_style = True
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append(re.sub(r"\s+", " ", unescape("".join(self._cell))).strip())
            self._cell = None
        if tag == "style":
            self._in_style = False
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> closes {self.stack[-1] if self.stack else 'nothing'}")
            return
        self.stack.pop()

    def handle_data(self, data):
        (self.styles if self._in_style else self.text).append(data)
        if self._cell is not None:
            self._cell.append(data)


def parse(html: str) -> StrictParser:
    p = StrictParser()
    p.feed(html)
    p.close()
    return p


def assert_self_contained(p: StrictParser) -> None:
    for tag, attrs in p.tags:
        for key in ("src", "href", "xlink:href", "data", "action", "poster"):
            value = (attrs.get(key) or "").strip().lower()
            assert not re.match(r"^(https?:)?//", value), f"<{tag} {key}={value}> is external"
        assert not (tag == "link" and "stylesheet" in (attrs.get("rel") or "")), "external CSS"
        assert not (tag == "script" and attrs.get("src")), "external script"
    css = "".join(p.styles)
    assert "@import" not in css and "url(" not in css


def text_of(p: StrictParser) -> str:
    return re.sub(r"\s+", " ", unescape("".join(p.text)))


def test_single_plan_report_is_wellformed_self_contained_and_has_the_figures(grid, gplan, grid_rate):
    html = report_html(build_report(grid, [("grid", gplan)]))
    p = parse(html)
    assert not p.problems, p.problems[:5]
    assert not p.stack, f"left open: {p.stack}"
    assert html.startswith("<!DOCTYPE html>")
    assert_self_contained(p)
    assert any(tag == "svg" for tag, _ in p.tags), "the topology is drawn inline"
    assert sum(1 for tag, _ in p.tags if tag == "details") >= 1, "routes are collapsible"

    ev = evaluate(grid, gplan)
    text = text_of(p)
    assert f"{num(ev.objective)} Gbps (SJST)" in text
    assert num(ev.objective) == num(grid_rate)
    rows = p.rows
    for job, thr in ev.job_throughput.items():
        assert [job, "1", num(thr), num(thr)] in rows
    assert ["job0/PS", num(grid_rate)] in rows
    top = ev.most_loaded_links(10)
    assert len(top) == 10
    for row in top:
        assert [row["link"], num(row["load"]), num(row["capacity"]), pct(row["utilisation"]),
                str(row["flows"])] in rows
    for row in ev.switch_rows():
        cap = row["capacity"]
        assert [row["switch"], num(row["load"]), num(cap), pct(row["load"] / cap),
                str(row["aggregates"]), f"{row['fan_in_used']}/{row['max_fan_in']}", "0 of 1"] in rows
    for r in gplan.tasks[0].routes:
        assert [r.worker, " → ".join(r.path), ", ".join(r.merge_at), str(len(r.path) - 1)] in rows
    # the drawing's tooltips carry each directed link's load / capacity
    svg_titles = [unescape(t) for t in re.findall(r"<title>([^<]*)</title>", html)]
    load = ev.link_load
    for li, lk in enumerate(grid.links):
        want = f"{lk.a}->{lk.b}: {num(float(load[li, 0]), 4)}/{num(lk.capacity, 4)} Gbps"
        assert any(t.startswith(want) for t in svg_titles), want


def test_several_plans_add_comparison_chart_and_diff(grid, gplan, splan, two_job_scenario):
    report = build_report(grid, [("grid", gplan), ("shortest", splan)])
    html = report_html(report)
    p = parse(html)
    assert not p.problems and not p.stack
    assert_self_contained(p)
    text = text_of(p)
    assert "Comparison" in text and "Objective per plan" in text
    ev_s = evaluate(grid, splan)
    assert ["shortest", "heuristic", num(ev_s.objective, 4), "-", "-", "0", "yes",
            pct(float(ev_s.link_utilisation.max())), num(ev_s.objective, 4)] in p.rows
    assert "Differences from grid" in text
    assert ["routes moved", "1"] in p.rows and ["merges changed", "7"] in p.rows
    # two inline drawings (one per plan) plus the objective chart
    assert sum(1 for tag, _ in p.tags if tag == "svg") == 3

    sc2, plan2 = two_job_scenario
    html2 = report_html(build_report(sc2, [plan2, plan2]))
    text2 = text_of(parse(html2))
    assert "Job throughput per plan" in text2  # several jobs: per-job chart too
    assert "Same routes, merges, rates and link loads." in text2
    ev2 = evaluate(sc2, plan2)
    assert ev2.objective_kind == "MJMT"
    assert f"{num(ev2.objective)} Gbps (MJMT)" in text2


def test_text_is_escaped(grid, gplan):
    grid.name = "<script>alert(1)</script> & co"
    html = report_html(build_report(grid, [gplan]))
    assert "<script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; co" in html
    p = parse(html)
    assert not p.problems and not p.stack
