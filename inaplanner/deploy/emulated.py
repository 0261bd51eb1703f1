"""An emulated testbed: one emulated P4Runtime switch per programmable switch of a scenario, on
127.0.0.1, and the ``testbed.toml`` that points the deployer at them.

The switches have no build host (no ``ssh_host``): their P4Info is the checked-in contract and their
device config a small local file, since the emulator accepts any non-empty device config. Worker
configurations go to local files under ``workers/`` next to the testbed file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inaplanner.dataplane.p4info import DEFAULT_P4INFO
from inaplanner.errors import InaplannerError
from inaplanner.testbed.inventory import (
    TARGET_DEFAULTS,
    HostInventory,
    Inventory,
    SwitchInventory,
    save_inventory,
)

DEVICE_CONFIG_NAME = "emulated_device_config.json"


@dataclass
class EmulatedTestbed:
    inventory: Inventory
    handles: dict[str, Any] = field(default_factory=dict)  # switch id -> EmulatorHandle
    path: Path | None = None

    def stop(self) -> None:
        for h in self.handles.values():
            h.stop()
        self.handles.clear()

    def __enter__(self) -> EmulatedTestbed:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def emulated_switch_ids(scenario: Any) -> list[str]:
    """The switches that get an emulator: the programmable ones (all switches when none is)."""
    switches = scenario.switches()
    chosen = [s.id for s in switches if s.programmable]
    return chosen or [s.id for s in switches]


def start_emulated_testbed(scenario: Any, out: str | Path, base_port: int = 0,
                           switch_ids: list[str] | None = None, write: bool = True,
                           p4info: Path = DEFAULT_P4INFO) -> EmulatedTestbed:
    """Start the emulators and write ``out`` (the testbed file) and the device config beside it.

    ``base_port`` 0 lets each emulator pick a free port; otherwise switch i listens on
    ``base_port + i``.
    """
    from inaplanner.emulator.target import start_emulator

    out = Path(out)
    directory = out.resolve().parent
    ids = switch_ids if switch_ids is not None else emulated_switch_ids(scenario)
    if not ids:
        raise InaplannerError(f"scenario {scenario.name!r} has no switches to emulate")
    tb = EmulatedTestbed(Inventory(source=str(out), known_hosts=directory / "known_hosts",
                                   base_dir=directory), path=out)
    try:
        for i, sid in enumerate(ids):
            port = base_port + i if base_port else 0
            handle = start_emulator("127.0.0.1", port, device_id=1, name=sid)
            tb.handles[sid] = handle
            ports = {}
            for neighbour in sorted(scenario.neighbours(sid)):
                p = scenario.link_between(sid, neighbour).port_at(sid)
                if p is not None:
                    ports[neighbour] = int(p)
            tb.inventory.switches[sid] = SwitchInventory(
                id=sid, p4runtime=handle.address, device_id=1, target="bmv2",
                election_id=(0, 1), ssh=None, workdir="inaplanner-build",
                build_command=TARGET_DEFAULTS["bmv2"]["build_command"],
                program="ina_v1model.p4", program_name="ina_v1model",
                p4info_path=str(p4info), device_config_path=DEVICE_CONFIG_NAME, ports=ports,
            )
        members = []
        for job in scenario.jobs:
            members += list(job.workers) + list(job.parameter_servers)
        for hid in dict.fromkeys(members):
            tb.inventory.hosts[hid] = HostInventory(hid, None, f"workers/{hid}.json")
        if write:
            from inaplanner.io.atomic import atomic_write_text

            atomic_write_text(directory / DEVICE_CONFIG_NAME, json.dumps(
                {"emulated": True, "program": "ina_v1model",
                 "note": "the emulated target accepts any non-empty device config"}) + "\n")
            save_inventory(tb.inventory, out, header=(
                f"Emulated testbed for scenario {scenario.name!r}, written by "
                "'inaplanner testbed emulate'.\nThe switches listen on 127.0.0.1 while that "
                "command runs; worker configs go to workers/."))
    except BaseException:
        tb.stop()
        raise
    return tb
