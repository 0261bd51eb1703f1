"""Every validation rule of the scenario gives one precise ValidationError."""

from __future__ import annotations

import copy

import pytest

from inaplanner.errors import ValidationError
from inaplanner.io.native import scenario_from_dict


def _refuse(doc: dict, *needles: str) -> ValidationError:
    with pytest.raises(ValidationError) as info:
        scenario_from_dict(doc, "doc.json")
    msg = str(info.value)
    assert msg.startswith("doc.json: "), msg
    for n in needles:
        assert n in msg, msg
    return info.value


def test_valid_document_loads(small_doc):
    sc = scenario_from_dict(small_doc)
    assert len(sc.hosts()) == 4 and len(sc.switches()) == 4


def test_unknown_link_end(small_doc):
    small_doc["links"][0]["b"] = "NOPE"
    _refuse(small_doc, "links[0]", "unknown node 'NOPE'")


def test_duplicate_node_id(small_doc):
    small_doc["nodes"].append(copy.deepcopy(small_doc["nodes"][0]))
    _refuse(small_doc, "duplicate node id 'L1'")


def test_link_to_itself(small_doc):
    small_doc["links"][2]["b"] = small_doc["links"][2]["a"]
    _refuse(small_doc, "links[2]", "to itself")


def test_duplicate_link(small_doc):
    small_doc["links"].append(dict(small_doc["links"][2], a_port=None, b_port=None))
    _refuse(small_doc, "duplicate link between")


def test_duplicate_port(small_doc):
    # two host links on leaf L1 with the same port number
    small_doc["links"][1]["b_port"] = small_doc["links"][0]["b_port"]
    _refuse(small_doc, "duplicate port 1 on switch 'L1'")


def test_port_on_host_end(small_doc):
    small_doc["links"][0]["a_port"] = 7
    _refuse(small_doc, "links[0].a_port", "host end")


def test_port_pipeline_misses_a_port(small_doc):
    sw = small_doc["nodes"][0]
    sw.update(programmable=True, pipelines=2, port_pipeline={"1": 0, "2": 1})
    _refuse(small_doc, "nodes[0].port_pipeline", "port 3 has no pipeline")


def test_port_pipeline_names_missing_pipeline(small_doc):
    sw = small_doc["nodes"][0]
    sw.update(programmable=True, pipelines=2, port_pipeline={"1": 0, "2": 1, "3": 2, "4": 0})
    _refuse(small_doc, "names pipeline 2", "has 2 (0..1)")


def test_worker_is_switch(small_doc):
    small_doc["jobs"][0]["workers"][0] = "S1"
    _refuse(small_doc, "jobs[0].workers", "worker 'S1' is a switch")


def test_ps_is_switch(small_doc):
    small_doc["jobs"][0]["parameter_servers"] = ["L2"]
    _refuse(small_doc, "jobs[0].parameter_servers", "parameter server 'L2' is a switch")


def test_unknown_worker(small_doc):
    small_doc["jobs"][0]["workers"].append("H99")
    _refuse(small_doc, "unknown node 'H99'")


def test_negative_capacity(small_doc):
    small_doc["links"][3]["capacity"] = -1
    _refuse(small_doc, "links[3].capacity")


def test_negative_background(small_doc):
    small_doc["links"][3]["background"] = [0, -2]
    _refuse(small_doc, "links[3].background")


def test_zero_pipelines(small_doc):
    small_doc["nodes"][0]["pipelines"] = 0
    _refuse(small_doc, "nodes[0].pipelines")


def test_unknown_key_refused_but_x_key_kept(small_doc):
    doc = copy.deepcopy(small_doc)
    doc["x-note"] = {"by": "test"}
    assert scenario_from_dict(doc).extra == {"x-note": {"by": "test"}}
    small_doc["colour"] = "blue"
    _refuse(small_doc, "unknown key", "colour")


def test_host_with_switch_field(small_doc):
    host = next(n for n in small_doc["nodes"] if n["kind"] == "host")
    host["pipelines"] = 2
    _refuse(small_doc, "applies only to switches")


def test_worker_also_ps(small_doc):
    job = small_doc["jobs"][0]
    job["workers"].append(job["parameter_servers"][0])
    _refuse(small_doc, "both a worker and a parameter server")


def test_missing_ports_are_numbered_in_link_order():
    doc = {
        "format": "inaplanner-scenario", "version": 1,
        "nodes": [{"id": "S", "kind": "switch"}, {"id": "T", "kind": "switch"},
                  {"id": "h1", "kind": "host"}, {"id": "h2", "kind": "host"}],
        "links": [{"a": "h1", "b": "S", "capacity": 1}, {"a": "S", "b": "T", "a_port": 1, "capacity": 1},
                  {"a": "h2", "b": "S", "capacity": 1}],
    }
    sc = scenario_from_dict(doc)
    assert [(lk.a_port, lk.b_port) for lk in sc.links] == [(None, 2), (1, 1), (None, 3)]


def test_default_port_pipeline_split():
    from inaplanner.model import default_port_pipeline

    assert default_port_pipeline([4, 1, 3, 2], 2) == {1: 0, 2: 0, 3: 1, 4: 1}
    assert default_port_pipeline([1, 2, 3], 2) == {1: 0, 2: 0, 3: 1}
    assert default_port_pipeline([5, 6, 7, 8, 9], 4) == {5: 0, 6: 0, 7: 1, 8: 2, 9: 3}
