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


def test_evaluate_keeps_its_lists_short_on_a_datacenter_plan(tmp_path, capsys):
    """A plan aggregating at 30 leaves and breaking 30 link limits: evaluate prints the 20 fullest
    switches and 20 violations, then says how many more there are; --top 40 shows them all, and
    --json always lists every one (at k=64 the text was 441 lines of switches)."""
    from inaplanner.model import Job
    from inaplanner.topologies import leaf_spine

    sc = leaf_spine(30, 1, 2, host_capacity=1.0, fabric_capacity=100.0)
    for s in sc.switches():
        s.programmable = True
    workers = [f"H{2 * i + 2}" for i in range(30)]
    sc.jobs.append(Job("job0", workers, ["H1"]))
    scen = tmp_path / "ls30.json"
    from inaplanner.io.native import save_scenario

    save_scenario(sc, scen)
    routes = [Route(w, [w, f"L{i + 1}", "S1", "L1", "H1"], [f"L{i + 1}"] if i else []) for i, w in enumerate(workers)]
    plan = Plan(scenario_sha256(sc), PlannerInfo("hand"), [TaskPlan("job0", "H1", 2.0, routes)])
    save_plan(plan, tmp_path / "p.json")
    capsys.readouterr()
    assert main(["evaluate", str(scen), str(tmp_path / "p.json")]) == 1
    text = capsys.readouterr().out
    lines = text.splitlines()
    assert "aggregating switches (fan-in used / max_fan_in), the 20 fullest of 29:" in lines
    assert sum(1 for ln in lines if ln.endswith("aggregate(s)")) == 20
    assert "  ... 9 more aggregating switch(es) (--top N shows more, --json lists them all)" in lines
    violations = [ln for ln in lines if ln.startswith("violation: ")]
    assert len(violations) == 20 and any(ln.startswith("  ... ") and "more violation(s)" in ln for ln in lines)
    assert main(["evaluate", str(scen), str(tmp_path / "p.json"), "--top", "40"]) == 1
    text = capsys.readouterr().out
    assert sum(1 for ln in text.splitlines() if ln.endswith("aggregate(s)")) == 29 and "... " not in text
    assert main(["evaluate", str(scen), str(tmp_path / "p.json"), "--json"]) == 1
    summary = json.loads(capsys.readouterr().out)
    assert sum(1 for r in summary["switches"] if r["aggregates"]) == 29


def test_a_scenario_and_a_plan_given_the_wrong_way_round_are_named_as_such(tmp_path, capsys):
    """evaluate takes SCENARIO PLAN, report/entries/diff PLAN --scenario S: a user mixes them up.
    The one-line error says which file is which; a png of two plans into one file is refused from
    the arguments alone, before a (k=64: 13 s) load, here before the missing scenario is read."""
    scen = tmp_path / "aro.json"
    assert main(["generate", "testbed", "aro-fig1", "-o", str(scen)]) == 0
    sc = load_scenario(scen)
    plan = Plan(scenario_sha256(sc), PlannerInfo("hand"), [TaskPlan("job0", "PS", 1.0, [
        Route("W0", ["W0", "L1", "S1", "L0", "PS"], [])])])
    save_plan(plan, tmp_path / "p.json")
    capsys.readouterr()
    assert main(["evaluate", str(tmp_path / "p.json"), str(scen)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "p.json: format: this is a plan, not a scenario" in err
    for argv in (["report", str(scen), str(tmp_path / "p.json"), "-o", str(tmp_path / "r.html")],
                 ["entries", str(scen)], ["diff", str(scen), str(tmp_path / "p.json")]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "aro.json: format: this is a scenario, not a plan" in err, argv
    assert main(["report", str(tmp_path / "p.json"), str(tmp_path / "p.json"), "-s", str(tmp_path / "none.json"),
                 "-o", str(tmp_path / "two.png")]) == 2
    err = capsys.readouterr().err
    assert "two.png: 2 plans make 2 png files" in err and not (tmp_path / "two.png").exists()
