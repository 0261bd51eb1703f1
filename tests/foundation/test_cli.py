"""The command line: generate, validate, convert, evaluate; one-line errors with exit code 2."""

from __future__ import annotations

import json
import subprocess
import sys

from inaplanner.cli import main
from inaplanner.io.native import load_scenario, save_plan, scenario_sha256
from inaplanner.model import Plan, PlannerInfo, Route, TaskPlan


def test_generate_validate_convert(tmp_path, capsys):
    out = tmp_path / "ls.json"
    assert main(["generate", "leaf-spine", "--leaves", "3", "--spines", "2", "--hosts-per-leaf", "3",
                 "--programmable", "0.4", "--pipelines", "2", "--workers-per-job", "4", "-o", str(out)]) == 0
    sc = load_scenario(out)
    assert len(sc.hosts()) == 9 and len(sc.jobs) == 1 and len(sc.jobs[0].workers) == 4
    assert main(["validate", str(out)]) == 0
    assert "valid" in capsys.readouterr().out
    gml = tmp_path / "ls.graphml"
    assert main(["convert", str(out), str(gml)]) == 0
    assert main(["convert", str(gml), str(tmp_path / "back.json")]) == 0
    assert scenario_sha256(load_scenario(tmp_path / "back.json")) == scenario_sha256(sc)
    assert main(["generate", "fat-tree", "--k", "4", "-o", str(tmp_path / "ft.gml")]) == 0
    assert main(["generate", "testbed", "grid", "-o", str(tmp_path / "g.json")]) == 0


def test_errors_are_one_line_exit_2(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "inaplanner-scenario", "version": 1, "nodes": [], "links": [{"a": "x"}]}')
    assert main(["validate", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bad.json" in err and "Traceback" not in err


def test_evaluate_exit_codes(tmp_path, capsys):
    scen = tmp_path / "aro.json"
    assert main(["generate", "testbed", "aro-fig1", "-o", str(scen)]) == 0
    sc = load_scenario(scen)
    pairs = [("W0", "L1"), ("W1", "L1"), ("W2", "L2"), ("W3", "L2"), ("W4", "L3")]
    good = Plan(scenario_sha256(sc), PlannerInfo("hand"), [TaskPlan("job0", "PS", 1.0, [
        Route(w, [w, leaf, "S1", "L0", "PS"], ([leaf] if leaf != "L3" else []) + ["S1"]) for w, leaf in pairs])])
    save_plan(good, tmp_path / "good.json")
    capsys.readouterr()
    assert main(["evaluate", str(scen), str(tmp_path / "good.json"), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["feasible"] and summary["objective"] == 1.0 and summary["objective_kind"] == "SJST"
    good.tasks[0].rate = 2.0
    save_plan(good, tmp_path / "over.json")
    assert main(["evaluate", str(scen), str(tmp_path / "over.json")]) == 1
    text = capsys.readouterr().out
    assert "violation: link L0->PS: load 2 > limit 1" in text
    assert "largest max-min fair rates on these routes: job0/PS=1" in text


def test_console_script_runs():
    proc = subprocess.run([sys.executable, "-m", "inaplanner", "--version"], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.startswith("inaplanner ")
