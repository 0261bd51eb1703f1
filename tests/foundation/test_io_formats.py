"""Formats: native round trips with the hash, GraphML, GML (Topology Zoo), node-link, atomic save."""

from __future__ import annotations

import json
import os
from pathlib import Path

import networkx as nx
import pytest

from inaplanner import SAMPLES
from inaplanner.errors import ValidationError
from inaplanner.io.formats import export_scenario, import_scenario, zoo_capacity
from inaplanner.io.native import (
    load_plan,
    load_scenario,
    plan_from_dict,
    plan_to_dict,
    save_plan,
    save_scenario,
    scenario_sha256,
    scenario_to_dict,
)
from inaplanner.model import Plan, PlannerInfo, Route, TaskPlan
from inaplanner.topologies import fat_tree, grid_testbed, mark_programmable, place_jobs

DATA = Path(__file__).parent.parent / "data"


@pytest.fixture
def rich():
    sc = fat_tree(4)
    mark_programmable(sc, 0.5, seed=3, pipelines=2, aggregation_capacity=800.0, aggregators=1024, target="bmv2")
    sw = next(s for s in sc.switches() if s.programmable)
    sw.port_pipeline = {p: (p + 1) % 2 for p in sc.switch_ports(sw.id)}
    sw.aggregation_background = 12.5
    sc.links[5].background = (1.5, 0.25)
    place_jobs(sc, 2, [1, 2], [3, 4], seed=1)
    sc.jobs[0].layers, sc.jobs[0].comm_comp_ratio, sc.jobs[0].remaining_s = 16, 2.0, 3600.0
    sc.extra["x-owner"] = {"team": "infra"}
    sc.nodes[0].extra["x-rack"] = "r1"
    sc.touch()
    return sc


@pytest.mark.parametrize("ext", ["json", "graphml", "gml"])
def test_round_trip_keeps_scenario_and_hash(rich, tmp_path, ext):
    path = tmp_path / f"s.{ext}"
    export_scenario(rich, path)
    back, notes = import_scenario(path)
    assert notes == []
    assert scenario_to_dict(back) == scenario_to_dict(rich)
    assert scenario_sha256(back) == scenario_sha256(rich)


def test_native_graphml_native_chain(rich, tmp_path):
    save_scenario(rich, tmp_path / "a.json")
    a = load_scenario(tmp_path / "a.json")
    export_scenario(a, tmp_path / "b.graphml")
    b, _ = import_scenario(tmp_path / "b.graphml")
    save_scenario(b, tmp_path / "c.json")
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "c.json").read_bytes()


def test_hash_is_of_canonical_json(rich):
    h1 = scenario_sha256(rich)
    rich.links[0].capacity = 99.0
    assert scenario_sha256(rich) != h1


def test_topology_zoo_gml():
    sc, notes = import_scenario(DATA / "zoo_sample.gml")
    assert sc.name == "Minizoo"
    assert {n.id for n in sc.nodes} == {"New York", "Chicago", "Denver", "Seattle"}
    caps = {frozenset((lk.a, lk.b)): lk.capacity for lk in sc.links}
    assert caps[frozenset(("New York", "Chicago"))] == pytest.approx(10.0)  # LinkSpeedRaw
    assert caps[frozenset(("Chicago", "Denver"))] == pytest.approx(2.48832)  # LinkLabel OC-48
    assert caps[frozenset(("Denver", "Seattle"))] == pytest.approx(5.0)  # parallel edges summed
    assert caps[frozenset(("Seattle", "New York"))] == pytest.approx(10.0)  # default
    assert any("default capacity" in n for n in notes)
    assert any("parallel" in n for n in notes)
    ny = sc.node("New York")
    assert ny.pos is not None and ny.pos[0] == pytest.approx(-740.0597)


@pytest.mark.parametrize(
    "attrs, gbps",
    [({"LinkSpeedRaw": 1e8}, 0.1), ({"LinkLabel": "155 Mbps"}, 0.155), ({"LinkLabel": "OC-3"}, 0.15552),
     ({"LinkSpeed": "40", "LinkSpeedUnits": "G"}, 40.0), ({"LinkLabel": "fiber"}, None)],
)
def test_zoo_capacity(attrs, gbps):
    got = zoo_capacity(attrs)
    assert got == (pytest.approx(gbps) if gbps is not None else None)


def test_node_link_json(tmp_path):
    g = nx.cycle_graph(4)
    nx.set_edge_attributes(g, 40.0, "capacity")
    g.add_node(9, kind="host")
    g.add_edge(9, 0, capacity=25.0)
    path = tmp_path / "g.json"
    path.write_text(json.dumps(nx.node_link_data(g, edges="links")))
    sc, notes = import_scenario(path)
    assert len(sc.switches()) == 4 and [h.id for h in sc.hosts()] == ["9"]
    assert sorted(lk.capacity for lk in sc.links) == [25.0, 40.0, 40.0, 40.0, 40.0]
    assert any("taken as switches" in n for n in notes)


def test_bad_files_name_the_file(tmp_path):
    p = tmp_path / "broken.json"
    p.write_text('{"format": "inaplanner-scenario", "version": 1, "nodes": [')
    with pytest.raises(ValidationError, match=r"broken\.json: line 1 column \d+: not valid JSON"):
        load_scenario(p)
    q = tmp_path / "nan.json"
    q.write_text('{"format": "inaplanner-scenario", "version": 1, "nodes": [], "links": [], "x-a": NaN}')
    with pytest.raises(ValidationError, match="NaN"):
        load_scenario(q)
    r = tmp_path / "x.graphml"
    r.write_text("<graphml><oops")
    with pytest.raises(ValidationError, match=r"x\.graphml: not valid GraphML"):
        import_scenario(r)
    with pytest.raises(ValidationError, match="unknown file type"):
        import_scenario(tmp_path / "s.xlsx")
    with pytest.raises(ValidationError, match="no such file"):
        import_scenario(tmp_path / "missing.gml")


def test_atomic_save_never_leaves_half_a_file(tmp_path, rich):
    path = tmp_path / "s.json"
    save_scenario(rich, path)
    before = path.read_bytes()
    rich.links[0].capacity = float("nan")  # breaks validation: the save must refuse and keep the file
    with pytest.raises(ValidationError):
        save_scenario(rich, path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["s.json"]  # no temp file left behind


def test_atomic_write_replaces_whole_file(tmp_path):
    from inaplanner.io.atomic import atomic_write_text

    path = tmp_path / "f.txt"
    path.write_text("old")
    os.chmod(path, 0o600)
    atomic_write_text(path, "new content")
    assert path.read_text() == "new content"
    assert (path.stat().st_mode & 0o777) == 0o600


def test_plan_round_trip(tmp_path):
    sc = grid_testbed()
    plan = Plan(
        scenario_sha256(sc),
        PlannerInfo("hand", {"k": 1}, 0, None, 0.5, "heuristic"),
        [TaskPlan("job0", "PS", 3.0, [Route("W7", ["W7", "S3", "PS"], ["S3"])])],
        bound=3.0,
        extra={"x-note": "kept"},
    )
    save_plan(plan, tmp_path / "p.json")
    back = load_plan(tmp_path / "p.json")
    assert plan_to_dict(back) == plan_to_dict(plan)


def test_plan_schema_errors():
    with pytest.raises(ValidationError, match=r"planner\.status"):
        plan_from_dict({"format": "inaplanner-plan", "version": 1, "scenario_sha256": "0" * 64,
                        "planner": {"name": "x", "status": "great"}, "tasks": []})
    with pytest.raises(ValidationError, match=r"tasks\[0\]\.rate"):
        plan_from_dict({"format": "inaplanner-plan", "version": 1, "scenario_sha256": "0" * 64,
                        "planner": {"name": "x", "status": "optimal"},
                        "tasks": [{"job": "j", "ps": "p", "rate": -1, "routes": []}]})


def test_samples_load():
    names = sorted(p.name for p in SAMPLES.glob("*.json"))
    assert {"leaf_spine_small.json", "fat_tree_k4.json", "grid_testbed.json", "aro_fig1.json"} <= set(names)
    for name in names:
        sc = load_scenario(SAMPLES / name)
        assert sc.jobs, name
