"""P4Info ids the way the reference compiler p4c assigns them.

P4Runtime ids are 32 bits: the top 8 bits are the resource type (``p4.config.v1.P4Ids.Prefix``:
action 0x01, table 0x02, counter 0x12, register 0x16, ...; P4Runtime specification section
"Id Allocation for P4Info Objects"), the low 24 bits identify the object within its type.

p4c (``control-plane/p4RuntimeSymbolTable``) gives every object without an ``@id`` annotation the
low 24 bits of Bob Jenkins' one-at-a-time hash of its fully qualified control-plane name
(``InaIngress.ina_forward``, ``NoAction``). Collisions are resolved by linear probing on the 32-bit
hash value (the type prefix never changes): the names of one type are taken in sorted order, and a
name whose id is taken tries hash + 1, hash + 2, ... So an id depends on the other names of the
same type that sort before it; :func:`assign_ids` takes all of them.

This is a reimplementation from that description, checked against the P4Info p4c v1.2.4.1 wrote
for ``p4/ina_v1model.p4`` (``tests/dataplane/test_dataplane_p4info_compiler.py``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from inaplanner.errors import InaplannerError

#: P4Runtime resource-type prefixes (``P4Ids.Prefix`` of p4info.proto), by P4Info entity kind.
PREFIX: dict[str, int] = {
    "action": 0x01,
    "table": 0x02,
    "value_set": 0x03,
    "controller_header": 0x04,
    "action_profile": 0x11,
    "counter": 0x12,
    "direct_counter": 0x13,
    "meter": 0x14,
    "direct_meter": 0x15,
    "register": 0x16,
    "digest": 0x17,
}

_MASK32 = 0xFFFFFFFF
_LOW24 = 0xFFFFFF


def one_at_a_time(data: bytes) -> int:
    """Bob Jenkins' one-at-a-time hash of ``data`` (32-bit unsigned arithmetic)."""
    h = 0
    for byte in data:
        h = (h + byte) & _MASK32
        h = (h + (h << 10)) & _MASK32
        h ^= h >> 6
    h = (h + (h << 3)) & _MASK32
    h ^= h >> 11
    return (h + (h << 15)) & _MASK32


def _prefix(kind: str) -> int:
    try:
        return PREFIX[kind]
    except KeyError:
        raise InaplannerError(f"P4Info: unknown resource kind {kind!r} "
                              f"(one of {', '.join(PREFIX)})") from None


def make_id(kind: str, value: int) -> int:
    """The id of resource ``kind`` built from a 32-bit hash value: prefix << 24 | low 24 bits."""
    return (_prefix(kind) << 24) | (value & _LOW24)


def hashed_id(kind: str, name: str) -> int:
    """The id p4c gives ``name`` when no other object of its kind collides with it."""
    return make_id(kind, one_at_a_time(name.encode("utf-8")))


def assign_ids(kind: str, names: Iterable[str], taken: Iterable[int] = (),
               fixed: Mapping[str, int] | None = None) -> dict[str, int]:
    """Ids of every object of one ``kind``, as p4c assigns them.

    ``fixed`` holds objects with an explicit ``@id`` (kept as given, prefix added when missing);
    ``taken`` ids already used by anything else. The other names are hashed in sorted (byte)
    order, each probing hash, hash + 1, ... (mod 2**32) until its id is free.
    """
    prefix = _prefix(kind) << 24
    used = set(taken)
    out: dict[str, int] = {}
    for name, given in (fixed or {}).items():
        full = given if given >> 24 else prefix | given
        if full >> 24 != prefix >> 24:
            raise InaplannerError(f"P4Info: @id {given:#x} of {kind} {name} has the wrong prefix")
        if full in used:
            raise InaplannerError(f"P4Info: @id {full:#x} is assigned twice ({kind} {name})")
        used.add(full)
        out[name] = full
    for name in sorted(set(names) - set(out), key=lambda n: n.encode("utf-8")):
        start = value = one_at_a_time(name.encode("utf-8"))
        while prefix | (value & _LOW24) in used:
            value = (value + 1) & _MASK32
            if value == start:
                raise InaplannerError(f"P4Info: no id left for {kind} {name}")
        out[name] = prefix | (value & _LOW24)
        used.add(out[name])
    return out
