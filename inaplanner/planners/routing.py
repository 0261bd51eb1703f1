"""Route helpers shared by planners: seeded ECMP choices and tree routes whose merge points are
consistent with the evaluator's rules. The path search itself (``Dag``, :func:`shortest_dag`, the
up-down rule) lives in :mod:`inaplanner.planners.paths` and is re-exported here for ARO.

* :func:`ecmp_path` — one seeded equal-cost choice per hop (the no-INA ECMP reference).
* :func:`tree_routes` — walks each worker to the destination with a caller-supplied next-hop
  choice and merge rule, reusing an aggregate's onward path once it exists (ARO Algorithm 1, lines
  8-14 and 17-20). Flows that merge into the same aggregate (switch, ingress pipeline) therefore
  always continue the same way, which is CONTRACTS.md rule 1.
* :func:`merge_points` — the switches of a path that belong to a given aggregator set.

Everything here is pure and deterministic given its inputs (the rng included).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable

from inaplanner.model import Route, Scenario
from inaplanner.planners.paths import DOWN, UP, Dag, adjacency, shortest_dag

__all__ = [
    "DOWN", "UP", "Chooser", "Dag", "Merger", "adjacency", "ecmp_path", "merge_points",
    "random_chooser", "shortest_dag", "task_dags", "tree_routes",
]



def task_dags(sc: Scenario, tasks: list | None = None, check: Callable[[], None] | None = None) -> list[Dag]:
    """Each task's DAG of shortest up-down paths from its job's workers (all but the PS) to its
    PS, in order (all of ``sc``'s tasks by default); ``check`` is called before each. ARO makes
    them once for its graphs and both warm-start baselines (0.13 s a task at fat-tree k=64)."""
    adj = adjacency(sc)
    out = []
    for t in sc.tasks() if tasks is None else tasks:
        if check is not None:
            check()
        out.append(shortest_dag(sc, [w for w in sc.job(t.job).workers if w != t.ps], t.ps, adj=adj))
    return out

def ecmp_path(dag: Dag, source: str, rng: random.Random) -> list[str]:
    """One equal-cost path: a uniform seeded choice among the next hops at every node."""
    path = [source]
    node = source
    while node != dag.dest:
        node = rng.choice(dag.succ[node])
        path.append(node)
    return path


def merge_points(path: list[str], aggregators: Iterable[str] | Callable[[str], bool]) -> list[str]:
    """The switches strictly inside ``path`` that aggregate (a set of ids or a predicate)."""
    test = aggregators if callable(aggregators) else set(aggregators).__contains__
    return [n for n in path[1:-1] if test(n)]


#: (flow, node, options) -> next hop. ``flow`` is the worker id for a raw flow, or the aggregate
#: key (switch, pipeline) once the flow has merged.
Chooser = Callable[[object, str, tuple[str, ...]], str]
#: (flow, previous node, node) -> True when the flow is aggregated at ``node``.
Merger = Callable[[object, str, str], bool]


def tree_routes(
    sc: Scenario,
    dag: Dag,
    workers: Iterable[str],
    choose: Chooser,
    merge: Merger,
) -> list[Route]:
    """Routes for ``workers`` to ``dag.dest`` following ``choose``; a flow that merges into an
    aggregate (switch, ingress pipeline) whose onward path is known reuses it (ARO Alg. 1)."""
    tails: dict[tuple[str, int], tuple[list[str], list[str]]] = {}
    routes = []
    for w in workers:
        path, merges = [w], []
        flow: object = w
        node = w
        formed: list[tuple[tuple[str, int], int, int]] = []
        while node != dag.dest:
            nxt = choose(flow, node, dag.succ[node])
            path.append(nxt)
            if nxt != dag.dest and merge(flow, node, nxt):
                key = (nxt, sc.ingress_pipeline(node, nxt))
                merges.append(nxt)
                if key in tails:
                    rest, rest_merges = tails[key]
                    path.extend(rest[1:])
                    merges.extend(rest_merges)
                    break
                formed.append((key, len(path) - 1, len(merges)))
                flow = key
            node = nxt
        for key, at, m in formed:
            tails[key] = (path[at:], merges[m:])
        routes.append(Route(w, path, merges))
    return routes


def random_chooser(rng: random.Random, prefer: Callable[[str], bool] | None = None) -> Chooser:
    """Seeded uniform next hop; with ``prefer``, uniform among the preferred options when any."""

    def choose(flow: object, node: str, options: tuple[str, ...]) -> str:
        if prefer is not None:
            good = [o for o in options if prefer(o)]
            if good:
                return rng.choice(good)
        return rng.choice(options)

    return choose
