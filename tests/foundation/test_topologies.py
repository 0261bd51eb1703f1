"""Builders, marking and job placement."""

from __future__ import annotations

import pytest

from inaplanner.errors import ValidationError
from inaplanner.topologies import (
    aro_fig1,
    fat_tree,
    grid_fig1,
    hosts_by_switch,
    inart_fig1,
    leaf_spine,
    mark_programmable,
    place_jobs,
)


def test_leaf_spine_shape():
    sc = leaf_spine(24, 24, 24)
    assert len(sc.hosts()) == 576 and len(sc.switches()) == 48
    assert len(sc.links) == 576 + 24 * 24
    assert sc.is_tiered()
    assert sc.switch_ports("L1") == list(range(1, 49))


@pytest.mark.parametrize("k", [4, 8, 16])
def test_fat_tree_shape(k):
    sc = fat_tree(k)
    assert len(sc.hosts()) == k**3 // 4
    assert len(sc.switches()) == 5 * k * k // 4
    assert len(sc.links) == 3 * k**3 // 4
    # every switch has exactly k ports
    assert all(len(sc.switch_ports(s.id)) == k for s in sc.switches())


def test_fat_tree_needs_even_k():
    with pytest.raises(ValidationError):
        fat_tree(5)


def test_mark_all_leaves_and_share():
    sc = leaf_spine(10, 5, 2)
    marked = mark_programmable(sc, None, pipelines=4)
    assert sorted(marked) == sorted(f"L{i}" for i in range(1, 11))
    assert all(sc.node(m).pipelines == 4 for m in marked)
    sc2 = leaf_spine(10, 5, 2)
    a = mark_programmable(sc2, 0.2, seed=5)
    sc3 = leaf_spine(10, 5, 2)
    assert mark_programmable(sc3, 0.2, seed=5) == a  # reproducible
    assert len(a) == 3  # round(0.2 * 15)


def test_place_jobs_like_aro():
    sc = leaf_spine(6, 3, 8)
    mark_programmable(sc, 0.0)
    jobs = place_jobs(sc, 2, 2, [10, 12], seed=4)
    ps = [p for j in jobs for p in j.parameter_servers]
    attached = hosts_by_switch(sc)
    leaves_of_ps = [next(s for s, hs in attached.items() if p in hs) for p in ps]
    assert leaves_of_ps == ["L1", "L2", "L3", "L4"]  # task i under leaf i
    assert all(sc.node(leaf).programmable for leaf in leaves_of_ps)
    workers = [w for j in jobs for w in j.workers]
    assert len(set(workers)) == 22 and not set(workers) & set(ps)
    again = leaf_spine(6, 3, 8)
    assert [j.workers for j in place_jobs(again, 2, 2, [10, 12], seed=4)] == [j.workers for j in jobs]


def test_paper_examples_are_valid():
    assert [s.id for s in aro_fig1().switches() if s.programmable] == ["L1", "L2", "S1"]
    g = grid_fig1()
    assert g.link_between("PS", "S3").capacity == 9.0 and g.node("S1").aggregation_capacity == 9.0
    i = inart_fig1()
    assert i.jobs[0].parameter_servers == ["S1", "S2"] and i.link_between("S1", "V1").capacity == 4.0
