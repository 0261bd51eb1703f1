"""Shared helpers of the GRID / InArt family and their baselines (grid, inart, baselines2).

* :class:`PathFinder`: shortest paths that never forward through a host, restricted to up-down
  (valley-free) paths on tiered Clos networks (ARO section IV-A), shortest paths through a given
  aggregation node, and Yen's k shortest simple paths (InArt section 3.1, the sets P).
* :func:`finish_plan`: final task rates from the shared evaluator for fixed routes and a fixed split
  of each job's model across its PSs, weighted max-min fair across jobs (progressive filling on the
  evaluator's own constraint matrix), so every returned plan is feasible by construction.

Loads are never computed here: the evaluator's ``constraint_matrix`` is the only source.
"""

from __future__ import annotations

import hashlib
import heapq
import random
import time
from collections import deque
from collections.abc import Iterable

import numpy as np

from inaplanner.errors import PlanError
from inaplanner.evaluate import Evaluation, constraint_matrix, evaluate, progressive_filling
from inaplanner.model import Plan, PlannerInfo, Route, Scenario, Switch, Task, TaskPlan

UP, DOWN = 0, 1
PATH_LIMIT = 32

State = tuple[str, int]


class PathFinder:
    """Paths over switches between two end nodes (hosts only at the ends).

    On a tiered scenario (every switch has a tier) paths are up-down: tier ranks rise strictly, then
    fall strictly; the search runs on (node, phase) states. Elsewhere any simple path is allowed.
    """

    def __init__(self, sc: Scenario, updown: bool | None = None) -> None:
        self.sc = sc
        self.updown = sc.is_tiered() if updown is None else updown
        self.adj: dict[str, list[str]] = {n.id: [] for n in sc.nodes}
        for lk in sc.links:
            self.adj[lk.a].append(lk.b)
            self.adj[lk.b].append(lk.a)
        self.rank = {n.id: sc.rank(n.id) for n in sc.nodes}
        self.is_host = {n.id: not isinstance(n, Switch) for n in sc.nodes}

    # ---- state moves ---------------------------------------------------------------------------

    def _moves(self, state: State, dst: str, avoid: frozenset[str]) -> Iterable[State]:
        u, phase = state
        for v in self.adj[u]:
            if v in avoid or (self.is_host[v] and v != dst):
                continue
            if not self.updown:
                yield (v, UP)
                continue
            ru, rv = self.rank[u], self.rank[v]
            if phase == UP and rv > ru:
                yield (v, UP)
            elif rv < ru:
                yield (v, DOWN)

    def _bfs(self, start: State, dst: str, ends: tuple[int, ...], avoid: frozenset[str]):
        """Layered BFS from ``start``: (distance, predecessor lists, reached end states)."""
        dist = {start: 0}
        preds: dict[State, list[State]] = {start: []}
        queue = deque([start])
        found: list[State] = []
        best: int | None = None
        while queue:
            s = queue.popleft()
            if best is not None and dist[s] >= best:
                continue
            for t in self._moves(s, dst, avoid):
                if t not in dist:
                    dist[t] = dist[s] + 1
                    preds[t] = [s]
                    queue.append(t)
                    if t[0] == dst and (not self.updown or t[1] in ends):
                        found.append(t)
                        best = dist[t]
                elif dist[t] == dist[s] + 1:
                    preds[t].append(s)
        return found, preds

    def _enumerate(self, ends: list[State], preds: dict[State, list[State]], limit: int) -> list[list[str]]:
        out: list[list[str]] = []

        def back(state: State, tail: list[str]) -> None:
            if len(out) >= limit:
                return
            if not preds[state]:
                path = [state[0], *tail]
                if len(set(path)) == len(path):
                    out.append(path)
                return
            for p in preds[state]:
                back(p, [state[0], *tail])

        for e in ends:
            back(e, [])
        return out

    # ---- public --------------------------------------------------------------------------------

    def shortest(
        self,
        src: str,
        dst: str,
        *,
        start: int = UP,
        ends: tuple[int, ...] = (UP, DOWN),
        avoid: Iterable[str] = (),
        limit: int = PATH_LIMIT,
    ) -> list[list[str]]:
        """All shortest valid simple paths src -> dst (at most ``limit``), never through ``avoid``.

        ``start`` is the phase at ``src`` (a host starts going up); ``ends`` the phases allowed on
        arrival at ``dst``. Without tiers the phases are ignored."""
        if src == dst:
            return [[src]]
        av = frozenset(avoid) - {src, dst}
        found, preds = self._bfs((src, start if self.updown else UP), dst, ends, av)
        return self._enumerate(found, preds, limit)

    def reachable(self, src: str) -> set[State]:
        """Every (switch, phase) state a valid path from ``src`` can reach (cached)."""
        cache = self.__dict__.setdefault("_reach", {})
        if src not in cache:
            seen = {(src, UP)}
            queue = deque(seen)
            while queue:
                st = queue.popleft()
                for t in self._moves(st, "", frozenset()):
                    if t not in seen:
                        seen.add(t)
                        queue.append(t)
            cache[src] = seen
        return cache[src]

    def can_reach(self, src: str, dst: str, phases: tuple[int, ...] = (UP, DOWN)) -> bool:
        """Whether some valid path src -> switch ``dst`` arrives in one of ``phases``."""
        reach = self.reachable(src)
        return any((dst, p if self.updown else UP) in reach for p in phases)

    def aggregate_paths(self, s: str, ps: str, limit: int = PATH_LIMIT) -> tuple[list[list[str]], tuple[int, ...]]:
        """Paths an aggregate formed at switch ``s`` may take to ``ps`` and the phases in which the
        workers' flows may arrive at ``s`` so that worker -> s -> PS stays up-down.

        Down-only paths (the PS sits below ``s``) accept flows arriving in either phase; otherwise
        the aggregate must first climb, so the flows must arrive while still going up."""
        if not self.updown:
            return self.shortest(s, ps, limit=limit), (UP, DOWN)
        down = self.shortest(s, ps, start=DOWN, limit=limit)
        if down:
            return down, (UP, DOWN)
        return self.shortest(s, ps, start=UP, limit=limit), (UP,)

    def worker_paths(self, n: str, s: str, agg_path: list[str], arrive: tuple[int, ...],
                     limit: int = PATH_LIMIT) -> list[list[str]]:
        """Shortest valid paths worker ``n`` -> switch ``s`` that join ``agg_path`` (s -> PS) into one
        simple path; they avoid the aggregate path's other nodes."""
        return self.shortest(n, s, ends=arrive, avoid=agg_path[1:], limit=limit)

    def _bfs_path(self, src: str, dst: str, banned: set[str], cut: set[tuple[str, str]]) -> list[str] | None:
        """One shortest path src -> dst (hop count, any direction, hosts only at the ends) that
        avoids the nodes ``banned`` and the directed edges ``cut``; first found in link order."""
        prev = {src: ""}
        queue = deque([src])
        while queue:
            u = queue.popleft()
            for v in self.adj[u]:
                if v in prev or v in banned or (u, v) in cut or (self.is_host[v] and v != dst):
                    continue
                prev[v] = u
                if v == dst:
                    path = [v]
                    while path[-1] != src:
                        path.append(prev[path[-1]])
                    return path[::-1]
                queue.append(v)
        return None

    def k_shortest(self, src: str, dst: str, k: int) -> list[list[str]]:
        """Yen's k shortest simple paths (hop count) src -> dst through switches only (InArt's P).
        Ties are broken by length, then lexicographically, so the result is deterministic."""
        first = self._bfs_path(src, dst, set(), set())
        if first is None:
            return []
        found = [first]
        pool: list[tuple[int, list[str]]] = []
        seen = {tuple(first)}
        while len(found) < k:
            last = found[-1]
            for j in range(len(last) - 1):
                root = last[: j + 1]
                cut = {(p[j], p[j + 1]) for p in found if p[: j + 1] == root}
                spur = self._bfs_path(last[j], dst, set(root[:-1]), cut)
                if spur is None:
                    continue
                cand = root[:-1] + spur
                if tuple(cand) not in seen:
                    seen.add(tuple(cand))
                    heapq.heappush(pool, (len(cand), cand))
            if not pool:
                break
            found.append(heapq.heappop(pool)[1])
        return found


def access_capacity(sc: Scenario, host: str, inbound: bool) -> float:
    """Sum over ``host``'s links of capacity minus background, toward the host when ``inbound``
    (a PS's ingress bandwidth B) or away from it (a worker's maximum sending rate T)."""
    total = 0.0
    for lk in sc.links:
        if host not in (lk.a, lk.b):
            continue
        other = lk.other(host)
        bg = lk.background_from(other) if inbound else lk.background_from(host)
        total += max(lk.capacity - bg, 0.0)
    return total


def switch_room(sw: Switch) -> float | None:
    """Aggregation capacity left for us (C_s - background), None when unlimited (line rate)."""
    if sw.aggregation_capacity is None:
        return None
    return max(sw.aggregation_capacity - sw.aggregation_background, 0.0)


def equal_split(sc: Scenario) -> dict[Task, float]:
    """Each job's model split equally across its PSs."""
    return {Task(j.id, ps): 1.0 / len(j.parameter_servers) for j in sc.jobs for ps in j.parameter_servers}


def finish_plan(
    sc: Scenario,
    routes: dict[Task, list[Route]],
    split: dict[Task, float],
    info: PlannerInfo,
    bound: float | None = None,
) -> tuple[Plan, Evaluation]:
    """The plan with the largest rates its routes allow for the given model split.

    Task t of job j gets rate ``alpha_j * split[t] / weight_j``; the alphas are max-min fair
    (progressive filling over the evaluator's constraint matrix, columns summed per job), so the
    weighted job throughputs are balanced as CONTRACTS.md rule 5 wants and no limit is exceeded."""
    tasks = sc.tasks()
    plan = Plan(
        scenario_sha256="",
        planner=info,
        tasks=[TaskPlan(t.job, t.ps, 1.0, list(routes.get(t, []))) for t in tasks],
        bound=bound,
    )
    ev = evaluate(sc, plan)
    if ev.errors:
        raise PlanError(f"{info.name}: internal error, planned routes are invalid: {ev.errors[0]}")
    a, b = constraint_matrix(ev)
    jobs = {j.id: i for i, j in enumerate(sc.jobs)}
    m = np.zeros((len(tasks), len(jobs)))
    for ti, t in enumerate(ev.tasks):
        if routes.get(t):
            m[ti, jobs[t.job]] = max(split.get(t, 0.0), 0.0) / sc.job(t.job).weight
    alpha = progressive_filling(a @ m, b, m.any(axis=0))
    rates = m @ alpha
    for _ in range(8):
        for tp, r in zip(plan.tasks, rates, strict=True):
            tp.rate = float(r)
        ev = evaluate(sc, plan)
        if not ev.violations:
            break
        rates = rates * (1.0 - 1e-9)  # numerical safety only
    else:  # pragma: no cover - progressive filling respects A r <= b
        raise PlanError(f"{info.name}: internal error, rates break limits: {ev.violations[0]}")
    return plan, ev


def status_for(objective: float, bound: float | None, solver_status: str) -> str:
    """``optimal`` when the evaluated objective meets the proven bound, else the honest status."""
    if solver_status == "timeout":
        return "timeout"
    if bound is not None and objective >= bound * (1.0 - 1e-6) - 1e-9:
        return "optimal"
    return "heuristic"


def rng_for(seed: int, *salt: object) -> random.Random:
    """A seeded generator per purpose, independent of call order elsewhere and of the process's
    string-hash randomisation."""
    text = "|".join([str(seed), *map(str, salt)])
    return random.Random(int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big"))


class Budget:
    """A planner's time limit shared by its successive solves."""

    def __init__(self, seconds: float) -> None:
        self.end = time.perf_counter() + seconds

    def left(self, floor: float = 0.1) -> float:
        """Seconds left (at least ``floor``, so a last solve still gets a chance)."""
        return max(self.end - time.perf_counter(), floor)

    @property
    def spent(self) -> bool:
        return time.perf_counter() >= self.end
