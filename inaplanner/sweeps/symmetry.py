"""Symmetric cases: links and switches that the network's symmetry maps onto each other.

Two single failures give the same results when an automorphism of the scenario (a relabelling of
nodes that keeps every link, capacity, background, tier, programmability, pipeline of each port,
and each job's workers and PSs) maps one failed element onto the other. Finding the automorphism
group exactly is expensive on a datacenter; colour refinement (1-dimensional Weisfeiler-Leman) is
cheap (O(links x rounds)) and every automorphism preserves its colours, so elements of one
automorphism orbit always share a colour. The converse can fail on some highly regular graphs;
on the fat-trees and leaf-spines of this program the tests compare the colour classes with the
exact orbits found by brute force (fat-tree k=4 with jobs placed).

A collapsed case stands for all members of its class; its result is reported for each member,
marked as collapsed (``weight`` > 1) in the results, and weighted in the summary's percentiles.
"""

from __future__ import annotations

import hashlib
from collections.abc import Hashable, Sequence

from inaplanner.model import Scenario, Switch
from inaplanner.sweeps.cases import Case
from inaplanner.views.whatif import FailLink, FailSwitch


def _h(obj: Hashable) -> str:
    return hashlib.blake2b(repr(obj).encode(), digest_size=10).hexdigest()


def node_labels(sc: Scenario) -> dict[str, str]:
    """The initial colour of each node: what an automorphism must keep."""
    roles: dict[str, list[tuple[str, str]]] = {}
    for j in sc.jobs:
        for w in j.workers:
            roles.setdefault(w, []).append((j.id, "worker"))
        for p in j.parameter_servers:
            roles.setdefault(p, []).append((j.id, "ps"))
    out = {}
    for n in sc.nodes:
        if isinstance(n, Switch):
            key: tuple = ("switch", n.tier, n.programmable, n.pipelines, n.aggregation_capacity,
                          n.aggregation_background, n.aggregators, getattr(n, "max_fan_in", None))
        else:
            key = ("host",)
        out[n.id] = _h((key, tuple(sorted(roles.get(n.id, [])))))
    return out


def _port_pipe(sc: Scenario, node: str, port: int | None) -> int:
    if port is None or not sc.is_switch(node):
        return -1
    return sc.pipeline_of_port(node, port)


def refine(sc: Scenario) -> dict[str, str]:
    """Stable colours by colour refinement over links labelled with capacity, background (as seen
    from each end) and the pipeline of the port at each end."""
    colour = node_labels(sc)
    adj: dict[str, list[tuple[tuple, str]]] = {n.id: [] for n in sc.nodes}
    for lk in sc.links:
        pa, pb = _port_pipe(sc, lk.a, lk.a_port), _port_pipe(sc, lk.b, lk.b_port)
        bg = tuple(lk.background) if lk.background else (0.0, 0.0)
        adj[lk.a].append(((lk.capacity, bg[0], bg[1], pa, pb), lk.b))
        adj[lk.b].append(((lk.capacity, bg[1], bg[0], pb, pa), lk.a))
    classes = len(set(colour.values()))
    while True:
        new = {v: _h((colour[v], tuple(sorted((lab, colour[u]) for lab, u in adj[v]))))
               for v in colour}
        n_new = len(set(new.values()))
        colour = new
        if n_new == classes:
            return colour
        classes = n_new


def link_key(sc: Scenario, colour: dict[str, str], a: str, b: str) -> str:
    i = sc.link_index(a, b)
    assert i is not None
    lk = sc.links[i]
    pa, pb = _port_pipe(sc, lk.a, lk.a_port), _port_pipe(sc, lk.b, lk.b_port)
    bg = tuple(lk.background) if lk.background else (0.0, 0.0)
    ends = sorted([(colour[lk.a], pa, bg[0]), (colour[lk.b], pb, bg[1])])
    return _h((tuple(ends), lk.capacity))


def link_classes(sc: Scenario) -> list[list[tuple[str, str]]]:
    """Links grouped by symmetry class, each class in scenario order, classes by first link."""
    colour = refine(sc)
    groups: dict[str, list[tuple[str, str]]] = {}
    for lk in sc.links:
        groups.setdefault(link_key(sc, colour, lk.a, lk.b), []).append((lk.a, lk.b))
    return list(groups.values())


def switch_classes(sc: Scenario) -> list[list[str]]:
    colour = refine(sc)
    groups: dict[str, list[str]] = {}
    for s in sc.switches():
        groups.setdefault(colour[s.id], []).append(s.id)
    return list(groups.values())


def collapse_cases(sc: Scenario, cases: Sequence[Case]) -> list[Case]:
    """Single-link and single-switch cases merged per symmetry class into their first member
    (which keeps its id); other cases are kept as they are. Order: first appearance."""
    colour = refine(sc)
    reps: dict[str, int] = {}
    out: list[Case] = []
    members: list[list[str]] = []
    for c in cases:
        key = None
        if len(c.changes) == 1 and isinstance(c.changes[0], FailLink):
            ch = c.changes[0]
            key = "L" + link_key(sc, colour, ch.a, ch.b)
        elif len(c.changes) == 1 and isinstance(c.changes[0], FailSwitch):
            key = "S" + colour[c.changes[0].switch]
        if key is None:
            out.append(c)
            members.append([c.element])
            continue
        key = c.generator + key
        if key in reps:
            members[reps[key]].append(c.element)
            continue
        reps[key] = len(out)
        out.append(c)
        members.append([c.element])
    result = []
    for c, m in zip(out, members, strict=True):
        if len(m) > 1:
            c = Case(c.id, c.generator, c.element, c.changes, tuple(m), len(m))
        result.append(c)
    return result
