"""SetForwardingPipelineConfig / GetForwardingPipelineConfig on the emulated target."""

from __future__ import annotations

import grpc
import pytest
from p4.v1 import p4runtime_pb2

from inaplanner.dataplane.p4info import DEFAULT_P4INFO

Req = p4runtime_pb2.SetForwardingPipelineConfigRequest


def test_shell_client_sets_and_gets_pipeline(emulator, clients, rt, tmp_path):
    c = clients.connect(1)
    p4info_path, dev_path = rt.write_p4info_file(tmp_path)
    c.set_fwd_pipe_config(str(p4info_path), str(dev_path))
    got = c.get_p4info()
    assert got == rt.p4info_message()
    assert emulator.state.device_config == dev_path.read_bytes()
    assert emulator.state.pipeline_set


def test_shipped_p4info_is_accepted(emulator, clients, rt):
    c = clients.connect(1)
    rt.set_pipeline(c, DEFAULT_P4INFO.read_text())
    assert len(emulator.state.p4info.tables) >= 4


def test_verify_only_checks(emulator, clients, rt):
    c = clients.connect(1)
    rt.set_pipeline(c, rt.TEST_P4INFO, action=Req.VERIFY)
    assert not emulator.state.pipeline_set
    with pytest.raises(grpc.RpcError) as err:
        rt.set_pipeline(c, rt.TEST_P4INFO, device_config=b"", action=Req.VERIFY)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "device config" in err.value.details()


def test_p4info_with_duplicate_ids_is_refused(emulator, clients, rt):
    c = clients.connect(1)
    bad = rt.TEST_P4INFO + '\nactions { preamble { id: 16777217 name: "C.again" } }\n'
    with pytest.raises(grpc.RpcError) as err:
        rt.set_pipeline(c, bad)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "used twice" in err.value.details()
    assert not emulator.state.pipeline_set


def test_save_then_commit(emulator, clients, rt):
    c = clients.connect(1)
    with pytest.raises(grpc.RpcError) as err:
        rt.set_pipeline(c, rt.TEST_P4INFO, action=Req.COMMIT)
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    rt.set_pipeline(c, rt.TEST_P4INFO, action=Req.VERIFY_AND_SAVE)
    assert not emulator.state.pipeline_set
    req = Req(device_id=1, action=Req.COMMIT)
    req.election_id.low = 1
    c.stub.SetForwardingPipelineConfig(req)
    assert emulator.state.pipeline_set


def test_write_and_read_before_pipeline_fail(emulator, clients, rt):
    c = clients.connect(1)
    u = p4runtime_pb2.Update(type=p4runtime_pb2.Update.MODIFY)
    u.entity.counter_entry.counter_id = 302000001
    with pytest.raises(grpc.RpcError) as err:
        rt.write(c, [u])
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    e = p4runtime_pb2.Entity()
    e.table_entry.table_id = 0
    with pytest.raises(grpc.RpcError) as err:
        rt.read(c, e)
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION


def test_get_without_pipeline_is_empty_and_response_types(emulator, clients, rt):
    c = clients.connect(1)
    get = p4runtime_pb2.GetForwardingPipelineConfigRequest
    empty = c.stub.GetForwardingPipelineConfig(get(device_id=1))
    assert not empty.config.HasField("p4info")
    rt.set_pipeline(c, rt.TEST_P4INFO, device_config=b"DEV")
    cookie_only = c.stub.GetForwardingPipelineConfig(get(device_id=1, response_type=get.COOKIE_ONLY))
    assert not cookie_only.config.HasField("p4info") and cookie_only.config.p4_device_config == b""
    dev = c.stub.GetForwardingPipelineConfig(
        get(device_id=1, response_type=get.DEVICE_CONFIG_AND_COOKIE))
    assert dev.config.p4_device_config == b"DEV" and not dev.config.HasField("p4info")
    full = c.stub.GetForwardingPipelineConfig(get(device_id=1, response_type=get.ALL))
    assert full.config.p4info == rt.p4info_message() and full.config.p4_device_config == b"DEV"


def _insert_port_entry(rt, client, port):
    u = p4runtime_pb2.Update(type=p4runtime_pb2.Update.INSERT)
    te = u.entity.table_entry
    te.table_id = 33554433
    te.match.add(field_id=1).exact.value = bytes([port])
    te.match.add(field_id=2).exact.value = b"\x01"
    te.action.action.action_id = 16777218
    rt.write(client, [u])


def test_new_pipeline_starts_empty_but_reconcile_keeps_entries(emulator, primary, rt):
    _insert_port_entry(rt, primary, 1)
    assert len(emulator.state.table_entries) == 1
    rt.set_pipeline(primary, rt.TEST_P4INFO, action=Req.RECONCILE_AND_COMMIT)
    assert len(emulator.state.table_entries) == 1
    rt.set_pipeline(primary, rt.TEST_P4INFO)  # VERIFY_AND_COMMIT reloads: state is gone
    assert emulator.state.table_entries == []
    with pytest.raises(grpc.RpcError) as err:
        rt.set_pipeline(primary, DEFAULT_P4INFO.read_text(), action=Req.RECONCILE_AND_COMMIT)
    assert err.value.code() == grpc.StatusCode.UNIMPLEMENTED


def test_emulators_on_free_ports_are_independent(rt):
    from inaplanner.emulator.target import start_emulator

    a = start_emulator(device_id=1, name="a")
    b = start_emulator(device_id=2, name="b")
    try:
        assert a.port != b.port and a.port > 0 and a.address == f"127.0.0.1:{a.port}"
    finally:
        a.stop()
        b.stop()
