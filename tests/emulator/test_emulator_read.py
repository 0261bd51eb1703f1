"""Reads from the emulated target: wildcards over tables, entries, groups and counters."""

from __future__ import annotations

import grpc
import pytest
from p4.v1 import p4runtime_pb2


def _fill(rt, client, sh):
    updates = []
    for port in (1, 2, 3):
        te = sh.TableEntry("ports")
        te.match["port"] = str(port)
        te.match["job"] = "9"
        te.action = sh.Action("fwd")
        te.action["port"] = str(port + 10)
        updates.append(rt.update("INSERT", "table_entry", te.msg()))
    route = sh.TableEntry("routes")
    route.match["dst"] = "10.0.0.0/8"
    route.action = sh.Action("fwd")
    route.action["port"] = "4"
    updates.append(rt.update("INSERT", "table_entry", route.msg()))
    for gid in (2, 1):
        updates.append(rt.update("INSERT", "packet_replication_engine_entry",
                                 sh.MulticastGroupEntry(gid).add(gid).msg()))
    rt.write(client, updates)


def _entity(**kw):
    e = p4runtime_pb2.Entity()
    for k, v in kw.items():
        getattr(e, k).CopyFrom(v)
    return e


def test_read_all_tables_one_table_one_entry(primary, rt, shell_context):
    sh = shell_context
    _fill(rt, primary, sh)
    every = rt.read(primary, _entity(table_entry=p4runtime_pb2.TableEntry()))
    assert len(every) == 4
    one_table = rt.read(primary, _entity(table_entry=p4runtime_pb2.TableEntry(table_id=33554433)))
    assert sorted(e.table_entry.match[0].exact.value for e in one_table) == [b"\x01", b"\x02",
                                                                             b"\x03"]
    te = sh.TableEntry("ports")
    te.match["port"] = "2"
    te.match["job"] = "9"
    one = rt.read(primary, _entity(table_entry=te.msg()))
    assert len(one) == 1 and one[0].table_entry.action.action.params[0].value == bytes([12])
    te.match["port"] = "7"
    assert rt.read(primary, _entity(table_entry=te.msg())) == []
    # several entities in one request: answers are concatenated
    both = rt.read(primary, _entity(table_entry=p4runtime_pb2.TableEntry(table_id=33554435)),
                   _entity(table_entry=p4runtime_pb2.TableEntry(table_id=33554433)))
    assert len(both) == 4


def test_shell_read_api_works_against_the_target(primary, rt, shell_context, monkeypatch):
    """p4runtime-shell's own read path (module-global client) understands the answers."""
    sh = shell_context
    _fill(rt, primary, sh)
    monkeypatch.setattr(sh, "client", primary)
    seen = []
    sh.TableEntry("ports").read(lambda e: seen.append(int.from_bytes(e.match["port"].exact.value,
                                                                     "big")))
    assert sorted(seen) == [1, 2, 3]
    groups = [g.group_id for g in sh.MulticastGroupEntry().read()]
    assert groups == [1, 2]


def test_read_groups(primary, rt, shell_context):
    _fill(rt, primary, shell_context)
    pre = p4runtime_pb2.PacketReplicationEngineEntry()
    pre.multicast_group_entry.multicast_group_id = 0
    all_groups = rt.read(primary, _entity(packet_replication_engine_entry=pre))
    ids = [e.packet_replication_engine_entry.multicast_group_entry.multicast_group_id
           for e in all_groups]
    assert ids == [1, 2]
    pre.multicast_group_entry.multicast_group_id = 2
    one = rt.read(primary, _entity(packet_replication_engine_entry=pre))
    assert one[0].packet_replication_engine_entry.multicast_group_entry.replicas[0].egress_port == 2


def test_bad_reads(primary, rt):
    with pytest.raises(grpc.RpcError) as err:
        rt.read(primary, _entity(table_entry=p4runtime_pb2.TableEntry(table_id=33559999)))
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    with pytest.raises(grpc.RpcError) as err:
        rt.read(primary, _entity(register_entry=p4runtime_pb2.RegisterEntry(register_id=1)))
    assert err.value.code() == grpc.StatusCode.UNIMPLEMENTED


def test_read_is_chunked_for_many_entries(primary, rt):
    rt.set_pipeline(primary, rt.TEST_P4INFO.replace("size: 64", "size: 5000"))
    updates = []
    for i in range(2500):
        te = p4runtime_pb2.TableEntry(table_id=33554435)
        m = te.match.add(field_id=1)
        m.lpm.value, m.lpm.prefix_len = (i << 8).to_bytes(4, "big"), 24
        te.action.action.action_id = 16777218
        updates.append(rt.update("INSERT", "table_entry", te))
    rt.write(primary, updates)
    req = p4runtime_pb2.ReadRequest(device_id=1)
    req.entities.add().table_entry.table_id = 33554435
    responses = list(primary.stub.Read(req))
    assert len(responses) == 3 and sum(len(r.entities) for r in responses) == 2500


def test_reads_given_up_by_their_client_leave_the_switch_answering(emulator, primary, rt):
    """A monitor gives up on late Reads (its deadline). More such Reads than the emulators
    have handler threads must not leave the switch deaf to the next one: at fat-tree k=32 a
    monitor's late Reads wedged all 1,280 emulated switches of a process."""
    import threading
    import time
    from concurrent.futures import ThreadPoolExecutor

    from inaplanner.emulator.target import HANDLER_THREADS

    emulator.servicer.rpc_hook = lambda rpc, req: time.sleep(0.2) if rpc == "Read" else None
    req = p4runtime_pb2.ReadRequest(device_id=1)
    req.entities.add().counter_entry.counter_id = 302000002  # C.pkts: 4 cells

    def late_read(_i: int) -> grpc.StatusCode:
        try:
            list(primary.stub.Read(req, timeout=0.02))
        except grpc.RpcError as exc:
            return exc.code()
        return grpc.StatusCode.OK

    with ThreadPoolExecutor(max_workers=16) as pool:
        codes = list(pool.map(late_read, range(HANDLER_THREADS + 16)))
    assert codes.count(grpc.StatusCode.DEADLINE_EXCEEDED) > HANDLER_THREADS
    emulator.servicer.rpc_hook = None
    time.sleep(0.5)  # the handlers that were sleeping finish
    answer = list(primary.stub.Read(req, timeout=5.0))
    assert sum(len(r.entities) for r in answer) == 4
    assert threading.active_count() < 200
