"""P4Runtime sessions against the emulated target over real gRPC: arbitration, pipeline, batched
writes with per-update errors (OK before a failure), reads, diffs; and the P4Info contract check."""

from __future__ import annotations

import socket

import pytest
from google.rpc import code_pb2
from p4.v1 import p4runtime_pb2

from inaplanner.dataplane.p4info import DEFAULT_P4INFO, load_p4info
from inaplanner.deploy.p4info_check import P4InfoMismatch, check_p4info, translate_entity
from inaplanner.deploy.p4rt import (
    EntityRejected,
    NotPrimary,
    P4RTConnectionRefused,
    P4RTSession,
    ReadFailed,
    describe_entity,
)
from inaplanner.deploy.state import diff_state, entity_key
from inaplanner.emulator.target import start_emulator
from inaplanner.errors import Cancelled

P4 = load_p4info(DEFAULT_P4INFO)


def forward_entry(job: int, ps: int, flow: int, port: int, pad: bool = False) -> p4runtime_pb2.Entity:
    t = P4.table("ina_forward")
    a = P4.action("forward")
    te = p4runtime_pb2.TableEntry(table_id=t.id)
    for name, value in (("job_id", job), ("ps_id", ps), ("flow_id", flow)):
        f = t.field(name)
        width = (f.bitwidth + 7) // 8 if pad else max(1, (value.bit_length() + 7) // 8)
        te.match.add(field_id=f.id).exact.value = value.to_bytes(width, "big")
    te.action.action.action_id = a.id
    te.action.action.params.add(param_id=1, value=port.to_bytes(2 if pad else 1, "big"))
    return p4runtime_pb2.Entity(table_entry=te)


def group(gid: int, ports: list[int]) -> p4runtime_pb2.Entity:
    g = p4runtime_pb2.MulticastGroupEntry(multicast_group_id=gid)
    for p in ports:
        g.replicas.add(egress_port=p, instance=0)
    return p4runtime_pb2.Entity(packet_replication_engine_entry=p4runtime_pb2.PacketReplicationEngineEntry(
        multicast_group_entry=g))


def pipeline_config() -> p4runtime_pb2.ForwardingPipelineConfig:
    cfg = p4runtime_pb2.ForwardingPipelineConfig(p4_device_config=b'{"bmv2": "json"}')
    cfg.p4info.CopyFrom(P4.proto)
    cfg.cookie.cookie = 42
    return cfg


def inserts(entities):
    return [p4runtime_pb2.Update(type=p4runtime_pb2.Update.INSERT, entity=e) for e in entities]


@pytest.fixture
def switch():
    handle = start_emulator(device_id=3, name="s1")
    yield handle
    handle.stop()


def test_pipeline_batches_read_back_and_diff(switch):
    with P4RTSession(switch.address, 3, (0, 1), label="switch S1") as s:
        assert s.get_pipeline() is None
        s.set_pipeline(pipeline_config())
        running = s.get_pipeline()
        assert running is not None and running.cookie.cookie == 42
        assert running.p4_device_config == b'{"bmv2": "json"}'
        want = [group(1, [3, 1, 2])] + [forward_entry(1, 0, f, f % 7 + 1, pad=True)
                                        for f in range(25)]
        seen: list[tuple[int, int]] = []
        stats = s.write(inserts(want), batch_size=10, on_batch=lambda d, t: seen.append((d, t)))
        assert (stats.updates, stats.batches) == (26, 3) and seen[-1] == (26, 26)
        back = s.read_state()
        assert len(back) == 26
        assert diff_state(back, want).empty  # padded byte strings compare equal to canonical
        changed = want[:5] + [forward_entry(1, 0, 3, 99)] + want[6:20] + [forward_entry(2, 0, 0, 1)]
        d = diff_state(back, changed)
        assert (len(d.insert), len(d.modify), len(d.delete), d.unchanged) == (1, 1, 7, 18)  # flow 3 changed, flows 4 and 19..24 gone
        s.write(d.updates())
        assert diff_state(s.read_state(), changed).empty


def test_rejected_update_after_ok_ones_is_named(switch):
    """The batch answer holds OK details before the failure (the shape that makes p4runtime-shell's
    iterator loop forever); we name the update and the target's message."""
    with P4RTSession(switch.address, 3, (0, 1), label="switch S1") as s:
        s.set_pipeline(pipeline_config())
        bad_flow = 4
        switch.fail_on(lambda u: u.entity.table_entry.match[2].exact.value == bytes([bad_flow])
                       and "TCAM write failed at flow 4", code=code_pb2.INTERNAL)
        entries = [forward_entry(1, 0, f, 1) for f in range(8)]
        with pytest.raises(EntityRejected) as err:
            s.write(inserts(entries), batch_size=3)
        e = err.value
        assert e.index == 4 and e.code == "INTERNAL" and e.target_message == "TCAM write failed at flow 4"
        assert e.applied == 5  # batch 1 (3) + the two OK updates of batch 2 around the failure
        assert "switch S1: the target rejected update #4 (insert table InaIngress.ina_forward" in str(e) \
            or "switch S1: the target rejected update #4 (insert table 0x" in str(e)
        assert len(s.read_state()) == 5
        switch.fail_on(None)
        with pytest.raises(EntityRejected, match="ALREADY_EXISTS"):
            s.write(inserts(entries[:1]))


def test_cancel_between_batches(switch):
    with P4RTSession(switch.address, 3, (0, 1)) as s:
        s.set_pipeline(pipeline_config())
        calls = []
        with pytest.raises(Cancelled, match="after 4 of 10"):
            s.write(inserts([forward_entry(1, 0, f, 1) for f in range(10)]), batch_size=2,
                    cancel=lambda: len(calls) >= 2, on_batch=lambda d, t: calls.append(d))
        assert len(s.read_state()) == 4


def test_not_primary_and_refused(switch):
    with P4RTSession(switch.address, 3, (0, 9)):
        with pytest.raises(NotPrimary, match="could not become primary"):
            P4RTSession(switch.address, 3, (0, 2), label="switch S1")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(P4RTConnectionRefused, match="switch S2: connection refused"):
        P4RTSession(f"127.0.0.1:{port}", 1, label="switch S2")


def test_read_only_session_needs_no_arbitration(switch):
    with P4RTSession(switch.address, 3, (0, 5)) as primary:
        primary.set_pipeline(pipeline_config())
        primary.write(inserts([forward_entry(1, 0, 1, 2)]))
        with P4RTSession(switch.address, 3, (0, 1), primary=False) as ro:
            assert len(ro.read_state()) == 1
        assert switch.state.primary_election_id == 5


def test_p4info_check_pairs_by_name_and_reports_mismatches():
    contract = P4.proto
    assert all(k == v for k, v in check_p4info(contract, contract).items())
    # a build with other ids (p4c's hash) and another control name still pairs up
    built = type(contract)()
    built.CopyFrom(contract)
    for t in built.tables:
        t.preamble.id += 1
        t.preamble.name = t.preamble.name.replace("InaIngress", "SwitchIngress")
    ids = check_p4info(contract, built)
    fwd = P4.table("ina_forward").id
    assert ids[fwd] == fwd + 1
    moved = translate_entity(forward_entry(1, 0, 1, 2), ids)
    assert moved.table_entry.table_id == fwd + 1
    # width and missing-object differences are all listed, naming the object
    bad = type(contract)()
    bad.CopyFrom(contract)
    bad.tables[1].match_fields[2].bitwidth = 32
    del bad.counters[0]
    with pytest.raises(P4InfoMismatch) as err:
        check_p4info(contract, bad, "switch L1")
    text = str(err.value)
    assert text.startswith("switch L1: P4Info mismatch with the contract")
    assert "table InaIngress.ina_forward match fields" in text and "flow_id" in text
    assert "counter InaIngress.rx_port_counter is missing" in text


def test_describe_and_keys():
    e = forward_entry(1, 2, 3, 4)
    assert describe_entity(e, P4) == (
        "table InaIngress.ina_forward [job_id=1 ps_id=2 flow_id=3] -> InaIngress.forward(4)")
    assert entity_key(e) != entity_key(forward_entry(1, 2, 4, 4))
    assert describe_entity(group(5, [1, 2])) == "multicast group 5 [1,2]"


def test_open_sessions_and_idle_emulators_hold_no_thread_each():
    """A deployment holds a primary session to every switch it changes. With a thread or more
    per stream and per emulator (synchronous gRPC), fat-tree k=32's 1,280 switches were 4,340
    threads in one process and arbitration answered too late; here 60 emulators with a primary
    session open on each add a handful of threads, not one per switch."""
    import threading
    import time

    before = threading.active_count()
    handles = [start_emulator(name=f"s{i}") for i in range(60)]
    sessions = []
    try:
        for h in handles:
            sessions.append(P4RTSession(h.address, 1, (0, 1), label=h.name))
        assert all(h.state.primary_election_id == 1 for h in handles)
        assert threading.active_count() - before < 20
        # the streams still work: a second controller with a higher id takes one switch over
        with P4RTSession(handles[0].address, 1, (0, 2), label="other"):
            assert handles[0].state.primary_election_id == 2
            assert handles[0].state.clients == 2
        deadline = time.monotonic() + 5.0  # the switch sees the stream end a moment later
        while handles[0].state.primary_election_id != 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert handles[0].state.primary_election_id == 1
    finally:
        for s in sessions:
            s.close()
        for h in handles:
            h.stop()


def test_a_primary_session_is_one_connection_to_its_switch():
    """A primary session's stream and its other RPCs share one connection: with a second,
    synchronous channel beside the stream, a deployment onto switches emulated in its own
    process needed five open files a switch (listening socket, both ends of two connections),
    25,600 at fat-tree k=64, above this machine's hard limit of 20,000."""
    from inaplanner.fdlimit import open_files

    handles = [start_emulator(name=f"s{i}") for i in range(20)]
    sessions = []
    try:
        before = open_files()
        for h in handles:
            s = P4RTSession(h.address, 1, (0, 1), label=h.name)
            sessions.append(s)
            s.set_pipeline(pipeline_config())
            s.write(inserts([forward_entry(1, 0, 7, 3)]))
            assert len(s.read_state()) == 1 and s.get_cookie() is not None
        # both ends of one connection per session (and a probe's socket not yet closed)
        assert open_files() - before <= 2 * len(handles) + 8
    finally:
        for s in sessions:
            s.close()
        for h in handles:
            h.stop()


def test_counter_cells_decoded_from_the_wire_equal_protobufs_parse():
    """The monitor decodes counter Read answers from the wire instead of through the
    pure-Python protobuf; on random answers (large counts, zero fields left out, other
    entities mixed in) it finds what ReadResponse.FromString finds."""
    import random

    from inaplanner.dataplane.wire import counter_cells

    rng = random.Random(7)
    for _ in range(200):
        rep = p4runtime_pb2.ReadResponse()
        want = []
        for _ in range(rng.randrange(0, 12)):
            if rng.random() < 0.2:
                rep.entities.append(forward_entry(1, 0, rng.randrange(1, 300), 3))
                continue
            e = rep.entities.add().counter_entry
            cell = (rng.choice([0, 1, 302000002, 2**32 - 1]), rng.choice([0, 1, 64, 2**40]),
                    rng.choice([0, 1, 127, 128, 2**31, 2**62]), rng.choice([0, 5, 2**40]))
            e.counter_id = cell[0]
            if cell[1] or rng.random() < 0.5:
                e.index.index = cell[1]
            e.data.byte_count, e.data.packet_count = cell[2], cell[3]
            want.append(cell)
        data = rep.SerializeToString()
        parsed = [(x.counter_entry.counter_id, x.counter_entry.index.index,
                   x.counter_entry.data.byte_count, x.counter_entry.data.packet_count)
                  for x in p4runtime_pb2.ReadResponse.FromString(data).entities
                  if x.WhichOneof("entity") == "counter_entry"]
        assert counter_cells(data) == parsed == want


def _counter_answer(rng, cells: int) -> tuple[bytes, list[tuple[int, int, int, int]]]:
    """A ReadResponse of counter cells as protobuf writes it (zero fields left out, an index
    set to 0 or not, negative int64s as ten-byte varints), and its cells as the wire holds
    them (unsigned)."""
    rep = p4runtime_pb2.ReadResponse()
    want = []
    for _ in range(cells):
        e = rep.entities.add().counter_entry
        cid = rng.choice([0, 1, 302000002, 2**32 - 1])
        index = rng.choice([0, 1, 64, 127, 128, 2**40, -1])
        nbytes = rng.choice([0, 1, 127, 128, 2**31, 2**62, 2**63 - 1, -5])
        packets = rng.choice([0, 5, 2**40, -(2**63)])
        e.counter_id = cid
        if index or rng.random() < 0.5:
            e.index.index = index
        if nbytes or packets or rng.random() < 0.5:
            e.data.byte_count, e.data.packet_count = nbytes, packets
        want.append((cid, index % 2**64, nbytes % 2**64, packets % 2**64))
    return rep.SerializeToString(), want


def test_counter_arrays_decode_protobufs_answers_on_the_fast_path():
    """Answers laid out as protobuf (and the emulated switches) write them are decoded with
    array operations, not cell by cell, and hold the cells counter_cells finds, also when
    several answers are joined."""
    import random

    from inaplanner.dataplane.wire import _flat_counter_arrays, counter_arrays, counter_cells

    rng = random.Random(9)
    joined, every = b"", []
    for _ in range(200):
        data, want = _counter_answer(rng, rng.randrange(1, 20))
        fast = _flat_counter_arrays(data)
        assert fast is not None and fast.rows() == counter_cells(data) == want
        joined += data
        every += want
    assert counter_arrays(joined).rows() == every
    assert counter_arrays(b"").rows() == []


def test_counter_arrays_of_any_other_encoding_are_the_general_decoders():
    """Valid encodings protobuf would not write, and broken ones: fields in another order,
    padded varints, unknown and fixed-width fields, a field twice, other entities, bytes cut,
    changed, added or dropped at random. Whatever the fast path accepts must be what
    counter_cells finds; the rest goes through counter_cells (the same cells, or the same
    error; a value beyond 64 bits, or a message where a number should be, is a ValueError)."""
    import random

    from inaplanner.dataplane.wire import counter_arrays, counter_cells, varint, wire_field

    def field(number, value):  # a varint field; value as bytes: a padded varint
        return varint(number << 3) + (value if isinstance(value, bytes) else varint(value))

    def entity(*entry_fields):
        return wire_field(1, wire_field(7, b"".join(entry_fields)))

    index, data = wire_field(2, field(1, 7)), wire_field(3, field(1, 1000) + field(2, 10))
    crafted = [
        entity(index, field(1, 5), data),  # the counter id after the index
        entity(field(1, 5), data, index),  # the data before the index
        entity(field(1, 5), index, wire_field(3, field(2, 10) + field(1, 1000))),
        entity(field(1, b"\x85\x80\x00"), index, data),  # a padded varint
        entity(field(1, 5), field(1, 6), index, data),  # the counter id twice
        entity(field(1, 5), index, index, data),
        entity(field(1, 5), wire_field(2, field(1, 7) + field(1, 8)), data),
        entity(field(1, 5), index, data, field(9, 1)),  # an unknown field
        entity(field(1, 5), index, data) + b"\x0d\x01\x02\x03\x04",  # a fixed32 field
        entity(field(1, 5), index, wire_field(3, field(1, 1) + b"\x19" + bytes(8))),
        wire_field(1, wire_field(7, field(1, 5) + index) + wire_field(7, field(1, 6) + index)),
        wire_field(1, wire_field(8, field(1, 5))) + entity(field(1, 5), index, data),
        entity(field(1, 5), wire_field(2, b""), wire_field(3, b"")),
        entity(field(1, 5)) + entity(field(1, 6), index),
        entity(field(1, 1 << 64), index, data),  # beyond 64 bits
        forward_entry(1, 0, 7, 3).SerializeToString(),
    ]
    rng = random.Random(13)
    for _ in range(3000):
        base, _want = _counter_answer(rng, rng.randrange(1, 4))
        cut = bytearray(base)
        for _ in range(rng.randrange(1, 4)):
            at = rng.randrange(len(cut) + 1)
            what = rng.randrange(4)
            if what == 0 and at < len(cut):
                cut[at] = rng.randrange(256)
            elif what == 1 and at < len(cut):
                cut[at] ^= 1 << rng.randrange(8)
            elif what == 2:
                cut[at:at] = bytes([rng.randrange(256)])
            elif at < len(cut):
                del cut[at]
        crafted.append(bytes(cut))
    for data in crafted:
        try:
            want = counter_cells(data)
        except (IndexError, TypeError, ValueError) as exc:  # a field of the wrong type
            with pytest.raises(type(exc)):
                counter_arrays(data)
            continue
        if any(not isinstance(v, int) or v >= 1 << 64 for cell in want for v in cell):
            with pytest.raises(ValueError):
                counter_arrays(data)
        else:
            assert counter_arrays(data).rows() == want, data.hex()


def test_counters_read_by_a_prepared_request(switch):
    """read_counters sends the request made once by counter_request and answers the cells
    (as arrays; their rows are the (counter id, index, bytes, packets) of each cell)."""
    with P4RTSession(switch.address, 3, (0, 1), label="switch S1") as s:
        s.set_pipeline(pipeline_config())
        counter = P4.proto.counters[0].preamble
        cid = counter.id
        switch.set_port_rates({2: (1000.0, 10.0)}, counters=[counter.name])
        request = s.counter_request([(cid, 1), (cid, 2)])
        first = s.read_counters(request).rows()
        assert [(c, i) for c, i, _, _ in first] == [(cid, 1), (cid, 2)]
        import time

        time.sleep(0.05)
        second = s.read_counters(request).rows()
        assert second[0][2:] == (0, 0) and second[1][2] > first[1][2]


def test_counter_read_requests_decoded_from_the_wire_equal_protobufs_parse():
    """The emulator reads a monitor's counter Read from the wire; on random requests it finds
    what ReadRequest.FromString finds, and it declines (None) every request it does not fully
    understand, which then goes through protobuf."""
    import random

    from inaplanner.dataplane.wire import counter_read_request

    rng = random.Random(11)
    for _ in range(300):
        req = p4runtime_pb2.ReadRequest(device_id=rng.choice([0, 1, 3, 2**40]))
        for _ in range(rng.randrange(0, 10)):
            ce = req.entities.add().counter_entry
            ce.counter_id = rng.choice([0, 1, 302000002, 2**32 - 1])
            if rng.random() < 0.7:
                ce.index.index = rng.choice([0, 1, 127, 128, 2**40, -1, -(2**63)])
        data = req.SerializeToString()
        parsed = p4runtime_pb2.ReadRequest.FromString(data)
        want = (parsed.device_id,
                [(e.counter_entry.counter_id,
                  e.counter_entry.index.index if e.counter_entry.HasField("index") else None)
                 for e in parsed.entities])
        assert counter_read_request(data) == want
    declined = []
    mixed = p4runtime_pb2.ReadRequest(device_id=1)
    mixed.entities.add().counter_entry.counter_id = 5
    mixed.entities.append(forward_entry(1, 0, 7, 3))
    declined.append(mixed)
    filtered = p4runtime_pb2.ReadRequest(device_id=1)
    filtered.entities.add().counter_entry.data.byte_count = 10
    declined.append(filtered)
    declined.append(p4runtime_pb2.ReadRequest(device_id=1, role="monitor"))
    for req in declined:
        assert counter_read_request(req.SerializeToString()) is None
    assert counter_read_request(b"\x12\x05\x3a\x03\x08") is None  # cut short


def test_counter_entities_written_by_hand_are_protobufs_bytes():
    """An emulated switch writes each counter cell of a Read answer by hand; the bytes are the
    ones protobuf writes for the same Entity (zero fields, units counted or not, large counts)."""
    import random

    from inaplanner.dataplane.wire import counter_entity

    rng = random.Random(5)
    for _ in range(300):
        cid = rng.choice([1, 302000002, 2**32 - 1])
        index = rng.choice([0, 1, 127, 128, 2**20])
        unit = rng.choice(["bytes", "packets", "both"])
        nbytes = rng.choice([0, 1, 2**31, 2**62]) if unit != "packets" else None
        packets = rng.choice([0, 5, 2**40]) if unit != "bytes" else None
        e = p4runtime_pb2.Entity()
        e.counter_entry.counter_id = cid
        e.counter_entry.index.index = index
        if nbytes is not None:
            e.counter_entry.data.byte_count = nbytes
        if packets is not None:
            e.counter_entry.data.packet_count = packets
        assert counter_entity(cid, index, nbytes, packets) == e.SerializeToString()


def test_a_counter_read_answers_the_same_from_the_wire_as_through_protobuf(switch):
    """The same counter reads, answered by the emulator's wire path and by its protobuf path
    (taken whenever an rpc_hook watches the requests): the same cells, the same refusals."""
    with P4RTSession(switch.address, 3, (0, 1), label="switch S1") as s:
        s.set_pipeline(pipeline_config())
        counters = [c.preamble for c in P4.proto.counters]
        updates = []
        for n, c in enumerate(counters):
            for i in (0, 1, 5):
                e = p4runtime_pb2.Entity()
                e.counter_entry.counter_id = c.id
                e.counter_entry.index.index = i
                e.counter_entry.data.byte_count = 1000 * (n + 1) + i
                e.counter_entry.data.packet_count = 10 * (n + 1) + i
                updates.append(p4runtime_pb2.Update(type=p4runtime_pb2.Update.MODIFY, entity=e))
        s.write(updates)
        cid = counters[0].id
        requests = [s.counter_request([(cid, 0), (cid, 1), (cid, 2), (counters[-1].id, 5)])]
        everything = p4runtime_pb2.ReadRequest(device_id=3)
        everything.entities.add().counter_entry.counter_id = 0
        requests.append(everything.SerializeToString())
        answers = []
        for hook in (None, lambda rpc, req: None):
            switch.servicer.rpc_hook = hook
            answers.append([s.read_counters(r).rows() for r in requests])
        assert answers[0] == answers[1]
        few, every = answers[0]
        assert few == [(cid, 0, 1000, 10), (cid, 1, 1001, 11), (cid, 2, 0, 0),
                       (counters[-1].id, 5, 1000 * len(counters) + 5, 10 * len(counters) + 5)]
        assert len(every) == sum(c.size for c in P4.proto.counters)
        refusals = []
        for hook in (None, lambda rpc, req: None):
            switch.servicer.rpc_hook = hook
            with pytest.raises(ReadFailed) as err:
                s.read_counters(s.counter_request([(cid, 10**6)]))
            refusals.append(str(err.value))
        assert refusals[0] == refusals[1] and "out of range" in refusals[0]
