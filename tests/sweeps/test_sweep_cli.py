"""``inaplanner sweep`` from the command line, and ``inaplanner report`` of its result file."""

from __future__ import annotations

import json
import subprocess
import sys

from inaplanner.cli import main
from inaplanner.io.native import save_scenario

from .conftest import small_leaf_spine


def test_sweep_prints_the_summary_and_report_reads_the_file(tmp_path, capsys):
    sc = small_leaf_spine()
    path = tmp_path / "ls.json"
    save_scenario(sc, path)
    out = tmp_path / "r.sqlite"
    proc = subprocess.run([sys.executable, "-m", "inaplanner", "sweep", str(path), "--cases",
                           "single-link,single-switch", "--planners", "random,aggtree", "--workers", "2",
                           "--time-limit", "5", "-o", str(out)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("planner") and "worst" in lines[0] and "median" in lines[0]
    assert any(line.startswith("random ") for line in lines) and any(line.startswith("aggtree ") for line in lines)
    assert "most critical elements" in proc.stdout
    # the progress went to stderr, not into the summary
    assert "runs" in proc.stderr and "runs, ETA" not in proc.stdout
    # report: html with the distribution chart and the critical table; json with the summary
    assert main(["report", str(out), "-o", str(tmp_path / "s.html")]) == 0
    html = (tmp_path / "s.html").read_text()
    assert "<svg" in html and "Most critical elements" in html and "aggtree" in html
    assert main(["report", str(out), "-o", str(tmp_path / "s.json")]) == 0
    doc = json.loads((tmp_path / "s.json").read_text())
    assert set(doc["summary"]["planners"]) == {"random", "aggtree"}
    assert len(doc["rows"]) == 2 * (1 + len(sc.links) + len(sc.switches()))
    # a second run resumes: nothing left to do
    again = subprocess.run([sys.executable, "-m", "inaplanner", "sweep", str(path), "--cases",
                            "single-link,single-switch", "--planners", "random,aggtree", "--workers", "2",
                            "--time-limit", "5", "-o", str(out)], capture_output=True, text=True, timeout=300)
    assert again.returncode == 0 and again.stdout == proc.stdout


def test_bad_arguments_are_one_line_errors(tmp_path, capsys):
    sc = small_leaf_spine()
    path = tmp_path / "ls.json"
    save_scenario(sc, path)
    assert main(["sweep", str(path), "--cases", "links", "-o", str(tmp_path / "r.sqlite")]) == 2
    assert "unknown case generator 'links'" in capsys.readouterr().err
    assert main(["sweep", str(path), "--planners", "nosuch", "-o", str(tmp_path / "r.sqlite")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nosuch" in err
    assert main(["sweep", str(path), "--param", "random=1", "-o", str(tmp_path / "r.sqlite")]) == 2
    assert "PLANNER.NAME=VALUE" in capsys.readouterr().err
