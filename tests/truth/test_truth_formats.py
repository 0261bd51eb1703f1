"""``max_fan_in`` through every scenario format, the CLI generator and the deployer's second line."""

from __future__ import annotations

import json

import networkx as nx
import pytest

from inaplanner.cli import main
from inaplanner.dataplane.entries import build_entities
from inaplanner.errors import InaplannerError
from inaplanner.evaluate import evaluate
from inaplanner.io.formats import export_scenario, import_scenario
from inaplanner.io.graphs import to_canonical_graph
from inaplanner.io.native import (
    load_scenario,
    save_plan,
    save_scenario,
    scenario_sha256,
    scenario_to_dict,
)
from inaplanner.model import Job, Plan, PlannerInfo, Route, TaskPlan
from inaplanner.topologies import fat_tree, leaf_spine, mark_programmable, place_jobs


def mixed():
    """A fat-tree k=4 whose switches carry every kind of max_fan_in: set, null, and on a
    non-programmable switch."""
    sc = fat_tree(4)
    mark_programmable(sc, None, pipelines=2, max_fan_in=5)
    place_jobs(sc, 1, 1, 6, seed=3)
    sc.node("C1").max_fan_in = 1
    sc.node("A1_1").max_fan_in = 65536
    sc.node("E1_1").max_fan_in = None
    sc.validate()
    return sc


@pytest.mark.parametrize("ext", ["json", "graphml", "gml"])
def test_max_fan_in_round_trips_through_each_file_format(tmp_path, ext):
    sc = mixed()
    path = tmp_path / f"sc.{ext}"
    export_scenario(sc, path)
    back, notes = import_scenario(path)
    assert notes == []
    assert {s.id: s.max_fan_in for s in back.switches()} == {s.id: s.max_fan_in for s in sc.switches()}
    assert back.node("E1_2").max_fan_in == 5 and back.node("E1_1").max_fan_in is None
    assert scenario_to_dict(back) == scenario_to_dict(sc)
    assert scenario_sha256(back) == scenario_sha256(sc)


def test_max_fan_in_round_trips_through_node_link_json(tmp_path):
    sc = mixed()
    path = tmp_path / "nl.json"
    path.write_text(json.dumps(nx.node_link_data(to_canonical_graph(sc), edges="links")))
    back, _ = import_scenario(path)
    assert {s.id: s.max_fan_in for s in back.switches()} == {s.id: s.max_fan_in for s in sc.switches()}
    a, b = scenario_to_dict(back), scenario_to_dict(sc)
    a.pop("name"), b.pop("name")
    assert a == b


def test_a_bad_max_fan_in_in_a_graph_file_is_refused_with_its_node(tmp_path):
    g = to_canonical_graph(mixed())
    g.nodes["C2"]["max_fan_in"] = -1
    path = tmp_path / "bad.graphml"
    nx.write_graphml(g, path)
    with pytest.raises(InaplannerError, match=r"max_fan_in"):
        import_scenario(path)


def test_generate_takes_max_fan_in(tmp_path, capsys):
    out = tmp_path / "ls.json"
    assert main(["generate", "leaf-spine", "--leaves", "2", "--spines", "2", "--hosts-per-leaf", "48",
                 "--workers-per-job", "90", "--max-fan-in", "16", "-o", str(out)]) == 0
    sc = load_scenario(out)
    assert {s.id: s.max_fan_in for s in sc.switches() if s.programmable} == {"L1": 16, "L2": 16}
    assert all(s.max_fan_in is None for s in sc.switches() if not s.programmable)
    out2 = tmp_path / "ft.json"
    assert main(["generate", "fat-tree", "--k", "4", "--programmable", "0.5", "--max-fan-in", "3",
                 "-o", str(out2)]) == 0
    sc = load_scenario(out2)
    assert all(s.max_fan_in == 3 for s in sc.switches() if s.programmable)
    assert main(["generate", "testbed", "grid", "--max-fan-in", "4", "-o", str(tmp_path / "g.json")]) == 0
    assert all(s.max_fan_in == 4 for s in load_scenario(tmp_path / "g.json").switches())
    code = main(["generate", "fat-tree", "--k", "4", "--max-fan-in", "0", "-o", str(tmp_path / "x.json")])
    assert code != 0 and not (tmp_path / "x.json").exists()
    assert "max_fan_in" in capsys.readouterr().err


def fan_in_case(workers: int, max_fan_in: int | None):
    sc = leaf_spine(2, 1, workers, max_fan_in=max_fan_in)
    for leaf in ("L1", "L2"):
        sc.node(leaf).programmable = True
    ps = f"H{workers + 1}"
    sc.jobs = [Job("j", [f"H{i}" for i in range(1, workers + 1)], [ps])]
    sc.touch()
    sc.validate()
    routes = [Route(w, [w, "L1", "S1", "L2", ps], ["L1"]) for w in sc.jobs[0].workers]
    plan = Plan(scenario_sha256(sc), PlannerInfo("hand", status="heuristic"), [TaskPlan("j", ps, 1.0, routes)])
    return sc, plan


@pytest.mark.parametrize(("workers", "limit"), [(5, 4), (33, None), (3, 2)])
def test_the_deployer_says_what_the_evaluator_says(workers, limit):
    sc, plan = fan_in_case(workers, limit)
    ev = evaluate(sc, plan)
    [v] = ev.violations
    with pytest.raises(InaplannerError) as err:
        build_entities(sc, plan)
    assert str(err.value) == str(v)


@pytest.mark.parametrize(("workers", "limit"), [(4, 4), (32, None), (2, 2)])
def test_the_deployer_builds_what_the_evaluator_accepts(workers, limit):
    sc, plan = fan_in_case(workers, limit)
    assert evaluate(sc, plan).feasible
    spec = build_entities(sc, plan)
    assert spec.warnings == []


def test_a_max_fan_in_wider_than_the_program_is_refused_by_the_deployer():
    sc, plan = fan_in_case(33, 64)
    assert evaluate(sc, plan).feasible  # the scenario says the switch counts 64
    with pytest.raises(InaplannerError, match="aggregates 33 flows on pipeline 0; the data plane's "
                                              r"bitmap holds 32 \(the installed program's width; "
                                              "the switch's max_fan_in is 64\\)"):
        build_entities(sc, plan)


def test_evaluate_prints_the_fan_in_violation(tmp_path, capsys):
    sc, plan = fan_in_case(5, 4)
    save_scenario(sc, tmp_path / "sc.json")
    save_plan(plan, tmp_path / "plan.json")
    assert main(["evaluate", str(tmp_path / "sc.json"), str(tmp_path / "plan.json")]) == 1
    out = capsys.readouterr().out
    assert "INFEASIBLE" in out
    assert "fan-in used / max_fan_in" in out and "L1" in out.split("fan-in used / max_fan_in")[1]
    assert [line.split() for line in out.splitlines() if line.strip().startswith("L1 ")] == \
        [["L1", "5", "/", "4", "1", "aggregate(s)"]]
    assert "violation: task j/H6: switch L1 aggregates 5 flows on pipeline 0; the data plane's " \
           "bitmap holds 4 (max_fan_in)" in out
    assert main(["evaluate", "--json", str(tmp_path / "sc.json"), str(tmp_path / "plan.json")]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["violations"][0] | {"message": ""} == {
        "kind": "fan_in", "name": "L1", "load": 5.0, "limit": 4.0, "task": "j/H6", "pipeline": 0,
        "message": ""}
    assert [(r["switch"], r["fan_in_used"], r["max_fan_in"]) for r in doc["switches"]] == \
        [("L1", 5, 4), ("L2", 0, 4)]
