"""What a deployment installs: per switch the P4Runtime entities, per worker its configuration.

Entities are kept by name (table, match fields, action, parameters) so they read well in dumps
and diffs, and are turned into P4Runtime messages with the ids of a P4Info
(:meth:`TableEntrySpec.to_proto`). The identity of an entity is its *key*: table + match +
priority for a table entry (P4Runtime spec 9.1.1), the group id for a multicast group;
:func:`diff_entities` compares two entity lists on those keys.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from p4.v1 import p4runtime_pb2

from inaplanner.dataplane import bytestrings
from inaplanner.dataplane.p4info import P4InfoIndex
from inaplanner.errors import InaplannerError


@dataclass(frozen=True)
class TableEntrySpec:
    """One exact-match table entry, by name. ``note`` explains it (not part of the entity)."""

    table: str
    match: tuple[tuple[str, int], ...]
    action: str
    params: tuple[tuple[str, int], ...] = ()
    priority: int = 0
    note: str = field(default="", compare=False)

    def key(self) -> tuple:
        return ("table", self.table, self.match, self.priority)

    def to_proto(self, p4info: P4InfoIndex) -> p4runtime_pb2.Entity:
        table = p4info.table(self.table)
        entry = p4runtime_pb2.TableEntry(table_id=table.id, priority=self.priority)
        for name, value in self.match:
            f = table.field(name)
            if f.kind != "exact":
                raise InaplannerError(f"table {table.name}: field {name} is {f.kind}, not exact")
            entry.match.add(field_id=f.id).exact.value = _encode(value, f.bitwidth, name)
        action = p4info.action(self.action)
        entry.action.action.action_id = action.id
        for name, value in self.params:
            p = action.param(name)
            entry.action.action.params.add(param_id=p.id, value=_encode(value, p.bitwidth, name))
        return p4runtime_pb2.Entity(table_entry=entry)

    def text(self) -> str:
        match = " ".join(f"{k}={v}" for k, v in self.match)
        params = ", ".join(f"{k}={v}" for k, v in self.params)
        short = self.table.split(".")[-1]
        return f"{short} {match} -> {self.action.split('.')[-1]}({params})"

    def to_dict(self) -> dict[str, Any]:
        return {"table": self.table, "match": dict(self.match), "action": self.action,
                "params": dict(self.params), "priority": self.priority, "note": self.note}


@dataclass(frozen=True)
class MulticastGroupSpec:
    """A PRE multicast group: ``replicas`` are (egress port, instance)."""

    group_id: int
    replicas: tuple[tuple[int, int], ...]
    note: str = field(default="", compare=False)

    def key(self) -> tuple:
        return ("multicast_group", self.group_id)

    def to_proto(self, p4info: P4InfoIndex | None = None) -> p4runtime_pb2.Entity:
        group = p4runtime_pb2.MulticastGroupEntry(multicast_group_id=self.group_id)
        for port, instance in self.replicas:
            group.replicas.add(egress_port=port, instance=instance)
        return p4runtime_pb2.Entity(packet_replication_engine_entry=
                                    p4runtime_pb2.PacketReplicationEngineEntry(
                                        multicast_group_entry=group))

    def text(self) -> str:
        ports = ", ".join(str(p) if i == 0 else f"{p}#{i}" for p, i in self.replicas)
        return f"multicast group {self.group_id} -> ports {ports}"

    def to_dict(self) -> dict[str, Any]:
        return {"multicast_group": self.group_id, "replicas": [list(r) for r in self.replicas],
                "note": self.note}


EntitySpec = TableEntrySpec | MulticastGroupSpec


def _encode(value: int, width: int, name: str) -> bytes:
    try:
        return bytestrings.encode(value, width)
    except ValueError as exc:
        raise InaplannerError(f"{name}: {exc}") from None


@dataclass(frozen=True)
class AggregatorPool:
    """The aggregators of one switch pipeline that the plan's aggregates there share (ESA 5.2:
    all jobs share the pool and contend by priority). ``epoch`` tags the pool's current
    configuration: slots written under another epoch count as free, which is how a (re)deploy
    "initialises" the registers without register writes (bmv2 has none over P4Runtime)."""

    pipeline: int
    base: int
    size: int
    epoch: int
    aggregates: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class SwitchEntities:
    """Everything one switch gets, in installation order (groups, then tables)."""

    switch: str
    node_id: int
    target: str
    device_id: int | None
    pools: list[AggregatorPool]
    multicast_groups: list[MulticastGroupSpec]
    table_entries: list[TableEntrySpec]
    p4info: P4InfoIndex = field(repr=False, compare=False)

    @property
    def specs(self) -> list[EntitySpec]:
        return [*self.multicast_groups, *self.table_entries]

    @property
    def entities(self) -> list[p4runtime_pb2.Entity]:
        """P4Runtime messages with the contract P4Info's ids, in installation order."""
        return [s.to_proto(self.p4info) for s in self.specs]

    def to_dict(self) -> dict[str, Any]:
        return {
            "switch": self.switch, "node_id": self.node_id, "target": self.target,
            "device_id": self.device_id,
            "aggregator_pools": [p.to_dict() for p in self.pools],
            "multicast_groups": [g.to_dict() for g in self.multicast_groups],
            "table_entries": [e.to_dict() for e in self.table_entries],
        }


@dataclass
class WorkerTask:
    """What a worker needs to send its share of one task (GRID section 3 steps 2-3, ESA 5.1)."""

    job: str
    ps: str
    job_id: int
    ps_id: int
    flow_id: int
    node_id: int  # the switch that aggregates this worker's flow first; 0 = the PS
    aggregation_node: str  # its name
    bitmap: int  # this worker's bit at that switch (0 when the PS aggregates it)
    rate_gbps: float
    first_hop: str
    priority_per_layer: list[int]  # ESA Eq. 1, 8-bit fixed point, layer 1 first; [] = none
    priority_frac_bits: int | None
    priority_note: str = ""


@dataclass
class WorkerConfig:
    """The file pushed to one worker host."""

    host: str
    tasks: list[WorkerTask]
    scenario: str = ""
    ether_type: int = 0x88B5
    values_per_packet: int = 32
    agg_index: str = "crc32(seed:32 || job_id:16 || seq:32), seed 0 (inaplanner.memsched.hashing)"

    def to_dict(self) -> dict[str, Any]:
        return {"format": "inaplanner-worker", "version": 1, **asdict(self)}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"


@dataclass
class DeploymentSpec:
    """Per switch its entities, per worker its configuration, and the numbering used."""

    switches: dict[str, SwitchEntities]
    workers: dict[str, WorkerConfig]
    node_ids: dict[str, int]
    job_ids: dict[str, int]
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": "inaplanner-entries", "version": 1,
            "node_ids": dict(self.node_ids), "job_ids": dict(self.job_ids),
            "warnings": list(self.warnings),
            "switches": {k: v.to_dict() for k, v in self.switches.items()},
            "workers": {k: v.to_dict() for k, v in self.workers.items()},
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"

    def summary(self) -> str:
        """One line of counts: what a deployment of this spec installs and configures."""
        sw = self.switches.values()
        return (f"{len(self.switches)} switches: {sum(len(s.table_entries) for s in sw)} table entries, "
                f"{sum(len(s.multicast_groups) for s in sw)} multicast groups, "
                f"{sum(len(s.pools) for s in sw)} aggregator pools; {len(self.workers)} workers, "
                f"{sum(len(c.tasks) for c in self.workers.values())} worker-task configurations")

    def to_text(self) -> str:
        """A readable dump: the counts, then one block per switch, then one line per worker task."""
        lines = [f"# {self.summary()}"]
        for w in self.warnings:
            lines.append(f"warning: {w}")
        for sw in self.switches.values():
            dev = f", device {sw.device_id}" if sw.device_id is not None else ""
            lines.append(f"switch {sw.switch} (node id {sw.node_id}, {sw.target}{dev})")
            for p in sw.pools:
                lines.append(f"  aggregators pipeline {p.pipeline}: slots {p.base}.."
                             f"{p.base + p.size - 1} epoch {p.epoch} for {', '.join(p.aggregates)}")
            for s in sw.specs:
                note = f"   # {s.note}" if s.note else ""
                lines.append(f"  {s.text()}{note}")
        for cfg in self.workers.values():
            for t in cfg.tasks:
                prio = (f"priorities {t.priority_per_layer} (2^-{t.priority_frac_bits})"
                        if t.priority_per_layer else f"priority 0 ({t.priority_note})")
                lines.append(f"worker {cfg.host}: {t.job}/{t.ps} flow {t.flow_id} -> "
                             f"{t.aggregation_node} (node {t.node_id}, bitmap {t.bitmap:#x}) "
                             f"at {t.rate_gbps:g} Gbps, {prio}")
        return "\n".join(lines) + "\n"


# -- diff --------------------------------------------------------------------------------------
def entity_key(entity: EntitySpec | p4runtime_pb2.Entity) -> tuple:
    """The identity of an entity: table + match + priority, or the multicast group id."""
    if isinstance(entity, TableEntrySpec | MulticastGroupSpec):
        return entity.key()
    kind = entity.WhichOneof("entity")
    if kind == "table_entry":
        te = entity.table_entry
        if te.is_default_action:
            return ("table", te.table_id, "default")
        match = tuple(sorted(
            (m.field_id, m.WhichOneof("field_match_type"),
             bytestrings.canonical(getattr(m, m.WhichOneof("field_match_type")).value))
            if m.WhichOneof("field_match_type") in ("exact", "optional")
            else (m.field_id, m.SerializeToString(deterministic=True))
            for m in te.match))
        return ("table", te.table_id, match, te.priority)
    if kind == "packet_replication_engine_entry":
        pre = entity.packet_replication_engine_entry
        return ("multicast_group", pre.multicast_group_entry.multicast_group_id)
    raise InaplannerError(f"no key for a {kind} entity")


def _content(entity: EntitySpec | p4runtime_pb2.Entity):
    if isinstance(entity, TableEntrySpec | MulticastGroupSpec):
        return entity
    kind = entity.WhichOneof("entity")
    if kind == "table_entry":
        act = entity.table_entry.action.action
        return ("action", act.action_id,
                tuple(sorted((p.param_id, bytestrings.canonical(p.value)) for p in act.params)))
    group = entity.packet_replication_engine_entry.multicast_group_entry
    return ("replicas", tuple((r.egress_port or int.from_bytes(r.port or b"\0", "big"),
                               r.instance) for r in group.replicas))


def diff_entities(old: Iterable, new: Iterable) -> tuple[list, list, list]:
    """(add, modify, delete) turning ``old`` into ``new``, compared on entity keys.

    ``add`` and ``modify`` hold entities of ``new`` (in its order), ``delete`` entities of ``old``
    (in reverse order of ``old``, so that entries go before the groups they point to). Works on
    specs or on P4Runtime ``Entity`` messages (not a mix of the two).
    """
    old_list: Sequence = list(old)
    before = {entity_key(e): e for e in old_list}
    new_keys = set()
    add, modify = [], []
    for e in new:
        k = entity_key(e)
        new_keys.add(k)
        if k not in before:
            add.append(e)
        elif _content(before[k]) != _content(e):
            modify.append(e)
    delete = [e for e in reversed(old_list) if entity_key(e) not in new_keys]
    return add, modify, delete


def diff_specs(old: DeploymentSpec, new: DeploymentSpec) -> dict[str, tuple[list, list, list]]:
    """Per switch of either spec, what a redeploy from ``old`` to ``new`` adds, modifies, deletes."""
    out = {}
    for sid in [*old.switches, *(s for s in new.switches if s not in old.switches)]:
        a = old.switches[sid].specs if sid in old.switches else []
        b = new.switches[sid].specs if sid in new.switches else []
        out[sid] = diff_entities(a, b)
    return out
