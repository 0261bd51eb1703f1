"""Making emulated switches count what a deployed plan sends, so monitoring can be tried and tested
without hardware.

The plan's load on every directed link comes from the evaluator (:func:`planned_loads`); each
load becomes a byte and packet rate on the sender's tx counter and on the receiver's rx counter at
the ports the testbed's port map names (:mod:`inaplanner.monitor.mapping`), and the emulator
(:meth:`inaplanner.emulator.target.EmulatorHandle.set_port_rates`) makes those counter cells grow
at that rate, optionally with noise. A *hot link* multiplies one directed link's rate, to see
alerts fire.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import numpy as np

from inaplanner.errors import InaplannerError
from inaplanner.model import Scenario
from inaplanner.monitor.mapping import COUNTER_ALIASES, RX, TX, link_map
from inaplanner.testbed.inventory import Inventory

DEFAULT_PACKET_BYTES = 1024.0

PortRates = dict[str, dict[str, dict[int, tuple[float, float]]]]  # switch -> kind -> port -> rate


def parse_hot(specs: list[str], sc: Scenario) -> dict[tuple[int, int], float]:
    """``SRC->DST=FACTOR`` (one direction) or ``A-B=FACTOR`` (both) -> {(link, dir): factor}."""
    out: dict[tuple[int, int], float] = {}
    for spec in specs:
        m = re.fullmatch(r"\s*([^=\s>-]+)\s*(->|-)\s*([^=\s]+)\s*=\s*([0-9.eE+-]+)\s*", spec)
        if not m:
            raise InaplannerError(f"hot link {spec!r}: expected SRC->DST=FACTOR or A-B=FACTOR")
        a, arrow, b, factor_text = m.groups()
        try:
            factor = float(factor_text)
        except ValueError:
            raise InaplannerError(f"hot link {spec!r}: {factor_text!r} is not a number") from None
        if not factor >= 0:
            raise InaplannerError(f"hot link {spec!r}: the factor must be >= 0")
        li = sc.link_index(a, b)
        if li is None:
            raise InaplannerError(f"hot link {spec!r}: the scenario has no link {a} - {b}")
        d = 0 if sc.links[li].a == a else 1
        out[(li, d)] = factor
        if arrow == "-":
            out[(li, 1 - d)] = factor
    return out


def port_rates(sc: Scenario, inv: Inventory, loads: np.ndarray,
               hot: Mapping[tuple[int, int], float] | None = None,
               packet_bytes: float = DEFAULT_PACKET_BYTES) -> PortRates:
    """Per switch and counter kind, the (bytes/s, packets/s) of every mapped port for the (L, 2)
    Gbps ``loads``. Every mapped port is listed (idle ones at 0)."""
    if packet_bytes <= 0:
        raise InaplannerError("packet size must be > 0 bytes")
    lm = link_map(sc, inv)
    out: PortRates = {}
    for key, probes in lm.probes.items():
        li, d = key
        gbps = float(loads[li, d]) * (hot or {}).get(key, 1.0)
        bps = max(0.0, gbps) * 1e9 / 8.0
        for p in probes:
            out.setdefault(p.switch, {TX: {}, RX: {}})[p.kind][p.port] = (bps, bps / packet_bytes)
    return out


def drive_emulators(handles: Mapping[str, object], rates: PortRates, noise: float = 0.0) -> None:
    """Set the counter growth of each emulated switch (``handles[switch]`` is an
    :class:`~inaplanner.emulator.target.EmulatorHandle` with a pipeline set)."""
    for sid, kinds in rates.items():
        handle = handles.get(sid)
        if handle is None:
            continue
        for kind, per_port in kinds.items():
            handle.set_port_rates(per_port, noise=noise, counters=[COUNTER_ALIASES[kind]])


def drive_plan(handles: Mapping[str, object], sc: Scenario, inv: Inventory, plan,
               noise: float = 0.0, hot: Mapping[tuple[int, int], float] | None = None,
               packet_bytes: float = DEFAULT_PACKET_BYTES) -> np.ndarray:
    """Make the emulators count what ``plan`` sends; returns the planned (L, 2) loads."""
    from inaplanner.monitor.series import planned_loads

    loads = planned_loads(sc, plan)
    drive_emulators(handles, port_rates(sc, inv, loads, hot, packet_bytes), noise)
    return loads
