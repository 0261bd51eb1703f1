"""GRID: gradient routing with in-network aggregation (Fang et al., GRID paper sections 4.2-4.4).

The GRIA model, Eq. (1), for one task (job, PS alpha): every worker n picks one aggregation node
s in S u {alpha} (a programmable switch or the PS itself, x_n^s binary, sum_s x_n^s = 1) and sends
at r_n^s <= x_n^s * T; a switch used as aggregator sends one aggregate at y_s >= r_n^s; the switch
aggregates sum_n r_n^s <= C_s; the PS receives sum_n r_n^alpha + sum_s y_s <= B_alpha; maximise the
minimum rate lambda <= sum_s r_n^s. Here T is the worker's access link (capacity minus background),
C_s the switch's ``aggregation_capacity`` minus ``aggregation_background`` (no constraint when the
capacity is null), B_alpha the PS's access link(s) toward the PS. Links inside the network are not
in the model (the paper assumes them sufficient); the shared evaluator judges them afterwards.

Several PSs (section 4.1: "the partitions of each PS are independent"): one GRIA block per task,
solved in one LP whose blocks share what they physically share - switch capacity, a worker's
access link, a PS's ingress - with CONTRACTS.md rule 5 as objective (a task's rate, a job's summed
task rates, or min over jobs of weight x throughput + 0.001 x the weighted sum). The LP's task rates
give each job's model split.

R-GRIA (Alg. 1): solve the LP relaxation (x in [0, 1], which projects out to sum_s r_n^s <= T);
then each worker draws its aggregation node with probability r~_n^s / sum_s r~_n^s
(:func:`inaplanner.planners.rounding.rgria_round`). ``rounds`` repeats the draw and keeps the plan
the evaluator scores best (rounds = 1 is the paper's single draw). Eq. (1) usually has many optima
and ignores links, so which optimum is rounded matters (GRID Fig. 1: sending W4's gradient to S3 is
as good for Eq. (1) as sending it to S2, but doubles the load on link L1). ``links``:

* ``tie-break`` (default): re-solve with lambda held at its optimum, first minimising the Gbps above
  link capacity on the default paths (ECMP spread evenly), then the hop-weighted Gbps; lambda, the
  rounding rule and the bound stay the paper's;
* ``model`` (our extension): the default paths' link capacities become rows of the LP that is
  rounded (GRIA's link blindness otherwise sends many raw flows over one link, e.g. on the GRID
  testbed); the plan's bound is still Eq. (1)'s optimum;
* ``ignore``: round whatever optimum the solver returns.

The ``exact`` variant (``grid-exact``) solves the MILP instead and uses its assignment. Like the
paper, GRID is pipeline-agnostic: flows merged at a multi-pipeline switch may form several
aggregates, which the evaluator counts.

Routes: GRID picks nodes, not paths. A worker aggregated at switch s follows a shortest path to s
and the aggregate a shortest path from s to the PS (one per task and switch: flows merged at s go on
together); a worker aggregated at the PS follows a shortest path to it. ``merge_at`` lists only the
chosen switch: GRID merges each gradient at most once (section 4.2, constraint 1), so flows that
merely pass a switch are not merged there. On tiered (Clos) networks the candidate aggregators of a
worker are the switches on some up-down path worker -> switch -> PS, as ARO section IV-A does when
it runs GRID; the rule applied is recorded in the plan's params (``aggregator_rule``).

Final rates come from the evaluator (:func:`inaplanner.planners.ina_common.finish_plan`); the plan's
``bound`` is the LP optimum (the MILP's dual bound for ``grid-exact``), an upper bound on every plan
of this form since the LP's constraints are implied by the evaluator's rules 3-4.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pulp

from inaplanner.errors import InaplannerError, PlanError
from inaplanner.evaluate import MU
from inaplanner.model import Plan, PlannerInfo, Route, Scenario, Switch, Task
from inaplanner.planners.base import Param, Progress
from inaplanner.planners.ina_common import (
    PATH_LIMIT,
    Budget,
    PathFinder,
    access_capacity,
    finish_plan,
    rng_for,
    status_for,
    switch_room,
)
from inaplanner.planners.rounding import rgria_round
from inaplanner.planners.solver import CancelToken, solve

RULES = {
    "updown": "up-down: switches on an up-down path worker -> switch -> PS (ARO section IV-A)",
    "any": "any programmable switch that shortest paths worker -> switch -> PS join into a simple path",
}


def aggregator_rule(sc: Scenario, choice: str) -> str:
    """Resolve the ``aggregators`` parameter: ``auto`` is up-down on tiered networks, else any."""
    if choice == "auto":
        return "updown" if sc.is_tiered() else "any"
    if choice == "updown" and not sc.is_tiered():
        raise InaplannerError("aggregators=updown needs a tiered scenario (every switch with a tier)")
    return choice


@dataclass
class Candidates:
    """Per task: each worker's candidate aggregation switches and, per switch, the aggregate's path
    options to the PS with the phases in which flows may arrive (see PathFinder.aggregate_paths)."""

    workers: dict[Task, dict[str, list[str]]] = field(default_factory=dict)
    agg_paths: dict[tuple[Task, str], tuple[list[list[str]], tuple[int, ...]]] = field(default_factory=dict)
    hops: dict[tuple[Task, str, str], int] = field(default_factory=dict)  # (task, worker, node) -> hops
    #: directed link (u, v) -> share of r_n^s crossing it when ECMP spreads evenly (tie-break only)
    worker_links: dict[tuple[Task, str, str], dict[tuple[str, str], float]] = field(default_factory=dict)
    agg_links: dict[tuple[Task, str], dict[tuple[str, str], float]] = field(default_factory=dict)


def spread(paths: list[list[str]]) -> dict[tuple[str, str], float]:
    """Directed links of ``paths`` with the share of traffic each carries under an even ECMP split."""
    out: dict[tuple[str, str], float] = {}
    for p in paths:
        for u, v in zip(p, p[1:], strict=False):
            out[(u, v)] = out.get((u, v), 0.0) + 1.0 / len(paths)
    return out


def gria_candidates(sc: Scenario, pf: PathFinder, max_options: int = 4, ecmp: int = PATH_LIMIT) -> Candidates:
    """Which switches may aggregate which worker of which task, with the hop counts of the routes
    and the links they use (at most ``ecmp`` equal-cost paths spread evenly)."""
    out = Candidates()
    switches = [s for s in sc.switches() if s.programmable and (switch_room(s) is None or switch_room(s) > 0)]
    for task in sc.tasks():
        job = sc.job(task.job)
        per_worker: dict[str, list[str]] = {}
        for n in job.workers:
            direct = pf.shortest(n, task.ps, limit=ecmp)
            if not direct:
                raise PlanError(f"no path from worker {n} to PS {task.ps}")
            out.hops[(task, n, task.ps)] = len(direct[0]) - 1
            out.worker_links[(task, n, task.ps)] = spread(direct)
            per_worker[n] = []
        for s in switches:
            options, arrive = pf.aggregate_paths(s.id, task.ps)
            if not options:
                continue
            out.agg_paths[(task, s.id)] = (options, arrive)
            out.agg_links[(task, s.id)] = spread(options[:ecmp])
            for n in job.workers:
                if not pf.can_reach(n, s.id, arrive):
                    continue
                for opt in options[:max_options]:
                    wp = pf.worker_paths(n, s.id, opt, arrive, limit=ecmp)
                    if wp:
                        per_worker[n].append(s.id)
                        out.hops[(task, n, s.id)] = len(wp[0]) - 1 + len(opt) - 1
                        out.worker_links[(task, n, s.id)] = spread(wp)
                        break
        out.workers[task] = per_worker
    return out


@dataclass
class GriaSolution:
    rates: dict[tuple[Task, str], dict[str, float]]  # (task, worker) -> node -> r
    chosen: dict[tuple[Task, str], dict[str, float]]  # (task, worker) -> node -> x
    task_rate: dict[Task, float]  # lambda per task
    objective: float  # Eq. (1)'s (relaxed) optimum
    rounded_objective: float  # the objective of the solution that is rounded (links="model")
    bound: float | None
    status: str
    solver: str


def solve_gria(
    sc: Scenario,
    cands: Candidates,
    *,
    integer: bool,
    time_limit: float,
    cancel: CancelToken | None = None,
    links: str = "tie-break",
) -> GriaSolution:
    """GRIA Eq. (1) (``integer``) or its LP relaxation, one block per task, rule-5 objective.

    ``links``: ``tie-break`` (among Eq. (1)'s optima, least link overload on the default paths, then
    fewest hop-Gbps), ``model`` (Eq. (1) plus the default paths' link capacities, then fewest
    hop-Gbps), ``ignore`` (the solver's optimum of Eq. (1))."""
    prob = pulp.LpProblem("gria", pulp.LpMaximize)
    cat = pulp.LpBinary if integer else pulp.LpContinuous
    x: dict[tuple[Task, str, str], Any] = {}
    r: dict[tuple[Task, str, str], Any] = {}
    y: dict[tuple[Task, str], Any] = {}
    lam: dict[Task, Any] = {}
    count = 0

    def var(low: float = 0.0, up: float | None = None, kind: str = pulp.LpContinuous):
        nonlocal count
        count += 1
        return pulp.LpVariable(f"v{count}", lowBound=low, upBound=up, cat=kind)

    t_cap = {n: access_capacity(sc, n, inbound=False) for j in sc.jobs for n in j.workers}
    b_cap = {ps: access_capacity(sc, ps, inbound=True) for j in sc.jobs for ps in j.parameter_servers}
    by_switch: dict[str, list[Any]] = {}
    by_ps: dict[str, list[Any]] = {}
    by_worker: dict[str, list[Any]] = {}
    for task, per_worker in cands.workers.items():
        lam[task] = var()
        used: set[str] = set()
        for n, switches in per_worker.items():
            nodes = [*switches, task.ps]
            total = []
            for s in nodes:
                r[(task, n, s)] = var()
                if integer:
                    x[(task, n, s)] = var(0.0, 1.0, cat)
                    prob += r[(task, n, s)] <= t_cap[n] * x[(task, n, s)]
                total.append(r[(task, n, s)])
                if s != task.ps:
                    used.add(s)
                    by_switch.setdefault(s, []).append(r[(task, n, s)])
            if integer:
                prob += pulp.lpSum(x[(task, n, s)] for s in nodes) == 1
            # relaxed, x_n^s = r_n^s / T_n satisfies r <= x T and sum_s x <= 1 (padding x_n^alpha
            # up to 1 keeps it feasible), so x is projected out: sum_s r_n^s <= T_n below suffices
            prob += lam[task] <= pulp.lpSum(total)
            by_worker.setdefault(n, []).extend(total)
            by_ps.setdefault(task.ps, []).append(r[(task, n, task.ps)])
        for s in sorted(used):
            y[(task, s)] = var()
            by_ps.setdefault(task.ps, []).append(y[(task, s)])
            for n, switches in per_worker.items():
                if s in switches:
                    prob += r[(task, n, s)] <= y[(task, s)]
    for s, terms in by_switch.items():
        node = sc.node(s)
        assert isinstance(node, Switch)
        room = switch_room(node)
        if room is not None:
            prob += pulp.lpSum(terms) <= room
    for ps, terms in by_ps.items():
        prob += pulp.lpSum(terms) <= b_cap[ps]
    for n, terms in by_worker.items():
        prob += pulp.lpSum(terms) <= t_cap[n]
    # CONTRACTS.md rule 5
    jobs = sc.jobs
    thr = {j.id: pulp.lpSum(lam[t] for t in cands.workers if t.job == j.id) for j in jobs}
    if len(jobs) == 1:
        objective = thr[jobs[0].id]
    else:
        z = var()
        for j in jobs:
            prob += z <= j.weight * thr[j.id]
        objective = z + MU * pulp.lpSum(j.weight * thr[j.id] for j in jobs)
    prob += objective
    budget = Budget(time_limit)  # shared by the solve and its tie-break re-solves
    res = solve(prob, time_limit=budget.left(), cancel=cancel)
    if res.status == "infeasible" or res.objective is None:
        raise PlanError("GRIA model has no solution")
    best = float(res.objective)
    bound = res.bound
    values = _values(x, r, lam)
    rounded_from = best
    if links != "ignore" and res.status == "optimal" and best > 1e-12 and not budget.spent:
        hold = best
        if links == "model":
            # our extension: the link capacities of the default (ECMP-spread) paths as rows of
            # the model that R-GRIA rounds; the bound stays Eq. (1)'s optimum
            for (u, v), ts in _link_terms(cands, r, y).items():
                lk = sc.link_between(u, v)
                assert lk is not None
                prob += pulp.lpSum(ts) <= max(lk.capacity - lk.background_from(u), 0.0)
            step = _try_solve(prob, budget, cancel)
            if step is not None:
                hold = rounded_from = float(step.objective)
                values = _values(x, r, lam)
        # Among the optimal solutions: first (tie-break mode) the one whose default paths overload
        # the links least, then the one with the fewest hop-weighted Gbps.
        prob += objective >= hold * (1.0 - 1e-7), "hold_objective"
        prob.sense = pulp.LpMinimize
        stages = []
        if links == "tie-break":
            stages.append(_overload(sc, cands, prob, r, y, var))
        stages.append(pulp.lpSum(cands.hops[k] * v for k, v in r.items()))
        for si, stage in enumerate(stages):
            prob.setObjective(stage)
            step = _try_solve(prob, budget, cancel)
            if step is None:
                break
            values = _values(x, r, lam)
            if si + 1 < len(stages):
                prob += stage <= float(step.objective) * (1.0 + 1e-7) + 1e-9, f"hold_stage{si}"
    xv, rv, lv = values
    rates: dict[tuple[Task, str], dict[str, float]] = {}
    chosen: dict[tuple[Task, str], dict[str, float]] = {}
    for (task, n, s), val in rv.items():
        rates.setdefault((task, n), {})[s] = val
        chosen.setdefault((task, n), {})[s] = xv.get((task, n, s), 0.0)
    return GriaSolution(rates, chosen, lv, best, rounded_from, bound, res.status, res.solver)


def _try_solve(prob: pulp.LpProblem, budget: Budget, cancel: CancelToken | None):
    """A follow-up solve in the time left; None when it yields nothing usable (the previous values
    stay)."""
    if budget.spent:
        return None
    try:
        step = solve(prob, time_limit=budget.left(), cancel=cancel)
    except PlanError:
        return None
    if step.objective is None or step.status == "infeasible":
        return None
    return step


def _link_terms(cands: Candidates, r, y) -> dict[tuple[str, str], list]:
    """Directed link -> the rate terms crossing it on the default paths (ECMP spread evenly)."""
    terms: dict[tuple[str, str], list] = {}
    for key, v in r.items():
        for e, share in cands.worker_links.get(key, {}).items():
            terms.setdefault(e, []).append(share * v)
    for key, v in y.items():
        for e, share in cands.agg_links.get(key, {}).items():
            terms.setdefault(e, []).append(share * v)
    return terms


def _overload(sc: Scenario, cands: Candidates, prob: pulp.LpProblem, r, y, var):
    """Sum over directed links of the Gbps above capacity (minus background) on the default paths;
    adds one overload variable and row per used link to ``prob`` and returns the sum."""
    over = []
    for (u, v), ts in _link_terms(cands, r, y).items():
        lk = sc.link_between(u, v)
        assert lk is not None
        o = var()
        prob += o >= pulp.lpSum(ts) - (lk.capacity - lk.background_from(u))
        over.append(o)
    return pulp.lpSum(over)


def _values(x, r, lam):
    def val(v) -> float:
        out = v.value()
        return max(float(out), 0.0) if out is not None else 0.0

    return ({k: val(v) for k, v in x.items()}, {k: val(v) for k, v in r.items()}, {k: val(v) for k, v in lam.items()})


def build_routes(
    sc: Scenario,
    pf: PathFinder,
    cands: Candidates,
    assignment: dict[tuple[Task, str], str],
    rng,
    cache: dict,
) -> tuple[dict[Task, list[Route]], int]:
    """Routes for an assignment worker -> aggregation node (a switch or the PS), ECMP choices drawn
    from ``rng``. Returns the routes and how many workers had to go to the PS unaggregated because
    no simple path joined them to the aggregate's path (rare; 0 on Clos networks)."""
    routes: dict[Task, list[Route]] = {}
    repairs = 0
    for task in sc.tasks():
        job = sc.job(task.job)
        groups: dict[str, list[str]] = {}
        for n in job.workers:
            groups.setdefault(assignment[(task, n)], []).append(n)
        out: list[Route] = []
        direct_workers = list(groups.pop(task.ps, []))
        for s, members in groups.items():
            options, arrive = cands.agg_paths[(task, s)]
            order = list(range(len(options)))
            rng.shuffle(order)
            best_opt, best_paths = None, {}
            for oi in order:
                opt = options[oi]
                paths = {}
                for n in members:
                    key = ("w", n, s, tuple(opt))
                    if key not in cache:
                        cache[key] = pf.worker_paths(n, s, opt, arrive)
                    if cache[key]:
                        paths[n] = cache[key]
                if best_opt is None or len(paths) > len(best_paths):
                    best_opt, best_paths = opt, paths
                if len(paths) == len(members):
                    break
            for n in members:
                if n not in best_paths:
                    direct_workers.append(n)
                    repairs += 1
                    continue
                wp = rng.choice(best_paths[n])
                out.append(Route(n, [*wp, *best_opt[1:]], [s]))
        for n in direct_workers:
            key = ("d", n, task.ps)
            if key not in cache:
                cache[key] = pf.shortest(n, task.ps)
            out.append(Route(n, list(rng.choice(cache[key])), []))
        out.sort(key=lambda rt: job.workers.index(rt.worker))
        routes[task] = out
    return routes, repairs


def lp_split(sc: Scenario, task_rate: dict[Task, float]) -> dict[Task, float]:
    """Each job's model split from the LP's task rates (equal when the job's LP rates are all 0)."""
    split: dict[Task, float] = {}
    for j in sc.jobs:
        rates = [max(task_rate.get(Task(j.id, ps), 0.0), 0.0) for ps in j.parameter_servers]
        total = sum(rates)
        for ps, rate in zip(j.parameter_servers, rates, strict=True):
            split[Task(j.id, ps)] = rate / total if total > 1e-12 else 1.0 / len(j.parameter_servers)
    return split


class GridPlanner:
    """R-GRIA (``grid``) or the exact GRIA MILP (``grid-exact``)."""

    def __init__(self, exact: bool) -> None:
        self.exact = exact
        self.name = "grid-exact" if exact else "grid"
        self.description = (
            "GRID: GRIA MILP (Eq. 1) solved exactly, aggregation at most once per gradient"
            if exact
            else "GRID (R-GRIA): LP relaxation of GRIA (Eq. 1) + randomized rounding (Alg. 1)"
        )
        self.params = (
            Param("rounds", int, 1 if exact else 32,
                  "roundings (ECMP path draws for the exact variant); the best evaluated plan is kept",
                  min=1, max=100000),
            Param("aggregators", str, "auto",
                  "candidate aggregators: auto (up-down on tiered networks, else any), updown, any",
                  choices=("auto", "updown", "any")),
            Param("links", str, "tie-break",
                  "links in the model R-GRIA rounds: tie-break (Eq. 1 as the paper; among its optima "
                  "the least link overload on the default paths), model (Eq. 1 plus the default "
                  "paths' link capacities; our extension), ignore (the solver's optimum of Eq. 1)",
                  choices=("tie-break", "model", "ignore")),
        )

    def plan(self, scenario: Scenario, params: dict[str, Any], progress: Progress, cancel: CancelToken) -> Plan:
        sc = scenario
        rule = aggregator_rule(sc, params["aggregators"])
        pf = PathFinder(sc, updown=(rule == "updown"))
        progress(0.02, "candidate aggregators")
        cands = gria_candidates(sc, pf)
        cancel.check()
        progress(0.1, "solving the GRIA " + ("MILP" if self.exact else "LP relaxation"))
        sol = solve_gria(sc, cands, integer=self.exact, time_limit=params["time_limit"], cancel=cancel,
                         links=params["links"])
        split = lp_split(sc, sol.task_rate)
        seed = int(params["seed"])
        info = PlannerInfo(self.name, solver=sol.solver, status="heuristic")
        best: tuple[Plan, float, int] | None = None
        cache: dict = {}
        rounds = int(params["rounds"])
        for k in range(rounds):
            cancel.check()
            rng = rng_for(seed, self.name, k)
            if self.exact:
                assignment = {key: max(row, key=row.get) for key, row in sol.chosen.items()}
            else:
                assignment = rgria_round(sol.rates, rng)
            routes, repairs = build_routes(sc, pf, cands, assignment, rng, cache)
            plan, ev = finish_plan(sc, routes, split, PlannerInfo(self.name), sol.bound)
            if best is None or ev.objective > best[1] + 1e-12:
                best = (plan, ev.objective, repairs)
            progress(0.3 + 0.7 * (k + 1) / rounds, f"round {k + 1}/{rounds}: best {best[1]:.6g}")
            if sol.bound is not None and best[1] >= sol.bound * (1 - 1e-9):
                break  # nothing better exists
        assert best is not None
        plan, objective, repairs = best
        info.status = status_for(objective, sol.bound, sol.status)
        info.params = {
            "aggregator_rule": RULES[rule],
            "multi_ps": "one GRIA block per PS in a joint LP (shared switch, worker and PS capacity)",
            "lp_objective": sol.objective,
            "rounded_lp_objective": sol.rounded_objective,
            "unaggregated_repairs": repairs,
        }
        plan.planner = info
        return plan


PLANNERS = [GridPlanner(exact=False), GridPlanner(exact=True)]
