"""Entity diffs, and the generated entities installed on the emulated target through the shipped
P4Info with a real p4runtime-shell client (a check that the entries fit the contract)."""

from __future__ import annotations

import pytest
from google.protobuf import text_format
from p4.v1 import p4runtime_pb2
from p4runtime_sh.p4runtime import P4RuntimeClient

from inaplanner.dataplane.entries import build_entities
from inaplanner.dataplane.p4info import DEFAULT_P4INFO, load_p4info
from inaplanner.dataplane.spec import (
    MulticastGroupSpec,
    TableEntrySpec,
    diff_entities,
    diff_specs,
    entity_key,
)
from inaplanner.emulator.target import start_emulator
from inaplanner.model import Plan, PlannerInfo, Route, TaskPlan
from inaplanner.topologies import grid_testbed


def plan_a() -> Plan:
    routes = [Route(w, [w, "S1", "S3", "PS"], ["S1"]) for w in ("W1", "W2", "W3", "W4")]
    routes += [Route(w, [w, "S2", "S3", "PS"], ["S2"]) for w in ("W5", "W6")]
    routes += [Route(w, [w, "S3", "PS"], ["S3"]) for w in ("W7", "W8")]
    return Plan("a", PlannerInfo("hand"), [TaskPlan("job0", "PS", 10.0, routes)])


def plan_b() -> Plan:
    """W4 now detours through S2 and merges there: S1 and S2 change, S3 does not."""
    plan = plan_a()
    plan.tasks[0].routes[3] = Route("W4", ["W4", "S1", "S2", "S3", "PS"], ["S2"])
    return plan


def te(table, match, action="InaIngress.forward", params=(("port", 1),)):
    return TableEntrySpec(table, match, action, params)


def test_diff_on_keys():
    a1 = te("T", (("k", 1),))
    a2 = te("T", (("k", 2),))
    a2b = te("T", (("k", 2),), params=(("port", 7),))
    g1 = MulticastGroupSpec(1, ((1, 0),))
    g1b = MulticastGroupSpec(1, ((1, 0), (2, 0)))
    add, modify, delete = diff_entities([g1, a1, a2], [g1b, a2b, te("T", (("k", 3),))])
    assert add == [te("T", (("k", 3),))]
    assert modify == [g1b, a2b]
    assert delete == [a1]
    assert diff_entities([a1, g1], [a1, g1]) == ([], [], [])
    # a note is not part of the entity
    assert diff_entities([a1], [TableEntrySpec("T", (("k", 1),), "InaIngress.forward",
                                               (("port", 1),), note="x")]) == ([], [], [])


def test_spec_diff_touches_only_what_changed():
    sc = grid_testbed()
    a, b = build_entities(sc, plan_a()), build_entities(sc, plan_b())
    d = diff_specs(a, b)
    assert d["S3"] == ([], [], [])
    add1, mod1, del1 = d["S1"]
    assert [e.text() for e in add1] == ["ina_forward job_id=1 ps_id=0 flow_id=4 -> forward(port=6)"]
    assert del1 and all(e.table == "InaIngress.ina_aggregate" for e in del1)
    assert [dict(e.match)["ingress_port"] for e in del1] == [4]
    assert {e.table for e in mod1} == {"InaIngress.ina_aggregate"}  # fan-in 4 -> 3, new epoch
    add2, mod2, del2 = d["S2"]
    assert [dict(e.match)["ingress_port"] for e in add2] == [3] and del2 == []


def test_proto_keys_ignore_padding():
    p4 = load_p4info()
    spec_entry = te("InaIngress.ina_fallback", (("job_id", 1), ("ps_id", 0)))
    proto = spec_entry.to_proto(p4)
    padded = p4runtime_pb2.Entity()
    padded.CopyFrom(proto)
    padded.table_entry.match[0].exact.value = b"\x00\x01"
    assert entity_key(proto) == entity_key(padded)
    assert diff_entities([proto], [padded]) == ([], [], [])


@pytest.fixture
def switch():
    handle = start_emulator(name="S1")
    client = P4RuntimeClient(1, handle.address, (0, 1))
    client.set_fwd_pipe_config(str(DEFAULT_P4INFO), str(DEFAULT_P4INFO))  # any bytes will do
    yield handle, client
    client.tear_down()
    handle.stop()


def _write(client, kind, entities):
    req = p4runtime_pb2.WriteRequest(device_id=1)
    req.election_id.low = 1
    for e in entities:
        req.updates.add(type=kind).entity.CopyFrom(e)
    if req.updates:
        client.stub.Write(req)


def _read_all(client):
    req = p4runtime_pb2.ReadRequest(device_id=1)
    req.entities.add().table_entry.table_id = 0
    req.entities.add().packet_replication_engine_entry.multicast_group_entry.multicast_group_id = 0
    return [e for r in client.stub.Read(req) for e in r.entities]


def _texts(entities):
    return sorted(text_format.MessageToString(e, as_one_line=True) for e in entities)


def test_generated_entities_install_and_redeploy_by_diff(switch):
    handle, client = switch
    sc = grid_testbed()
    first = build_entities(sc, plan_a()).switches["S1"].entities
    _write(client, p4runtime_pb2.Update.INSERT, first)
    on_switch = _read_all(client)
    assert _texts(on_switch) == _texts(first)
    # redeploy: diff what the switch holds against the new plan's entities, write only that
    second = build_entities(sc, plan_b()).switches["S1"].entities
    add, modify, delete = diff_entities(on_switch, second)
    assert (len(add), len(modify), len(delete)) == (1, 3, 1)
    writes_before = handle.state.write_requests
    _write(client, p4runtime_pb2.Update.DELETE, delete)
    _write(client, p4runtime_pb2.Update.MODIFY, modify)
    _write(client, p4runtime_pb2.Update.INSERT, add)
    assert handle.state.write_requests - writes_before == 3
    assert _texts(_read_all(client)) == _texts(second)
