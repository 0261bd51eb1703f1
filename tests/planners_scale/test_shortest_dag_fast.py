"""shortest_dag (paths.py) builds exactly the DAG of its first, straightforward version, kept below
as :func:`reference_shortest_dag`: the same ``succ`` (the order of its keys and of every list:
the baselines draw over them in order), ``dist`` (with its key order), ``sources`` and ``dest``,
and the same PlanError messages in the same cases, on fat-trees, leaf-spines, the papers' small
networks, the sample topologies, networks with parallel links, flat networks and random tiered
graphs that are not Clos networks."""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

from inaplanner.errors import PlanError
from inaplanner.io.formats import load_any
from inaplanner.model import Host, Link, Scenario, Switch
from inaplanner.planners.paths import (
    DOWN,
    UP,
    Dag,
    adjacency,
    next_phase,
    pred_phases,
    shortest_dag,
)
from inaplanner.topologies import (
    aro_fig1,
    fat_tree,
    grid_fig1,
    grid_testbed,
    inart_fig1,
    inart_testbed,
    leaf_spine,
    mark_programmable,
    place_jobs,
)

SAMPLES = sorted((Path(__file__).resolve().parents[2] / "sample_topologies").glob("*.json"))


# ---- the reference: paths.shortest_dag before it was made faster, verbatim -----------------------

def reference_shortest_dag(
    sc: Scenario,
    sources: Iterable[str],
    dest: str,
    *,
    updown: bool | None = None,
    adj: dict[str, list[str]] | None = None,
) -> Dag:
    """All shortest paths from ``sources`` to ``dest`` (up-down ones on a tiered network).

    ``updown`` defaults to ``sc.is_tiered()``. Raises PlanError when a source cannot reach ``dest``,
    or when the up-down paths through one switch would depend on the direction the flow arrives
    from (a tiered network that is not a Clos; ARO section III-A assumes one). One reverse
    breadth-first search over (node, phase) states, with the phase rule of :func:`next_phase`."""
    sources = tuple(dict.fromkeys(s for s in sources if s != dest))
    if updown is None:
        updown = sc.is_tiered()
    adj = adj if adj is not None else adjacency(sc)
    is_switch = {n.id: n.is_switch for n in sc.nodes}
    rank = {n.id: sc.rank(n.id) for n in sc.nodes} if updown else {}
    if dest not in is_switch:
        raise PlanError(f"unknown destination {dest!r}")

    phases = (UP, DOWN) if updown else (UP,)
    dist: dict[tuple[str, int], int] = {(dest, ph): 0 for ph in phases}
    queue = deque(dist)
    while queue:
        v, ph_v = queue.popleft()
        d = dist[(v, ph_v)] + 1
        for u in adj[v]:
            if not is_switch[u]:
                continue  # hosts never forward; sources are handled below
            for ph_u in pred_phases(rank, u, v, ph_v, updown):
                if (u, ph_u) not in dist:
                    dist[(u, ph_u)] = d
                    queue.append((u, ph_u))

    start: dict[str, int] = {}

    def step(u: str, ph_u: int) -> list[tuple[str, int]]:
        here = dist[(u, ph_u)] if u not in start else start[u]
        out = []
        for v in adj[u]:
            if v != dest and not is_switch[v]:
                continue
            ph_v = next_phase(rank, u, v, ph_u, updown)
            if ph_v is not None and dist.get((v, ph_v)) == here - 1:
                out.append((v, ph_v))
        return out

    for s in sources:
        if s not in is_switch:
            raise PlanError(f"unknown source {s!r}")
        best = min(
            (dist[(v, ph)] + 1 for v in adj[s] if v == dest or is_switch[v]
             for ph in [next_phase(rank, s, v, UP, updown)] if ph is not None and (v, ph) in dist),
            default=None,
        )
        if best is None:
            raise PlanError(f"{s} has no {'up-down ' if updown else ''}path to {dest}")
        start[s] = best

    succ_states: dict[tuple[str, int], list[tuple[str, int]]] = {}
    todo = [(s, UP) for s in sources]
    seen = set(todo)
    while todo:
        state = todo.pop()
        nxt = step(*state) if state[0] != dest else []
        succ_states[state] = nxt
        for st in nxt:
            if st not in seen:
                seen.add(st)
                todo.append(st)
    phys_succ: dict[str, tuple[str, ...]] = {}
    phys_dist: dict[str, int] = {dest: 0}
    for (u, ph), nxt in succ_states.items():
        if u == dest:
            continue
        hops = tuple(v for v, _ in nxt)
        d_u = start[u] if u in start else dist[(u, ph)]
        if u in phys_succ and (phys_succ[u] != hops or phys_dist[u] != d_u):
            raise PlanError(
                f"switch {u}: its shortest up-down next hops towards {dest} depend on where flows "
                "come from (the tiers do not form a Clos network)"
            )
        phys_succ[u] = hops
        phys_dist[u] = d_u
    return Dag(dest, sources, phys_succ, phys_dist)


# ---- comparison ----------------------------------------------------------------------------------

Outcome = tuple[str, object]


def _outcome(fn: Callable[..., Dag], sc: Scenario, sources: Iterable[str], dest: str, **kw: object) -> Outcome:
    try:
        return "dag", fn(sc, list(sources), dest, **kw)
    except PlanError as exc:
        return "error", str(exc)


def assert_same(got: Outcome, want: Outcome) -> None:
    """Field by field, with the order of every mapping and list."""
    assert got[0] == want[0], (got, want)
    if want[0] == "error":
        assert got[1] == want[1]
        return
    a, b = got[1], want[1]
    assert isinstance(a, Dag) and isinstance(b, Dag)
    assert a.dest == b.dest
    assert a.sources == b.sources and type(a.sources) is tuple
    assert list(a.succ) == list(b.succ)  # key order
    for u, vs in b.succ.items():
        assert type(a.succ[u]) is tuple and a.succ[u] == vs, u  # list order (and parallel links)
    assert list(a.dist.items()) == list(b.dist.items())
    assert a == b


def check(sc: Scenario, sources: Iterable[str], dest: str, **kw: object) -> str:
    """Compare both versions, with and without a prebuilt adjacency; the outcome's kind."""
    sources = list(sources)
    want = _outcome(reference_shortest_dag, sc, sources, dest, **kw)
    assert_same(_outcome(shortest_dag, sc, sources, dest, **kw), want)
    adj = adjacency(sc)
    assert_same(_outcome(shortest_dag, sc, sources, dest, adj=adj, **kw), want)
    if want[0] == "dag":
        return "dag"
    msg = str(want[1])
    return "clos" if "do not form a Clos" in msg else "no path" if " path to " in msg else "unknown"


def check_tasks(sc: Scenario) -> None:
    """Every task's DAG as the planners ask it (workers but the PS), under each up-down setting."""
    assert sc.tasks()
    for t in sc.tasks():
        workers = [w for w in sc.job(t.job).workers if w != t.ps]
        for updown in (None, True, False):
            assert check(sc, workers, t.ps, updown=updown) == "dag" or updown is not None


def check_random_pairs(sc: Scenario, rng: random.Random, rounds: int = 6) -> None:
    """Random sources (hosts and switches, duplicates, the destination among them) to random
    destinations (hosts and switches)."""
    ids = [n.id for n in sc.nodes]
    hosts = [n.id for n in sc.hosts()]
    for _ in range(rounds):
        dest = rng.choice(hosts if rng.random() < 0.7 else ids)
        pool = hosts if rng.random() < 0.6 else ids
        sources = [rng.choice(pool) for _ in range(rng.randint(0, min(12, len(pool))))]
        if rng.random() < 0.3:
            sources.insert(rng.randint(0, len(sources)), dest)
        for updown in (None, True, False):
            check(sc, sources, dest, updown=updown)


# ---- Clos networks -------------------------------------------------------------------------------


@pytest.mark.parametrize("k", [4, 6, 8])
@pytest.mark.parametrize("seed", range(3))
def test_fat_trees(k, seed):
    rng = random.Random(100 * k + seed)
    sc = fat_tree(k)
    mark_programmable(sc, rng.choice([0.1, 0.3, 0.6, 1.0]), tiers=None, seed=seed)
    hosts = len(sc.hosts())
    jobs = rng.choice([1, 2])
    place_jobs(sc, jobs, rng.choice([1, 2]), rng.randint(2, (hosts - 4) // jobs), seed=seed)
    check_tasks(sc)
    check_random_pairs(sc, rng)


@pytest.mark.parametrize("seed", range(6))
def test_leaf_spines(seed):
    rng = random.Random(seed)
    sc = leaf_spine(rng.randint(2, 6), rng.randint(1, 4), rng.randint(1, 5))
    mark_programmable(sc, rng.random(), tiers=None, seed=seed)
    hosts = len(sc.hosts())
    if hosts >= 4:
        place_jobs(sc, 1, rng.choice([1, 2]), rng.randint(1, hosts - 2), seed=seed)
        check_tasks(sc)
    check_random_pairs(sc, rng)


@pytest.mark.parametrize("build", [aro_fig1, grid_fig1, inart_fig1, grid_testbed, inart_testbed])
def test_papers_networks(build):
    sc = build()
    if sc.jobs:
        check_tasks(sc)
    check_random_pairs(sc, random.Random(build.__name__), rounds=10)


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.stem)
def test_sample_topologies(path):
    sc = load_any(path)
    check_tasks(sc)
    check_random_pairs(sc, random.Random(path.stem), rounds=10)


def test_sample_topologies_are_there():
    assert len(SAMPLES) >= 6


@pytest.mark.parametrize("seed", range(4))
def test_parallel_links(seed):
    """Doubled links list a next hop twice, in link order."""
    rng = random.Random(seed)
    sc = fat_tree(4) if seed % 2 else leaf_spine(3, 2, 2)
    place_jobs(sc, 1, 1, 5, seed=seed)  # (before the doubled links, which a scenario's check refuses)
    extra = [Link(lk.a, lk.b, lk.capacity) for lk in rng.sample(sc.links, len(sc.links) // 3)]
    for lk in extra:
        sc.links.insert(rng.randint(0, len(sc.links)), lk)
    sc.touch()
    dag = reference_shortest_dag(sc, sc.jobs[0].workers, sc.jobs[0].parameter_servers[0])
    assert any(len(set(vs)) < len(vs) for vs in dag.succ.values())  # the case is exercised
    check_tasks(sc)
    check_random_pairs(sc, rng)


# ---- flat and irregular networks -----------------------------------------------------------------


def _random_network(seed: int) -> Scenario:
    """Random switches (tiered or not, some tiers equal), links between any two nodes (host-host,
    same tier, parallel), hosts on one or more switches or none: Clos or not, connected or not."""
    rng = random.Random(seed)
    sc = Scenario(f"random{seed}")
    tiered = rng.random() < 0.7
    tiers = ["leaf", "agg", "spine", "tor", "core"]
    switches = [f"S{i}" for i in range(rng.randint(2, 9))]
    hosts = [f"H{i}" for i in range(rng.randint(2, 9))]
    sc.nodes += [Switch(s, tier=rng.choice(tiers) if tiered else None) for s in switches]
    sc.nodes += [Host(h) for h in hosts]
    for _ in range(rng.randint(len(switches), 3 * len(switches))):
        a, b = rng.sample(switches, 2)
        sc.links.append(Link(a, b, 10.0))
    for h in hosts:
        for s in rng.sample(switches, rng.choice([0, 1, 1, 1, 2])):
            sc.links.append(Link(h, s, 10.0))
    if rng.random() < 0.3:
        a, b = rng.sample(hosts, 2)
        sc.links.append(Link(a, b, 10.0))
    for lk in rng.sample(sc.links, min(2, len(sc.links))):
        sc.links.append(Link(lk.b, lk.a, 10.0))  # parallel, the other way round
    rng.shuffle(sc.links)
    return sc


def _irregular_clos(seed: int) -> Scenario:
    """Leaves, aggs and spines linked upwards at random, plus links that skip a tier or join one
    tier, and hosts on a leaf and maybe on another switch of any tier: tiered, mostly connected,
    sometimes not a Clos network."""
    rng = random.Random(seed)
    sc = Scenario(f"irregular{seed}")
    tiers = {"leaf": [f"L{i}" for i in range(rng.randint(2, 4))],
             "agg": [f"A{i}" for i in range(rng.randint(1, 4))],
             "spine": [f"S{i}" for i in range(rng.randint(1, 3))]}
    for tier, names in tiers.items():
        sc.nodes += [Switch(x, tier=tier) for x in names]
    for low, high in (("leaf", "agg"), ("agg", "spine")):
        for x in tiers[low]:
            for y in rng.sample(tiers[high], rng.randint(1, len(tiers[high]))):
                sc.links.append(Link(x, y, 10.0))
    switches = [x for names in tiers.values() for x in names]
    for _ in range(rng.randint(0, 6)):
        a, b = rng.sample(switches, 2)
        sc.links.append(Link(a, b, 10.0))
    hosts = [f"H{i}" for i in range(rng.randint(3, 8))]
    sc.nodes += [Host(h) for h in hosts]
    for h in hosts:
        for s in rng.sample(tiers["leaf"], 1) + rng.sample(switches, rng.choice([0, 1, 1])):
            sc.links.append(Link(h, s, 10.0))
    rng.shuffle(sc.links)
    return sc


def test_random_networks_every_outcome():
    """Random networks, each under updown None/True/False: equal DAGs or equal errors, and every
    kind of outcome (DAG, no path, not a Clos network) is met."""
    kinds: dict[str, int] = {}
    for seed in range(600):
        sc = _random_network(seed) if seed % 2 else _irregular_clos(seed)
        rng = random.Random(seed)
        ids = [n.id for n in sc.nodes]
        hosts = [n.id for n in sc.hosts()]
        for _ in range(4):
            dest = rng.choice(ids if rng.random() < 0.3 else hosts)
            if rng.random() < 0.5:
                sources = rng.sample(hosts, rng.randint(1, len(hosts)))
            else:
                sources = [rng.choice(ids) for _ in range(rng.randint(1, 6))]
            for updown in (None, True, False):
                kind = check(sc, sources, dest, updown=updown)
                kinds[kind] = kinds.get(kind, 0) + 1
    assert kinds.get("dag", 0) > 1000 and kinds.get("no path", 0) > 100, kinds
    assert kinds.get("clos", 0) > 10, kinds


def test_flat_network_with_updown_false():
    sc = fat_tree(4)
    for s in sc.switches():
        s.tier = None
    sc.touch()
    assert not sc.is_tiered()
    place_jobs(sc, 1, 2, 6, seed=3)
    check_tasks(sc)
    check_random_pairs(sc, random.Random(3))


def test_not_a_clos_network():
    """Agg A is met going up (from H1) and going down (from H2 over S1), and going up it has one
    more next hop (S2 reaches the dual-homed PS): the tiers do not form a Clos network."""
    sc = Scenario("not clos")
    sc.nodes += [Switch("L1", tier="leaf"), Switch("L2", tier="leaf"), Switch("L3", tier="leaf"),
                 Switch("A", tier="agg"), Switch("S1", tier="spine"), Switch("S2", tier="spine"),
                 Host("H1"), Host("H2"), Host("PS")]
    sc.links += [Link(a, b, 10.0) for a, b in [("H1", "L1"), ("H2", "L2"), ("PS", "L3"), ("PS", "S2"),
                                               ("L1", "A"), ("A", "L3"), ("A", "S2"), ("L2", "S1"),
                                               ("S1", "A")]]
    want = _outcome(reference_shortest_dag, sc, ["H1", "H2"], "PS")
    assert want == ("error", "switch A: its shortest up-down next hops towards PS depend on where flows "
                             "come from (the tiers do not form a Clos network)")
    assert_same(_outcome(shortest_dag, sc, ["H1", "H2"], "PS"), want)
    check(sc, ["H2", "H1"], "PS")
    check(sc, ["H1"], "PS")


# ---- sources, destinations and errors ------------------------------------------------------------


def test_sources_with_the_destination_and_duplicates():
    sc = fat_tree(4)
    for sources in (["H1", "H4", "H1", "H9", "H4"], ["H4"], [], ["H16", "H1", "H16"], ["E1_1", "H1"],
                    ["C1", "A2_1", "H5", "C1"]):
        for updown in (None, False):
            assert check(sc, sources, "H4", updown=updown) == "dag"
            check(sc, iter(sources), "H4", updown=updown)  # any iterable
    got = shortest_dag(sc, ["H1", "H4", "H1", "H9"], "H4")
    assert got.sources == ("H1", "H9")


def test_errors_and_their_order():
    sc = leaf_spine(2, 1, 2)  # H1, H2 under L1; H3, H4 under L2
    sc.links = [lk for lk in sc.links if not (lk.a == "L2" and lk.b == "S1")]
    sc.touch()
    cases = [
        (["H2"], "nowhere", "unknown destination 'nowhere'"),
        (["ghost"], "nowhere", "unknown destination 'nowhere'"),
        (["H2", "ghost"], "H1", "unknown source 'ghost'"),
        (["H3", "ghost"], "H1", "H3 has no up-down path to H1"),  # sources in order
        (["ghost", "H3"], "H1", "unknown source 'ghost'"),
        (["H3"], "H1", "H3 has no up-down path to H1"),
        (["H2", "H4"], "H1", "H4 has no up-down path to H1"),
    ]
    for sources, dest, msg in cases:
        want = _outcome(reference_shortest_dag, sc, sources, dest)
        assert want == ("error", msg)
        assert_same(_outcome(shortest_dag, sc, sources, dest), want)
    lone = Scenario("lone", nodes=[Switch("S"), Host("A"), Host("B")], links=[Link("A", "S", 1.0)])
    for updown in (None, True, False):
        want = _outcome(reference_shortest_dag, lone, ["A"], "B", updown=updown)
        assert want == ("error", "A has no path to B") or (updown and want[0] == "error")
        assert_same(_outcome(shortest_dag, lone, ["A"], "B", updown=updown), want)
