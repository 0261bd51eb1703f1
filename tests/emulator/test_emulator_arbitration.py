"""StreamChannel arbitration of the emulated target, driven by real p4runtime-shell clients."""

from __future__ import annotations

import queue

import grpc
import pytest
from google.rpc import code_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc


def next_arbitration(client, timeout=2.0):
    msg = client.get_stream_packet("arbitration", timeout=timeout)
    assert msg is not None, "no arbitration update arrived"
    return msg.arbitration


def test_first_client_becomes_primary(emulator, clients):
    c1 = clients.connect(1)
    assert emulator.state.primary_election_id == 1
    assert emulator.state.clients == 1
    # the handshake consumed the first answer; a renewed update gets OK again
    req = p4runtime_pb2.StreamMessageRequest()
    req.arbitration.device_id = 1
    req.arbitration.election_id.low = 1
    c1.stream_out_q.put(req)
    arb = next_arbitration(c1)
    assert arb.status.code == code_pb2.OK
    assert arb.election_id.low == 1


def test_higher_election_id_takes_over_and_old_primary_is_told(emulator, clients):
    c1 = clients.connect(1)
    c2 = clients.connect(5)
    arb = next_arbitration(c1)
    assert arb.status.code == code_pb2.ALREADY_EXISTS
    assert arb.election_id.low == 5
    assert emulator.state.primary_election_id == 5
    # a lower election id joining later is a backup and changes nothing for the others
    c3 = clients.connect(3)
    assert emulator.state.primary_election_id == 5
    assert c1.get_stream_packet("arbitration", timeout=0.3) is None
    # the primary leaves: the next highest (3) becomes primary and everybody is told
    clients.close(c2)
    arb1 = next_arbitration(c1)
    arb3 = next_arbitration(c3)
    assert arb1.status.code == code_pb2.ALREADY_EXISTS and arb1.election_id.low == 3
    assert arb3.status.code == code_pb2.OK and arb3.election_id.low == 3
    assert emulator.state.primary_election_id == 3


def test_backup_write_is_refused(emulator, clients, rt):
    c1 = clients.connect(1)
    rt.set_pipeline(c1, rt.TEST_P4INFO)
    c2 = clients.connect(2)  # now primary
    with pytest.raises(grpc.RpcError) as err:
        rt.set_pipeline(c1, rt.TEST_P4INFO)
    assert err.value.code() == grpc.StatusCode.PERMISSION_DENIED
    u = p4runtime_pb2.Update(type=p4runtime_pb2.Update.MODIFY)
    u.entity.counter_entry.counter_id = 302000001
    with pytest.raises(grpc.RpcError) as err:
        rt.write(c1, [u])
    assert err.value.code() == grpc.StatusCode.PERMISSION_DENIED
    rt.write(c2, [u])  # the primary may
    # reads are open to everybody
    e = p4runtime_pb2.Entity()
    e.table_entry.table_id = 0
    assert rt.read(c1, e) == []


def _raw_stream(address, first):
    """A StreamChannel driven by hand: returns (responses iterator, outgoing queue)."""
    channel = grpc.insecure_channel(address)
    stub = p4runtime_pb2_grpc.P4RuntimeStub(channel)
    out: queue.Queue = queue.Queue()
    out.put(first)

    def requests():
        while True:
            item = out.get()
            if item is None:
                return
            yield item

    return stub.StreamChannel(requests()), out, channel


def _arbitration(device_id, election_low):
    req = p4runtime_pb2.StreamMessageRequest()
    req.arbitration.device_id = device_id
    req.arbitration.election_id.low = election_low
    return req


def test_duplicate_election_id_ends_stream_with_invalid_argument(emulator, clients):
    clients.connect(7)
    responses, out, channel = _raw_stream(emulator.address, _arbitration(1, 7))
    with pytest.raises(grpc.RpcError) as err:
        next(responses)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "already used" in err.value.details()
    out.put(None)
    channel.close()
    assert emulator.state.primary_election_id == 7


def test_wrong_device_id_ends_stream_with_not_found(emulator):
    responses, out, channel = _raw_stream(emulator.address, _arbitration(99, 1))
    with pytest.raises(grpc.RpcError) as err:
        next(responses)
    assert err.value.code() == grpc.StatusCode.NOT_FOUND
    out.put(None)
    channel.close()
    assert emulator.state.primary_election_id is None


def test_changing_device_id_on_an_open_stream_is_refused(emulator):
    responses, out, channel = _raw_stream(emulator.address, _arbitration(1, 4))
    first = next(responses)
    assert first.arbitration.status.code == code_pb2.OK
    out.put(_arbitration(2, 4))
    with pytest.raises(grpc.RpcError) as err:
        next(responses)
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    out.put(None)
    channel.close()


def test_write_and_read_with_wrong_device_id(emulator, primary, rt):
    req = p4runtime_pb2.WriteRequest(device_id=42)
    req.election_id.low = 1
    with pytest.raises(grpc.RpcError) as err:
        primary.stub.Write(req)
    assert err.value.code() == grpc.StatusCode.NOT_FOUND
    rreq = p4runtime_pb2.ReadRequest(device_id=42)
    rreq.entities.add().table_entry.table_id = 0
    with pytest.raises(grpc.RpcError) as err:
        list(primary.stub.Read(rreq))
    assert err.value.code() == grpc.StatusCode.NOT_FOUND


def test_capabilities_reports_the_api_version(primary):
    assert primary.api_version().startswith("1.")
