"""Route helpers shared by planners: shortest (up-down) path DAGs, seeded ECMP choices, and tree
routes whose merge points are consistent with the evaluator's rules.

* :func:`shortest_dag` — the directed acyclic graph of all shortest paths from some sources (the
  workers of a task) to one destination (its PS). On a Clos network (every switch has a tier) only
  valley-free *up-down* paths count, as in ARO section III-A ("unfolding the topology"): a path
  climbs the tiers strictly, then descends strictly. Elsewhere plain shortest paths are used.
  Hosts never forward. The result maps every node to its next hops towards the destination.
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
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from inaplanner.errors import PlanError
from inaplanner.model import Route, Scenario

UP, DOWN = 0, 1


@dataclass
class Dag:
    """Shortest paths from ``sources`` to ``dest`` as a DAG over physical node ids.

    ``succ[n]`` lists n's next hops (in link order); ``dist[n]`` is n's hop count to ``dest``.
    Every path that follows ``succ`` from a source is a shortest (up-down) path and vice versa.
    """

    dest: str
    sources: tuple[str, ...]
    succ: dict[str, tuple[str, ...]]
    dist: dict[str, int]
    _pred: dict[str, list[str]] | None = field(default=None, repr=False, compare=False)

    def nodes(self) -> list[str]:
        """Every node, farthest from ``dest`` first (a topological order)."""
        return sorted(self.dist, key=lambda n: (-self.dist[n], n))

    def pred(self) -> dict[str, list[str]]:
        """Predecessors of every node (in topological order of the predecessors)."""
        if self._pred is None:
            pred: dict[str, list[str]] = {n: [] for n in self.dist}
            for u in self.nodes():
                for v in self.succ.get(u, ()):
                    pred[v].append(u)
            self._pred = pred
        return self._pred

    def edges(self) -> list[tuple[str, str]]:
        return [(u, v) for u in self.nodes() for v in self.succ.get(u, ())]

    def paths_from(self, node: str) -> Iterator[list[str]]:
        """Every path from ``node`` to ``dest`` (exponential: for small graphs and tests)."""
        if node == self.dest:
            yield [node]
            return
        for v in self.succ.get(node, ()):
            for rest in self.paths_from(v):
                yield [node, *rest]

    def without(self, removed: Iterable[str]) -> Dag | None:
        """The DAG with ``removed`` nodes (and every path through them) taken out, or None when a
        source would lose its last path. Sources and ``dest`` cannot be removed."""
        gone = set(removed) - set(self.sources) - {self.dest}
        if not gone:
            return self
        alive = {n for n in self.dist if n not in gone}
        succ: dict[str, tuple[str, ...]] = {}
        for u in sorted(alive, key=lambda n: self.dist[n]):  # nearest to dest first
            if u == self.dest:
                continue
            nxt = tuple(v for v in self.succ.get(u, ()) if v in alive and (v == self.dest or v in succ))
            if nxt:
                succ[u] = nxt
        if any(s not in succ for s in self.sources):
            return None
        # keep only what the sources still reach
        keep = set(self.sources)
        todo = list(self.sources)
        while todo:
            u = todo.pop()
            for v in succ.get(u, ()):
                if v not in keep:
                    keep.add(v)
                    todo.append(v)
        succ = {u: vs for u, vs in succ.items() if u in keep}
        return Dag(self.dest, self.sources, succ, {n: self.dist[n] for n in keep})


def adjacency(sc: Scenario) -> dict[str, list[str]]:
    """Neighbours of every node in link order."""
    adj: dict[str, list[str]] = {n.id: [] for n in sc.nodes}
    for lk in sc.links:
        adj[lk.a].append(lk.b)
        adj[lk.b].append(lk.a)
    return adj


def shortest_dag(
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
    from (a tiered network that is not a Clos; ARO section III-A assumes one)."""
    sources = tuple(dict.fromkeys(s for s in sources if s != dest))
    if updown is None:
        updown = sc.is_tiered()
    adj = adj if adj is not None else adjacency(sc)
    is_switch = {n.id: n.is_switch for n in sc.nodes}
    rank = {n.id: sc.rank(n.id) for n in sc.nodes} if updown else {}
    if dest not in is_switch:
        raise PlanError(f"unknown destination {dest!r}")

    # reverse BFS over states (node, phase); phase DOWN once the path has started to descend
    phases = (UP, DOWN) if updown else (UP,)
    dist: dict[tuple[str, int], int] = {(dest, ph): 0 for ph in phases}
    queue = deque(dist)
    while queue:
        v, ph_v = queue.popleft()
        d = dist[(v, ph_v)] + 1
        for u in adj[v]:
            if not is_switch[u]:
                continue  # hosts never forward; sources are handled below
            for ph_u in _pred_phases(rank, u, v, ph_v, updown):
                if (u, ph_u) not in dist:
                    dist[(u, ph_u)] = d
                    queue.append((u, ph_u))

    def step(u: str, ph_u: int) -> list[tuple[str, int]]:
        """Tight successors of state (u, ph_u): one hop nearer to dest."""
        here = dist[(u, ph_u)] if u not in start else start[u]
        out = []
        for v in adj[u]:
            if v != dest and not is_switch[v]:
                continue
            ph_v = _next_phase(rank, u, v, ph_u, updown)
            if ph_v is not None and dist.get((v, ph_v)) == here - 1:
                out.append((v, ph_v))
        return out

    start: dict[str, int] = {}
    for s in sources:
        if s not in is_switch:
            raise PlanError(f"unknown source {s!r}")
        best = min(
            (dist[(v, ph)] + 1 for v in adj[s] if v == dest or is_switch[v]
             for ph in [_next_phase(rank, s, v, UP, updown)] if ph is not None and (v, ph) in dist),
            default=None,
        )
        if best is None:
            raise PlanError(f"{s} has no {'up-down ' if updown else ''}path to {dest}")
        start[s] = best

    # forward: tight edges reachable from the sources, projected onto physical nodes
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


def _next_phase(rank: dict[str, int], u: str, v: str, ph_u: int, updown: bool) -> int | None:
    """Phase after the hop u -> v, or None when the hop breaks the up-down rule."""
    if not updown:
        return UP
    ru, rv = rank[u], rank[v]
    if rv > ru:
        return UP if ph_u == UP else None
    if rv < ru:
        return DOWN
    return None


def _pred_phases(rank: dict[str, int], u: str, v: str, ph_v: int, updown: bool) -> tuple[int, ...]:
    """Phases of u from which the hop u -> v lands in phase ``ph_v``."""
    if not updown:
        return (UP,)
    ru, rv = rank[u], rank[v]
    if rv > ru:
        return (UP,) if ph_v == UP else ()
    if rv < ru:
        return (UP, DOWN) if ph_v == DOWN else ()
    return ()


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
