"""Checking P4Runtime entities against a P4Info, as a target does before accepting them.

Each check raises :class:`EntityError` with the google.rpc code a P4Runtime server answers
(P4Runtime spec 1.x, sections 9.1 "TableEntry" and 8.4 "Bytestrings") and returns the entity in
canonical form (canonical byte strings, match fields sorted by id) plus the key that identifies
it in its table: table id + match + priority (spec 9.1.1, "Match key uniqueness").
"""

from __future__ import annotations

from google.rpc import code_pb2
from p4.v1 import p4runtime_pb2

from inaplanner.dataplane import bytestrings
from inaplanner.dataplane.p4info import P4InfoIndex, TableInfo

#: Width accepted for a PRE replica port given as bytes (v1model's port is 9 bits, Tofino's 9;
#: P4Runtime carries it as a 32-bit SDN port at most).
PORT_BITS = 32


class EntityError(Exception):
    """An entity the target refuses: ``code`` is a google.rpc.Code number."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _invalid(message: str) -> EntityError:
    return EntityError(code_pb2.INVALID_ARGUMENT, message)


def _decode(data: bytes, width: int, what: str) -> int:
    try:
        return bytestrings.decode(data, width)
    except ValueError as exc:
        raise _invalid(f"{what}: {exc}") from None


def _canonical_len(value: int) -> int:
    return max(1, (value.bit_length() + 7) // 8)


def _match_key(table: TableInfo, fields: dict, entry: p4runtime_pb2.TableEntry):
    """Check the match of ``entry``: (key parts sorted by field id, already canonical?)."""
    parts = []
    canonical = True
    seen = set()
    last = 0
    for m in entry.match:
        fid = m.field_id
        info = fields.get(fid)
        if info is None:
            raise _invalid(f"table {table.name}: unknown match field id {fid}")
        if fid in seen:
            raise _invalid(f"table {table.name}: match field {info.name} given twice")
        seen.add(fid)
        if fid < last:
            canonical = False  # not sorted by id
        last = fid
        kind = m.WhichOneof("field_match_type")
        if kind != info.kind:
            raise _invalid(f"table {table.name}: match field {info.name} is {info.kind}, "
                           f"got a {kind} match")
        what = f"table {table.name} field {info.name}"
        w = info.bitwidth
        if kind == "exact" or kind == "optional":
            raw = m.exact.value if kind == "exact" else m.optional.value
            value = _decode(raw, w, what)
            canonical = canonical and len(raw) == _canonical_len(value)
            parts.append((fid, value))
        elif kind == "ternary":
            value = _decode(m.ternary.value, w, what)
            mask = _decode(m.ternary.mask, w, what + " mask")
            if mask == 0:
                raise _invalid(f"{what}: a zero mask is a wildcard; omit the field instead")
            if value & ~mask:
                raise _invalid(f"{what}: value has bits set outside the mask")
            canonical = canonical and len(m.ternary.value) == _canonical_len(value) \
                and len(m.ternary.mask) == _canonical_len(mask)
            parts.append((fid, value, mask))
        elif kind == "lpm":
            value = _decode(m.lpm.value, w, what)
            plen = m.lpm.prefix_len
            if not 0 < plen <= w:
                raise _invalid(f"{what}: prefix length {plen} not in 1..{w} "
                               "(a /0 prefix is a wildcard; omit the field)")
            if value & ((1 << (w - plen)) - 1):
                raise _invalid(f"{what}: value has bits set beyond the /{plen} prefix")
            canonical = canonical and len(m.lpm.value) == _canonical_len(value)
            parts.append((fid, value, plen))
        else:  # range
            low = _decode(m.range.low, w, what + " low")
            high = _decode(m.range.high, w, what + " high")
            if low > high:
                raise _invalid(f"{what}: range low {low} > high {high}")
            if low == 0 and high == (1 << w) - 1:
                raise _invalid(f"{what}: the full range is a wildcard; omit the field instead")
            canonical = canonical and len(m.range.low) == _canonical_len(low) \
                and len(m.range.high) == _canonical_len(high)
            parts.append((fid, low, high))
    for info in table.match_fields:
        if info.kind == "exact" and info.id not in seen:
            raise _invalid(f"table {table.name}: exact match field {info.name} is missing")
    parts.sort()
    return tuple(parts), canonical


def _field_match(info, part) -> p4runtime_pb2.FieldMatch:
    out = p4runtime_pb2.FieldMatch(field_id=part[0])
    if info.kind == "exact":
        out.exact.value = bytestrings.encode(part[1])
    elif info.kind == "optional":
        out.optional.value = bytestrings.encode(part[1])
    elif info.kind == "ternary":
        out.ternary.value = bytestrings.encode(part[1])
        out.ternary.mask = bytestrings.encode(part[2])
    elif info.kind == "lpm":
        out.lpm.value = bytestrings.encode(part[1])
        out.lpm.prefix_len = part[2]
    else:
        out.range.low = bytestrings.encode(part[1])
        out.range.high = bytestrings.encode(part[2])
    return out


def _check_action(p4: P4InfoIndex, table: TableInfo, entry: p4runtime_pb2.TableEntry):
    """Check the action of ``entry``: (sorted (param id, value) pairs, already canonical?)."""
    kind = entry.action.WhichOneof("type")
    if kind is None:
        raise _invalid(f"table {table.name}: the entry has no action")
    if kind != "action":
        raise _invalid(f"table {table.name}: has no action profile; only direct actions apply")
    act = entry.action.action
    info = p4.actions.get(act.action_id)
    if info is None:
        raise _invalid(f"table {table.name}: unknown action id {act.action_id}")
    scope = table.actions.get(act.action_id)
    if scope is None:
        raise _invalid(f"table {table.name}: action {info.name} is not one of its actions")
    if entry.is_default_action and scope == "table_only":
        raise _invalid(f"table {table.name}: action {info.name} cannot be the default action")
    if not entry.is_default_action and scope == "default_only":
        raise _invalid(f"table {table.name}: action {info.name} is only a default action")
    params = p4.action_params[act.action_id]
    given: dict[int, int] = {}
    canonical = True
    last = 0
    for p in act.params:
        pinfo = params.get(p.param_id)
        if pinfo is None:
            raise _invalid(f"action {info.name}: unknown parameter id {p.param_id}")
        if p.param_id in given:
            raise _invalid(f"action {info.name}: parameter {pinfo.name} given twice")
        if p.param_id < last:
            canonical = False
        last = p.param_id
        value = _decode(p.value, pinfo.bitwidth, f"action {info.name} parameter {pinfo.name}")
        canonical = canonical and len(p.value) == _canonical_len(value)
        given[p.param_id] = value
    if len(given) != len(params):
        missing = [p.name for p in info.params if p.id not in given]
        raise _invalid(f"action {info.name}: parameter(s) {', '.join(missing)} missing")
    return act.action_id, tuple(sorted(given.items())), canonical


#: Fields of a TableEntry the emulator keeps; an entry with others set is rebuilt without them.
_KEPT = {"table_id", "match", "action", "priority", "controller_metadata", "metadata",
         "is_default_action"}


def table_key(p4: P4InfoIndex, entry: p4runtime_pb2.TableEntry) -> tuple:
    """The identity of an entry in its table (table id, match, priority), checked."""
    table = p4.tables.get(entry.table_id)
    if table is None:
        raise _invalid(f"unknown table id {entry.table_id}")
    if entry.is_default_action:
        return (entry.table_id, "default")
    parts, _ = _match_key(table, p4.table_fields[entry.table_id], entry)
    return (entry.table_id, parts, entry.priority)


def check_table_entry(p4: P4InfoIndex, entry: p4runtime_pb2.TableEntry,
                      update_type: int) -> tuple[tuple, p4runtime_pb2.TableEntry]:
    """Validate one TableEntry of a Write; return (key, canonical entry).

    The entry given is returned as is when it is already canonical (the common case, and cheap
    with the pure-Python protobuf runtime); otherwise a canonical copy is built.
    """
    table = p4.tables.get(entry.table_id)
    if table is None:
        raise _invalid(f"unknown table id {entry.table_id}")
    if table.is_const:
        raise EntityError(code_pb2.PERMISSION_DENIED, f"table {table.name} is const")
    if entry.is_default_action:
        if len(entry.match):
            raise _invalid(f"table {table.name}: a default entry has no match")
        if entry.priority:
            raise _invalid(f"table {table.name}: a default entry has no priority")
        if update_type == p4runtime_pb2.Update.INSERT:
            raise _invalid(f"table {table.name}: the default entry can only be modified")
        if table.const_default_action_id:
            raise EntityError(code_pb2.PERMISSION_DENIED,
                              f"table {table.name}: the default action is const")
        key: tuple = (entry.table_id, "default")
        parts: tuple = ()
        canonical = True
    else:
        fields = p4.table_fields[entry.table_id]
        parts, canonical = _match_key(table, fields, entry)
        if table.needs_priority:
            if entry.priority <= 0:
                raise _invalid(f"table {table.name}: has ternary/range/optional fields, "
                               "so the entry needs a priority > 0")
        elif entry.priority != 0:
            raise _invalid(f"table {table.name}: exact/lpm table, the entry must not have "
                           f"a priority (got {entry.priority})")
        key = (entry.table_id, parts, entry.priority)
    action = None
    if update_type != p4runtime_pb2.Update.DELETE:
        action = _check_action(p4, table, entry)
        canonical = canonical and action[2]
    elif entry.HasField("action"):
        canonical = False  # a stored DELETE key carries no action
    if canonical and all(f.name in _KEPT for f, _ in entry.ListFields()):
        return key, entry
    out = p4runtime_pb2.TableEntry(table_id=entry.table_id, priority=entry.priority,
                                   is_default_action=entry.is_default_action,
                                   controller_metadata=entry.controller_metadata,
                                   metadata=entry.metadata)
    fields = p4.table_fields[entry.table_id]
    for part in parts:
        out.match.append(_field_match(fields[part[0]], part))
    if action is not None:
        out.action.action.action_id = action[0]
        for pid, value in action[1]:
            out.action.action.params.add(param_id=pid, value=bytestrings.encode(value))
    return key, out


def check_multicast_group(entry: p4runtime_pb2.MulticastGroupEntry,
                          update_type: int) -> p4runtime_pb2.MulticastGroupEntry:
    """Validate a PRE multicast group entry; return it canonical (replicas in given order)."""
    gid = entry.multicast_group_id
    if gid == 0:
        raise _invalid("multicast group id 0 is reserved")
    out = p4runtime_pb2.MulticastGroupEntry(multicast_group_id=gid, metadata=entry.metadata)
    if update_type == p4runtime_pb2.Update.DELETE:
        return out
    seen = set()
    for r in entry.replicas:
        kind = r.WhichOneof("port_kind")
        if kind == "port":
            port = _decode(r.port, PORT_BITS, f"multicast group {gid} replica port")
        elif kind == "egress_port":
            port = r.egress_port
        else:
            raise _invalid(f"multicast group {gid}: a replica has no port")
        if (port, r.instance) in seen:
            raise _invalid(f"multicast group {gid}: replica (port {port}, instance "
                           f"{r.instance}) given twice")
        seen.add((port, r.instance))
        rep = out.replicas.add(instance=r.instance)
        if kind == "port":
            rep.port = bytestrings.encode(port)
        else:
            rep.egress_port = port
    return out
