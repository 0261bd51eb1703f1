"""What a switch holds, as P4Runtime entities: identity keys, canonical form, and the updates that
turn one set into another (inserts, modifies, deletes).

Two entity sets are compared in canonical form (P4Runtime spec 8.4: byte strings without leading
zeros; match fields sorted by id; action parameters by id; multicast replicas as a set), so an
entry read back from a target equals the one written even when the target re-encodes it.
Identity (spec 9.1.1): a table entry is its table, match and priority; a default entry is its
table; a multicast group its id.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from p4.v1 import p4runtime_pb2

from inaplanner.dataplane.bytestrings import canonical

INSERT = p4runtime_pb2.Update.INSERT
MODIFY = p4runtime_pb2.Update.MODIFY
DELETE = p4runtime_pb2.Update.DELETE

Key = tuple


def _is_canonical(entity: p4runtime_pb2.Entity) -> bool:
    """True for a table entry already in canonical form (the usual case: no copy needed)."""
    if entity.WhichOneof("entity") != "table_entry":
        return False
    te = entity.table_entry
    last = 0
    for m in te.match:
        if m.field_id <= last:
            return False
        last = m.field_id
        which = m.WhichOneof("field_match_type")
        if which == "exact":
            v = m.exact.value
        elif which == "optional":
            v = m.optional.value
        else:
            return False
        if len(v) > 1 and v[0] == 0:
            return False
    last = 0
    for p in te.action.action.params:
        if p.param_id <= last or (len(p.value) > 1 and p.value[0] == 0):
            return False
        last = p.param_id
    return True


def canonical_entity(entity: p4runtime_pb2.Entity) -> p4runtime_pb2.Entity:
    """``entity`` in canonical form (see the module docstring): the entity itself when it already
    is, else a canonical copy. Never modifies ``entity``."""
    if _is_canonical(entity):
        return entity
    out = p4runtime_pb2.Entity()
    out.CopyFrom(entity)
    kind = out.WhichOneof("entity")
    if kind == "table_entry":
        te = out.table_entry
        matches = sorted(te.match, key=lambda m: m.field_id)
        fixed = []
        for m in matches:
            c = p4runtime_pb2.FieldMatch()
            c.CopyFrom(m)
            which = c.WhichOneof("field_match_type")
            if which in ("exact", "optional"):
                v = getattr(c, which)
                v.value = canonical(v.value)
            elif which == "ternary":
                c.ternary.value = canonical(c.ternary.value)
                c.ternary.mask = canonical(c.ternary.mask)
            elif which == "lpm":
                c.lpm.value = canonical(c.lpm.value)
            elif which == "range":
                c.range.low = canonical(c.range.low)
                c.range.high = canonical(c.range.high)
            fixed.append(c)
        del te.match[:]
        te.match.extend(fixed)
        if te.action.HasField("action"):
            params = sorted(te.action.action.params, key=lambda p: p.param_id)
            fixed_params = [p4runtime_pb2.Action.Param(param_id=p.param_id, value=canonical(p.value))
                            for p in params]
            del te.action.action.params[:]
            te.action.action.params.extend(fixed_params)
    elif kind == "packet_replication_engine_entry":
        pre = out.packet_replication_engine_entry
        if pre.HasField("multicast_group_entry"):
            g = pre.multicast_group_entry
            reps = []
            for r in g.replicas:
                port = r.egress_port if r.WhichOneof("port_kind") == "egress_port" else \
                    int.from_bytes(r.port, "big")
                reps.append((port, r.instance))
            del g.replicas[:]
            for port, inst in sorted(reps):
                g.replicas.add(egress_port=port, instance=inst)
    return out


def entity_key(entity: p4runtime_pb2.Entity) -> Key:
    """The identity of an entity on its switch (assumes canonical form)."""
    kind = entity.WhichOneof("entity")
    if kind == "table_entry":
        te = entity.table_entry
        if te.is_default_action:
            return ("table", te.table_id, "default")
        return ("table", te.table_id,
                tuple(m.SerializeToString(deterministic=True) for m in te.match), te.priority)
    if kind == "packet_replication_engine_entry":
        pre = entity.packet_replication_engine_entry
        if pre.HasField("multicast_group_entry"):
            return ("mcast", pre.multicast_group_entry.multicast_group_id)
        return ("clone", pre.clone_session_entry.session_id)
    if kind == "register_entry":
        return ("register", entity.register_entry.register_id, entity.register_entry.index.index)
    if kind == "counter_entry":
        return ("counter", entity.counter_entry.counter_id, entity.counter_entry.index.index)
    return (kind or "none", entity.SerializeToString(deterministic=True))


def is_default_entry(entity: p4runtime_pb2.Entity) -> bool:
    return entity.WhichOneof("entity") == "table_entry" and entity.table_entry.is_default_action


def index_entities(entities: Iterable[p4runtime_pb2.Entity]) -> dict[Key, p4runtime_pb2.Entity]:
    """Canonical entities by key (later duplicates win, as a later write would)."""
    out: dict[Key, p4runtime_pb2.Entity] = {}
    for e in entities:
        c = canonical_entity(e)
        out[entity_key(c)] = c
    return out


def _rank(entity: p4runtime_pb2.Entity) -> int:
    """Write order: multicast groups before the table entries that send to them."""
    return 0 if entity.WhichOneof("entity") == "packet_replication_engine_entry" else 1


@dataclass
class StateDiff:
    """What turns the current entities into the wanted ones."""

    insert: list[p4runtime_pb2.Entity] = field(default_factory=list)
    modify: list[p4runtime_pb2.Entity] = field(default_factory=list)
    delete: list[p4runtime_pb2.Entity] = field(default_factory=list)
    unchanged: int = 0

    @property
    def empty(self) -> bool:
        return not (self.insert or self.modify or self.delete)

    def counts(self) -> dict[str, int]:
        return {"insert": len(self.insert), "modify": len(self.modify),
                "delete": len(self.delete), "unchanged": self.unchanged}

    def updates(self) -> list[p4runtime_pb2.Update]:
        """Deletes first (table entries, then groups), then modifies, then inserts (groups, then
        table entries), so that nothing points at a group that is gone or not there yet."""
        out: list[p4runtime_pb2.Update] = []
        for e in sorted(self.delete, key=lambda e: -_rank(e)):
            out.append(p4runtime_pb2.Update(type=DELETE, entity=e))
        for e in self.modify:
            out.append(p4runtime_pb2.Update(type=MODIFY, entity=e))
        for e in sorted(self.insert, key=_rank):
            out.append(p4runtime_pb2.Update(type=MODIFY if is_default_entry(e) else INSERT,
                                            entity=e))
        return out


def diff_state(current: Sequence[p4runtime_pb2.Entity] | dict[Key, p4runtime_pb2.Entity],
               wanted: Sequence[p4runtime_pb2.Entity] | dict[Key, p4runtime_pb2.Entity]) -> StateDiff:
    """The updates that make ``current`` equal ``wanted``; keeps ``wanted``'s order for inserts."""
    cur = current if isinstance(current, dict) else index_entities(current)
    want = wanted if isinstance(wanted, dict) else index_entities(wanted)
    d = StateDiff()
    for key, e in want.items():
        have = cur.get(key)
        if have is None:
            d.insert.append(e)
        elif have.SerializeToString(deterministic=True) != e.SerializeToString(deterministic=True):
            d.modify.append(e)
        else:
            d.unchanged += 1
    for key, e in cur.items():
        if key not in want:
            d.delete.append(_key_only(e))
    return d


def _key_only(entity: p4runtime_pb2.Entity) -> p4runtime_pb2.Entity:
    """What a DELETE needs: the key fields only (a table entry without its action)."""
    out = p4runtime_pb2.Entity()
    out.CopyFrom(entity)
    if out.WhichOneof("entity") == "table_entry":
        out.table_entry.ClearField("action")
    return out


def same_state(a: Sequence[p4runtime_pb2.Entity], b: Sequence[p4runtime_pb2.Entity]) -> bool:
    return diff_state(a, b).empty


def describe_differences(current: Sequence[p4runtime_pb2.Entity],
                         wanted: Sequence[p4runtime_pb2.Entity], limit: int = 3) -> str:
    """A short text of what differs, for verification errors."""
    from inaplanner.deploy.p4rt import describe_entity

    d = diff_state(current, wanted)
    parts = []
    for what, items in (("missing", d.insert), ("different", d.modify), ("unexpected", d.delete)):
        if items:
            shown = ", ".join(describe_entity(e) for e in items[:limit])
            more = f" and {len(items) - limit} more" if len(items) > limit else ""
            parts.append(f"{len(items)} {what} ({shown}{more})")
    return "; ".join(parts) or "no difference"
