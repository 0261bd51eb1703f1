"""The ``p4_device_config`` bytes of SetForwardingPipelineConfig, per target, and the config cookie.

* bmv2 (``simple_switch_grpc``) takes the p4c JSON as it is.
* Tofino through ``bf_switchd`` (P4Runtime server of the Barefoot SDE / Stratum's legacy BF
  path) takes one blob: ``u32le len(name), name, u32le len(tofino.bin), tofino.bin,
  u32le len(context.json), context.json`` where ``name`` is the P4 program name.
"""

from __future__ import annotations

import hashlib
import struct

from inaplanner.errors import InaplannerError

_U32 = struct.Struct("<I")


def pack_tofino_config(program_name: str, tofino_bin: bytes, context_json: bytes) -> bytes:
    """Pack a Tofino device config for bf_switchd (see the module docstring)."""
    name = program_name.encode("utf-8")
    if not name:
        raise InaplannerError("Tofino device config: the program name is empty")
    parts = []
    for blob, what in ((name, "program name"), (tofino_bin, "tofino.bin"),
                       (context_json, "context.json")):
        if len(blob) >= 1 << 32:
            raise InaplannerError(f"Tofino device config: {what} is larger than 4 GiB")
        parts.append(_U32.pack(len(blob)))
        parts.append(blob)
    return b"".join(parts)


def unpack_tofino_config(data: bytes) -> tuple[str, bytes, bytes]:
    """Inverse of :func:`pack_tofino_config`; InaplannerError on a truncated or padded blob."""
    out: list[bytes] = []
    pos = 0
    for what in ("program name", "tofino.bin", "context.json"):
        if pos + 4 > len(data):
            raise InaplannerError(f"Tofino device config: truncated before the {what} length")
        (n,) = _U32.unpack_from(data, pos)
        pos += 4
        if pos + n > len(data):
            raise InaplannerError(f"Tofino device config: {what} needs {n} bytes, "
                                  f"{len(data) - pos} left")
        out.append(data[pos:pos + n])
        pos += n
    if pos != len(data):
        raise InaplannerError(f"Tofino device config: {len(data) - pos} bytes after context.json")
    return out[0].decode("utf-8"), out[1], out[2]


def config_cookie(p4info_bytes: bytes, device_config: bytes) -> int:
    """A 64-bit cookie naming one (P4Info, device config) pair. The deployer stores it with the
    pipeline and skips re-pushing a pipeline whose cookie the switch already reports (pushing
    a pipeline wipes every entry)."""
    h = hashlib.sha256()
    h.update(_U32.pack(len(p4info_bytes)))
    h.update(p4info_bytes)
    h.update(device_config)
    return int.from_bytes(h.digest()[:8], "big") or 1
