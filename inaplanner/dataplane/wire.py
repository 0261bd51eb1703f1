"""The protobuf wire format, by hand, where the pure-Python protobuf (3.20, pinned through
p4runtime-shell; no C++ wheel for Python 3.11) is too slow: the emulator sends Read answers it
has already serialized (:func:`wire_field`), reads a monitor's counter Read from the wire
(:func:`counter_read_request`) and writes its cells by hand (:func:`counter_entity`), and the
monitor decodes counter Read answers without building messages, as arrays
(:func:`counter_arrays`; :func:`counter_cells` is the general decoder it falls back on)."""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    import numpy as np


def varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def wire_field(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field: tag, length, payload."""
    return varint((number << 3) | 2) + varint(len(payload)) + payload


def read_varint(data: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        b = data[i]
        i += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, i
        shift += 7


def fields(data: bytes) -> Iterator[tuple[int, int | bytes]]:
    """(field number, value) of each field of one message: an int for varints, bytes for
    length-delimited fields (fixed-width fields are skipped)."""
    i, end = 0, len(data)
    while i < end:
        tag, i = read_varint(data, i)
        kind = tag & 7
        if kind == 0:
            value, i = read_varint(data, i)
            yield tag >> 3, value
        elif kind == 2:
            n, i = read_varint(data, i)
            yield tag >> 3, data[i:i + n]
            i += n
        elif kind == 1:
            i += 8
        elif kind == 5:
            i += 4
        else:
            raise ValueError(f"wire type {kind} is not in a ReadResponse")


def counter_cells(response: bytes) -> list[tuple[int, int, int, int]]:
    """The counter cells of a serialized ReadResponse, as ``(counter id, index, bytes,
    packets)``, decoded straight from the protobuf wire format (ReadResponse.entities = 1,
    Entity.counter_entry = 7; CounterEntry: counter_id = 1, index = 2 (Index.index = 1),
    data = 3 (CounterData: byte_count = 1, packet_count = 2); p4runtime.proto). Other
    entities are skipped."""
    out = []
    for field, entity in fields(response):
        if field != 1:
            continue
        for efield, entry in fields(entity):
            if efield != 7:
                continue
            cid = index = nbytes = packets = 0
            for cfield, value in fields(entry):
                if cfield == 1:
                    cid = value
                elif cfield == 2:
                    index = next((v for f, v in fields(value) if f == 1), 0)
                elif cfield == 3:
                    for dfield, v in fields(value):
                        if dfield == 1:
                            nbytes = v
                        elif dfield == 2:
                            packets = v
            out.append((cid, index, nbytes, packets))
    return out


class CounterCells(NamedTuple):
    """The counter cells of a Read answer as four aligned ``uint64`` arrays: what
    :func:`counter_cells` gives as tuples, without a Python object per cell (fat-tree k=64:
    655,360 cells a poll)."""

    counter_id: np.ndarray
    index: np.ndarray
    nbytes: np.ndarray
    packets: np.ndarray

    @classmethod
    def of(cls, cells: list[tuple[int, int, int, int]]) -> CounterCells:
        """The arrays of ``(counter id, index, bytes, packets)`` tuples; ValueError when a value
        is not an integer of 64 bits (no valid ReadResponse holds one)."""
        import numpy as np

        if any(not isinstance(v, int) or not 0 <= v < 1 << 64 for cell in cells for v in cell):
            raise ValueError("a counter cell holds a value that is not a 64-bit integer")
        data = np.array(cells, dtype=np.uint64).reshape(len(cells), 4)
        return cls(*(np.ascontiguousarray(data[:, k]) for k in range(4)))

    def rows(self) -> list[tuple[int, int, int, int]]:
        """The cells as ``(counter id, index, bytes, packets)`` tuples of Python ints."""
        return list(zip(*(col.tolist() for col in self), strict=True))


# The fast path of counter_arrays reads a ReadResponse as one flat run of varints: every field
# of the messages it knows is a varint or a message of varints, so tags, lengths and values
# follow each other with no opaque bytes between them, and each field is a (tag, value) pair of
# varints. Its tag names it up to which message it is in: field 1 (tag 8) is a counter entry's
# counter id, an index's index or a counter data's byte count, by the message field just before
# it (each of them is its message's first field); field 2 (tag 16) is a counter data's packet
# count. An answer is read this way only when its fields come in the order protobuf writes
# them (each field may only follow those _FOLLOWS allows, checked on every three fields in a
# row) and every length spans exactly the fields read as inside it; anything else (another
# entity, unknown fields, another order, a field twice) is left to counter_cells.
_ENTITY, _ENTRY, _INDEX, _DATA, _FIELD1, _FIELD2, _BAD = range(7)  # by tag
_ID, _IDX, _BYTES, _PACKETS = range(7, 11)  # field 1 and 2 by the message they are in
_FOLLOWS = {_ENTITY: {_ENTRY}, _ENTRY: {_ID, _INDEX, _DATA, _ENTITY},
            _ID: {_INDEX, _DATA, _ENTITY}, _INDEX: {_IDX, _DATA, _ENTITY}, _IDX: {_DATA, _ENTITY},
            _DATA: {_BYTES, _PACKETS, _ENTITY}, _BYTES: {_PACKETS, _ENTITY},
            _PACKETS: {_ENTITY}}
_LAST = {_ENTRY, _ID, _INDEX, _IDX, _DATA, _BYTES, _PACKETS}  # an answer may end with these


def _field(before: int, tag_symbol: int) -> int:
    """What a field is, from its tag's symbol and the symbol of the field before it."""
    if tag_symbol == _FIELD1:
        return {_ENTRY: _ID, _INDEX: _IDX, _DATA: _BYTES}.get(before, _BAD)
    if tag_symbol == _FIELD2:
        return _PACKETS if before in (_DATA, _FIELD1) else _BAD  # field 1 there: checked
    return tag_symbol


class _Tables(NamedTuple):
    symbol: np.ndarray  # tag -> symbol (length-delimited or varint)
    in_order: np.ndarray  # three fields in a row (by symbol) -> the third may follow
    last_ok: np.ndarray  # the last two fields -> an answer may end there
    column: np.ndarray  # two fields in a row -> the second's column in CounterCells, or -1
    ten: np.ndarray
    shift: np.ndarray  # 7 bits a varint byte


@cache
def _tables() -> _Tables:
    """The fast path's tables, made on first use: the deployer and the emulated switches use
    this module too and import no numpy."""
    import numpy as np

    symbol = np.full(0x3B, _BAD, dtype=np.intp)
    symbol[[0x0A, 0x3A, 0x12, 0x1A, 0x08, 0x10]] = [_ENTITY, _ENTRY, _INDEX, _DATA, _FIELD1,
                                                    _FIELD2]
    in_order = np.zeros(7 ** 3, dtype=bool)
    last_ok = np.zeros(7 * 7, dtype=bool)
    column = np.full(7 * 7, -1, dtype=np.intp)
    for x in range(7):
        for y in range(7):
            last_ok[x * 7 + y] = _field(x, y) in _LAST
            if _field(x, y) >= _ID:
                column[x * 7 + y] = _field(x, y) - _ID
            for z in range(7):
                in_order[(x * 7 + y) * 7 + z] = _field(y, z) in _FOLLOWS.get(_field(x, y), ())
    ten = np.arange(10)
    return _Tables(symbol, in_order, last_ok, column, ten, (ten * 7).astype(np.uint64))


def _flat_counter_arrays(response: bytes) -> CounterCells | None:
    """:func:`counter_arrays`' fast path: the cells of an answer laid out as protobuf writes
    it (fields in order, zero fields left out or not), decoded with array operations; None for
    any other layout."""
    import numpy as np

    tab = _tables()
    a = np.frombuffer(response, dtype=np.uint8)
    size = a.size
    if size == 0:
        return CounterCells.of([])
    ends = np.flatnonzero(a < 0x80)  # the last byte of each varint
    if a[-1] & 0x80 or ends.size % 2 or ends.size < 4:
        return None
    starts = np.empty_like(ends)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    values = a[ends].astype(np.uint64)  # right for the one-byte varints (tags, most lengths)
    longer = np.flatnonzero(ends != starts)
    if longer.size:
        first = starts[longer]
        extra = ends[longer] - first  # bytes after the first
        if extra.max() > 9:
            return None
        window = a[np.minimum(first + tab.ten[:, None], size - 1)]  # (10, varints)
        if (window[9] > 1).any() and (window[9, extra == 9] > 1).any():
            return None  # beyond 64 bits
        bits = (window & 0x7F).astype(np.uint64) << tab.shift[:, None]
        bits[tab.ten[:, None] > extra] = 0
        values[longer] = np.bitwise_or.reduce(bits, axis=0)
    tags, vals = values[0::2], values[1::2]
    if tags.max() > 0x3A:
        return None
    sym = tab.symbol[tags.astype(np.intp)]
    pairs = sym[:-1] * 7 + sym[1:]
    if sym[0] != _ENTITY or sym[1] != _ENTRY or not tab.last_ok[pairs[-1]] \
            or not tab.in_order[sym[:-2] * 49 + pairs[1:]].all():
        return None
    # every length must span exactly the fields read as inside it: an entity's and its counter
    # entry's up to the next entity, an index's up to the field after its index, a counter
    # data's up to the next entity
    at = np.append(starts[0::2], size)  # where each field starts (and the end)
    is_entity = sym == _ENTITY
    entity = np.flatnonzero(is_entity)
    number = np.cumsum(is_entity) - 1  # the entity each field is in
    entity_end = at[np.append(entity[1:], sym.size)]
    sized = np.flatnonzero(sym <= _DATA)  # entities, entries, indexes, data
    end = entity_end[number[sized]]
    index = sym[sized] == _INDEX
    after = sized[index] + 1
    end[index] = at[after + (sym[np.minimum(after, sym.size - 1)] == _FIELD1)
                    * (after < sym.size)]
    if (vals[sized] != end - (ends[1::2][sized] + 1)).any():
        return None
    column = tab.column[pairs]
    cells = np.flatnonzero(column >= 0) + 1
    out = np.zeros((4, entity.size), dtype=np.uint64)
    out[column[cells - 1], number[cells]] = vals[cells]
    return CounterCells(*out)


def counter_arrays(response: bytes) -> CounterCells:
    """The counter cells of a serialized ReadResponse (or of several, joined: protobuf reads
    concatenated messages as one), as :class:`CounterCells`: the same cells, in the same order,
    as :func:`counter_cells`. An answer laid out as protobuf and the emulated switches write it
    is decoded with array operations (fat-tree k=64: 655,360 cells a poll; tuple by tuple that
    took 2.8 s of a 12 s poll); any other valid encoding (fields in another order, unknown
    fields, other entities) goes through :func:`counter_cells`. ValueError when a value does not
    fit 64 bits."""
    fast = _flat_counter_arrays(response)
    return fast if fast is not None else CounterCells.of(counter_cells(response))


def varint_field(number: int, value: int) -> bytes:
    """A varint protobuf field: tag, value (a negative int64 as its ten-byte two's complement)."""
    return varint(number << 3) + varint(value & 0xFFFFFFFFFFFFFFFF if value < 0 else value)


def counter_read_request(request: bytes) -> tuple[int, list[tuple[int, int | None]]] | None:
    """``(device id, [(counter id, index or None), ...])`` of a serialized ReadRequest that reads
    counter cells only, by counter id and index, as the monitor's reads do (ReadRequest:
    device_id = 1, entities = 2; Entity.counter_entry = 7; CounterEntry: counter_id = 1,
    index = 2 (Index.index = 1); p4runtime.proto). None for anything else (another entity, a
    data filter, a role, a field this does not know, bytes that do not parse): the caller then
    parses the request with protobuf, so the answer never depends on which path read it."""
    device_id = 0
    cells: list[tuple[int, int | None]] = []
    try:
        for field, value in fields(request):
            if field == 1 and isinstance(value, int):
                device_id = value
            elif field == 2 and isinstance(value, bytes):
                parts = list(fields(value))
                if len(parts) != 1 or parts[0][0] != 7 or not isinstance(parts[0][1], bytes):
                    return None
                counter_id, index = 0, None
                for cfield, cvalue in fields(parts[0][1]):
                    if cfield == 1 and isinstance(cvalue, int):
                        counter_id = cvalue
                    elif cfield == 2 and isinstance(cvalue, bytes):
                        index = 0
                        for ifield, ivalue in fields(cvalue):
                            if ifield != 1 or not isinstance(ivalue, int):
                                return None
                            index = ivalue - (1 << 64) if ivalue >= 1 << 63 else ivalue
                    else:
                        return None
                cells.append((counter_id, index))
            else:
                return None
    except (IndexError, ValueError):
        return None
    return device_id, cells


def counter_entity(counter_id: int, index: int, nbytes: int | None,
                   packets: int | None) -> bytes:
    """A serialized Entity holding one counter cell, byte for byte what protobuf writes for
    ``Entity(counter_entry=CounterEntry(counter_id, index, data))`` (``nbytes``/``packets``
    None: the counter does not count them)."""
    entry = varint_field(1, counter_id) if counter_id else b""
    entry += wire_field(2, varint_field(1, index) if index else b"")
    if nbytes is not None or packets is not None:
        entry += wire_field(3, (varint_field(1, nbytes) if nbytes else b"")
                            + (varint_field(2, packets) if packets else b""))
    return wire_field(7, entry)
