"""Which counter measures which directed link, through the testbed's port map.

The INA program counts every packet on its ingress port (``rx_port_counter``) and on its egress
port (``tx_port_counter``), indexed by port number (``p4/ina_v1model.p4``). Traffic on the directed
link ``src -> dst`` is therefore seen by ``src``'s tx counter on its port toward ``dst`` and by
``dst``'s rx counter on its port toward ``src``. The sender's tx counter is preferred; the
receiver's rx counter stands in while the sender is not answering. Links between a host and a
switch are seen at the switch end only.
"""

from __future__ import annotations

from dataclasses import dataclass

from inaplanner.model import Scenario
from inaplanner.testbed.inventory import Inventory

TX = "tx"
RX = "rx"
#: The INA program's counters (P4Info aliases) and the fully qualified names they stand for.
COUNTER_ALIASES = {RX: "rx_port_counter", TX: "tx_port_counter"}


@dataclass(frozen=True)
class Probe:
    """One counter cell: ``switch``'s ``kind`` (tx / rx) counter at ``port``."""

    switch: str
    kind: str
    port: int

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.switch, self.kind, self.port)


@dataclass(frozen=True)
class DirectedLink:
    index: int
    direction: int  # 0: a->b, 1: b->a
    src: str
    dst: str
    capacity: float

    @property
    def key(self) -> tuple[int, int]:
        return (self.index, self.direction)

    @property
    def name(self) -> str:
        return f"{self.src}->{self.dst}"


@dataclass
class LinkMap:
    """Directed links and, for each, its probes in order of preference."""

    links: dict[tuple[int, int], DirectedLink]
    probes: dict[tuple[int, int], list[Probe]]

    def switch_ports(self) -> dict[str, dict[str, set[int]]]:
        """Per switch, the ports to read per counter kind."""
        out: dict[str, dict[str, set[int]]] = {}
        for probes in self.probes.values():
            for p in probes:
                out.setdefault(p.switch, {TX: set(), RX: set()})[p.kind].add(p.port)
        return out

    def unmeasured(self) -> list[DirectedLink]:
        return [self.links[k] for k, v in self.probes.items() if not v]


def directed_links(sc: Scenario) -> list[DirectedLink]:
    out = []
    for li, lk in enumerate(sc.links):
        out.append(DirectedLink(li, 0, lk.a, lk.b, float(lk.capacity)))
        out.append(DirectedLink(li, 1, lk.b, lk.a, float(lk.capacity)))
    return out


def link_map(sc: Scenario, inv: Inventory) -> LinkMap:
    """Probes for every directed link of ``sc``, through ``inv``'s port maps (falling back on the
    scenario's port numbers, as :meth:`Inventory.port_of` does)."""
    links: dict[tuple[int, int], DirectedLink] = {}
    probes: dict[tuple[int, int], list[Probe]] = {}
    for dl in directed_links(sc):
        found: list[Probe] = []
        if dl.src in inv.switches:
            found.append(Probe(dl.src, TX, inv.port_of(dl.src, dl.dst, sc)))
        if dl.dst in inv.switches:
            found.append(Probe(dl.dst, RX, inv.port_of(dl.dst, dl.src, sc)))
        links[dl.key] = dl
        probes[dl.key] = found
    return LinkMap(links, probes)
