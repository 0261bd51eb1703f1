"""Topology builders: leaf-spine, 3-tier fat-tree, and the papers' example/testbed networks.

Every builder returns a validated :class:`Scenario` with tiers set (so up-down routing applies where the
network is a Clos), switch ports numbered hosts first, and positions from the tiered layout.
"""

from __future__ import annotations

from inaplanner.errors import ValidationError
from inaplanner.model import Host, Job, Link, Scenario, Switch
from inaplanner.topologies.layout import auto_layout


def _link(a: str, b: str, cap: float, a_port: int | None, b_port: int | None) -> Link:
    return Link(a=a, b=b, capacity=float(cap), a_port=a_port, b_port=b_port)


def _finish(sc: Scenario) -> Scenario:
    auto_layout(sc)
    sc.touch()
    sc.validate()
    return sc


def leaf_spine(
    leaves: int,
    spines: int,
    hosts_per_leaf: int,
    host_capacity: float = 100.0,
    fabric_capacity: float = 100.0,
    name: str | None = None,
    max_fan_in: int | None = None,
) -> Scenario:
    """A two-tier leaf-spine: every leaf joins every spine. Leaves ``L1..Ln``, spines ``S1..Sm``,
    hosts ``H1..`` numbered leaf by leaf. Leaf ports: hosts 1..h, then spines; spine ports: leaves.
    ``max_fan_in`` is set on every switch (it matters once a switch is programmable; None = 32)."""
    if leaves < 1 or spines < 1 or hosts_per_leaf < 0:
        raise ValidationError("leaf-spine needs leaves >= 1, spines >= 1, hosts per leaf >= 0")
    sc = Scenario(name or f"leaf-spine {leaves}x{spines}x{hosts_per_leaf}")
    leaf_ids = [f"L{i + 1}" for i in range(leaves)]
    spine_ids = [f"S{i + 1}" for i in range(spines)]
    sc.nodes += [Switch(s, tier="leaf", max_fan_in=max_fan_in) for s in leaf_ids]
    sc.nodes += [Switch(s, tier="spine", max_fan_in=max_fan_in) for s in spine_ids]
    h = 0
    for li, leaf in enumerate(leaf_ids):
        for port in range(1, hosts_per_leaf + 1):
            h += 1
            sc.nodes.append(Host(f"H{h}"))
            sc.links.append(_link(f"H{h}", leaf, host_capacity, None, port))
        for si, spine in enumerate(spine_ids):
            sc.links.append(_link(leaf, spine, fabric_capacity, hosts_per_leaf + si + 1, li + 1))
    return _finish(sc)


def fat_tree(k: int, capacity: float = 100.0, name: str | None = None,
             max_fan_in: int | None = None) -> Scenario:
    """The k-ary 3-tier fat-tree (k even): (k/2)^2 cores ``C*``, k pods of k/2 aggregation ``A<p>_<i>``
    and k/2 edge ``E<p>_<i>`` switches, k^3/4 hosts ``H*``. Aggregation switch i of every pod joins
    cores i*k/2 .. (i+1)*k/2-1. Ports: edge 1..k/2 hosts, then aggs; agg 1..k/2 edges, then cores;
    core port p+1 faces pod p. ``max_fan_in`` is set on every switch (None = 32)."""
    if k < 2 or k % 2:
        raise ValidationError(f"fat-tree needs an even k >= 2, got {k}")
    half = k // 2
    sc = Scenario(name or f"fat-tree k={k}")
    cores = [f"C{i + 1}" for i in range(half * half)]
    sc.nodes += [Switch(c, tier="core", max_fan_in=max_fan_in) for c in cores]
    h = 0
    for p in range(k):
        aggs = [f"A{p + 1}_{i + 1}" for i in range(half)]
        edges = [f"E{p + 1}_{i + 1}" for i in range(half)]
        sc.nodes += [Switch(a, tier="agg", max_fan_in=max_fan_in) for a in aggs]
        sc.nodes += [Switch(e, tier="edge", max_fan_in=max_fan_in) for e in edges]
        for ei, e in enumerate(edges):
            for port in range(1, half + 1):
                h += 1
                sc.nodes.append(Host(f"H{h}"))
                sc.links.append(_link(f"H{h}", e, capacity, None, port))
            for ai, a in enumerate(aggs):
                sc.links.append(_link(e, a, capacity, half + ai + 1, ei + 1))
        for ai, a in enumerate(aggs):
            for ci in range(half):
                sc.links.append(_link(a, cores[ai * half + ci], capacity, half + ci + 1, p + 1))
    return _finish(sc)


def aro_fig1() -> Scenario:
    """ARO Fig. 1 (section I): leaf-spine of 4 leaves L0-L3 and 2 spines S0, S1, unit links, the PS
    under L0 and 5 workers under the three other leaves (2, 2, 1); L1, L2 and S1 are programmable.
    ECMP without INA gives 1/5; ARO's routes give every worker rate 1."""
    sc = Scenario("ARO Fig. 1")
    leaves = [f"L{i}" for i in range(4)]
    spines = ["S0", "S1"]
    sc.nodes += [Switch(x, tier="leaf", programmable=x in ("L1", "L2")) for x in leaves]
    sc.nodes += [Switch(x, tier="spine", programmable=x == "S1") for x in spines]
    under = {"L0": ["PS"], "L1": ["W0", "W1"], "L2": ["W2", "W3"], "L3": ["W4"]}
    for leaf in leaves:
        for i, host in enumerate(under[leaf]):
            sc.nodes.append(Host(host))
            sc.links.append(_link(host, leaf, 1.0, None, i + 1))
    for leaf in leaves:
        for si, spine in enumerate(spines):
            sc.links.append(_link(leaf, spine, 1.0, 3 + si, leaves.index(leaf) + 1))
    sc.jobs.append(Job("job0", ["W0", "W1", "W2", "W3", "W4"], ["PS"], model_mb=100.0))
    return _finish(sc)


def grid_fig1(link: float = 3.0, ps_ingress: float = 9.0, switch_capacity: float | None = 9.0,
              name: str = "GRID Fig. 1") -> Scenario:
    """GRID Fig. 1 (section 2.2; notes 001): 1 PS, workers W1-W8, programmable switches S1-S3.
    W1-W4 hang off S1, W5-W6 off S2, W7-W8 off S3; S1-S3 (L1), S1-S2, S2-S3 (L3); the PS off S3.
    Links 3 Gbps, PS ingress 9 Gbps, switch processing capacity 9 Gbps: GRID 3, Geryon 1, ATP ~2.43."""
    sc = Scenario(name)
    for s in ("S1", "S2", "S3"):
        sc.nodes.append(Switch(s, programmable=True, aggregation_capacity=switch_capacity))
    attach = {"S1": ["W1", "W2", "W3", "W4"], "S2": ["W5", "W6"], "S3": ["W7", "W8"]}
    ports = {"S1": 0, "S2": 0, "S3": 0}

    def port(s: str) -> int:
        ports[s] += 1
        return ports[s]

    for s, hosts in attach.items():
        for h in hosts:
            sc.nodes.append(Host(h))
            sc.links.append(_link(h, s, link, None, port(s)))
    for a, b in (("S1", "S3"), ("S1", "S2"), ("S2", "S3")):
        sc.links.append(_link(a, b, link, port(a), port(b)))
    sc.nodes.append(Host("PS"))
    sc.links.append(_link("PS", "S3", ps_ingress, None, port("S3")))
    sc.jobs.append(Job("job0", [f"W{i}" for i in range(1, 9)], ["PS"], model_mb=548.0))
    return _finish(sc)


def grid_testbed() -> Scenario:
    """GRID testbed (section 6.2, Fig. 3): 1 PS, 8 workers, 3 Tofino switches, all links 100 Gbps.
    The paper draws it; we take the Fig. 1 wiring (the text says the testbed grows from it)."""
    sc = grid_fig1(link=100.0, ps_ingress=100.0, switch_capacity=None, name="GRID testbed")
    for s in sc.switches():
        s.target = "tofino"
        s.pipelines = 1
        s.aggregators = 40960
    return sc


def inart_fig1(scale: float = 1.0, name: str = "InArt Fig. 1") -> Scenario:
    """InArt Fig. 1 (section 2.1): PSs S1, S2; workers W1-W4 under switch V1, W5-W6 under V2; V1-V2;
    S1 on V1, S2 on V2. Switch processing capacity 6, PS ingress 4, links 6 (times ``scale``).
    LBMM reaches 4/3, ATP 2, InArt 2.5."""
    sc = Scenario(name)
    for v in ("V1", "V2"):
        sc.nodes.append(Switch(v, programmable=True, aggregation_capacity=6.0 * scale))
    plan = [("V1", ["W1", "W2", "W3", "W4"], "S1"), ("V2", ["W5", "W6"], "S2")]
    for v, workers, ps in plan:
        port = 0
        for w in workers:
            port += 1
            sc.nodes.append(Host(w))
            sc.links.append(_link(w, v, 6.0 * scale, None, port))
        sc.nodes.append(Host(ps))
        sc.links.append(_link(ps, v, 4.0 * scale, None, port + 1))
    sc.links.append(_link("V1", "V2", 6.0 * scale, 6, 4))
    sc.jobs.append(Job("job0", [f"W{i}" for i in range(1, 7)], ["S1", "S2"], model_mb=548.0))
    return _finish(sc)


def inart_testbed() -> Scenario:
    """InArt testbed (section 5.2.1): the Fig. 1 topology on two Tofino switches, 100 Gbps links."""
    sc = inart_fig1(scale=100.0 / 6.0, name="InArt testbed")
    for s in sc.switches():
        s.aggregation_capacity = None
        s.target = "tofino"
    for lk in sc.links:
        lk.capacity = 100.0
    return _finish(sc)
