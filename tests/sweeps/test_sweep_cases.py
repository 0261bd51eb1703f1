"""The case generators: counts on small topologies, determinism, and symmetry classes that match
the exact automorphism orbits found by brute force on a fat-tree k=4."""

from __future__ import annotations

import itertools

import networkx as nx
import pytest
from networkx.algorithms.isomorphism import GraphMatcher

from inaplanner.errors import InaplannerError
from inaplanner.sweeps.cases import generate, parse_generators, planes, pods
from inaplanner.sweeps.symmetry import link_classes, node_labels, switch_classes
from inaplanner.topologies import fat_tree, leaf_spine
from inaplanner.views.whatif import FailLink, FailSwitch, RemoveJob, SetCapacity

from .conftest import small_fat_tree, small_leaf_spine


def test_single_failures_count_every_link_and_switch():
    sc = small_leaf_spine()
    links = generate(sc, ["single-link"])
    assert len(links) == len(sc.links) == 3 * 3 + 3 * 2
    assert all(len(c.changes) == 1 and isinstance(c.changes[0], FailLink) for c in links)
    switches = generate(sc, ["single-switch"])
    assert sorted(c.element for c in switches) == ["L1", "L2", "L3", "S1", "S2"]
    assert all(isinstance(c.changes[0], FailSwitch) for c in switches)
    both = generate(sc, ["single-link", "single-switch"])
    assert len(both) == len(links) + len(switches)
    assert len({c.id for c in both}) == len(both)


def test_pods_and_planes_of_a_fat_tree_and_a_leaf_spine():
    ft = fat_tree(4)
    assert [len(p) for p in pods(ft)] == [4, 4, 4, 4]  # 2 aggregation + 2 edge switches a pod
    assert planes(ft) == [["C1", "C2"], ["C3", "C4"]]  # the cores behind aggregation 1 and 2
    cases = generate(ft, ["pod"])
    assert [c.id for c in cases] == ["pod:1", "pod:2", "pod:3", "pod:4", "plane:1", "plane:2"]
    assert {ch.switch for ch in cases[0].changes} == {"A1_1", "A1_2", "E1_1", "E1_2"}
    ls = leaf_spine(3, 2, 1)
    assert pods(ls) == [["L1"], ["L2"], ["L3"]]
    assert planes(ls) == [["S1"], ["S2"]]


def test_random_k_is_seeded_distinct_and_bounded():
    sc = small_leaf_spine()
    a = generate(sc, ["random-k"], k=2, sample=10, seed=3)
    b = generate(sc, ["random-k"], k=2, sample=10, seed=3)
    c = generate(sc, ["random-k"], k=2, sample=10, seed=4)
    assert [x.element for x in a] == [x.element for x in b]
    assert [x.element for x in a] != [x.element for x in c]
    assert len({frozenset((ch.a, ch.b) for ch in x.changes) for x in a}) == 10
    assert all(len(x.changes) == 2 for x in a)
    # asking for more than exist gives all of them once
    every = generate(leaf_spine(1, 1, 2), ["random-k"], k=2, sample=50, seed=0)
    assert len(every) == 3  # C(3, 2)


def test_capacity_grid_and_job_growth():
    sc = small_leaf_spine(jobs=2)
    cases = generate(sc, ["capacity"], capacities=[25, 50])
    classes = {c.id.split("=")[0] for c in cases}
    assert classes == {"capacity:host-leaf", "capacity:leaf-spine"}
    assert len(cases) == 4
    c = next(c for c in cases if c.id == "capacity:leaf-spine=25")
    assert len(c.changes) == 6 and all(isinstance(ch, SetCapacity) and ch.capacity == 25 for ch in c.changes)
    growth = generate(sc, ["jobs"])
    assert [c.id for c in growth] == ["jobs:1", "jobs:2", "workers:25%", "workers:50%", "workers:75%"]
    assert [len(c.changes) for c in growth[:2]] == [1, 0]
    assert isinstance(growth[0].changes[0], RemoveJob)
    from inaplanner.views.whatif import ScaleWorkers, what_if

    half = what_if(sc, list(growth[3].changes))
    assert all(isinstance(ch, ScaleWorkers) for ch in growth[3].changes)
    assert [len(j.workers) for j in half.jobs] == [max(1, len(j.workers) // 2) for j in sc.jobs]
    assert [len(j.workers) for j in sc.jobs] == [3, 3]  # the base is untouched


def test_unknown_generators_and_bad_arguments_are_refused():
    with pytest.raises(InaplannerError, match="unknown case generator 'links'"):
        parse_generators("single-link,links")
    with pytest.raises(InaplannerError, match="capacity generator needs values"):
        generate(small_leaf_spine(), ["capacity"])
    with pytest.raises(InaplannerError, match="random-k needs"):
        generate(small_leaf_spine(), ["random-k"], k=0)


def test_sampling_is_seeded_and_a_subset():
    sc = small_fat_tree()
    full = generate(sc, ["single-link"])
    s1 = generate(sc, ["single-link"], sample=7, seed=2)
    s2 = generate(sc, ["single-link"], sample=7, seed=2)
    assert [c.id for c in s1] == [c.id for c in s2]
    assert len(s1) == 7 and {c.id for c in s1} <= {c.id for c in full}


# ---- symmetry vs brute force ----------------------------------------------------------------


def _labelled_graph(sc):
    labels = node_labels(sc)
    g = nx.Graph()
    for n in sc.nodes:
        g.add_node(n.id, label=labels[n.id])
    for lk in sc.links:
        pa = sc.pipeline_of_port(lk.a, lk.a_port) if sc.is_switch(lk.a) and lk.a_port else -1
        pb = sc.pipeline_of_port(lk.b, lk.b_port) if sc.is_switch(lk.b) and lk.b_port else -1
        # a link's label: its capacity and the pipelines of its two ends, unordered
        g.add_edge(lk.a, lk.b, label=f"{lk.capacity!r}|{sorted((pa, pb))}")
    return g


def _automorphism_maps(g, pins1: dict[str, str], pins2: dict[str, str]) -> bool:
    """Is there an automorphism of ``g`` sending pins1's nodes to pins2's (same pin names)?"""
    g1, g2 = g.copy(), g.copy()
    for node, pin in pins1.items():
        g1.nodes[node]["label"] = pin
    for node, pin in pins2.items():
        g2.nodes[node]["label"] = pin

    # a cheap refusal first: graphs whose Weisfeiler-Lehman hashes differ are not isomorphic (the
    # search below takes seconds to exhaust every mapping; equal hashes prove nothing)
    if nx.weisfeiler_lehman_graph_hash(g1, node_attr="label", edge_attr="label") != \
            nx.weisfeiler_lehman_graph_hash(g2, node_attr="label", edge_attr="label"):
        return False
    same = lambda a, b: a["label"] == b["label"]  # noqa: E731 - nodes and links alike
    gm = GraphMatcher(g1, g2, node_match=same, edge_match=same)
    return gm.is_isomorphic()


def _exact_link_orbits(sc):
    g = _labelled_graph(sc)
    orbits: list[list[tuple[str, str]]] = []
    for lk in sc.links:
        for orb in orbits:
            a, b = orb[0]
            if (_automorphism_maps(g, {a: "#1", b: "#2"}, {lk.a: "#1", lk.b: "#2"})
                    or _automorphism_maps(g, {a: "#1", b: "#2"}, {lk.b: "#1", lk.a: "#2"})):
                orb.append((lk.a, lk.b))
                break
        else:
            orbits.append([(lk.a, lk.b)])
    return orbits


def _exact_switch_orbits(sc):
    g = _labelled_graph(sc)
    orbits: list[list[str]] = []
    for s in sc.switches():
        for orb in orbits:
            if _automorphism_maps(g, {orb[0]: "#1"}, {s.id: "#1"}):
                orb.append(s.id)
                break
        else:
            orbits.append([s.id])
    return orbits


def _as_sets(groups):
    return sorted(sorted(map(str, g)) for g in groups)


@pytest.mark.parametrize("seed", [1, 2])
def test_symmetry_classes_equal_the_exact_orbits_on_a_fat_tree_k4(seed):
    sc = small_fat_tree(seed)
    assert _as_sets(link_classes(sc)) == _as_sets(_exact_link_orbits(sc))
    assert _as_sets(switch_classes(sc)) == _as_sets(_exact_switch_orbits(sc))


def test_a_bare_fat_tree_has_one_class_per_tier_pair():
    sc = fat_tree(4)
    assert sorted(len(c) for c in link_classes(sc)) == [16, 16, 16]
    assert sorted(len(c) for c in switch_classes(sc)) == [4, 8, 8]


def test_collapsing_keeps_every_element_once_with_its_weight():
    sc = small_fat_tree()
    full = generate(sc, ["single-link", "single-switch"])
    collapsed = generate(sc, ["single-link", "single-switch"], collapse=True)
    assert len(collapsed) < len(full)
    members = list(itertools.chain.from_iterable(c.members or (c.element,) for c in collapsed))
    assert sorted(members) == sorted(c.element for c in full)
    assert sum(c.weight for c in collapsed) == len(full)
    assert all(c.weight == max(1, len(c.members)) for c in collapsed)
