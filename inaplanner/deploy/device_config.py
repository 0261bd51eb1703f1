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


def check_device_config(target: str, data: bytes, p4info, label: str = "",
                        program_name: str = "") -> None:
    """A structural check of a device config against its P4Info before it is sent (a switch
    that rejects one at commit time may be left unable to answer reads, as bmv2 is).

    * bmv2: a JSON object (p4c's output) whose ``pipelines`` hold every table of the P4Info and
      whose ``actions`` hold every action of it, by name.
    * tofino: a package as :func:`pack_tofino_config` makes it: the program name, a non-empty
      tofino.bin and a context.json that is a JSON object.

    Raises InaplannerError naming ``label`` and the first problem."""
    import json

    where = f"{label}: " if label else ""
    if target == "tofino":
        name, binary, context = unpack_tofino_config(data)
        if program_name and name != program_name:
            raise InaplannerError(f"{where}Tofino device config is for program {name!r}, not "
                                  f"{program_name!r}")
        if not binary:
            raise InaplannerError(f"{where}Tofino device config: tofino.bin is empty")
        try:
            ok = isinstance(json.loads(context), dict)
        except (ValueError, RecursionError):
            ok = False
        if not ok:
            raise InaplannerError(f"{where}Tofino device config: context.json is not a JSON "
                                  "object")
        return
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise InaplannerError(f"{where}the bmv2 device config is not valid JSON ({len(data)} "
                              f"bytes; truncated?): {str(exc)[:80]}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("pipelines"), list):
        raise InaplannerError(f"{where}the bmv2 device config is not p4c's bmv2 JSON (no "
                              "'pipelines' list)")
    tables: set[str] = set()
    for pipe in doc["pipelines"]:
        for t in (pipe.get("tables") or []) if isinstance(pipe, dict) else []:
            if isinstance(t, dict):
                tables.add(str(t.get("name", "")))
    actions = {str(a.get("name", "")) for a in doc.get("actions") or [] if isinstance(a, dict)}
    for t in p4info.tables:
        if t.preamble.name not in tables:
            raise InaplannerError(f"{where}the bmv2 device config has no table "
                                  f"{t.preamble.name!r} of the P4Info (built from another "
                                  "program?)")
    for a in p4info.actions:
        if a.preamble.name not in actions:
            raise InaplannerError(f"{where}the bmv2 device config has no action "
                                  f"{a.preamble.name!r} of the P4Info (built from another "
                                  "program?)")


def stub_bmv2_json(p4info, program: str = "ina_v1model") -> bytes:
    """A minimal bmv2-JSON-shaped device config naming the P4Info's tables and actions, for
    emulated switches (which do not run it) and tests."""
    import json

    doc = {
        "emulated": True, "program": program,
        "pipelines": [{"name": "ingress",
                       "tables": [{"name": t.preamble.name, "id": i}
                                  for i, t in enumerate(p4info.tables)]}],
        "actions": [{"name": a.preamble.name, "id": i} for i, a in enumerate(p4info.actions)],
    }
    return (json.dumps(doc, indent=1) + "\n").encode("utf-8")
