"""P4Runtime byte strings: integers <-> the canonical big-endian encoding.

P4Runtime 1.x (spec section 8.4, "Bytestrings") encodes every match value, mask, action parameter
and port as an unsigned big-endian byte string. The *canonical* form is the shortest such string
(no leading zero bytes; the value 0 is one zero byte). Servers must accept it; many also accept the
"legacy" form padded to ceil(bitwidth / 8) bytes. Reads return the canonical form.
"""

from __future__ import annotations


def encode(value: int, bitwidth: int | None = None) -> bytes:
    """Canonical bytes of a non-negative ``value``; refuses a value wider than ``bitwidth``."""
    if value < 0:
        raise ValueError(f"negative value {value} has no P4Runtime encoding")
    if bitwidth is not None and value >> bitwidth:
        raise ValueError(f"value {value} does not fit in {bitwidth} bits")
    return value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")


def decode(data: bytes, bitwidth: int) -> int:
    """The integer in ``data`` (canonical or padded); ValueError when it does not fit ``bitwidth``.

    An empty string is refused (the spec gives it no meaning for a bit<W> field), and so is a
    string longer than ceil(bitwidth / 8) bytes even when its leading bytes are zero.
    """
    if not data:
        raise ValueError("empty byte string")
    if len(data) > (bitwidth + 7) // 8:
        raise ValueError(f"byte string of {len(data)} bytes is longer than a {bitwidth}-bit field")
    value = int.from_bytes(data, "big")
    if value >> bitwidth:
        raise ValueError(f"value {value} does not fit in {bitwidth} bits")
    return value


def canonical(data: bytes) -> bytes:
    """The canonical form of an already valid byte string (strips leading zero bytes)."""
    stripped = data.lstrip(b"\x00")
    return stripped if stripped else b"\x00"
