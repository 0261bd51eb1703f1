"""An emulated testbed: one emulated P4Runtime switch per programmable switch of a scenario, on
127.0.0.1, and the ``testbed.toml`` that points the deployer at them.

The switches have no build host (no ``ssh_host``): their P4Info is the checked-in contract and their
device config a small local file shaped like p4c's bmv2 JSON (it names the P4Info's tables and
actions, so the deployer's structural check passes; the emulator does not run it). Worker
configurations go to local files under ``workers/`` next to the testbed file.

The testbed file says ``tls = false`` (the emulators listen on loopback) unless ``tls`` is given:
then the emulators serve TLS (mTLS when it carries a client CA) and the file names the CA and
client certificate and key to use.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inaplanner.dataplane.p4info import DEFAULT_P4INFO
from inaplanner.errors import InaplannerError
from inaplanner.fdlimit import ensure_open_files, reserve
from inaplanner.testbed.inventory import (
    DEFAULT_ELECTION_ID,
    TARGET_DEFAULTS,
    HostInventory,
    Inventory,
    SwitchInventory,
    TLSSettings,
    save_inventory,
)

DEVICE_CONFIG_NAME = "emulated_device_config.json"


@dataclass
class EmulatedTestbed:
    inventory: Inventory
    handles: dict[str, Any] = field(default_factory=dict)  # switch id -> EmulatorHandle
    path: Path | None = None
    #: gives back the open files reserved for the connections the switches accept
    release_files: Callable[[], None] | None = None

    def stop(self, grace: float = 0.2, timeout: float = 1.0) -> None:
        """Stop every emulator at once (a short grace for RPCs in flight, then at most
        ``timeout`` seconds for their threads)."""
        handles = list(self.handles.values())
        self.handles.clear()
        done = [h.begin_stop(grace) for h in handles]
        for h, ev in zip(handles, done, strict=True):
            h.finish_stop(ev, timeout)
        if self.release_files is not None:
            self.release_files()

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
                           p4info: Path = DEFAULT_P4INFO, behaviour: str = "strict",
                           server_tls: Any = None, client_tls: TLSSettings | None = None,
                           max_multicast_groups: int | None = None,
                           check: Callable[[], None] | None = None) -> EmulatedTestbed:
    """Start the emulators and write ``out`` (the testbed file) and the device config beside it.
    ``check`` is called before each switch starts: what it raises stops the emulators started
    so far and goes to the caller (the Deploy dialog's Cancel while it starts 1,026 switches at
    fat-tree k=64).

    ``base_port`` 0 lets each emulator pick a free port; otherwise switch i listens on
    ``base_port + i``. ``behaviour`` ("strict" or "bmv2") and ``max_multicast_groups`` go to
    every emulator (:func:`inaplanner.emulator.target.start_emulator`); ``server_tls`` (a
    :class:`~inaplanner.emulator.target.ServerTLS`) makes them serve TLS, and ``client_tls`` is
    what the testbed file tells the deployer and the monitor.
    """
    from inaplanner.emulator.target import start_emulator

    out = Path(out)
    directory = out.resolve().parent
    ids = switch_ids if switch_ids is not None else emulated_switch_ids(scenario)
    if not ids:
        raise InaplannerError(f"scenario {scenario.name!r} has no switches to emulate")
    # each switch: its listening socket now, and later the connection a deployment or a monitor
    # opens to it (the client counts its own end, in this process or another)
    ensure_open_files(2 * len(ids), f"emulating {len(ids)} switches")
    tb = EmulatedTestbed(Inventory(source=str(out), known_hosts=directory / "known_hosts",
                                   base_dir=directory), path=out,
                         release_files=reserve(len(ids)))
    try:
        for i, sid in enumerate(ids):
            if check is not None:
                check()
            port = base_port + i if base_port else 0
            kw = {} if max_multicast_groups is None else \
                {"max_multicast_groups": max_multicast_groups}
            handle = start_emulator("127.0.0.1", port, device_id=1, name=sid,
                                    behaviour=behaviour, tls=server_tls, **kw)
            tb.handles[sid] = handle
            ports = {}
            for neighbour in sorted(scenario.neighbours(sid)):
                p = scenario.link_between(sid, neighbour).port_at(sid)
                if p is not None:
                    ports[neighbour] = int(p)
            tb.inventory.switches[sid] = SwitchInventory(
                id=sid, p4runtime=handle.address, device_id=1, target="bmv2",
                election_id=DEFAULT_ELECTION_ID, ssh=None, workdir="inaplanner-build",
                build_command=TARGET_DEFAULTS["bmv2"]["build_command"],
                program="ina_v1model.p4", program_name="ina_v1model",
                p4info_path=str(p4info), device_config_path=DEVICE_CONFIG_NAME, ports=ports,
                tls=client_tls if client_tls is not None else TLSSettings(False),
            )
        members = []
        for job in scenario.jobs:
            members += list(job.workers) + list(job.parameter_servers)
        for hid in dict.fromkeys(members):
            tb.inventory.hosts[hid] = HostInventory(hid, None, f"workers/{hid}.json")
        if write:
            from inaplanner.dataplane.p4info import parse_p4info_text
            from inaplanner.deploy.device_config import stub_bmv2_json
            from inaplanner.io.atomic import atomic_write_text

            info = parse_p4info_text(Path(p4info).read_text(encoding="utf-8"), str(p4info))
            atomic_write_text(directory / DEVICE_CONFIG_NAME,
                              stub_bmv2_json(info).decode("utf-8"))
            save_inventory(tb.inventory, out, header=(
                f"Emulated testbed for scenario {scenario.name!r}, written by "
                "'inaplanner testbed emulate'.\nThe switches listen on 127.0.0.1 while that "
                "command runs; worker configs go to workers/."))
    except BaseException:
        tb.stop()
        raise
    return tb
