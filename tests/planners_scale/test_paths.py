"""paths.py: the one up-down path search against brute-force enumeration on small graphs."""

from __future__ import annotations

import random

import pytest

from inaplanner.model import Host, Link, Scenario, Switch
from inaplanner.planners.paths import DOWN, UP, Paths, is_valid_path, shortest_dag
from inaplanner.topologies import fat_tree, leaf_spine


def _all_paths(sc: Scenario, src: str, dst: str, updown: bool, start: int = UP,
               ends: tuple[int, ...] = (UP, DOWN)) -> list[list[str]]:
    """Every valid simple path src -> dst by depth-first enumeration (hosts only at the ends)."""
    adj: dict[str, list[str]] = {n.id: [] for n in sc.nodes}
    for lk in sc.links:
        adj[lk.a].append(lk.b)
        adj[lk.b].append(lk.a)
    rank = {n.id: sc.rank(n.id) for n in sc.nodes}
    out: list[list[str]] = []

    def dfs(path: list[str], ph: int) -> None:
        u = path[-1]
        if u == dst:
            if len(path) > 1 and (not updown or ph in ends):
                out.append(list(path))
            return
        for v in adj[u]:
            if v in path or (not sc.is_switch(v) and v != dst):
                continue
            nph = ph
            if updown:
                if rank[v] > rank[u] and ph == UP:
                    nph = UP
                elif rank[v] < rank[u]:
                    nph = DOWN
                else:
                    continue
            dfs([*path, v], nph)

    dfs([src], start)
    return sorted(out, key=lambda p: (len(p), p))


def _random_clos(seed: int) -> Scenario:
    """A random two- or three-tier Clos: leaves, optional aggs, spines, random up links."""
    rng = random.Random(seed)
    sc = Scenario(f"clos{seed}")
    leaves = [f"L{i}" for i in range(rng.randint(2, 4))]
    aggs = [f"A{i}" for i in range(rng.randint(0, 3))]
    spines = [f"S{i}" for i in range(rng.randint(1, 3))]
    sc.nodes += [Switch(x, tier="leaf") for x in leaves]
    sc.nodes += [Switch(x, tier="agg") for x in aggs]
    sc.nodes += [Switch(x, tier="spine") for x in spines]
    uppers = aggs or spines
    for leaf in leaves:
        for u in rng.sample(uppers, rng.randint(1, len(uppers))):
            sc.links.append(Link(leaf, u, 10.0))
        if aggs and rng.random() < 0.3:
            sc.links.append(Link(leaf, rng.choice(spines), 10.0))
    for a in aggs:
        for s in rng.sample(spines, rng.randint(1, len(spines))):
            sc.links.append(Link(a, s, 10.0))
    h = 0
    for leaf in leaves:
        for _ in range(2):
            h += 1
            sc.nodes.append(Host(f"H{h}"))
            sc.links.append(Link(f"H{h}", leaf, 10.0))
    return sc


@pytest.mark.parametrize("seed", range(12))
def test_updown_k_shortest_equals_brute_force(seed):
    sc = _random_clos(seed)
    paths = Paths(sc)
    assert paths.updown
    ids = [n.id for n in sc.nodes]
    rng = random.Random(seed)
    for _ in range(12):
        src, dst = rng.sample(ids, 2)
        truth = _all_paths(sc, src, dst, True)
        for k in (1, 3, 8, 50):
            assert paths.k_shortest(src, dst, k) == truth[:k], (src, dst, k)
        shortest = [p for p in truth if truth and len(p) == len(truth[0])]
        assert paths.shortest(src, dst, limit=1000) == shortest
        assert paths.distance(src, dst) == (len(truth[0]) - 1 if truth else None)
        for p in truth:
            assert is_valid_path(sc, p)


@pytest.mark.parametrize("seed", range(8))
def test_shortest_walks_the_brute_forces_shortest_paths_in_order(seed):
    """shortest() walks memoised next hops (no search per call): the brute force's shortest paths
    in lexicographic order, cut at ``limit``, for every start phase and arrival phases, on and
    off Clos, and the best-first search's answer wherever both run."""
    sc = _random_clos(seed)
    ids = [n.id for n in sc.nodes]
    rng = random.Random(200 + seed)
    for updown in (True, False):
        paths = Paths(sc, updown=updown)
        for _ in range(10):
            src, dst = rng.sample(ids, 2)
            for start in ((UP, DOWN) if updown else (UP,)):
                for ends in (((UP, DOWN), (UP,), (DOWN,)) if updown else ((UP, DOWN),)):
                    truth = _all_paths(sc, src, dst, updown, start, ends)
                    shortest = sorted(p for p in truth if len(p) == len(truth[0])) if truth else []
                    for limit in (1, 2, 1000):
                        got = paths.shortest(src, dst, start=start, ends=ends, limit=limit)
                        assert got == shortest[:limit], (updown, src, dst, start, ends, limit)
                        assert got == paths._best_first(src, dst, start, ends, frozenset(), limit, True)


@pytest.mark.parametrize("seed", range(6))
def test_any_k_shortest_equals_brute_force_off_clos(seed):
    sc = _random_clos(seed)
    paths = Paths(sc, updown=False)
    ids = [n.id for n in sc.nodes]
    rng = random.Random(100 + seed)
    for _ in range(8):
        src, dst = rng.sample(ids, 2)
        truth = _all_paths(sc, src, dst, False)
        for k in (1, 4, 20):
            got = paths.k_shortest(src, dst, k)
            # the k shortest: the same lengths as the brute force's first k (ties in any order)
            assert [len(p) for p in got] == [len(p) for p in truth[:k]]
            assert all(p in truth for p in got)


def test_start_and_end_phases_and_avoid():
    sc = leaf_spine(3, 2, 2)
    paths = Paths(sc)
    # from a spine starting DOWN: only down paths, so a leaf is reached in one hop
    assert paths.shortest("S1", "H1", start=DOWN) == [["S1", "L1", "H1"]]
    # arriving at a spine going up from a host
    assert paths.shortest("H1", "S2", ends=(UP,)) == [["H1", "L1", "S2"]]
    # a leaf cannot be reached going up from another leaf's host
    assert paths.shortest("H1", "L2", ends=(UP,)) == []
    assert paths.shortest("H1", "H3", avoid=["S1"]) == [["H1", "L1", "S2", "L2", "H3"]]


def test_spread_and_random_shortest_follow_shortest_paths():
    sc = fat_tree(4)
    paths = Paths(sc)
    every = paths.shortest("H1", "H16", limit=1000)
    assert len(every) == 4  # two aggs x two cores each
    share = paths.spread("H1", "H16")
    for e in {(u, v) for p in every for u, v in zip(p, p[1:], strict=False)}:
        assert share[e] > 0
    assert share[("H1", "E1_1")] == pytest.approx(1.0)
    rng = random.Random(0)
    drawn = {tuple(paths.random_shortest("H1", "H16", rng)) for _ in range(200)}
    assert drawn == {tuple(p) for p in every}


def test_shortest_dag_matches_enumeration():
    sc = fat_tree(4)
    dag = shortest_dag(sc, ["H1", "H5"], "H16")
    paths = Paths(sc)
    for src in ("H1", "H5"):
        assert sorted(dag.paths_from(src)) == sorted(paths.shortest(src, "H16", limit=1000))


@pytest.mark.parametrize("seed", range(8))
def test_inart_path_sets_equal_the_search_from_each_host(seed):
    """InArt's P reuses a host's switch's paths (one search per switch and destination): the
    same paths in the same order as a search from the host, against brute force."""
    from inaplanner.planners.inart import PathSets

    sc = _random_clos(seed)
    rng = random.Random(seed)
    ids = [n.id for n in sc.nodes]
    hosts = [n.id for n in sc.nodes if not sc.is_switch(n.id)]
    for k in (1, 3, 8):
        sets = PathSets(sc, k)
        for _ in range(24):
            src, dst = rng.choice(hosts), rng.choice(ids)
            if src == dst:
                continue
            assert sets.get(src, dst) == _all_paths(sc, src, dst, True)[:k], (src, dst, k)
