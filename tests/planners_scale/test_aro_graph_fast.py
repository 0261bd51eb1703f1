"""ARO's unfolded graph (aro.graph.build_task_graph) settles its rule-5 bypasses on the physical
DAG first and builds once; it must build exactly the graph of the first version, which built, found
crowded INPs and built again: same edges in the same order, same INPs, nodes, bounds and bypasses,
on fat-trees, leaf-spines and the papers' networks, with small fan-ins (chains of rebuilds),
aggregation capacities, link background and extra bypasses asked for (accel's rebuild)."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

import inaplanner.planners.aro.graph as graph_module
from inaplanner.model import Scenario, Switch, Task
from inaplanner.planners.aro.graph import (
    Dag,
    Resource,
    TaskGraph,
    UEdge,
    UNode,
    _upper_bounds,
    build_task_graph,
    fan_in_limit,
)
from inaplanner.planners.routing import shortest_dag
from inaplanner.topologies import (
    aro_fig1,
    fat_tree,
    grid_fig1,
    inart_fig1,
    leaf_spine,
    mark_programmable,
    place_jobs,
    set_max_fan_in,
)


# The first version, verbatim (only its name changed): the reference.
def reference_build_task_graph(
    sc: Scenario, task: Task, workers: tuple[str, ...], dag: Dag, extra_bypass: frozenset[str] = frozenset(),
    check: Callable[[], None] | None = None,
) -> TaskGraph:
    """Decompose ``dag`` (paths of ``workers`` to ``task.ps``) into ARO's node types. ``check``
    (a cancel token's) is called every few hundred nodes: building honours cancel and the limit."""
    aggregators = []
    bypass = []
    fan_in: dict[str, int] = {}
    for n in dag.nodes():
        node = sc.node(n)
        if isinstance(node, Switch) and node.programmable:
            aggregators.append(n)
            fan_in[n] = fan_in_limit(node)
            if node.aggregation_capacity is not None or n in extra_bypass:
                bypass.append(n)
    g = TaskGraph(task, workers, dag, frozenset(aggregators), frozenset(bypass), fan_in=fan_in)
    worker_set = set(workers)
    limited = {n for n in g.bypass if sc.node(n).aggregation_capacity is not None}  # type: ignore[union-attr]

    def out_nodes(u: str) -> list[UNode]:
        if u in worker_set:
            return [("w", u)]
        if u in g.aggregators:
            return [("op", u), ("cs", u)] if u in g.bypass else [("op", u)]
        return [("cs", u)]

    def in_nodes(u: str, v: str) -> list[UNode]:
        if v == task.ps:
            return [("ps", v)]
        if v in g.aggregators:
            inp = ("inp", v, sc.ingress_pipeline(u, v))
            return [inp, ("cs", v)] if v in g.bypass else [inp]
        return [("cs", v)]

    inps: dict[UNode, None] = {}
    order: dict[UNode, None] = {}
    for n_done, u in enumerate(dag.nodes()):
        if check is not None and n_done % 256 == 0:
            check()
        for o in out_nodes(u) if u != task.ps else [("ps", u)]:
            order.setdefault(o, None)
        for v in dag.succ.get(u, ()):
            for tail in out_nodes(u):
                for head in in_nodes(u, v):
                    res: tuple[Resource, ...] = (("link", u, v),)
                    if head[0] == "inp" and v in limited:
                        res = (*res, ("switch", v))
                    k = len(g.edges)
                    g.edges.append(UEdge(tail, head, (u, v), res))
                    g.out_edges.setdefault(tail, []).append(k)
                    g.in_edges.setdefault(head, []).append(k)
                    if head[0] == "inp":
                        inps.setdefault(head, None)
    g.inps = sorted(inps, key=lambda n: (-dag.dist[n[1]], n[1], n[2]))
    # topological order: by physical distance, INPs and bypass before the OP of the same switch
    kind_rank = {"w": 0, "inp": 1, "cs": 2, "op": 3, "ps": 4}
    nodes = set(order) | set(g.inps) | {h for h in g.in_edges}
    g.nodes = sorted(nodes, key=lambda n: (-dag.dist[n[1]], kind_rank[n[0]], n[1:]))
    g.ub = _upper_bounds(g)
    crowded = {n[1] for n in g.inps if n[1] not in g.bypass
               and sum(g.ub[k] for k in g.in_edges.get(n, [])) > g.fan_in[n[1]]}
    if crowded:  # rule 5 may bind: let the excess flows cross those switches unmerged
        return reference_build_task_graph(sc, task, workers, dag, extra_bypass | crowded, check)
    return g


def described(g: TaskGraph) -> dict:
    return {
        "edges": [(e.tail, e.head, e.link, e.resources) for e in g.edges],
        "inps": list(g.inps), "nodes": list(g.nodes), "ub": list(g.ub),
        "out_edges": list(g.out_edges.items()), "in_edges": list(g.in_edges.items()),
        "aggregators": g.aggregators, "bypass": g.bypass, "fan_in": dict(g.fan_in),
        "workers": g.workers,
    }


def built_once(sc: Scenario, t: Task, workers: tuple[str, ...], dag: Dag,
               extra: frozenset[str] = frozenset()) -> tuple[TaskGraph, int]:
    """The graph, and how many times it was built (the module's own guard builds again if the
    graph still has a crowded INP)."""
    builds = []
    real = graph_module.build_task_graph

    def counted(*args, **kw):
        builds.append(1)
        return real(*args, **kw)

    graph_module.build_task_graph = counted
    try:
        return counted(sc, t, workers, dag, extra), len(builds)
    finally:
        graph_module.build_task_graph = real


def check_all_tasks(sc: Scenario, extra: frozenset[str] = frozenset()) -> int:
    """Every task of ``sc`` built both ways; returns how many bypasses rule 5 added in all."""
    added = 0
    for t in sc.tasks():
        workers = tuple(w for w in sc.job(t.job).workers if w != t.ps)
        dag = shortest_dag(sc, workers, t.ps)
        want = reference_build_task_graph(sc, t, workers, dag, extra)
        got, builds = built_once(sc, t, workers, dag, extra)
        assert described(got) == described(want), (sc.name, t)
        assert builds == 1, (sc.name, t)  # rule 5's bypasses settled before building
        added += sum(1 for n in want.bypass
                     if n not in extra and sc.node(n).aggregation_capacity is None)  # type: ignore[union-attr]
    return added


@pytest.mark.parametrize("k", [4, 8])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fat_trees(k, seed):
    rng = random.Random(seed)
    added = 0
    for fan_in in (None, 2, 3, 5):
        sc = fat_tree(k)
        mark_programmable(sc, (0.2, 0.5, 1.0)[seed], tiers=None, seed=seed, pipelines=rng.choice([1, 2, 4]),
                          aggregation_capacity=(None, 150.0)[seed % 2])
        place_jobs(sc, 2, 2, (6, 20, 40)[seed] if k == 8 else 6, seed=seed)
        set_max_fan_in(sc, fan_in)
        added += check_all_tasks(sc)
    if k == 8:
        assert added > 0  # small fan-ins made rule-5 bypasses: the case this is about


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_leaf_spines_with_background_and_extra_bypasses(seed):
    rng = random.Random(seed)
    sc = leaf_spine(6, 4, 5, host_capacity=50.0, fabric_capacity=100.0)
    mark_programmable(sc, 0.6, tiers=None, seed=seed, pipelines=(2, 9)[seed % 2])  # 9: a pipeline a port
    place_jobs(sc, 2, [1, 2], 12, seed=seed)
    set_max_fan_in(sc, (None, 2, 4, 3)[seed])
    for lk in sc.links:
        if rng.random() < 0.3:
            lk.background = (rng.uniform(0, 30), rng.uniform(0, 30))
    sc.touch()
    prog = sorted(s.id for s in sc.switches() if s.programmable)
    check_all_tasks(sc)
    check_all_tasks(sc, frozenset(rng.sample(prog, 2)))


@pytest.mark.parametrize("build", [aro_fig1, grid_fig1, inart_fig1])
def test_papers_networks(build):
    sc = build()
    check_all_tasks(sc)
    set_max_fan_in(sc, 1)
    check_all_tasks(sc)


def test_a_bypass_that_makes_a_later_inp_crowded_is_followed_to_the_end():
    """A bypass sends a switch's flows on unmerged, so an INP further on can receive more than its
    fan-in: the first version built a third time. Fan-in 2 on a fat-tree k=8 makes such chains."""
    sc = fat_tree(8)
    mark_programmable(sc, 1.0, tiers=None, seed=4, pipelines=1)
    place_jobs(sc, 1, 1, 60, seed=4)
    set_max_fan_in(sc, 2)
    t = sc.tasks()[0]
    workers = tuple(w for w in sc.job(t.job).workers if w != t.ps)
    dag = shortest_dag(sc, workers, t.ps)
    builds = []

    def counting(*args, **kw):
        builds.append(1)
        return original(*args, **kw)

    original = globals()["reference_build_task_graph"]
    globals()["reference_build_task_graph"] = counting
    try:
        want = counting(sc, t, workers, dag)
    finally:
        globals()["reference_build_task_graph"] = original
    assert len(builds) >= 3, len(builds)
    got, once = built_once(sc, t, workers, dag)
    assert described(got) == described(want) and once == 1


def test_building_honours_the_check():
    sc = fat_tree(8)
    mark_programmable(sc, 0.5, tiers=None, seed=0)
    place_jobs(sc, 1, 1, 40, seed=0)
    t = sc.tasks()[0]
    workers = tuple(w for w in sc.job(t.job).workers if w != t.ps)
    dag = shortest_dag(sc, workers, t.ps)

    class Stop(Exception):
        pass

    def stop() -> None:
        raise Stop

    with pytest.raises(Stop):
        build_task_graph(sc, t, workers, dag, check=stop)
