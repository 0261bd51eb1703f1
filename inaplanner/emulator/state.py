"""What an emulated P4Runtime target holds: pipeline, table entries, multicast groups, counters.

Not thread safe by itself: :class:`inaplanner.emulator.target.P4RuntimeEmulator` serialises
every access with one lock. Counters can grow by themselves at given rates
(:meth:`DeviceState.set_rates`) so that monitoring sees traffic without a data plane.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from google.rpc import code_pb2
from p4.v1 import p4runtime_pb2

from inaplanner.dataplane.p4info import P4InfoIndex
from inaplanner.dataplane.wire import wire_field
from inaplanner.emulator.validate import (
    EntityError,
    check_multicast_group,
    check_table_entry,
    table_key,
)

INSERT = p4runtime_pb2.Update.INSERT
MODIFY = p4runtime_pb2.Update.MODIFY
DELETE = p4runtime_pb2.Update.DELETE


@dataclass
class CounterCell:
    bytes: float = 0.0
    packets: float = 0.0


@dataclass
class Rate:
    bytes_per_s: float
    packets_per_s: float
    noise: float


@dataclass
class DeviceState:
    """Pipeline and entities of one device. ``clock`` returns seconds (monotonic)."""

    clock: Callable[[], float]
    seed: int = 0
    max_groups: int | None = None  # multicast group table size (None: unlimited)
    p4info: P4InfoIndex | None = None
    config: p4runtime_pb2.ForwardingPipelineConfig | None = None
    tables: dict[int, dict[tuple, p4runtime_pb2.TableEntry]] = field(default_factory=dict)
    defaults: dict[int, p4runtime_pb2.TableEntry] = field(default_factory=dict)
    groups: dict[int, p4runtime_pb2.MulticastGroupEntry] = field(default_factory=dict)
    counters: dict[int, dict[int, CounterCell]] = field(default_factory=dict)
    rates: dict[tuple[int, int], Rate] = field(default_factory=dict)
    #: serialized Entity of each stored table entry, made on first read (reads are frequent and
    #: the protobuf runtime here is pure Python)
    wire: dict[int, bytes] = field(default_factory=dict)
    _last: float = 0.0

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)
        self._last = self.clock()

    # -- pipeline ----------------------------------------------------------------------------
    def commit(self, config: p4runtime_pb2.ForwardingPipelineConfig, p4info: P4InfoIndex,
               keep_state: bool = False) -> None:
        """Make ``config`` the running pipeline. A new pipeline starts empty, as on bmv2."""
        self.config = config
        self.p4info = p4info
        if keep_state:
            return
        self.tables = {tid: {} for tid in p4info.tables}
        self.defaults = {}
        self.groups = {}
        self.counters = {cid: {} for cid in p4info.counters}
        self.rates = {}
        self.wire = {}
        self._last = self.clock()

    def entity_bytes(self, entry: p4runtime_pb2.TableEntry) -> bytes:
        """The wire form of ``Entity(table_entry=entry)`` for a stored entry (cached)."""
        data = self.wire.get(id(entry))
        if data is None:
            data = wire_field(2, entry.SerializeToString())
            self.wire[id(entry)] = data
        return data

    # -- writes ------------------------------------------------------------------------------
    def apply(self, update: p4runtime_pb2.Update) -> None:
        """Apply one update or raise EntityError; never leaves a half-applied update."""
        assert self.p4info is not None
        kind = update.entity.WhichOneof("entity")
        if update.type not in (INSERT, MODIFY, DELETE):
            raise EntityError(code_pb2.INVALID_ARGUMENT, "update type is unspecified")
        if kind == "table_entry":
            self._apply_table(update.type, update.entity.table_entry)
        elif kind == "packet_replication_engine_entry":
            pre = update.entity.packet_replication_engine_entry
            if pre.WhichOneof("type") != "multicast_group_entry":
                raise EntityError(code_pb2.UNIMPLEMENTED, "clone sessions are not supported")
            self._apply_group(update.type, pre.multicast_group_entry)
        elif kind == "counter_entry":
            self._apply_counter(update.type, update.entity.counter_entry)
        elif kind == "register_entry":
            raise EntityError(code_pb2.UNIMPLEMENTED,
                              "register access is not implemented (as in bmv2's P4Runtime server)")
        elif kind is None:
            raise EntityError(code_pb2.INVALID_ARGUMENT, "update has no entity")
        else:
            raise EntityError(code_pb2.UNIMPLEMENTED, f"{kind} writes are not supported")

    def _apply_table(self, utype: int, entry: p4runtime_pb2.TableEntry) -> None:
        assert self.p4info is not None
        key, canon = check_table_entry(self.p4info, entry, utype)
        tid = entry.table_id
        if canon.is_default_action:
            old = self.defaults.pop(tid, None)  # DELETE: back to the program's default action
            if old is not None:
                self.wire.pop(id(old), None)
            if utype != DELETE:
                self.defaults[tid] = canon
            return
        table = self.tables[tid]
        info = self.p4info.tables[tid]
        if utype == INSERT:
            if key in table:
                raise EntityError(code_pb2.ALREADY_EXISTS,
                                  f"table {info.name}: an entry with this match key exists")
            if info.size and len(table) >= info.size:
                raise EntityError(code_pb2.RESOURCE_EXHAUSTED,
                                  f"table {info.name} is full ({info.size} entries)")
            table[key] = canon
        elif key not in table:
            verb = "modify" if utype == MODIFY else "delete"
            raise EntityError(code_pb2.NOT_FOUND,
                              f"table {info.name}: no entry with this match key to {verb}")
        else:
            self.wire.pop(id(table[key]), None)
            if utype == MODIFY:
                table[key] = canon
            else:
                del table[key]

    def _apply_group(self, utype: int, entry: p4runtime_pb2.MulticastGroupEntry) -> None:
        canon = check_multicast_group(entry, utype)
        gid = canon.multicast_group_id
        if utype == INSERT:
            if gid in self.groups:
                raise EntityError(code_pb2.ALREADY_EXISTS, f"multicast group {gid} exists")
            if self.max_groups is not None and len(self.groups) >= self.max_groups:
                raise EntityError(code_pb2.RESOURCE_EXHAUSTED,
                                  f"multicast group table is full ({self.max_groups} groups)")
            self.groups[gid] = canon
        elif gid not in self.groups:
            raise EntityError(code_pb2.NOT_FOUND, f"multicast group {gid} does not exist")
        elif utype == MODIFY:
            self.groups[gid] = canon
        else:
            del self.groups[gid]

    def _apply_counter(self, utype: int, entry: p4runtime_pb2.CounterEntry) -> None:
        assert self.p4info is not None
        if utype != MODIFY:
            raise EntityError(code_pb2.INVALID_ARGUMENT, "counter entries can only be modified")
        info = self.p4info.counters.get(entry.counter_id)
        if info is None:
            raise EntityError(code_pb2.INVALID_ARGUMENT, f"unknown counter id {entry.counter_id}")
        self.advance()
        if entry.HasField("index"):
            if not 0 <= entry.index.index < info.size:
                raise EntityError(code_pb2.INVALID_ARGUMENT,
                                  f"counter {info.name}: index {entry.index.index} not in "
                                  f"0..{info.size - 1}")
            indexes: Iterator[int] = iter([entry.index.index])
        else:
            indexes = iter(range(info.size))
        cells = self.counters[entry.counter_id]
        for i in indexes:
            cells[i] = CounterCell(float(entry.data.byte_count), float(entry.data.packet_count))

    # -- counters that grow with time ----------------------------------------------------------
    def advance(self) -> None:
        """Add what the configured rates produced since the last call."""
        now = self.clock()
        dt = max(0.0, now - self._last)
        self._last = now
        if dt == 0.0:
            return
        for (cid, index), rate in self.rates.items():
            factor = 1.0 + (rate.noise * self._rng.uniform(-1.0, 1.0) if rate.noise else 0.0)
            cell = self.counters.setdefault(cid, {}).setdefault(index, CounterCell())
            cell.bytes += rate.bytes_per_s * dt * factor
            cell.packets += rate.packets_per_s * dt * factor

    def set_rates(self, counter_ids: list[int], rates: dict[int, tuple[float, float]],
                  noise: float) -> None:
        """From now on the cells ``port`` of the given counters grow at ``rates[port]``."""
        assert self.p4info is not None
        self.advance()
        for cid in counter_ids:
            size = self.p4info.counters[cid].size
            for key in [k for k in self.rates if k[0] == cid]:
                del self.rates[key]
            for port, (bps, pps) in rates.items():
                if not 0 <= port < size:
                    raise ValueError(f"port {port} is outside counter "
                                     f"{self.p4info.counters[cid].name} (size {size})")
                if bps < 0 or pps < 0:
                    raise ValueError(f"port {port}: negative rate")
                self.rates[(cid, port)] = Rate(float(bps), float(pps), noise)

    def counter_entries(self, entry: p4runtime_pb2.CounterEntry) -> list[p4runtime_pb2.CounterEntry]:
        """Counter cells matching a read request (id 0 = all counters, no index = all cells)."""
        self.advance()
        out = []
        index = entry.index.index if entry.HasField("index") else None
        for cid, i, nbytes, packets in self.counter_values(entry.counter_id, index):
            msg = p4runtime_pb2.CounterEntry(counter_id=cid)
            msg.index.index = i
            if nbytes is not None:
                msg.data.byte_count = nbytes
            if packets is not None:
                msg.data.packet_count = packets
            out.append(msg)
        return out

    def counter_values(self, counter_id: int, index: int | None
                       ) -> list[tuple[int, int, int | None, int | None]]:
        """``(counter id, index, bytes, packets)`` of the cells a counter read names (id 0 = all
        counters, index None = all cells; None for a unit the counter does not count), as they
        stand at the last :meth:`advance`."""
        assert self.p4info is not None
        if counter_id == 0:
            ids = sorted(self.p4info.counters)
        elif counter_id in self.p4info.counters:
            ids = [counter_id]
        else:
            raise EntityError(code_pb2.INVALID_ARGUMENT, f"unknown counter id {counter_id}")
        out: list[tuple[int, int, int | None, int | None]] = []
        for cid in ids:
            info = self.p4info.counters[cid]
            if index is not None:
                if not 0 <= index < info.size:
                    raise EntityError(code_pb2.INVALID_ARGUMENT,
                                      f"counter {info.name}: index {index} out of range")
                indexes: Iterable[int] = (index,)
            else:
                indexes = range(info.size)
            counts_bytes = info.unit in ("bytes", "both")
            counts_packets = info.unit in ("packets", "both")
            cells = self.counters.get(cid, {})
            zero = CounterCell()
            for i in indexes:
                cell = cells.get(i, zero)
                out.append((cid, i, int(cell.bytes) if counts_bytes else None,
                            int(cell.packets) if counts_packets else None))
        return out

    # -- reads ---------------------------------------------------------------------------------
    def table_entries(self, entry: p4runtime_pb2.TableEntry) -> list[p4runtime_pb2.TableEntry]:
        """Entries matching a read request: table id 0 = every table; no match = every entry."""
        assert self.p4info is not None
        if entry.table_id == 0:
            if len(entry.match) or entry.priority:
                raise EntityError(code_pb2.INVALID_ARGUMENT,
                                  "a read of all tables cannot give a match or priority")
            out = []
            for tid in sorted(self.tables):
                out.extend(self.tables[tid].values())
            return out
        if entry.table_id not in self.tables:
            raise EntityError(code_pb2.INVALID_ARGUMENT, f"unknown table id {entry.table_id}")
        if entry.is_default_action:
            default = self.defaults.get(entry.table_id)
            return [default] if default is not None else []
        if not len(entry.match) and entry.priority == 0:
            return list(self.tables[entry.table_id].values())
        found = self.tables[entry.table_id].get(table_key(self.p4info, entry))
        return [found] if found is not None else []

    def group_entries(self, entry: p4runtime_pb2.MulticastGroupEntry):
        if entry.multicast_group_id == 0:
            return [self.groups[g] for g in sorted(self.groups)]
        found = self.groups.get(entry.multicast_group_id)
        return [found] if found is not None else []
