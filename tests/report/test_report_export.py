"""Every export format and the ``report`` / ``diff`` commands."""

from __future__ import annotations

import csv
import json
import struct
import xml.etree.ElementTree as ET

import pytest

from inaplanner.cli import main
from inaplanner.evaluate import evaluate
from inaplanner.io.native import load_plan, plan_to_dict, save_plan, save_scenario
from inaplanner.report import build_report, export_report
from inaplanner.report.export import format_from_path

SVG = "{http://www.w3.org/2000/svg}"


def test_csv_tables_hold_the_evaluator_loads(grid, gplan, tmp_path):
    files = export_report(build_report(grid, [("grid", gplan)]), "csv", tmp_path / "tables")
    assert sorted(f.name for f in files) == ["links.csv", "routes.csv", "summary.csv", "switches.csv"]
    ev = evaluate(grid, gplan)
    with open(tmp_path / "tables" / "links.csv", newline="") as fh:
        links = list(csv.DictReader(fh))
    assert len(links) == 2 * len(grid.links)
    for row in links:
        assert float(row["load"]) == pytest.approx(ev.link_load[int(row["index"]), int(row["direction"])])
    with open(tmp_path / "tables" / "routes.csv", newline="") as fh:
        routes = list(csv.DictReader(fh))
    assert [r["worker"] for r in routes] == [f"W{i}" for i in range(1, 9)]
    assert routes[3]["path"] == "W4 S1 S2 S3 PS" and routes[3]["merge_at"] == "S2 S3"
    with open(tmp_path / "tables" / "summary.csv", newline="") as fh:
        summary = list(csv.DictReader(fh))
    assert float(summary[0]["objective"]) == ev.objective
    with open(tmp_path / "tables" / "switches.csv", newline="") as fh:
        switches = list(csv.DictReader(fh))
    assert {s["switch"]: float(s["load"]) for s in switches} == pytest.approx(
        {r["switch"]: r["load"] for r in ev.switch_rows()})


def test_json_svg_png(grid, gplan, splan, tmp_path):
    report = build_report(grid, [("grid", gplan)])
    (path,) = export_report(report, "json", tmp_path / "p.json")
    assert plan_to_dict(load_plan(path)) == plan_to_dict(gplan)

    (svg_path,) = export_report(report, "svg", tmp_path / "t.svg")
    root = ET.parse(svg_path).getroot()
    assert root.tag == SVG + "svg"
    titles = [t.text for t in root.iter(SVG + "title")]
    assert sum(1 for t in titles if "->" in t and "Gbps (" in t) == 2 * len(grid.links)

    (png_path,) = export_report(report, "png", tmp_path / "t.png")
    data = png_path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert width >= 1000 and height > 100

    two = build_report(grid, [("grid", gplan), ("shortest", splan)])
    files = export_report(two, "svg", tmp_path / "svgs")
    assert sorted(f.name for f in files) == ["grid.svg", "shortest.svg"]


def test_format_from_path():
    assert format_from_path("a/report.PDF") == "pdf"
    assert format_from_path("r.htm") == "html"
    assert format_from_path("tables") is None


def test_report_and_diff_commands(grid, gplan, splan, tmp_path, capsys):
    save_scenario(grid, tmp_path / "grid.json")
    save_plan(gplan, tmp_path / "a.json")
    save_plan(splan, tmp_path / "b.json")
    # the scenario is found beside the plans by its sha256
    assert main(["report", str(tmp_path / "a.json"), str(tmp_path / "b.json"),
                 "-o", str(tmp_path / "out.html")]) == 0
    html = (tmp_path / "out.html").read_text()
    assert "Comparison" in html and "GRID Fig. 1" in html
    assert main(["report", str(tmp_path / "a.json"), "--scenario", str(tmp_path / "grid.json"),
                 "--format", "csv", "-o", str(tmp_path / "csv")]) == 0
    assert (tmp_path / "csv" / "links.csv").is_file()
    capsys.readouterr()
    assert main(["diff", str(tmp_path / "a.json"), str(tmp_path / "a.json")]) == 0
    assert "no difference" in capsys.readouterr().out
    assert main(["diff", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["empty"] is False and len(doc["merges_changed"]) == 7
    # a long list is cut, with its count per task; --json keeps every change
    assert main(["diff", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--max-routes", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    head = next(i for i, ln in enumerate(lines) if ln.startswith("merges changed ("))
    assert lines[head] == "merges changed (7 in 1 task: job0/PS 7; the first 2):"
    assert lines[head + 3] == "  ... 5 more (--max-routes N, or --json for all)"
    assert main(["diff", str(tmp_path / "a.json"), str(tmp_path / "b.json")]) == 0
    out = capsys.readouterr().out
    assert "merges changed (7):" in out and "more (--max-routes" not in out  # 30 by default


def test_report_errors_are_one_line(grid, gplan, tmp_path, capsys):
    save_plan(gplan, tmp_path / "lonely.json")
    assert main(["report", str(tmp_path / "lonely.json"), "-o", str(tmp_path / "x.html")]) == 2
    err = capsys.readouterr().err
    assert "give --scenario" in err and err.count("\n") == 1
    save_scenario(grid, tmp_path / "grid.json")
    assert main(["report", str(tmp_path / "lonely.json"), "-o", str(tmp_path / "x.out")]) == 2
    assert "give --format" in capsys.readouterr().err
    (tmp_path / "afile").write_text("x")
    assert main(["report", str(tmp_path / "lonely.json"), "-f", "csv",
                 "-o", str(tmp_path / "afile")]) == 2
    assert "is a directory of tables" in capsys.readouterr().err


def test_report_package_imports_without_qt():
    import subprocess
    import sys

    code = ("import sys, inaplanner.report, inaplanner.cli.report, inaplanner.report.pdf; "
            "print(sorted(m for m in sys.modules if m.startswith('PySide6')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
