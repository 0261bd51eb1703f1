"""The protobuf wire format, by hand, where the pure-Python protobuf (3.20, pinned through
p4runtime-shell; no C++ wheel for Python 3.11) is too slow: the emulator sends Read answers it
has already serialized (:func:`wire_field`), reads a monitor's counter Read from the wire
(:func:`counter_read_request`) and writes its cells by hand (:func:`counter_entity`), and the
monitor decodes counter Read answers without building messages (:func:`counter_cells`)."""

from __future__ import annotations

from collections.abc import Iterator


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
