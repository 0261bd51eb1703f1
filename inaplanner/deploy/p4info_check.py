"""Does a P4Info produced by a build match the checked-in contract (``p4/ina_v1model.p4info.txtpb``)?

The entries of a plan are built against the contract. A build is usable when every table, action,
counter and register of the contract exists in its P4Info with the same match fields (name, id,
width, match kind), the same action parameters (name, id, width) and the same counter unit and
register width. Object ids may differ (p4c's id hash is not ours, and a TNA build names its controls
differently): objects are paired by fully-qualified name, else by their unique local name (the part
after the last dot), and :func:`check_p4info` returns the contract-id -> built-id map the deployer
applies to every entity (:func:`translate_entity`).
"""

from __future__ import annotations

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from inaplanner.dataplane.p4info import P4InfoIndex
from inaplanner.errors import InaplannerError

MAX_LISTED = 6


class P4InfoMismatch(InaplannerError):
    """The built P4Info does not fit the contract; ``problems`` lists every difference."""

    def __init__(self, label: str, problems: list[str]) -> None:
        self.problems = problems
        shown = "; ".join(problems[:MAX_LISTED])
        more = f"; and {len(problems) - MAX_LISTED} more" if len(problems) > MAX_LISTED else ""
        super().__init__(f"{label}: P4Info mismatch with the contract: {shown}{more}")


def _local(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def _pair(kind: str, contract: dict, built: dict, problems: list[str]) -> dict[int, int]:
    """contract id -> built id, pairing by full name, else by a local name unique on both sides."""
    by_name = {info.name: i for i, info in built.items()}
    local_count: dict[str, int] = {}
    for info in built.values():
        local_count[_local(info.name)] = local_count.get(_local(info.name), 0) + 1
    local_contract: dict[str, int] = {}
    for info in contract.values():
        local_contract[_local(info.name)] = local_contract.get(_local(info.name), 0) + 1
    by_local = {_local(info.name): i for i, info in built.items()
                if local_count[_local(info.name)] == 1}
    out: dict[int, int] = {}
    for cid, info in sorted(contract.items(), key=lambda kv: kv[1].name):
        bid = by_name.get(info.name)
        if bid is None and local_contract[_local(info.name)] == 1:
            bid = by_local.get(_local(info.name))
        if bid is None:
            problems.append(f"{kind} {info.name} is missing")
            continue
        out[cid] = bid
    return out


def check_p4info(contract: p4info_pb2.P4Info, built: p4info_pb2.P4Info,
                 label: str = "build") -> dict[int, int]:
    """Compare; return the id map (identity entries included) or raise :class:`P4InfoMismatch`."""
    try:
        c, b = P4InfoIndex(contract), P4InfoIndex(built)
    except InaplannerError as exc:
        raise P4InfoMismatch(label, [str(exc)]) from None
    problems: list[str] = []
    ids: dict[int, int] = {}
    # only actions a table offers can appear in an entry (values_step is called by the program)
    usable = {a for t in c.tables.values() for a in t.actions}
    actions = _pair("action", {i: a for i, a in c.actions.items() if i in usable}, b.actions,
                    problems)
    for cid, bid in actions.items():
        ca, ba = c.actions[cid], b.actions[bid]
        want = sorted((p.name, p.id, p.bitwidth) for p in ca.params)
        got = sorted((p.name, p.id, p.bitwidth) for p in ba.params)
        if want != got:
            problems.append(f"action {ca.name} parameters (name, id, width) are {got}, "
                            f"the contract has {want}")
    ids.update(actions)
    tables = _pair("table", c.tables, b.tables, problems)
    for cid, bid in tables.items():
        ct, bt = c.tables[cid], b.tables[bid]
        want = sorted((f.name, f.id, f.bitwidth, f.kind) for f in ct.match_fields)
        got = sorted((f.name, f.id, f.bitwidth, f.kind) for f in bt.match_fields)
        if want != got:
            problems.append(f"table {ct.name} match fields (name, id, width, kind) are {got}, "
                            f"the contract has {want}")
        missing = [c.actions[a].name for a in ct.actions
                   if a in actions and actions[a] not in bt.actions]
        if missing:
            problems.append(f"table {ct.name} lacks action(s) {', '.join(sorted(missing))}")
    ids.update(tables)
    counters = _pair("counter", c.counters, b.counters, problems)
    for cid, bid in counters.items():
        cc, bc = c.counters[cid], b.counters[bid]
        if cc.unit != bc.unit:
            problems.append(f"counter {cc.name} counts {bc.unit}, the contract {cc.unit}")
        if bc.size < cc.size:
            problems.append(f"counter {cc.name} has {bc.size} cells, the contract {cc.size}")
    ids.update(counters)
    registers = _pair("register", c.registers, b.registers, problems)
    for cid, bid in registers.items():
        cr, br = c.registers[cid], b.registers[bid]
        if cr.bitwidth != br.bitwidth:
            problems.append(f"register {cr.name} is {br.bitwidth} bits wide, the contract "
                            f"{cr.bitwidth}")
        if br.size < cr.size:
            problems.append(f"register {cr.name} has {br.size} cells, the contract {cr.size}")
    ids.update(registers)
    if problems:
        raise P4InfoMismatch(label, problems)
    return ids


def translate_entity(entity: p4runtime_pb2.Entity, ids: dict[int, int]) -> p4runtime_pb2.Entity:
    """A copy of ``entity`` with P4Info ids mapped through ``ids`` (unchanged when identity)."""
    out = p4runtime_pb2.Entity()
    out.CopyFrom(entity)
    if all(k == v for k, v in ids.items()):
        return out
    kind = out.WhichOneof("entity")
    if kind == "table_entry":
        te = out.table_entry
        te.table_id = ids.get(te.table_id, te.table_id)
        if te.action.HasField("action"):
            te.action.action.action_id = ids.get(te.action.action.action_id,
                                                 te.action.action.action_id)
    elif kind == "counter_entry":
        out.counter_entry.counter_id = ids.get(out.counter_entry.counter_id,
                                               out.counter_entry.counter_id)
    elif kind == "register_entry":
        out.register_entry.register_id = ids.get(out.register_entry.register_id,
                                                 out.register_entry.register_id)
    elif kind == "direct_counter_entry":
        te = out.direct_counter_entry.table_entry
        te.table_id = ids.get(te.table_id, te.table_id)
    return out
