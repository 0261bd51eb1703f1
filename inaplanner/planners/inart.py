"""InArt: in-network aggregation with route selection for several PSs (InArt paper, sections 3-4).

Problem Eq. (1): split the model across the job's PSs (x_s, sum 1), send every worker's gradient
for PS s either straight to s (y^{s,w}) or to one programmable switch v that aggregates it
(y_v^{s,w}, at most once), on one path each (q), with switch capacity C(v) - c(v), link capacity
B(e) - b(e) and PS ingress B(s) - b(s); maximise the sending rate f (the job's throughput: the task
for PS s runs at f * x_s). Background loads come from the scenario: c(v) =
``aggregation_background``, b(e) = link ``background``, B(s) - b(s) = the PS's access links' free
capacity toward the PS.

Phase 1, L-InArt (Alg. 1): the split x from Eq. (2), the relaxation of Eq. (1) to the switch and PS
capacity constraints with fractional y, z. The paper solves its KKT system by Gaussian elimination;
we reach the same optimum exactly with a linear program: substitute the task rates g_s = f * x_s
and the per-flow rates u_v^{s,w} = g_s * y_v^{s,w}, u^{s,w} = g_s * y^{s,w}, zeta_v^s = g_s * z_v^s.
Every constraint of Eq. (2) becomes linear in (f, g, u, zeta):

    sum_s g_s = f,   u^{s,w} + sum_v u_v^{s,w} = g_s,   u_v^{s,w} <= zeta_v^s <= g_s,
    sum_s sum_w u_v^{s,w} <= C(v) - c(v),   sum_w u^{s,w} + sum_v zeta_v^s <= B(s) - b(s),

and for g_s > 0 the map (g, y, z) -> (g, u, zeta) is a bijection between the feasible sets (y =
u / g_s, z = zeta / g_s lie in [0, 1] because u, zeta <= g_s), so the LP optimum f* is Eq. (2)'s
optimum and x_s = g_s / f*. Eq. (2) has nothing worker-specific, so by symmetry one rate per
(PS, switch) shared by all workers suffices (see :func:`l_inart_split`), which keeps the LP tiny.
Eq. (2) often has many optimal splits; among them we take the most
balanced one (a second LP holding f = f* and minimising max_s |x_s - 1/|S||), so that a tie is
never broken toward an arbitrary extreme vertex.

Phase 2, R-InArt (Alg. 2): candidate paths P are Yen's k shortest simple paths (``k``, default 4)
for every worker -> PS, worker -> switch and switch -> PS pair (hosts never forward); a switch is a
candidate aggregator for (w, s) when some worker -> v path and some v -> s path join into one simple
path. LP Eq. (5), the relaxation of Eq. (1) for the fixed split, is again written in rates (path
rates = f * x_s * q_p, products with the variable f substituted as above), so it is linear. Two
readings of the printed Eq. (5): a worker's path variables to switch v are per (PS, worker, switch)
since each PS's share is a separate flow, and an aggregate's path variables sum to z_v^s (the paper
prints y_v^{s,w}, which would force every worker's y_v to be equal). Its optimum is the plan's
``bound`` (for the chosen split). The LP runs on HiGHS' interior-point solver. Rounding uses the paper's interval method
(:func:`inaplanner.planners.rounding.interval_choice`): first the aggregation choice of every
(worker, PS) - switches in order, the PS last - then one path per aggregate (switch -> PS) and
per flow, each drawn in proportion to its LP value among the paths that keep the route simple.
``rounds`` repeats the draw and keeps the plan the evaluator scores best. Final rates: the evaluator's
largest rates for the routes with the split fixed (:func:`~inaplanner.planners.ina_common.finish_plan`).

Variants: ``inart`` (both phases) and ``inart-equal`` (equal split + R-InArt, the paper's "R-InArt"
benchmark). Several jobs: each job's split from its own Eq. (2) (InArt treats other jobs as
background); one Eq. (5) for all jobs with CONTRACTS.md rule 5 as objective.
"""

from __future__ import annotations

from typing import Any

import pulp

from inaplanner.errors import PlanError
from inaplanner.evaluate import MU
from inaplanner.model import Job, Plan, PlannerInfo, Route, Scenario, Switch, Task
from inaplanner.planners.base import Param, Progress
from inaplanner.planners.deadline import Deadline, ModelTooLarge, OutOfTime
from inaplanner.planners.ina_common import (
    access_capacity,
    default_paths_plan,
    equal_split,
    fan_in_limit,
    finish_plan,
    report,
    rng_for,
    status_for,
    switch_room,
)
from inaplanner.planners.paths import DOWN, UP, Paths
from inaplanner.planners.rounding import draw
from inaplanner.planners.solver import CancelToken, new_variable, solve

#: Eq. (5) is refused past this many path variables (PuLP's model: about 1 GB)
EQ5_MAX_VARS = 250_000
#: The LP's limit keeps back this many times what the fallback plan took (routing and evaluating
#: one plan of the scenario's size), for the rounding: a round takes about as long (fat-tree k=16
#: with 200 workers per job: 0.07-0.12 s a round)
ROUNDING_RESERVE = 4.0
#: Eq. (5)'s build stops once its first ``PROJECT_AFTER`` workers (or more) project a path
#: variable count over ``PROJECT_MARGIN`` times the cap; the exact cap stops it in any case
PROJECT_AFTER = 32
PROJECT_MARGIN = 2.0


class _Vars:
    def __init__(self, prob: pulp.LpProblem) -> None:
        self.prob = prob
        self.count = 0

    def __call__(self, up: float | None = None) -> pulp.LpVariable:
        self.count += 1
        return new_variable(self.prob, f"v{self.count}", 0.0, up)


def _aggregators(sc: Scenario) -> list[Switch]:
    return [s for s in sc.switches() if s.programmable and (switch_room(s) is None or switch_room(s) > 0)]


def l_inart_split(
    sc: Scenario, job: Job, *, time_limit: float = 60.0, cancel: CancelToken | None = None,
    balanced: bool = True, deadline: Deadline | None = None,
) -> tuple[dict[str, float], float]:
    """L-InArt (Alg. 1): the model split x_s over ``job``'s PSs from Eq. (2) and Eq. (2)'s optimum f*.

    Solved exactly as the LP in rate variables described in the module docstring, reduced by
    symmetry: Eq. (2) has nothing worker-specific (no paths, no access links), so permuting the
    workers maps solutions to solutions, and averaging a solution over all permutations (the
    feasible set is convex) gives one as good in which every worker has the same rates. One
    per-worker rate u^s (direct) and u_v^s (aggregated at v) per PS therefore suffices, with the
    sums over workers becoming |W| times them."""
    pss = list(job.parameter_servers)
    if len(pss) == 1:
        return {pss[0]: 1.0}, float("nan")
    switches = _aggregators(sc)
    n = len(job.workers)
    prob = pulp.LpProblem("l_inart", pulp.LpMaximize)
    var = _Vars(prob)
    f = var()
    g = {s: var() for s in pss}
    prob += f
    prob += pulp.lpSum(g.values()) == f
    per_switch: dict[str, list] = {v.id: [] for v in switches}
    for s in pss:
        zeta = {v.id: var() for v in switches}
        u_d = var()
        u_v = {v.id: var() for v in switches}
        prob += u_d + pulp.lpSum(u_v.values()) == g[s]  # y + sum_v y_v = 1, times g_s
        for vid, u in u_v.items():
            prob += u <= zeta[vid]  # y_v <= z_v
            prob += zeta[vid] <= g[s]  # z_v <= 1
            per_switch[vid].append(n * u)
        prob += n * u_d + pulp.lpSum(zeta.values()) <= access_capacity(sc, s, inbound=True)
    for v in switches:
        room = switch_room(v)
        if room is not None and per_switch[v.id]:
            prob += pulp.lpSum(per_switch[v.id]) <= room
    deadline = deadline or Deadline(time_limit)
    deadline.check(cancel)
    given = deadline.solver_seconds()
    res = solve(prob, time_limit=given, cancel=cancel)
    if res.objective is None or res.status == "infeasible":
        if res.status == "timeout" or deadline.expired() or res.seconds >= 0.9 * given:
            raise OutOfTime("L-InArt (Eq. 2) found no solution within the time limit")
        raise PlanError(f"job {job.id}: L-InArt model (Eq. 2) has no solution")
    f_star = float(res.objective)
    if f_star <= 1e-12:
        return {s: 1.0 / len(pss) for s in pss}, 0.0
    values = {s: float(g[s].value() or 0.0) for s in pss}
    if balanced and res.status == "optimal" and not deadline.expired():
        t = var()
        prob += f >= f_star * (1.0 - 1e-9), "hold_f"
        for s in pss:
            prob += g[s] - f_star / len(pss) <= t
            prob += f_star / len(pss) - g[s] <= t
        prob.sense = pulp.LpMinimize
        prob.setObjective(t)
        try:
            step = solve(prob, time_limit=deadline.solver_seconds(), cancel=cancel)
            if step.objective is not None and step.status != "infeasible":
                values = {s: float(g[s].value() or 0.0) for s in pss}
        except PlanError:
            pass
    # shares to 6 decimals: the solver's tolerance noise (0.4999999995) means nothing
    shares = {s: round(max(values[s], 0.0) / f_star, 6) for s in pss}
    total = sum(shares.values())
    return {s: shares[s] / total for s in pss}, f_star


class PathSets:
    """InArt's P: the k shortest valid simple paths per (worker, PS), (worker, switch), (switch, PS)
    (:meth:`Paths.k_shortest`: up-down on a Clos network, CONTRACTS.md rule 6)."""

    def __init__(self, sc: Scenario, k: int, paths: Paths | None = None) -> None:
        self.pf = paths if paths is not None else Paths(sc)
        self.k = k
        self.cache: dict[tuple[str, str], list[list[str]]] = {}

    def get(self, src: str, dst: str) -> list[list[str]]:
        """The k shortest valid paths src -> dst. On a Clos network a host with one link climbs to
        its switch first, whatever follows, so its paths are that switch's (leaving it going up)
        with the host in front, in the same order: one search per switch and destination, not
        per worker (fat-tree k=32, 1,000 workers per job: 124,000 searches, 40 % of the LP's
        build)."""
        key = (src, dst)
        got = self.cache.get(key)
        if got is None:
            pf = self.pf
            one_link = pf.updown and src != dst and pf.is_host[src] and len(pf.adj[src]) == 1
            via = pf.attach(src) if one_link else ()
            if len(via) == 1 and via[0] != dst:
                got = [[src, *p] for p in self.get(via[0], dst)]
            else:
                got = pf.k_shortest(src, dst, self.k)
            self.cache[key] = got
        return got

    def joins(self, p1: list[str], p2: list[str]) -> bool:
        """worker -> v path ``p1`` and v -> PS path ``p2`` form one simple valid path: no node twice
        and, on a Clos network, no valley at v (a flow arriving at v going down may only go on
        down)."""
        if set(p1[:-1]) & set(p2):
            return False
        if not self.pf.updown or len(p1) < 2 or len(p2) < 2:
            return True
        rank = self.pf.rank
        v = p2[0]
        arrives_up = all(rank[a] < rank[b] for a, b in zip(p1, p1[1:], strict=False))
        return arrives_up or rank[p2[1]] < rank[v]

    def may_aggregate(self, w: str, v: str, ps: str) -> bool:
        """Whether some valid path w -> v -> ps exists by distances alone (a quick filter before
        the k shortest paths are enumerated)."""
        _start, arrive, d = self.pf.aggregate_start(v, ps)
        return d is not None and self.pf.distance(w, v, ends=arrive) is not None


def _joins(p1: list[str], p2: list[str]) -> bool:
    """worker -> v path ``p1`` and v -> PS path ``p2`` form one simple path."""
    return not (set(p1[:-1]) & set(p2))


class Eq5:
    """LP Eq. (5) for a fixed split, in rate variables; keeps the variables for the rounding."""

    def __init__(self, sc: Scenario, split: dict[Task, float], paths: PathSets,
                 max_detour: int | None = None, deadline: Deadline | None = None,
                 cancel: CancelToken | None = None, max_vars: int | None = None) -> None:
        self.sc = sc
        self.max_vars = EQ5_MAX_VARS if max_vars is None else max_vars
        self.deadline = deadline
        self.cancel = cancel
        self.max_detour = max_detour
        self.split = split
        self.paths = paths
        self.direct: dict[tuple[Task, str], list[tuple[list[str], Any]]] = {}
        self.to_switch: dict[tuple[Task, str, str], list[tuple[list[str], Any]]] = {}
        self.agg: dict[tuple[Task, str], list[tuple[list[str], Any]]] = {}
        self.options: dict[tuple[Task, str], list[str]] = {}  # (task, worker) -> candidate switches
        self.f: dict[str, Any] = {}
        self.prob = pulp.LpProblem("r_inart", pulp.LpMaximize)
        self._build()

    def _build(self) -> None:
        sc, prob = self.sc, self.prob
        var = _Vars(prob)
        link_terms: dict[tuple[str, str], list] = {}
        switch_terms: dict[str, list] = {}
        ps_terms: dict[str, list] = {}

        def on_links(path: list[str], v) -> None:
            for a, b in zip(path, path[1:], strict=False):
                link_terms.setdefault((a, b), []).append(v)

        switches = _aggregators(sc)
        self.f = {j.id: var() for j in sc.jobs}
        total = sum(len(sc.job(t.job).workers) for t in sc.tasks())
        done = 0
        for task in sc.tasks():
            job = sc.job(task.job)
            share = self.split[task]
            rate = share * self.f[job.id]
            agg_paths = {v.id: self.paths.get(v.id, task.ps) for v in switches}
            agg_paths = {vid: ps for vid, ps in agg_paths.items() if ps}
            used: dict[str, list] = {}
            for wi, w in enumerate(job.workers):
                if self.deadline is not None and wi % 4 == 0:
                    self.deadline.check(self.cancel)
                if var.count > self.max_vars:
                    raise ModelTooLarge(f"the R-InArt LP (Eq. 5) would exceed {self.max_vars:,} path "
                                        "variables (memory); the ATP-style plan is returned")
                # workers' path counts are alike (fat-tree k=64 with 1,000 workers per job: 250,000
                # reached after a sixth of the workers, in 33 s): a count set to end far past the
                # cap is stopped early
                if done >= PROJECT_AFTER and var.count * total > PROJECT_MARGIN * self.max_vars * done:
                    raise ModelTooLarge(f"the R-InArt LP (Eq. 5) would have about {var.count * total // done:,} "
                                        f"path variables (from its first {done:,} workers), over "
                                        f"{self.max_vars:,} (memory); the ATP-style plan is returned")
                done += 1
                parts = []
                direct = self.paths.get(w, task.ps)
                if not direct:
                    raise PlanError(f"no path from worker {w} to PS {task.ps}")
                self.direct[(task, w)] = [(p, var()) for p in direct]
                for p, v in self.direct[(task, w)]:
                    on_links(p, v)
                    parts.append(v)
                    ps_terms.setdefault(task.ps, []).append(v)
                for vid, a_paths in agg_paths.items():
                    if not self.paths.may_aggregate(w, vid, task.ps):
                        continue
                    if self.max_detour is not None:
                        to_v = self.paths.get(w, vid)
                        if not to_v or len(to_v[0]) + len(a_paths[0]) - len(direct[0]) - 1 > self.max_detour:
                            continue
                    w_paths = [p for p in self.paths.get(w, vid) if any(self.paths.joins(p, q) for q in a_paths)]
                    if not w_paths:
                        continue
                    entries = [(p, var()) for p in w_paths]
                    self.to_switch[(task, w, vid)] = entries
                    self.options.setdefault((task, w), []).append(vid)
                    for p, v in entries:
                        on_links(p, v)
                        parts.append(v)
                        switch_terms.setdefault(vid, []).append(v)
                    used.setdefault(vid, []).append(pulp.lpSum(v for _, v in entries))
                prob += pulp.lpSum(parts) == rate  # y + sum_v y_v = 1, times f * x_s
            for vid, flows in used.items():
                entries = [(p, var()) for p in agg_paths[vid]]
                self.agg[(task, vid)] = entries
                z = pulp.lpSum(v for _, v in entries)
                for p, v in entries:
                    on_links(p, v)
                    ps_terms.setdefault(task.ps, []).append(v)
                for flow in flows:
                    prob += flow <= z  # y_v <= z_v
                prob += z <= rate  # z_v <= 1
        for vid, terms in switch_terms.items():
            node = sc.node(vid)
            assert isinstance(node, Switch)
            room = switch_room(node)
            if room is not None:
                prob += pulp.lpSum(terms) <= room
        for (a, b), terms in link_terms.items():
            lk = sc.link_between(a, b)
            assert lk is not None
            prob += pulp.lpSum(terms) <= max(lk.capacity - lk.background_from(a), 0.0)
        for ps, terms in ps_terms.items():
            prob += pulp.lpSum(terms) <= access_capacity(sc, ps, inbound=True)
        jobs = sc.jobs
        if len(jobs) == 1:
            prob += self.f[jobs[0].id]
        else:
            z = var()
            for j in jobs:
                prob += z <= j.weight * self.f[j.id]
            prob += z + MU * pulp.lpSum(j.weight * self.f[j.id] for j in jobs)

    def solve(self, time_limit: float, cancel: CancelToken | None, options: dict[str, Any] | None = None):
        """Solve; afterwards the entries hold (path, LP rate) instead of (path, variable). When
        the limit stops the interior-point method before it has a solution, the entries hold
        its last iterate (``res.iterate``): no bound, but still a guide for the rounding (fat-tree
        k=16 with 200 workers per job, seed 3: an LP of 22.8 s stopped after 6 s rounds to 3.64,
        where the ATP-style fallback gives 1.51 and the optimum's rounding 4.26). ``options``:
        more HiGHS options (the tests stop it by an iteration limit)."""
        # interior point: several times faster than simplex on this large, degenerate LP
        res = solve(self.prob, time_limit=time_limit, cancel=cancel, options={"solver": "ipm", **(options or {})},
                    iterate=True)
        if not res.iterate and (res.objective is None or res.status == "infeasible"):
            if res.status == "timeout" or res.seconds >= 0.9 * time_limit or (
                    self.deadline is not None and self.deadline.expired()):
                raise OutOfTime("the R-InArt LP (Eq. 5) found no solution within the time limit")
            raise PlanError("R-InArt LP (Eq. 5) has no solution"
                            + (" within the time limit" if res.status == "timeout" else ""))
        for table in (self.direct, self.to_switch, self.agg):
            for key, entries in table.items():
                table[key] = [(p, _val(v)) for p, v in entries]
        return res


def _val(v) -> float:
    x = v.value()
    return max(float(x), 0.0) if x is not None else 0.0


def round_routes(lp: Eq5, rng, pf: Paths, deadline: Deadline | None = None,
                 cancel: CancelToken | None = None) -> tuple[dict[Task, list[Route]], int]:
    """Alg. 2 step 2 with the interval method: aggregation choice, then aggregate paths, then flow
    paths compatible with them. Returns the routes and how many flows had to be sent unaggregated
    because no candidate path joined them to their aggregate's path.

    Fan-in (CONTRACTS.md rule 5): InArt draws one aggregation choice per (worker, PS), so once
    ``max_fan_in`` flows of a task are drawn to a switch it leaves the later draws (the interval
    method over the remaining pieces; the PS when the LP put nothing elsewhere). Flows merge only
    at the switch drawn, so that count bounds every aggregate there, whatever the pipeline."""
    sc = lp.sc
    limit = {v.id: fan_in_limit(v) for v in sc.switches() if v.programmable}
    routes: dict[Task, list[Route]] = {}
    repairs = 0
    for task in sc.tasks():
        if deadline is not None:
            deadline.check(cancel)
        job = sc.job(task.job)
        choice: dict[str, str] = {}
        count: dict[str, int] = {}
        for w in job.workers:
            options = [v for v in lp.options.get((task, w), []) if count.get(v, 0) < limit[v]]
            weights = [sum(v for _, v in lp.to_switch[(task, w, vid)]) for vid in options]
            weights.append(sum(v for _, v in lp.direct[(task, w)]))
            if sum(weights) <= 1e-12 and lp.options.get((task, w)) and len(options) < len(lp.options[(task, w)]):
                pick = len(options)  # the switches the LP chose are full: straight to the PS
            else:
                pick = draw(weights, rng)
            choice[w] = options[pick] if pick < len(options) else task.ps
            if choice[w] != task.ps:
                count[choice[w]] = count.get(choice[w], 0) + 1
        agg_path: dict[str, list[str]] = {}
        for vid in sorted({c for c in choice.values() if c != task.ps}):
            entries = lp.agg[(task, vid)]
            agg_path[vid] = entries[draw([v for _, v in entries], rng)][0]
        out: list[Route] = []
        for w in job.workers:
            vid = choice[w]
            if vid != task.ps:
                ap = agg_path[vid]
                entries = [(p, v) for p, v in lp.to_switch[(task, w, vid)] if lp.paths.joins(p, ap)]
                if entries:
                    p = entries[draw([v for _, v in entries], rng)][0]
                    out.append(Route(w, [*p, *ap[1:]], [vid]))
                    continue
                down = pf.updown and len(ap) > 1 and pf.rank[ap[1]] < pf.rank[vid]
                arrive = (UP, DOWN) if (down or not pf.updown) else (UP,)
                detour = pf.worker_paths(w, vid, ap, arrive, limit=1)
                if detour:
                    out.append(Route(w, [*detour[0], *ap[1:]], [vid]))
                    continue
                repairs += 1
            entries = lp.direct[(task, w)]
            p = entries[draw([v for _, v in entries], rng)][0]
            out.append(Route(w, list(p), []))
        routes[task] = out
    return routes, repairs


class InArtPlanner:
    """``inart`` (L-InArt split + R-InArt) or ``inart-equal`` (equal split + R-InArt).

    Every phase (split LPs, path sets and the Eq. (5) model, the solve, the roundings) checks the
    run's :class:`~inaplanner.planners.deadline.Deadline` and the cancel token; the ATP-style plan
    on default paths is built first, so a plan exists whatever phase the limit cuts (status
    ``timeout``). When the limit stops the LP itself, the rounding follows the interior-point
    method's last iterate (no bound), with time kept back for it (``ROUNDING_RESERVE``). Paths
    are up-down on Clos networks (rule 6); the fan-in limit is kept in the rounding
    (:func:`round_routes`)."""

    def __init__(self, equal: bool) -> None:
        self.equal = equal
        self.name = "inart-equal" if equal else "inart"
        self.description = (
            "InArt with an equal model split + R-InArt routing (the paper's R-InArt benchmark)"
            if equal
            else "InArt: L-InArt model split (Eq. 2) + R-InArt path LP and randomized rounding (Eq. 5)"
        )
        self.params = (
            Param("k", int, 4, "candidate paths per pair (k shortest valid paths)", min=1, max=64),
            Param("rounds", int, 32, "randomized roundings; the best evaluated plan is kept (1 = the paper)",
                  min=1, max=100000),
        )

    def plan(self, scenario: Scenario, params: dict[str, Any], progress: Progress, cancel: CancelToken) -> Plan:
        sc = scenario
        deadline = Deadline.from_params(params)
        seed = int(params["seed"])
        report(progress, 0.01, "path index", phase="paths")
        pf = Paths(sc, check=cancel.check)
        report(progress, 0.02, "ATP-style plan on default paths (the fallback)", phase="fallback")
        fb_started = deadline.elapsed()
        fb_plan, fb_obj, _ = default_paths_plan(sc, pf, equal_split(sc), self.name, seed, cancel)
        # routing and evaluating one plan of this size: the rounding needs a few such after the
        # LP, so the LP's limit keeps ROUNDING_RESERVE of them back
        reserve = ROUNDING_RESERVE * (deadline.elapsed() - fb_started)
        best: tuple[Plan, float, int] = (fb_plan, fb_obj, 0)
        source = "ATP-style plan on default paths"
        report(progress, 0.05, "fallback ready", incumbent=fb_obj)
        split = equal_split(sc)
        split_rule = "equal"
        res = None
        bound: float | None = None
        cut = ""
        too_large = False
        try:
            report(progress, 0.06, "model split", phase="split")
            if not self.equal:
                split = {}
                for job in sc.jobs:
                    x, _ = l_inart_split(sc, job, cancel=cancel, deadline=deadline)
                    split.update({Task(job.id, ps): share for ps, share in x.items()})
                split_rule = "L-InArt (Eq. 2 optimum, most balanced among ties)"
            deadline.check(cancel)
            report(progress, 0.1, "candidate paths and LP (Eq. 5)", phase="model")
            paths = PathSets(sc, int(params["k"]), pf)
            started = deadline.elapsed()
            lp = Eq5(sc, split, paths, deadline=deadline, cancel=cancel)
            deadline.check(cancel)
            built = deadline.elapsed() - started
            if deadline.remaining() < built:  # the hand-over to the solver takes about as long
                raise OutOfTime("the R-InArt LP (Eq. 5) could not be solved within the time limit "
                                f"(building it took {built:.1f} s)")
            report(progress, 0.3, "solving the LP (Eq. 5)", phase="solve")
            res = lp.solve(max(deadline.solver_seconds() - reserve, 0.05), cancel)
            bound = float(res.objective) if res.status == "optimal" else res.bound
            if res.iterate:
                cut = ("the time limit stopped the R-InArt LP (Eq. 5) before its optimum: the rounding "
                       "follows its last interior-point iterate, and no bound is proven")
            rounds = int(params["rounds"])
            for k in range(rounds):
                deadline.check(cancel)
                rng = rng_for(seed, "inart", k)  # same draws for both variants: only the split differs
                routes, repairs = round_routes(lp, rng, pf, deadline, cancel)
                plan, ev = finish_plan(sc, routes, split, PlannerInfo(self.name), bound)
                fallback_now = source.startswith("ATP")  # InArt's own plan wins ties with it
                if ev.objective > best[1] + 1e-12 or (fallback_now and ev.objective >= best[1] - 1e-12):
                    best = (plan, ev.objective, repairs)
                    source = "R-InArt rounding" + (" of the LP's last iterate" if res.iterate else "")
                report(progress, 0.5 + 0.5 * (k + 1) / rounds, f"round {k + 1}/{rounds}: best {best[1]:.6g}",
                       phase="rounding", incumbent=best[1], bound=bound)
                if bound is not None and best[1] >= bound * (1 - 1e-9):
                    break
        except OutOfTime as exc:
            cut = cut or str(exc)
            too_large = isinstance(exc, ModelTooLarge)
        plan, objective, repairs = best
        plan.bound = bound
        plan.planner = PlannerInfo(
            self.name,
            params={
                "split_rule": split_rule,
                "split": {f"{t.job}/{t.ps}": round(s, 9) for t, s in split.items()},
                "lp_objective": float(res.objective) if res is not None and res.objective is not None else None,
                "unaggregated_repairs": repairs,
                "plan_source": source,
                "fallback_objective": fb_obj,
                "limit_used": f"{deadline.kind} {deadline.seconds:g} s",
                **({"stopped": cut} if cut else {}),
            },
            solver=res.solver if res is not None else "",
            status=("heuristic" if too_large else "timeout") if cut
            else status_for(objective, bound, res.status if res else "timeout"),
        )
        report(progress, 1.0, f"best {objective:.6g}", phase="done", incumbent=objective, bound=bound)
        return plan


PLANNERS = [InArtPlanner(equal=False), InArtPlanner(equal=True)]
