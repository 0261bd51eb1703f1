"""`inaplanner planners`, `plan` and `compare`."""

from __future__ import annotations

import json

from inaplanner.cli import main
from inaplanner.evaluate import evaluate
from inaplanner.io.native import load_plan, save_scenario, scenario_sha256
from inaplanner.topologies import aro_fig1


def _fig1(tmp_path):
    path = tmp_path / "fig1.json"
    save_scenario(aro_fig1(), path)
    return path


def test_planners_lists_parameters(capsys):
    assert main(["planners"]) == 0
    out = capsys.readouterr().out
    for name in ("aro:", "aro-acc:", "aro-raw:", "ecmp:", "random:", "aggtree:"):
        assert name in out
    assert "--param qsr_levels=<int>  default 100" in out
    assert "--param time_limit=<float>" in out


def test_plan_writes_the_plan_and_prints_the_summary(tmp_path, capsys):
    scen = _fig1(tmp_path)
    out = tmp_path / "plan.json"
    assert main(["plan", str(scen), "--planner", "aro", "--param", "gap=0.001", "--seed", "3",
                 "--time-limit", "20", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "objective (SJST) 1" in text and "status optimal" in text and "bound 1" in text
    plan = load_plan(out)
    sc = aro_fig1()
    assert plan.scenario_sha256 == scenario_sha256(sc)
    assert plan.planner.params["gap"] == 0.001 and plan.planner.params["time_limit"] == 20.0
    assert plan.planner.seed == 3
    assert evaluate(sc, plan).objective == 1.0


def test_compare_table_and_json(tmp_path, capsys):
    scen = _fig1(tmp_path)
    assert main(["compare", str(scen), "--planners", "aro,ecmp,random"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["planner", "objective", "T(job0)", "status", "seconds", "gap"]
    row = {ln.split()[0]: ln.split() for ln in lines[1:4]}
    assert row["aro"][1] == "1.0000" and row["aro"][3] == "optimal" and row["aro"][-2:] == ["0.00", "%"]
    assert row["ecmp"][1] == "0.2000" and row["ecmp"][-2:] == ["80.00", "%"]
    assert lines[4] == "best bound: 1"
    assert main(["compare", str(scen), "--planners", "aro,ecmp", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["best_bound"] == 1.0
    by = {r["planner"]: r for r in doc["rows"]}
    assert by["ecmp"]["gap"] == 0.8 and by["aro"]["jobs"] == {"job0": 1.0}


def test_compare_keeps_its_plans_for_the_report(tmp_path, capsys):
    """compare --output-dir writes each planner's plan as it finishes; they are the plans the
    table scored (evaluated again, the same objectives) and report takes them. A directory that
    cannot be made is refused in one line before any planner runs."""
    scen = _fig1(tmp_path)
    out = tmp_path / "plans"
    assert main(["compare", str(scen), "--planners", "aro,ecmp", "--json", "--output-dir", str(out)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert sorted(p.name for p in out.iterdir()) == ["aro.json", "ecmp.json"]
    for row in doc["rows"]:
        assert row["plan_file"] == str(out / f"{row['planner']}.json")
        assert evaluate(aro_fig1(), load_plan(row["plan_file"])).objective == row["objective"]
    assert main(["compare", str(scen), "--planners", "ecmp", "--output-dir", str(out)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"wrote 1 plan(s) to {out}: ecmp.json"
    assert main(["report", str(out / "aro.json"), str(out / "ecmp.json"), "-s", str(scen),
                 "-o", str(tmp_path / "r.html")]) == 0
    blocker = tmp_path / "afile"
    blocker.write_text("x")
    assert main(["compare", str(scen), "--planners", "aro", "--output-dir", str(blocker / "sub")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "sub: cannot make the output directory" in err


def test_user_errors_are_one_line(tmp_path, capsys):
    scen = _fig1(tmp_path)
    assert main(["plan", str(scen), "--planner", "nope", "-o", str(tmp_path / "p.json")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown planner 'nope'" in err
    assert main(["plan", str(scen), "--planner", "aro", "--param", "alpha=7", "-o", str(tmp_path / "p.json")]) == 2
    assert "above the maximum" in capsys.readouterr().err
    assert main(["plan", str(scen), "--planner", "aro", "--param", "oops", "-o", str(tmp_path / "p.json")]) == 2
    assert "expected NAME=VALUE" in capsys.readouterr().err
    assert main(["compare", str(scen), "--planners", "aro,nope"]) == 2
    assert not (tmp_path / "p.json").exists()


def test_compare_progress_shows_each_planners_own_incumbent():
    from inaplanner.cli.plan import compare_rows
    from inaplanner.progress import Progress

    p = Progress()
    seen = []
    p.subscribe(seen.append)
    compare_rows(aro_fig1(), ["aro", "ecmp"], {"time_limit": 20.0}, p)
    start = next(i for i, ev in enumerate(seen) if ev.phase == "ecmp")
    assert any(ev.incumbent == 1.0 for ev in seen[:start])  # aro's reached the display
    assert (seen[start].incumbent, seen[start].bound) == (None, None)  # and is not ecmp's
