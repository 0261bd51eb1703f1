"""Writes to the emulated target: checks against the P4Info and per-update error details.

Messages are built with p4runtime-shell's API (``TableEntry(...).msg()``) where it can express
them, and with p4runtime_pb2 directly for malformed ones it refuses to build. Batched errors are
parsed with :func:`inaplanner.deploy.p4rt_errors.parse_write_error` (p4runtime-shell's
``P4RuntimeErrorIterator`` loops forever on an OK before a failure).
"""

from __future__ import annotations

import grpc
import pytest
from google.rpc import code_pb2
from p4.v1 import p4runtime_pb2

from inaplanner.deploy.p4rt_errors import parse_write_error

INSERT, MODIFY, DELETE = "INSERT", "MODIFY", "DELETE"


def port_entry(sh, port, job, out_port=None):
    te = sh.TableEntry("ports")
    te.match["port"] = str(port)
    te.match["job"] = str(job)
    if out_port is None:
        te.action = sh.Action("drop")
    else:
        te.action = sh.Action("fwd")
        te.action["port"] = str(out_port)
    return te.msg()


def write_expect(rt, client, updates):
    """Write a batch; return per-update codes (all OK when the RPC succeeds)."""
    try:
        rt.write(client, updates)
    except grpc.RpcError as exc:
        assert exc.code() == grpc.StatusCode.UNKNOWN
        statuses = parse_write_error(exc)
        assert statuses is not None and len(statuses) == len(updates)
        return [(s.code, s.message) for s in statuses]
    return [(code_pb2.OK, "")] * len(updates)


def codes(results):
    return [c for c, _ in results]


def test_insert_modify_delete_cycle(emulator, primary, rt, shell_context):
    sh = shell_context
    up = rt.update
    assert codes(write_expect(rt, primary, [up(INSERT, "table_entry", port_entry(sh, 1, 7, 3))])) \
        == [code_pb2.OK]
    assert len(emulator.state.table_entries) == 1
    res = write_expect(rt, primary, [up(INSERT, "table_entry", port_entry(sh, 1, 7, 4))])
    assert codes(res) == [code_pb2.ALREADY_EXISTS]
    assert codes(write_expect(rt, primary, [up(MODIFY, "table_entry", port_entry(sh, 1, 7, 4))])) \
        == [code_pb2.OK]
    stored = emulator.state.table_entries[0]
    assert stored.action.action.params[0].value == b"\x04"
    res = write_expect(rt, primary, [up(MODIFY, "table_entry", port_entry(sh, 2, 7, 4))])
    assert codes(res) == [code_pb2.NOT_FOUND]
    res = write_expect(rt, primary, [up(DELETE, "table_entry", port_entry(sh, 2, 7))])
    assert codes(res) == [code_pb2.NOT_FOUND]
    assert codes(write_expect(rt, primary, [up(DELETE, "table_entry", port_entry(sh, 1, 7))])) \
        == [code_pb2.OK]
    assert emulator.state.table_entries == []


def test_batch_details_hold_oks_before_and_after_failures(emulator, primary, rt, shell_context):
    sh = shell_context
    up = rt.update
    batch = [
        up(INSERT, "table_entry", port_entry(sh, 1, 1, 2)),
        up(INSERT, "table_entry", port_entry(sh, 2, 1, 2)),
        up(INSERT, "table_entry", port_entry(sh, 1, 1, 5)),  # duplicate of the first
        up(INSERT, "table_entry", port_entry(sh, 3, 1, 2)),
        up(DELETE, "table_entry", port_entry(sh, 9, 9)),  # not there
    ]
    res = write_expect(rt, primary, batch)
    assert codes(res) == [code_pb2.OK, code_pb2.OK, code_pb2.ALREADY_EXISTS, code_pb2.OK,
                          code_pb2.NOT_FOUND]
    assert "exists" in res[2][1] and "ports" in res[2][1]
    # CONTINUE_ON_ERROR: the good ones went in, the duplicate did not overwrite
    assert len(emulator.state.table_entries) == 3
    first = [e for e in emulator.state.table_entries if e.match[0].exact.value == b"\x01"][0]
    assert first.action.action.params[0].value == b"\x02"


def test_raw_metadata_shape_of_the_error(primary, rt, shell_context):
    """The trailer is a google.rpc.Status of p4.v1.Error, as bmv2/PI send it."""
    from google.rpc import status_pb2

    up = rt.update
    entry = port_entry(shell_context, 1, 1, 2)
    with pytest.raises(grpc.RpcError) as err:
        rt.write(primary, [up(INSERT, "table_entry", entry), up(INSERT, "table_entry", entry)])
    raw = dict(err.value.trailing_metadata())["grpc-status-details-bin"]
    status = status_pb2.Status.FromString(raw)
    assert status.code == code_pb2.UNKNOWN and len(status.details) == 2
    e0, e1 = p4runtime_pb2.Error(), p4runtime_pb2.Error()
    assert status.details[0].Unpack(e0) and status.details[1].Unpack(e1)
    assert (e0.canonical_code, e1.canonical_code) == (code_pb2.OK, code_pb2.ALREADY_EXISTS)


def _raw_entry(table_id=33554433, fields=((1, b"\x01"), (2, b"\x01")), action=16777218,
               params=(), priority=0):
    te = p4runtime_pb2.TableEntry(table_id=table_id, priority=priority)
    for fid, value in fields:
        te.match.add(field_id=fid).exact.value = value
    if action is not None:
        te.action.action.action_id = action
        for pid, value in params:
            te.action.action.params.add(param_id=pid, value=value)
    return te


@pytest.mark.parametrize(
    ("entry", "fragment"),
    [
        (_raw_entry(table_id=33554999), "unknown table id"),
        (_raw_entry(fields=((1, b"\x01"), (3, b"\x01"))), "unknown match field id"),
        (_raw_entry(fields=((1, b"\x01"),)), "job is missing"),
        (_raw_entry(fields=((1, b"\x02\x00"), (2, b"\x01"))), "does not fit in 9 bits"),
        (_raw_entry(fields=((1, b"\x00\x00\x01"), (2, b"\x01"))), "longer than a 9-bit field"),
        (_raw_entry(fields=((1, b""), (2, b"\x01"))), "empty byte string"),
        (_raw_entry(fields=((1, b"\x01"), (1, b"\x02"), (2, b"\x01"))), "given twice"),
        (_raw_entry(action=16777299), "unknown action id"),
        (_raw_entry(action=None), "has no action"),
        (_raw_entry(action=16777217), "parameter(s) port missing"),
        (_raw_entry(action=16777217, params=((1, b"\x02\x00"),)), "does not fit in 9 bits"),
        (_raw_entry(action=16777217, params=((1, b"\x01"), (2, b"\x01"))), "unknown parameter id"),
        (_raw_entry(action=16777219, params=((1, b"\x01"),)), "only a default action"),
        (_raw_entry(priority=10), "must not have a priority"),
    ],
)
def test_invalid_table_entries(primary, rt, entry, fragment, emulator):
    res = write_expect(rt, primary, [rt.update(INSERT, "table_entry", entry)])
    assert res[0][0] == code_pb2.INVALID_ARGUMENT
    assert fragment in res[0][1]
    assert emulator.state.table_entries == []


def _acl(priority, addr=None, mask=None, low=None, high=None, proto=None):
    te = p4runtime_pb2.TableEntry(table_id=33554434, priority=priority)
    if addr is not None:
        m = te.match.add(field_id=1)
        m.ternary.value, m.ternary.mask = addr, mask
    if low is not None:
        m = te.match.add(field_id=2)
        m.range.low, m.range.high = low, high
    if proto is not None:
        te.match.add(field_id=3).optional.value = proto
    te.action.action.action_id = 16777218
    return te


@pytest.mark.parametrize(
    ("entry", "code", "fragment"),
    [
        (_acl(0, b"\x0a", b"\xff"), code_pb2.INVALID_ARGUMENT, "needs a priority"),
        (_acl(5, b"\x0a", b"\x00"), code_pb2.INVALID_ARGUMENT, "zero mask"),
        (_acl(5, b"\x0f", b"\xf0"), code_pb2.INVALID_ARGUMENT, "outside the mask"),
        (_acl(5, low=b"\x09", high=b"\x02"), code_pb2.INVALID_ARGUMENT, "low 9 > high 2"),
        (_acl(5, low=b"\x00", high=b"\xff\xff"), code_pb2.INVALID_ARGUMENT, "full range"),
        (_acl(5, proto=b"\x01\x00"), code_pb2.INVALID_ARGUMENT, "longer than a 8-bit field"),
        (_acl(5, b"\x0a", b"\xff", b"\x01", b"\x10", b"\x06"), code_pb2.OK, ""),
        (_acl(5), code_pb2.OK, ""),  # all wildcards, with a priority
    ],
)
def test_ternary_range_optional_checks(primary, rt, entry, code, fragment):
    res = write_expect(rt, primary, [rt.update(INSERT, "table_entry", entry)])
    assert res[0][0] == code
    assert fragment in res[0][1]


def test_same_match_different_priority_are_different_entries(primary, rt, emulator):
    e1, e2 = _acl(5, b"\x0a", b"\xff"), _acl(6, b"\x0a", b"\xff")
    assert codes(write_expect(rt, primary, [rt.update(INSERT, "table_entry", e1),
                                            rt.update(INSERT, "table_entry", e2),
                                            rt.update(INSERT, "table_entry", e1)])) == \
        [code_pb2.OK, code_pb2.OK, code_pb2.ALREADY_EXISTS]
    assert len(emulator.state.table_entries) == 2


def _route(value, plen, action=16777217):
    te = p4runtime_pb2.TableEntry(table_id=33554435)
    m = te.match.add(field_id=1)
    m.lpm.value, m.lpm.prefix_len = value, plen
    te.action.action.action_id = action
    if action == 16777217:
        te.action.action.params.add(param_id=1, value=b"\x01")
    return te


def test_lpm_checks(primary, rt):
    results = write_expect(rt, primary, [
        rt.update(INSERT, "table_entry", _route(b"\x0a\x00\x00\x00", 8)),
        rt.update(INSERT, "table_entry", _route(b"\x0a\x01\x00\x00", 8)),
        rt.update(INSERT, "table_entry", _route(b"\x0a\x00\x00\x00", 0)),
        rt.update(INSERT, "table_entry", _route(b"\x0a\x00\x00\x00", 33)),
        rt.update(INSERT, "table_entry", _route(b"\x0a\x00\x00\x00", 16)),
    ])
    assert codes(results) == [code_pb2.OK, code_pb2.INVALID_ARGUMENT, code_pb2.INVALID_ARGUMENT,
                              code_pb2.INVALID_ARGUMENT, code_pb2.OK]
    assert "beyond the /8 prefix" in results[1][1]


def test_default_action(primary, rt, emulator):
    miss = p4runtime_pb2.TableEntry(table_id=33554433, is_default_action=True)
    miss.action.action.action_id = 16777219
    miss.action.action.params.add(param_id=1, value=b"\x07")
    assert codes(write_expect(rt, primary, [rt.update(INSERT, "table_entry", miss)])) == \
        [code_pb2.INVALID_ARGUMENT]
    assert codes(write_expect(rt, primary, [rt.update(MODIFY, "table_entry", miss)])) == \
        [code_pb2.OK]
    assert emulator.state.default_entries[0].action.action.action_id == 16777219
    # a TABLE_ONLY action cannot be the default; a const default cannot change
    only = p4runtime_pb2.TableEntry(table_id=33554435, is_default_action=True)
    only.action.action.action_id = 16777218
    fixed = p4runtime_pb2.TableEntry(table_id=33554436, is_default_action=True)
    fixed.action.action.action_id = 16777218
    res = write_expect(rt, primary, [rt.update(MODIFY, "table_entry", only),
                                     rt.update(MODIFY, "table_entry", fixed)])
    assert codes(res) == [code_pb2.INVALID_ARGUMENT, code_pb2.PERMISSION_DENIED]
    assert "cannot be the default" in res[0][1] and "const" in res[1][1]


def test_table_full_is_resource_exhausted(primary, rt, shell_context):
    sh = shell_context
    batch = [rt.update(INSERT, "table_entry", port_entry(sh, p, 1, 1)) for p in range(1, 6)]
    assert codes(write_expect(rt, primary, batch)) == [code_pb2.OK] * 4 + \
        [code_pb2.RESOURCE_EXHAUSTED]


def test_padded_values_are_stored_canonical(primary, rt, emulator):
    entry = _raw_entry(fields=((1, b"\x00\x05"), (2, b"\x00\x00")), action=16777217,
                       params=((1, b"\x00\x03"),))
    write_expect(rt, primary, [rt.update(INSERT, "table_entry", entry)])
    stored = emulator.state.table_entries[0]
    assert [m.exact.value for m in stored.match] == [b"\x05", b"\x00"]
    assert stored.action.action.params[0].value == b"\x03"
    # the padded and the canonical forms name the same entry
    canonical = _raw_entry(fields=((1, b"\x05"), (2, b"\x00")), action=16777218)
    assert codes(write_expect(rt, primary, [rt.update(INSERT, "table_entry", canonical)])) == \
        [code_pb2.ALREADY_EXISTS]


def test_multicast_groups(primary, rt, emulator, shell_context):
    sh = shell_context
    group = sh.MulticastGroupEntry(3).add(1, 0).add(2, 0).add(5, 1)
    pre = group.msg()
    ups = [rt.update(INSERT, "packet_replication_engine_entry", pre),
           rt.update(INSERT, "packet_replication_engine_entry", pre)]
    assert codes(write_expect(rt, primary, ups)) == [code_pb2.OK, code_pb2.ALREADY_EXISTS]
    stored = emulator.state.multicast_groups
    assert [(r.egress_port, r.instance) for r in stored[0].replicas] == [(1, 0), (2, 0), (5, 1)]
    dup = sh.MulticastGroupEntry(4).add(1, 0).add(1, 0).msg()
    zero = sh.MulticastGroupEntry(0).add(1, 0).msg()
    missing = sh.MulticastGroupEntry(9).add(1, 0).msg()
    res = write_expect(rt, primary, [
        rt.update(INSERT, "packet_replication_engine_entry", dup),
        rt.update(INSERT, "packet_replication_engine_entry", zero),
        rt.update(MODIFY, "packet_replication_engine_entry", missing),
        rt.update(MODIFY, "packet_replication_engine_entry", sh.MulticastGroupEntry(3).add(7).msg()),
    ])
    assert codes(res) == [code_pb2.INVALID_ARGUMENT, code_pb2.INVALID_ARGUMENT,
                          code_pb2.NOT_FOUND, code_pb2.OK]
    assert [r.egress_port for r in emulator.state.multicast_groups[0].replicas] == [7]
    res = write_expect(rt, primary, [
        rt.update(DELETE, "packet_replication_engine_entry", sh.MulticastGroupEntry(3).msg()),
        rt.update(DELETE, "packet_replication_engine_entry", sh.MulticastGroupEntry(3).msg()),
    ])
    assert codes(res) == [code_pb2.OK, code_pb2.NOT_FOUND]
    assert emulator.state.multicast_groups == []


def test_injected_failure_and_atomicity(primary, rt, emulator, shell_context):
    sh = shell_context
    emulator.fail_on(lambda u: u.entity.table_entry.match[0].exact.value == b"\x02"
                     and "driver rejected port 2")
    batch = [rt.update(INSERT, "table_entry", port_entry(sh, p, 1, 1)) for p in (1, 2, 3)]
    res = write_expect(rt, primary, batch)
    assert codes(res) == [code_pb2.OK, code_pb2.INTERNAL, code_pb2.OK]
    assert res[1][1] == "driver rejected port 2"
    emulator.fail_on(None)
    assert codes(write_expect(rt, primary, [batch[1]])) == [code_pb2.OK]
    with pytest.raises(grpc.RpcError) as err:
        rt.write(primary, [batch[0]], atomicity=p4runtime_pb2.WriteRequest.ROLLBACK_ON_ERROR)
    assert err.value.code() == grpc.StatusCode.UNIMPLEMENTED
    assert parse_write_error(err.value) is None


def test_register_writes_are_unimplemented(primary, rt):
    u = p4runtime_pb2.Update(type=p4runtime_pb2.Update.MODIFY)
    u.entity.register_entry.register_id = 369098753
    assert codes(write_expect(rt, primary, [u])) == [code_pb2.UNIMPLEMENTED]
