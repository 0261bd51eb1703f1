"""The emulated target's two behaviours, "strict" (what the P4Runtime spec asks) and "bmv2" (what
``simple_switch_grpc`` does): rejected device configs, a wrong device id, refusal codes, the
multicast group limit, a restart, and a prompt stop."""

from __future__ import annotations

import threading
import time

import grpc
import pytest
from google.rpc import code_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

from inaplanner.dataplane.p4info import DEFAULT_P4INFO, parse_p4info_text
from inaplanner.deploy.device_config import stub_bmv2_json
from inaplanner.deploy.p4rt import EntityRejected, P4RTError, P4RTSession, ReadFailed
from inaplanner.emulator.target import BEHAVIOURS, start_emulator

Req = p4runtime_pb2.SetForwardingPipelineConfigRequest
P4INFO = parse_p4info_text(DEFAULT_P4INFO.read_text())
GOOD = stub_bmv2_json(P4INFO)
TRUNCATED = GOOD[: len(GOOD) // 2]


def _config(device: bytes, cookie: int = 7) -> p4runtime_pb2.ForwardingPipelineConfig:
    cfg = p4runtime_pb2.ForwardingPipelineConfig(p4_device_config=device)
    cfg.p4info.CopyFrom(P4INFO)
    cfg.cookie.cookie = cookie
    return cfg


def _push(address: str, cfg, action, device_id: int = 1, election=(0, 1)):
    """One raw SetForwardingPipelineConfig from a primary stream; returns the RpcError or None."""
    with P4RTSession(address, device_id, election, label="ctl") as s:
        req = Req(device_id=device_id, action=action)
        req.election_id.high, req.election_id.low = election
        req.config.CopyFrom(cfg)
        try:
            s.stub.SetForwardingPipelineConfig(req, timeout=10)
        except grpc.RpcError as exc:
            return exc
    return None


def _group(gid: int) -> p4runtime_pb2.Update:
    e = p4runtime_pb2.Entity()
    g = e.packet_replication_engine_entry.multicast_group_entry
    g.multicast_group_id = gid
    g.replicas.add(egress_port=1, instance=0)
    return p4runtime_pb2.Update(type=p4runtime_pb2.Update.INSERT, entity=e)


@pytest.fixture(params=BEHAVIOURS)
def switch(request):
    h = start_emulator(behaviour=request.param, max_multicast_groups=2, name="sw")
    yield h
    h.stop()


def test_a_rejected_verify_changes_nothing(switch):
    assert _push(switch.address, _config(GOOD, 1), Req.VERIFY_AND_COMMIT) is None
    err = _push(switch.address, _config(TRUNCATED, 2), Req.VERIFY)
    expected = grpc.StatusCode.UNKNOWN if switch.servicer.behaviour == "bmv2" else \
        grpc.StatusCode.INVALID_ARGUMENT
    assert err is not None and err.code() == expected
    with P4RTSession(switch.address, 1, primary=False) as s:
        assert s.get_cookie() == 1 and s.read_state() == []  # still answers, old pipeline


def test_a_rejected_commit(switch):
    assert _push(switch.address, _config(GOOD, 1), Req.VERIFY_AND_COMMIT) is None
    err = _push(switch.address, _config(TRUNCATED, 2), Req.VERIFY_AND_COMMIT)
    assert err is not None
    with P4RTSession(switch.address, 1, primary=False) as s:
        assert s.get_cookie() == 1  # the old pipeline still runs
        if switch.servicer.behaviour == "strict":
            assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert "not valid JSON" in err.details()
            assert s.read_state() == []
            return
        assert (err.code(), err.details()) == (grpc.StatusCode.UNKNOWN,
                                               "Unexpected error in RPC handling")
        with pytest.raises(ReadFailed, match="UNKNOWN: Error when reading table entries"):
            s.read_state()
    again = _push(switch.address, _config(GOOD, 3), Req.VERIFY_AND_COMMIT)
    assert again is not None and "Error in first phase of device update" in again.details()
    switch.restart()  # only a restart helps: it comes back blank
    with P4RTSession(switch.address, 1, primary=False) as s:
        assert s.get_pipeline() is None
    assert _push(switch.address, _config(GOOD, 3), Req.VERIFY_AND_COMMIT) is None


def test_a_wrong_device_id(switch):
    assert _push(switch.address, _config(GOOD, 1), Req.VERIFY_AND_COMMIT) is None
    if switch.servicer.behaviour == "strict":
        with pytest.raises(P4RTError, match="NOT_FOUND"):
            P4RTSession(switch.address, 9, (0, 1))
        return
    with P4RTSession(switch.address, 9, (0, 1), label="ctl") as s:  # accepted at arbitration
        assert s.get_pipeline() is None  # "no pipeline" for the device it does not have
        with pytest.raises(ReadFailed, match="FAILED_PRECONDITION: No forwarding pipeline"):
            s.read_state()
        with pytest.raises(P4RTError, match="Error when trying to assign device"):
            s.set_pipeline(_config(GOOD, 2))
    assert switch.stopped.wait(10)  # and the switch process went away


def test_refusal_codes_and_the_multicast_group_limit(switch):
    assert _push(switch.address, _config(GOOD, 1), Req.VERIFY_AND_COMMIT) is None
    with P4RTSession(switch.address, 1, (0, 1)) as s:
        s.write([_group(1), _group(2)])
        with pytest.raises(EntityRejected) as exc:
            s.write([_group(3)])
        if switch.servicer.behaviour == "bmv2":
            assert exc.value.code == "UNKNOWN"  # the reason is only in the switch's log
        else:
            assert exc.value.code == "RESOURCE_EXHAUSTED"
            assert "multicast group table is full (2 groups)" in str(exc.value)
        with pytest.raises(EntityRejected) as exc:
            s.write([_group(1)])
        assert exc.value.code == "ALREADY_EXISTS"  # PI reports these faithfully
    assert len(switch.state.multicast_groups) == 2


def test_stop_is_prompt_with_open_streams_and_busy_handlers():
    h = start_emulator(name="busy")
    sessions = [P4RTSession(h.address, 1, (0, i + 1), label=f"c{i}") for i in range(3)]
    stop_reading = threading.Event()

    def reader() -> None:
        with P4RTSession(h.address, 1, primary=False) as s:
            while not stop_reading.is_set():
                try:
                    s.get_pipeline()
                except P4RTError:
                    return

    threads = [threading.Thread(target=reader, daemon=True) for _ in range(4)]
    for t in threads:
        t.start()
    time.sleep(0.2)
    h.stop(grace=0.2, timeout=1.0)
    assert h.stopped.is_set()
    stop_reading.set()
    for t in threads:
        t.join(10)
        assert not t.is_alive()
    for s in sessions:
        s.close()
    with pytest.raises(P4RTError, match="connection refused"):
        P4RTSession(h.address, 1, primary=False, connect_timeout=2)


def test_the_write_codes_carry_the_per_update_status(switch):
    assert _push(switch.address, _config(GOOD, 1), Req.VERIFY_AND_COMMIT) is None
    stub_channel = grpc.insecure_channel(switch.address)
    stub = p4runtime_pb2_grpc.P4RuntimeStub(stub_channel)
    with P4RTSession(switch.address, 1, (0, 1)):
        req = p4runtime_pb2.WriteRequest(device_id=1)
        req.election_id.low = 1
        req.updates.extend([_group(1), _group(2), _group(3)])
        with pytest.raises(grpc.RpcError) as exc:
            stub.Write(req, timeout=10)
    stub_channel.close()
    from inaplanner.deploy.p4rt_errors import parse_write_error

    codes = [s.code for s in parse_write_error(exc.value)]
    bad = code_pb2.UNKNOWN if switch.servicer.behaviour == "bmv2" else code_pb2.RESOURCE_EXHAUSTED
    assert codes == [code_pb2.OK, code_pb2.OK, bad]
