"""Baselines of the GRID and InArt papers: Geryon, ATP, SwitchML and LBMM.

All four split a job's model equally across its PSs (InArt section 5.1.2: "we assume that the model
is split equally"); final rates always come from the shared evaluator
(:func:`~inaplanner.planners.ina_common.finish_plan`). Paths never forward through a host and are
up-down on tiered (Clos) networks. The greedy ones keep their own tally of the Gbps they have placed
to choose among paths; that tally only steers the heuristic, the evaluator judges the plan.

* ``geryon`` (GRID section 6.1, Wang et al. INFOCOM'20): no aggregation; each worker's flow on the
  shortest path that the remaining link capacity allows, scheduled at a common target rate; the
  largest target the routes support is found by bisection and the rates are the evaluator's.
* ``atp`` (as GRID describes it, sections 3.1 and 6.1): every flow follows its default path and is
  aggregated at the first programmable switch on it that still has processing capacity - normally
  the worker's ToR; when that is exhausted the flow goes on unaggregated and is caught by the next
  switch with room, typically the PS's ToR (the second level), else reaches the PS raw.
  ``hierarchical`` also merges each first-level aggregate again at the next switch with room (ATP's
  inter-rack mode). Capacity is booked at a common target rate, searched by bisection as for Geryon.
  GRID Fig. 1 quotes 2.43 Gbps for ATP: there each of W1-W4 sends 2.25 Gbps aggregated at S1 plus
  0.1875 Gbps unaggregated over L1 (:func:`best_effort_rate`). The plan contract has one route and
  one rate per worker and task, so a worker's flow cannot be part aggregated and part raw: the best
  ATP plan the contract can express there is 2.25 Gbps (all four merged at S1).
* ``switchml`` (Sapio et al. NSDI'21, as GRID section 6.1 runs it): aggregation only at each worker's
  ToR switch when that switch is programmable, the aggregate sent on to the PS.
* ``lbmm`` (Load Balance Min-Min, InArt section 2.1): no aggregation, equal split; flows are placed
  one at a time, min-min style: the flow whose least loaded candidate path (lowest utilisation after
  adding it) is best goes first, on that path.

Rules 5 and 6 (CONTRACTS.md): paths are up-down on Clos networks (:class:`~inaplanner.planners.paths.
Paths`). Fan-in: ATP treats a full aggregate like a switch without room, as its best-effort design
does: the flow goes on unaggregated and is caught by the next switch on its path that has room (a
second aggregate elsewhere), else reaches the PS raw. SwitchML aggregates only at the ToR: the
flows beyond ``max_fan_in`` go on to the PS raw (:func:`~inaplanner.planners.ina_common.cap_fan_in`,
applied to every plan in ``finish_plan``). Geryon and LBMM never aggregate. Every phase stops at the
run's time limit (``time_limit``, ``limit_kind``) with the best plan found.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from inaplanner.errors import PlanError
from inaplanner.evaluate import Evaluation
from inaplanner.model import Plan, PlannerInfo, Route, Scenario, Switch, Task
from inaplanner.planners.base import Param, Progress
from inaplanner.planners.deadline import Deadline
from inaplanner.planners.ina_common import (
    access_capacity,
    equal_split,
    fan_in_limit,
    finish_plan,
    rng_for,
    switch_room,
)
from inaplanner.planners.paths import Paths
from inaplanner.planners.solver import CancelToken

TOL = 1e-9
SEARCH_STEPS = 30


def best_effort_rate(switch_room: float, flows: int, uplink_room: float) -> float:
    """GRID section 3.1's fluid arithmetic for ATP's best effort behind one switch: ``flows`` workers
    share a switch that aggregates ``switch_room`` Gbps and an uplink of ``uplink_room`` Gbps. Each
    worker gets a = min(room / flows, uplink) aggregated, and the uplink's spare capacity is split
    among the workers' unaggregated remainders: a + (uplink - a) / flows (9, 4, 3 -> 2.4375).
    Not expressible as a plan (one route per worker); kept to document the paper's figure."""
    if flows <= 0:
        raise ValueError("flows must be positive")
    a = min(switch_room / flows, uplink_room)
    return a + max(uplink_room - a, 0.0) / flows


def _weighted_min(sc: Scenario, ev: Evaluation) -> float:
    """min over jobs of weight x throughput (the quantity the greedy target rate aims at)."""
    return min(j.weight * ev.job_throughput.get(j.id, 0.0) for j in sc.jobs)


def _task_rates(sc: Scenario, split: dict[Task, float], f: float) -> dict[Task, float]:
    return {t: f * split[t] / sc.job(t.job).weight for t in sc.tasks()}


def _upper_target(sc: Scenario) -> float:
    """No job's weighted throughput can exceed weight x its slowest worker's access link."""
    return min(j.weight * min(access_capacity(sc, n, inbound=False) for n in j.workers) for j in sc.jobs)


def search_target(sc: Scenario, build, cancel: CancelToken, progress: Progress, steps: int = SEARCH_STEPS,
                  deadline: Deadline | None = None) -> tuple[Plan, Evaluation, str]:
    """Bisection on the common target f (weighted job throughput the greedy books capacity for):
    keep f when the evaluator confirms the routes carry it. Returns the best (plan, evaluation)
    seen over all tried targets, and why the search stopped early ("" when it ran its steps).
    A step is not started when the time left is shorter than the last step took (1.4 s for ATP
    at k=64, which used to end 1.4 s past the limit)."""
    best: tuple[Plan, Evaluation] | None = None

    def attempt(f: float) -> float:
        nonlocal best
        plan, ev = build(f)
        if best is None or ev.objective > best[1].objective + 1e-12:
            best = (plan, ev)
        return _weighted_min(sc, ev)

    hi = _upper_target(sc)
    if hi <= 0:
        raise PlanError("every worker's access link is full: nothing can be sent")
    clock = deadline if deadline is not None else Deadline(None)
    if attempt(hi) >= hi * (1 - 1e-9):
        assert best is not None
        return best[0], best[1], ""
    lo = 0.0
    cut = ""
    last = 0.0
    for i in range(steps):
        cancel.check()
        if clock.remaining() <= last:
            cut = (f"the time limit stopped the target search after {i} of {steps} steps "
                   f"(the next would end past it)")
            break
        began = clock.elapsed()
        mid = 0.5 * (lo + hi)
        if attempt(mid) >= mid * (1 - 1e-9):
            lo = mid
        else:
            hi = mid
        last = clock.elapsed() - began
        progress(0.1 + 0.85 * (i + 1) / steps, f"target {mid:.6g}")
    assert best is not None
    return best[0], best[1], cut


def _info(name: str, params: dict[str, Any], cut: str) -> PlannerInfo:
    """A baseline's record: ``timeout`` with the reason in ``stopped`` when the limit cut it short."""
    return PlannerInfo(name, params={**params, **({"stopped": cut} if cut else {})},
                       status="timeout" if cut else "heuristic")


#: Candidate paths for the flow-scheduling baselines (Geryon, LBMM) on networks without tiers.
K_PATHS = Param("k", int, 4, "candidate paths per worker and PS on non-tiered networks (k shortest)",
                min=1, max=64)

class _Tally:
    """The heuristic's own count of Gbps placed per directed link (steers path choice only)."""

    def __init__(self, sc: Scenario) -> None:
        self.sc = sc
        self.used: dict[tuple[str, str], float] = {}

    def room(self, u: str, v: str) -> float:
        lk = self.sc.link_between(u, v)
        assert lk is not None
        return lk.capacity - lk.background_from(u) - self.used.get((u, v), 0.0)

    def add(self, path: list[str], rate: float) -> None:
        for u, v in zip(path, path[1:], strict=False):
            self.used[(u, v)] = self.used.get((u, v), 0.0) + rate

    def bottleneck(self, path: list[str]) -> float:
        return min(self.room(u, v) for u, v in zip(path, path[1:], strict=False))

    def least_loaded(self, paths: list[list[str]], rng: random.Random) -> list[str]:
        order = list(paths)
        rng.shuffle(order)
        return max(order, key=self.bottleneck)


class _Base:
    name = ""
    description = ""
    params: tuple[Param, ...] = ()

    def _paths(self, sc: Scenario) -> Paths:
        return Paths(sc)

    def _shortest(self, pf: Paths, cache: dict, src: str, dst: str, k: int | None = None) -> list[list[str]]:
        """The shortest valid paths src -> dst, memoised per pair; off Clos networks with ``k``,
        the k shortest by hops."""
        key = (src, dst)
        if key not in cache:
            paths = pf.shortest(src, dst) if pf.updown or k is None else pf.k_shortest(src, dst, k)
            if not paths:
                raise PlanError(f"no path from {src} to {dst}")
            cache[key] = paths
        return cache[key]


class Geryon(_Base):
    name = "geryon"
    description = "Geryon: no aggregation; shortest path the remaining capacity allows (GRID 6.1)"
    params = (K_PATHS,)

    def plan(self, scenario: Scenario, params: dict[str, Any], progress: Progress, cancel: CancelToken) -> Plan:
        sc = scenario
        pf = self._paths(sc)
        split = equal_split(sc)
        seed = int(params["seed"])
        cache: dict = {}

        shortest: dict = {}

        def candidates(n: str, ps: str) -> list[list[str]]:
            key = (n, ps)
            if key not in cache:
                cache[key] = sorted(self._shortest(pf, shortest, n, ps, int(params["k"])), key=len)
            return cache[key]

        def build(f: float):
            rng = rng_for(seed, self.name)
            tally = _Tally(sc)
            rates = _task_rates(sc, split, f)
            routes: dict[Task, list[Route]] = {}
            for t in sc.tasks():
                out = []
                for n in sc.job(t.job).workers:
                    paths = candidates(n, t.ps)
                    fits = [p for p in paths if tally.bottleneck(p) >= rates[t] - TOL]
                    if fits:
                        shortest = [p for p in fits if len(p) == len(fits[0])]
                        p = rng.choice(shortest)
                    else:
                        p = tally.least_loaded(paths, rng)
                    tally.add(p, rates[t])
                    out.append(Route(n, list(p), []))
                routes[t] = out
            return finish_plan(sc, routes, split, PlannerInfo(self.name))

        plan, _, cut = search_target(sc, build, cancel, progress, deadline=Deadline.from_params(params))
        plan.planner = _info(self.name, {"split": "equal"}, cut)
        return plan


class Atp(_Base):
    name = "atp"
    description = "ATP: best-effort aggregation at the first switch with capacity on the default path"
    params = (
        Param("hierarchical", bool, False,
              "also merge each first-level aggregate again at the next switch with room (PS's ToR)"),
    )

    def plan(self, scenario: Scenario, params: dict[str, Any], progress: Progress, cancel: CancelToken) -> Plan:
        sc = scenario
        pf = self._paths(sc)
        split = equal_split(sc)
        seed = int(params["seed"])
        hierarchical = bool(params["hierarchical"])
        cache: dict = {}
        rooms0 = {s.id: switch_room(s) for s in sc.switches() if s.programmable}
        limits = {s.id: fan_in_limit(s) for s in sc.switches() if s.programmable}

        def build(f: float):
            rng = rng_for(seed, self.name)
            tally = _Tally(sc)
            rates = _task_rates(sc, split, f)
            room = dict(rooms0)
            routes: dict[Task, list[Route]] = {}

            slots: dict[tuple[str, int], int] = {}  # (switch, pipeline) -> inputs merged (rule 5)
            prev: dict[str, str] = {}  # the node before each switch on the flow being placed

            def fits(v: str, rate: float) -> bool:
                if v not in room or (room[v] is not None and room[v] < rate - TOL * max(1.0, rate)):
                    return False
                return slots.get((v, sc.ingress_pipeline(prev[v], v)), 0) < limits[v]

            def book(v: str, rate: float) -> None:
                if room[v] is not None:
                    room[v] -= rate
                key = (v, sc.ingress_pipeline(prev[v], v))
                slots[key] = slots.get(key, 0) + 1

            for t in sc.tasks():
                r = rates[t]
                suffix: dict[str, tuple[list[str], list[str]]] = {}  # switch -> (path from it, merges)
                out = []
                for n in sc.job(t.job).workers:
                    path = tally.least_loaded(self._shortest(pf, cache, n, t.ps), rng)
                    merges: list[str] = []
                    prev.clear()
                    prev.update({b: a for a, b in zip(path, path[1:], strict=False)})
                    for i in range(1, len(path) - 1):
                        v = path[i]
                        if v in suffix:
                            joined = path[:i] + suffix[v][0]
                            if len(set(joined)) == len(joined) and fits(v, r):
                                path, merges = joined, [v, *suffix[v][1]]
                                book(v, r)
                                break
                            continue
                        if fits(v, r):
                            book(v, r)
                            rest = path[i:]
                            more: list[str] = []
                            prev.update({b: a for a, b in zip(rest, rest[1:], strict=False)})
                            if hierarchical:
                                for w in rest[1:-1]:
                                    if w in suffix:
                                        joined = rest[: rest.index(w)] + suffix[w][0]
                                        if len(set(joined)) == len(joined) and fits(w, r):
                                            rest, more = joined, [w, *suffix[w][1]]
                                            book(w, r)
                                            break
                                    elif fits(w, r):
                                        book(w, r)
                                        suffix[w] = (rest[rest.index(w):], [])
                                        more = [w]
                                        break
                            suffix[v] = (rest, more)
                            tally.add(rest, r)
                            path, merges = path[:i] + rest, [v, *more]
                            break
                    if merges:
                        tally.add(path[: path.index(merges[0]) + 1], r)
                    else:
                        tally.add(path, r)
                    out.append(Route(n, list(path), merges))
                routes[t] = out
            return finish_plan(sc, routes, split, PlannerInfo(self.name))

        plan, _, cut = search_target(sc, build, cancel, progress, deadline=Deadline.from_params(params))
        plan.planner = _info(self.name, {"split": "equal",
                                         "rule": "first programmable switch with room on the default path"}, cut)
        return plan


class SwitchML(_Base):
    name = "switchml"
    description = "SwitchML: aggregation only at each worker's ToR switch, results to the PS"
    params = ()

    def plan(self, scenario: Scenario, params: dict[str, Any], progress: Progress, cancel: CancelToken) -> Plan:
        sc = scenario
        pf = self._paths(sc)
        split = equal_split(sc)
        rng = rng_for(int(params["seed"]), self.name)
        tally = _Tally(sc)
        cache: dict = {}
        routes: dict[Task, list[Route]] = {}
        for t in sc.tasks():
            size = split[t] / sc.job(t.job).weight
            suffix: dict[str, list[str]] = {}
            out = []
            for n in sc.job(t.job).workers:
                path = tally.least_loaded(self._shortest(pf, cache, n, t.ps), rng)
                tor = path[1]
                node = sc.node(tor)
                if isinstance(node, Switch) and node.programmable and len(path) > 2:
                    if tor not in suffix:
                        suffix[tor] = path[1:]
                        tally.add(path[1:], size)
                    path = [n, *suffix[tor]]
                    tally.add(path[:2], size)
                    out.append(Route(n, path, [tor]))
                else:
                    tally.add(path, size)
                    out.append(Route(n, list(path), []))
            routes[t] = out
        cancel.check()
        plan, _ = finish_plan(sc, routes, split, PlannerInfo(self.name))
        plan.planner = PlannerInfo(self.name, params={"split": "equal"}, status="heuristic")
        return plan


class Lbmm(_Base):
    name = "lbmm"
    description = "LBMM: Load Balance Min-Min, no aggregation, equal split (InArt 2.1)"
    params = (K_PATHS,)

    def plan(self, scenario: Scenario, params: dict[str, Any], progress: Progress, cancel: CancelToken) -> Plan:
        sc = scenario
        deadline = Deadline.from_params(params)
        pf = self._paths(sc)
        split = equal_split(sc)
        rng = rng_for(int(params["seed"]), self.name)
        flows = [(t, n) for t in sc.tasks() for n in sc.job(t.job).workers]
        link_id: dict[tuple[str, str], int] = {}
        rooms: list[float] = []
        for lk in sc.links:
            for u, v in ((lk.a, lk.b), (lk.b, lk.a)):
                link_id[(u, v)] = len(rooms)
                rooms.append(max(lk.capacity - lk.background_from(u), 1e-12))
        dummy = len(rooms)
        rooms.append(np.inf)
        cache: dict = {}
        cand: list[list[list[str]]] = []
        for i, (t, n) in enumerate(flows):
            if i % 256 == 0:
                cancel.check()
                progress(0.1 * i / len(flows), f"candidate paths: flow {i} of {len(flows)}")
            paths = list(self._shortest(pf, cache, n, t.ps, int(params["k"])))
            rng.shuffle(paths)
            cand.append(paths)
        p_max = max(len(c) for c in cand)
        l_max = max(len(p) - 1 for c in cand for p in c)
        idx = np.full((len(flows), p_max, l_max), dummy, dtype=np.int64)
        valid = np.zeros((len(flows), p_max), dtype=bool)
        for fi, paths in enumerate(cand):
            for pi, p in enumerate(paths):
                valid[fi, pi] = True
                for li, (u, v) in enumerate(zip(p, p[1:], strict=False)):
                    idx[fi, pi, li] = link_id[(u, v)]
        size = np.array([split[t] / sc.job(t.job).weight for t, _ in flows])
        chosen, cut = min_min(idx, valid, size, np.array(rooms), dummy, cancel, progress, deadline)
        routes: dict[Task, list[Route]] = {}
        for fi, (t, n) in enumerate(flows):
            routes.setdefault(t, []).append(Route(n, list(cand[fi][chosen[fi]]), []))
        plan, _ = finish_plan(sc, routes, split, PlannerInfo(self.name))
        plan.planner = _info(self.name, {"split": "equal"}, cut)
        return plan


def min_min(idx: np.ndarray, valid: np.ndarray, size: np.ndarray, room: np.ndarray, dummy: int,
            cancel: CancelToken, progress: Progress, deadline: Deadline | None = None) -> tuple[np.ndarray, str]:
    """LBMM's placement (InArt section 2.1): the path index chosen per flow, and why it stopped early.

    ``idx[f, p]`` lists the links of flow f's candidate path p (padded with ``dummy``, whose room is
    infinite), ``size[f]`` the Gbps it adds. Step after step, the flow whose best path has the
    lowest utilisation after adding it (max over the path's links of (load + size) / room) is placed
    on that path (ties: the lower flow, the lower path). Only the flows with a candidate through a
    link the last step loaded are scored again: the others' scores are unchanged, bit for bit, so
    the order is the one of scoring every flow at every step (a test compares the two), at a
    fraction of the work. When ``deadline`` runs out, the flows left go on their best path in
    flow order, each scored as it goes."""
    F = idx.shape[0]
    load = np.zeros(room.shape[0])
    chosen = np.full(F, -1, dtype=np.int64)
    # the flows whose candidates use each link (CSR over links)
    pairs = np.unique(np.column_stack([idx.reshape(F, -1).ravel(), np.repeat(np.arange(F), idx[0].size)]), axis=0)
    pairs = pairs[pairs[:, 0] != dummy]
    starts = np.searchsorted(pairs[:, 0], np.arange(room.shape[0] + 1))
    users = pairs[:, 1]

    def score(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        util = ((load[idx[rows]] + size[rows, None, None]) / room[idx[rows]]).max(axis=2)
        util[~valid[rows]] = np.inf
        best = util.argmin(axis=1)
        return best, util[np.arange(rows.size), best]

    best_path, best_val = score(np.arange(F))
    cut = ""
    for step in range(F):
        if step % 64 == 0:
            cancel.check()
            progress(0.1 + 0.85 * step / F, f"min-min: {step} of {F} flows placed")
            if deadline is not None and deadline.expired():
                cut = (f"the time limit stopped the min-min order after {step} of {F} flows; "
                       "the rest went on their best path in flow order")
                break
        fi = int(best_val.argmin())
        chosen[fi] = best_path[fi]
        links = idx[fi, chosen[fi]]
        load[links] += size[fi]
        load[dummy] = 0.0
        best_val[fi] = np.inf
        near = [users[starts[lk]:starts[lk + 1]] for lk in links.tolist() if lk != dummy]
        touched = np.unique(np.concatenate(near)) if near else np.zeros(0, dtype=np.int64)
        touched = touched[chosen[touched] < 0]
        if touched.size:
            best_path[touched], best_val[touched] = score(touched)
    if cut:
        for fi in np.flatnonzero(chosen < 0).tolist():
            path, _val = score(np.array([fi]))
            chosen[fi] = path[0]
            links = idx[fi, chosen[fi]]
            load[links] += size[fi]
            load[dummy] = 0.0
    return chosen, cut


PLANNERS = [Geryon(), Atp(), SwitchML(), Lbmm()]
