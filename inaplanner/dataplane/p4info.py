"""The P4Info of the INA program: loading, name <-> id lookups, widths.

The checked-in ``p4/ina_v1model.p4info.txtpb`` is the contract between the P4 program, the entry
generator (:mod:`inaplanner.dataplane.entries`), the deployer and the emulated target
(:mod:`inaplanner.emulator.target`). This module reads it with the P4Runtime protobuf bindings
(``p4.config.v1.p4info_pb2``) and indexes it.

Ids are the ones the reference compiler p4c writes (``prefix << 24 | low 24 bits``: the prefix is
the P4Runtime resource type, the low bits a hash of the fully-qualified name with collision
probing; :mod:`inaplanner.dataplane.p4info_ids`), so the checked-in file is the P4Info a user gets
by compiling ``ina_v1model.p4`` with p4c. A P4Runtime client only ever takes ids from the P4Info it
was given, and the deployer pairs a build's objects with the contract's by name
(:mod:`inaplanner.deploy.p4info_check`), so a TNA build with other ids works too.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from google.protobuf import text_format
from p4.config.v1 import p4info_pb2

from inaplanner import P4_DIR
from inaplanner.dataplane.p4info_ids import hashed_id
from inaplanner.errors import InaplannerError

#: The P4Info of ``p4/ina_v1model.p4`` shipped with the sources.
DEFAULT_P4INFO = P4_DIR / "ina_v1model.p4info.txtpb"

PREFIX = {
    "action": p4info_pb2.P4Ids.ACTION,
    "table": p4info_pb2.P4Ids.TABLE,
    "counter": p4info_pb2.P4Ids.COUNTER,
    "direct_counter": p4info_pb2.P4Ids.DIRECT_COUNTER,
    "meter": p4info_pb2.P4Ids.METER,
    "register": p4info_pb2.P4Ids.REGISTER,
}

MATCH_KIND = {
    p4info_pb2.MatchField.EXACT: "exact",
    p4info_pb2.MatchField.LPM: "lpm",
    p4info_pb2.MatchField.TERNARY: "ternary",
    p4info_pb2.MatchField.RANGE: "range",
    p4info_pb2.MatchField.OPTIONAL: "optional",
}


def object_id(kind: str, name: str) -> int:
    """The id p4c gives P4 object ``name`` (fully qualified) of resource ``kind`` ("table", ...)
    when no other object of that kind collides with it (see
    :func:`inaplanner.dataplane.p4info_ids.assign_ids` for the probing)."""
    return hashed_id(kind, name)


@dataclass(frozen=True)
class MatchFieldInfo:
    id: int
    name: str
    bitwidth: int
    kind: str  # exact / lpm / ternary / range / optional


@dataclass(frozen=True)
class ParamInfo:
    id: int
    name: str
    bitwidth: int


@dataclass(frozen=True)
class ActionInfo:
    id: int
    name: str
    alias: str
    params: tuple[ParamInfo, ...]

    def param(self, name: str) -> ParamInfo:
        for p in self.params:
            if p.name == name:
                return p
        raise InaplannerError(f"action {self.name} has no parameter {name!r}")


@dataclass(frozen=True)
class TableInfo:
    id: int
    name: str
    alias: str
    match_fields: tuple[MatchFieldInfo, ...]
    #: action id -> scope ("table_and_default", "table_only", "default_only")
    actions: dict[int, str]
    size: int
    const_default_action_id: int
    is_const: bool

    def field(self, name: str) -> MatchFieldInfo:
        for f in self.match_fields:
            if f.name == name:
                return f
        raise InaplannerError(f"table {self.name} has no match field {name!r}")

    @property
    def needs_priority(self) -> bool:
        """P4Runtime requires a priority when any field is ternary, range or optional."""
        return any(f.kind in ("ternary", "range", "optional") for f in self.match_fields)


@dataclass(frozen=True)
class CounterInfo:
    id: int
    name: str
    alias: str
    unit: str  # bytes / packets / both
    size: int


@dataclass(frozen=True)
class RegisterInfo:
    id: int
    name: str
    alias: str
    bitwidth: int
    size: int


_SCOPE = {0: "table_and_default", 1: "table_only", 2: "default_only"}
_UNIT = {1: "bytes", 2: "packets", 3: "both"}


class P4InfoIndex:
    """Lookups over one P4Info message. Names may be fully qualified or the alias."""

    def __init__(self, p4info: p4info_pb2.P4Info) -> None:
        self.proto = p4info
        self.tables: dict[int, TableInfo] = {}
        self.actions: dict[int, ActionInfo] = {}
        self.counters: dict[int, CounterInfo] = {}
        self.registers: dict[int, RegisterInfo] = {}
        self._by_name: dict[tuple[str, str], int] = {}
        #: table id -> {field id: field}; action id -> {param id: param} (fast checks)
        self.table_fields: dict[int, dict[int, MatchFieldInfo]] = {}
        self.action_params: dict[int, dict[int, ParamInfo]] = {}
        for a in p4info.actions:
            params = tuple(ParamInfo(p.id, p.name, p.bitwidth) for p in a.params)
            self._add("action", ActionInfo(a.preamble.id, a.preamble.name, a.preamble.alias, params))
        for t in p4info.tables:
            fields = tuple(
                MatchFieldInfo(f.id, f.name, f.bitwidth, MATCH_KIND.get(f.match_type, "other"))
                for f in t.match_fields
            )
            actions = {r.id: _SCOPE.get(r.scope, "table_and_default") for r in t.action_refs}
            info = TableInfo(
                t.preamble.id, t.preamble.name, t.preamble.alias, fields, actions,
                int(t.size), t.const_default_action_id, t.is_const_table,
            )
            self._add("table", info)
        for c in p4info.counters:
            unit = _UNIT.get(c.spec.unit, "both")
            self._add("counter", CounterInfo(c.preamble.id, c.preamble.name, c.preamble.alias,
                                             unit, int(c.size)))
        for r in p4info.registers:
            width = r.type_spec.bitstring.bit.bitwidth
            self._add("register", RegisterInfo(r.preamble.id, r.preamble.name, r.preamble.alias,
                                               width, int(r.size)))

        self.table_fields = {t.id: {f.id: f for f in t.match_fields} for t in self.tables.values()}
        self.action_params = {a.id: {p.id: p for p in a.params} for a in self.actions.values()}

    def _add(self, kind: str, info) -> None:
        store = {"action": self.actions, "table": self.tables, "counter": self.counters,
                 "register": self.registers}[kind]
        if info.id in store or any(info.id in s for s in (self.actions, self.tables,
                                                          self.counters, self.registers)):
            raise InaplannerError(f"P4Info: id {info.id:#x} of {kind} {info.name} is used twice")
        store[info.id] = info
        for n in {info.name, info.alias} - {""}:
            self._by_name[(kind, n)] = info.id

    # -- lookups -------------------------------------------------------------------------------
    def id_of(self, kind: str, name: str) -> int:
        """Id of ``name``: its fully-qualified name, its alias, or a unique dotted suffix of a
        name (bf-p4c prefixes TNA names with the pipe, e.g. ``pipe.InaIngress.ina_forward``)."""
        found = self._by_name.get((kind, name))
        if found is not None:
            return found
        tail = "." + name
        matches = {i for (k, n), i in self._by_name.items() if k == kind and n.endswith(tail)}
        if len(matches) == 1:
            return matches.pop()
        why = "is ambiguous" if matches else "does not exist"
        raise InaplannerError(f"P4Info: {kind} {name!r} {why}")

    def name_of(self, obj_id: int) -> str:
        for store in (self.tables, self.actions, self.counters, self.registers):
            if obj_id in store:
                return store[obj_id].name
        raise InaplannerError(f"P4Info has no object with id {obj_id:#x}")

    def table(self, key: str | int) -> TableInfo:
        return self.tables[key if isinstance(key, int) else self.id_of("table", key)]

    def action(self, key: str | int) -> ActionInfo:
        return self.actions[key if isinstance(key, int) else self.id_of("action", key)]

    def counter(self, key: str | int) -> CounterInfo:
        return self.counters[key if isinstance(key, int) else self.id_of("counter", key)]

    def register(self, key: str | int) -> RegisterInfo:
        return self.registers[key if isinstance(key, int) else self.id_of("register", key)]


def parse_p4info_text(text: str, source: str = "<p4info>") -> p4info_pb2.P4Info:
    """Parse a P4Info in protobuf text format; one clear error when it is malformed."""
    msg = p4info_pb2.P4Info()
    try:
        text_format.Parse(text, msg)
    except text_format.ParseError as exc:
        raise InaplannerError(f"{source}: not a valid P4Info text proto: {exc}") from None
    return msg


def load_p4info(path: str | Path = DEFAULT_P4INFO) -> P4InfoIndex:
    """Read a ``.p4info.txtpb`` file and index it."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InaplannerError(f"{path}: cannot read P4Info: {exc.strerror}") from None
    return P4InfoIndex(parse_p4info_text(text, str(path)))
