"""CONTRACTS.md rules 5 (max_fan_in) and 6 (up-down on Clos networks) in the evaluator, on plans
made by hand, and the switch field ``max_fan_in`` in the model."""

from __future__ import annotations

import pytest

from inaplanner.errors import ValidationError
from inaplanner.evaluate import evaluate, fan_in_message, is_up_down
from inaplanner.io.native import scenario_from_dict, scenario_sha256, scenario_to_dict
from inaplanner.model import DEFAULT_MAX_FAN_IN, Job, Plan, PlannerInfo, Route, Scenario, TaskPlan
from inaplanner.topologies import grid_fig1, leaf_spine, set_max_fan_in


def plan_of(sc: Scenario, tasks: list[TaskPlan]) -> Plan:
    return Plan(scenario_sha256(sc), PlannerInfo("by-hand", status="heuristic"), tasks)


# ---- rule 6: up-down ------------------------------------------------------------------------


def valley_case() -> Scenario:
    """Leaf-spine 3x2x1: H1 under L1 (the PS), H2 under L2 (the worker)."""
    sc = leaf_spine(3, 2, 1)
    sc.jobs = [Job("job0", ["H2"], ["H1"])]
    sc.touch()
    sc.validate()
    return sc


def test_a_valley_path_is_a_violation_naming_task_worker_and_path():
    sc = valley_case()
    valley = ["H2", "L2", "S1", "L3", "S2", "L1", "H1"]  # down to L3, up again: a valley
    ev = evaluate(sc, plan_of(sc, [TaskPlan("job0", "H1", 1.0, [Route("H2", valley, [])])]))
    assert ev.valid and not ev.feasible
    [v] = ev.violations
    assert (v.kind, v.name, v.task, v.path) == ("valley", "H2", "job0/H1", tuple(valley))
    assert str(v) == "task job0/H1 worker H2: path H2-L2-S1-L3-S2-L1-H1 is not up-down " \
                     "(tiers must rise, then fall)"
    assert v in ev.rule_violations and not ev.capacity_violations
    assert ev.summary()["violations"][0]["path"] == valley
    assert not ev.warnings


def test_an_up_down_path_passes_and_a_flat_hop_does_not():
    sc = valley_case()
    ok = ["H2", "L2", "S2", "L1", "H1"]
    ev = evaluate(sc, plan_of(sc, [TaskPlan("job0", "H1", 1.0, [Route("H2", ok, [])])]))
    assert ev.feasible and ev.violations == []
    # rule 6: the tiers rise then fall; leaf -> spine -> leaf -> spine -> leaf rises twice
    assert is_up_down(sc, ok)
    assert not is_up_down(sc, ["H2", "L2", "S1", "L3", "S2", "L1", "H1"])


def test_valleys_only_count_on_a_clos_network():
    sc = grid_fig1()  # no tiers: not a Clos network, any simple path is fine
    path = ["W1", "S1", "S2", "S3", "PS"]
    routes = [Route(w, path if w == "W1" else [w, *_grid_path(sc, w)], [])
              for w in sc.job("job0").workers]
    tasks = [TaskPlan("job0", "PS", 0.1, routes)]
    ev = evaluate(sc, plan_of(sc, tasks))
    assert ev.valid and not [v for v in ev.violations if v.kind == "valley"]
    # one untiered switch makes it not a Clos network either
    ls = valley_case()
    ls.node("S1").tier = None
    valley = ["H2", "L2", "S1", "L3", "S2", "L1", "H1"]
    ev = evaluate(ls, plan_of(ls, [TaskPlan("job0", "H1", 1.0, [Route("H2", valley, [])])]))
    assert ev.feasible


def _grid_path(sc: Scenario, worker: str) -> list[str]:
    import networkx as nx

    g = sc.graph()
    return nx.shortest_path(g, worker, "PS")[1:]


# ---- rule 5: fan-in -------------------------------------------------------------------------


def rack(workers: int, max_fan_in: int | None, pipelines: int = 1) -> Scenario:
    """Leaf-spine 2x1: ``workers`` hosts under L1, the PS alone under L2; leaves programmable."""
    sc = leaf_spine(2, 1, workers, max_fan_in=max_fan_in)
    ps = f"H{workers + 1}"
    for leaf in ("L1", "L2"):
        sc.node(leaf).programmable = True
        sc.node(leaf).pipelines = pipelines
    sc.jobs = [Job("job0", [f"H{i}" for i in range(1, workers + 1)], [ps])]
    sc.touch()
    sc.validate()
    return sc


def merge_at_l1(sc: Scenario, rate: float = 1.0) -> Plan:
    job = sc.jobs[0]
    ps = job.parameter_servers[0]
    routes = [Route(w, [w, "L1", "S1", "L2", ps], ["L1"]) for w in job.workers]
    return plan_of(sc, [TaskPlan("job0", ps, rate, routes)])


@pytest.mark.parametrize("limit", [1, 2, 3, 4, 7])
def test_max_fan_in_plus_one_flows_fail_and_exactly_max_fan_in_pass(limit):
    over = rack(limit + 1, limit)
    ev = evaluate(over, merge_at_l1(over))
    assert ev.valid and not ev.feasible
    [v] = ev.violations
    assert (v.kind, v.name, v.pipeline, v.task, v.load, v.limit) == \
        ("fan_in", "L1", 0, "job0/H" + str(limit + 2), float(limit + 1), float(limit))
    assert str(v) == fan_in_message("job0/H" + str(limit + 2), "L1", 0, limit + 1, limit)
    assert f"aggregates {limit + 1} flows on pipeline 0" in str(v)
    assert f"bitmap holds {limit}" in str(v)
    row = next(r for r in ev.switch_rows() if r["switch"] == "L1")
    assert (row["fan_in_used"], row["max_fan_in"]) == (limit + 1, limit)

    exact = rack(limit, limit)
    ev = evaluate(exact, merge_at_l1(exact))
    assert ev.feasible, ev.violations
    row = next(r for r in ev.switch_rows() if r["switch"] == "L1")
    assert (row["fan_in_used"], row["max_fan_in"]) == (limit, limit)


def test_the_rule_holds_whatever_the_rates():
    sc = rack(3, 2)
    for rate in (0.0, 1e-6, 1.0):
        ev = evaluate(sc, merge_at_l1(sc, rate))
        assert [v.kind for v in ev.violations] == ["fan_in"]


def test_fan_in_counts_per_pipeline_aggregate():
    """Four workers on two pipelines of L1 make two aggregates of two: max_fan_in 2 holds."""
    sc = rack(4, 2, pipelines=2)
    # default split of L1's ports (hosts 1..4, then the spine on 5): whatever it is, rule 5
    # binds exactly when one pipeline receives more than two of the workers
    pipes = [sc.ingress_pipeline(w, "L1") for w in sc.jobs[0].workers]
    ev = evaluate(sc, merge_at_l1(sc))
    widest = max(pipes.count(p) for p in set(pipes))
    assert ev.valid
    assert (widest > 2) == any(v.kind == "fan_in" for v in ev.violations)
    sc.node("L1").port_pipeline = {1: 0, 2: 0, 3: 1, 4: 1, 5: 1}
    sc.touch()
    ev = evaluate(sc, merge_at_l1(sc))
    assert ev.feasible, ev.violations
    assert sorted(a.inputs for a in ev.aggregates if a.switch == "L1") == [2, 2]


def test_aggregates_of_aggregates_count_distinct_incoming_flows():
    """At L2 the one aggregate from L1 and the raw flows of L2's own workers are merged: the
    count is distinct incoming flows, not workers behind them."""
    sc = leaf_spine(2, 1, 4, max_fan_in=3)
    for leaf in ("L1", "L2"):
        sc.node(leaf).programmable = True
    sc.jobs = [Job("job0", ["H1", "H2", "H3", "H5", "H6"], ["H8"])]
    sc.touch()
    routes = [Route(w, [w, "L1", "S1", "L2", "H8"], ["L1", "L2"]) for w in ("H1", "H2", "H3")]
    routes += [Route(w, [w, "L2", "H8"], ["L2"]) for w in ("H5", "H6")]
    ev = evaluate(sc, plan_of(sc, [TaskPlan("job0", "H8", 1.0, routes)]))
    assert ev.feasible, ev.violations  # L1 merges 3, L2 merges 1 aggregate + 2 raw = 3
    assert {a.switch: a.inputs for a in ev.aggregates} == {"L1": 3, "L2": 3}
    routes[-1] = Route("H7", ["H7", "L2", "H8"], ["L2"])
    sc.jobs[0].workers = ["H1", "H2", "H3", "H5", "H6", "H7"]
    routes.append(Route("H6", ["H6", "L2", "H8"], ["L2"]))
    ev = evaluate(sc, plan_of(sc, [TaskPlan("job0", "H8", 1.0, routes)]))
    assert [(v.kind, v.name, int(v.load), int(v.limit)) for v in ev.violations] == [("fan_in", "L2", 4, 3)]


def test_null_means_32_on_a_rack_of_48_servers():
    """2 leaves x 48 servers, 2 spines, leaves programmable, max_fan_in null: 32 merge, 33 do not."""
    sc = leaf_spine(2, 2, 48)
    for leaf in ("L1", "L2"):
        sc.node(leaf).programmable = True
    ps = "H96"
    sc.jobs = [Job("job0", [f"H{i}" for i in range(1, 91)], [ps])]
    sc.touch()
    sc.validate()
    assert sc.node("L1").max_fan_in is None and sc.node("L1").fan_in_limit == DEFAULT_MAX_FAN_IN == 32

    def plan(merged_at_l1: int) -> Plan:
        routes = []
        for i in range(1, 49):  # under L1
            w = f"H{i}"
            routes.append(Route(w, [w, "L1", "S1", "L2", ps], ["L1"] if i <= merged_at_l1 else []))
        for i in range(49, 91):  # under L2, the PS's leaf: 32 merge, the rest go raw
            w = f"H{i}"
            routes.append(Route(w, [w, "L2", ps], ["L2"] if i < 49 + 32 else []))
        return plan_of(sc, [TaskPlan("job0", ps, 0.5, routes)])

    ev = evaluate(sc, plan(32))
    assert ev.feasible, ev.violations
    assert {r["switch"]: r["fan_in_used"] for r in ev.switch_rows()} == {"L1": 32, "L2": 32}
    ev = evaluate(sc, plan(33))
    assert [(v.kind, v.name, int(v.load), int(v.limit)) for v in ev.violations] == [("fan_in", "L1", 33, 32)]
    ev = evaluate(sc, plan(48))
    assert [(v.name, int(v.load)) for v in ev.violations] == [("L1", 48)]
    set_max_fan_in(sc, 48)
    assert evaluate(sc, plan(48)).feasible


# ---- the field --------------------------------------------------------------------------------


def switch_doc(**fields) -> dict:
    return {"format": "inaplanner-scenario", "version": 1, "name": "t",
            "nodes": [{"id": "S", "kind": "switch", "programmable": True, **fields},
                      {"id": "H", "kind": "host"}],
            "links": [{"a": "H", "b": "S", "capacity": 10.0}], "jobs": []}


@pytest.mark.parametrize("bad", [0, -3, 65537, 1.5, True, "8"])
def test_max_fan_in_must_be_a_sane_positive_integer(bad):
    with pytest.raises(ValidationError, match=r"nodes\[0\]\.max_fan_in"):
        scenario_from_dict(switch_doc(max_fan_in=bad), "sc.json")


def test_max_fan_in_is_loaded_saved_and_absent_means_null():
    sc = scenario_from_dict(switch_doc(max_fan_in=48))
    assert sc.node("S").max_fan_in == 48 and sc.node("S").fan_in_limit == 48
    assert scenario_to_dict(sc)["nodes"][0]["max_fan_in"] == 48
    assert scenario_from_dict(scenario_to_dict(sc)).node("S").max_fan_in == 48
    plain = scenario_from_dict(switch_doc())
    null = scenario_from_dict(switch_doc(max_fan_in=None))
    assert plain.node("S").max_fan_in is None and plain.node("S").fan_in_limit == 32
    # null and absent are the same scenario (same canonical document and hash)
    assert scenario_to_dict(plain) == scenario_to_dict(null)
    assert scenario_sha256(plain) == scenario_sha256(null) != scenario_sha256(sc)


def test_max_fan_in_on_a_host_is_refused():
    doc = switch_doc()
    doc["nodes"][1]["max_fan_in"] = 4
    with pytest.raises(ValidationError, match="applies only to switches"):
        scenario_from_dict(doc)


def test_the_schema_and_the_model_agree_on_the_bounds():
    import json
    from pathlib import Path

    import inaplanner
    from inaplanner.model import MAX_FAN_IN_CEILING

    schema = json.loads((Path(inaplanner.__file__).parent / "schemas" / "scenario.schema.json").read_text())
    prop = schema["$defs"]["node"]["properties"]["max_fan_in"]
    assert (prop["minimum"], prop["maximum"]) == (1, MAX_FAN_IN_CEILING)
    sc = scenario_from_dict(switch_doc(max_fan_in=MAX_FAN_IN_CEILING))
    assert sc.node("S").fan_in_limit == MAX_FAN_IN_CEILING


def test_the_link_numbers_written_out_in_the_schema_are_nonneg():
    """The scenario schema writes ``$defs/nonneg`` out for a link's capacity and background (a
    ``$ref`` costs a call per value in the compiled validator): the copies must stay equal."""
    import json
    from pathlib import Path

    import inaplanner

    schema = json.loads((Path(inaplanner.__file__).parent / "schemas" / "scenario.schema.json").read_text())
    nonneg = schema["$defs"]["nonneg"]
    link = schema["$defs"]["link"]["properties"]
    for copy in (link["capacity"], link["background"]["items"]):
        assert {k: v for k, v in copy.items() if k != "$comment"} == nonneg


def test_switch_rows_count_each_switchs_aggregates_and_pipelines():
    """The rows group the aggregates by switch in one pass: each row must hold what a scan of
    every aggregate for that switch finds."""
    from inaplanner.planners import get, run_planner
    from inaplanner.topologies import fat_tree, mark_programmable, place_jobs

    sc = fat_tree(4)
    mark_programmable(sc, 0.6, pipelines=2, seed=3)
    place_jobs(sc, 2, 2, 5, seed=3)
    ev = evaluate(sc, run_planner(get("random"), sc, {"seed": 3}))
    rows = ev.switch_rows()
    assert sum(r["aggregates"] for r in rows) == len(ev.aggregates) > 3
    assert sum(1 for r in rows if r["aggregates"]) > 1
    for r in rows:
        mine = [a for a in ev.aggregates if a.switch == r["switch"]]
        assert r["aggregates"] == len(mine)
        assert r["pipelines_used"] == sorted({a.pipeline for a in mine})
