"""The ARO planner: graphs, accelerations, solving, routes, rates (ARO sections III-A to III-D).

The paper's model (Eqs. 4-10) is bilinear in the flow counts y and the rates r. With the rates
fixed it is a linear feasibility MILP (:func:`feasibility_model`) whose integer flow bounds make
its LP relaxation tight; everything below is built from that question, "can task i send at r_i?",
answered first by a greedy (:mod:`greedy`), then by HiGHS.

* One task (SJST, Eq. 1): the best rate fills some resource exactly, so it is b / k for a
  bandwidth b and a flow count k. Those candidates are searched from the top (probes 1st, 2nd,
  3rd, 5th ... highest, then bisection); the first infeasible candidate above the best plan proves
  it optimal — the exact optimum of the paper's model, no quantisation needed.
* Several tasks (SJMT Eq. 2, MJMT Eq. 3):

  1. every task alone: its exact optimum bounds its rate in any joint plan;
  2. :func:`rate_bound`: the best objective those limits and the links every plan loads
     (workers' access links shared by a job's tasks) allow, and a balanced rate vector reaching
     it — the direction rho;
  3. the common level theta along rho (rates theta * rho), searched over the values where a
     resource is exactly full. With one task per job under MJMT, rho_i = L / beta_i makes theta
     the max-min term itself and the first refuted level bounds it;
  4. if a gap remains on a small model (or ``exact=always``), the exact joint model of
     :func:`exact_model` (QSR levels with exact products, or continuous rates when QSR is off),
     started from the best plan, improves it and tightens the bound with HiGHS' dual bound.

Routes come from the flow counts by Algorithm 1; rates for the routes from the evaluator's
constraint matrix (an LP for the scenario's objective). The plan's ``bound`` is an upper bound on
the optimum over ARO's candidate paths, given only when SRO/APP removed nothing (a pruned model
proves nothing about the full one); ``status`` is ``optimal`` when the bound is reached within
``gap``, ``timeout`` when a time limit cut a step short, else ``feasible``.
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from inaplanner.errors import PlanError
from inaplanner.evaluate import evaluate
from inaplanner.model import Plan, PlannerInfo, Scenario, TaskPlan
from inaplanner.planners.aro.accel import app_prune, rebuild, sro_stage1, sro_unused
from inaplanner.planners.aro.formulation import (
    MU,
    Flows,
    Objective,
    block_flows,
    exact_model,
    exact_start,
    feasibility_model,
    objective_for,
    ratio_model,
)
from inaplanner.planners.aro.graph import Resource, TaskGraph, build_task_graph, resource_capacity
from inaplanner.planners.aro.greedy import greedy_flows, last_hop_options, route_one
from inaplanner.planners.aro.milp import Milp
from inaplanner.planners.aro.rates import best_rates, direction_max, rate_bound, structural_bound
from inaplanner.planners.aro.routes import generate_routes
from inaplanner.planners.base import Param, Progress
from inaplanner.planners.routing import adjacency, shortest_dag
from inaplanner.planners.solver import CancelToken, solver_name

REL = 1e-9


@dataclass
class Outcome:
    """Best joint solution found on a set of graphs."""

    flows: list[Flows]
    rates: list[float]
    objective: float
    bound: float | None
    timed_out: bool = False


class _Clock:
    def __init__(self, limit: float) -> None:
        self.end = time.perf_counter() + limit

    def left(self) -> float:
        return max(self.end - time.perf_counter(), 0.0)


class AroPlanner:
    """ARO with switchable SRO / APP / QSR; the presets differ only in their defaults."""

    def __init__(self, name: str, description: str, *, sro: bool, app: bool, qsr: bool) -> None:
        self.name = name
        self.description = description
        self.params = (
            Param("sro", bool, sro, "staged routing optimisation (section III-C)"),
            Param("app", bool, app, "aggregator pre-pruning (section III-C)"),
            Param("qsr", bool, qsr, "quantised sending rates in the exact multi-task model"),
            Param("alpha", float, 0.6, "APP: share of each group of alternative aggregators kept", min=0.01, max=1.0),
            Param("qsr_levels", int, 100, "QSR: number of rate levels N", min=1, max=100000),
            Param("gap", float, 1e-4, "relative optimality gap at which solving stops", min=0.0, max=1.0),
            Param("exact", str, "auto", "multi-task: run the exact joint model when a gap remains "
                  "(auto), always, or never", choices=("auto", "always", "never")),
        )

    # ------------------------------------------------------------------------------------------

    def plan(self, scenario: Scenario, params: dict[str, Any], progress: Progress, cancel: CancelToken) -> Plan:
        sc = scenario
        clock = _Clock(float(params.get("time_limit", 60.0)))
        tasks = sc.tasks()
        objective = objective_for(sc, tasks)
        progress(0.0, "building the unfolded graphs")
        adj = adjacency(sc)
        graphs = []
        for t in tasks:
            cancel.check()
            workers = tuple(w for w in sc.job(t.job).workers if w != t.ps)
            dag = shortest_dag(sc, workers, t.ps, adj=adj)
            graphs.append(build_task_graph(sc, t, workers, dag))
        cancel.check()
        pruned = False
        if params["app"]:
            drops = app_prune(graphs, float(params["alpha"]))
            new = []
            for g, drop in zip(graphs, drops, strict=True):
                g2 = rebuild(sc, g, drop)
                new.append(g2 if g2 is not None else g)
                pruned |= g2 is not None and g2 is not g
            graphs = new
        warm: list[Flows] | None = None
        if params["sro"] and sc.is_tiered():
            progress(0.1, "SRO stage 1")
            stage1 = [sro_stage1(sc, g) for g in graphs]
            first = self._solve(sc, stage1, objective, params, _Clock(clock.left() / 2), cancel, None)
            new = []
            for g, g1, f in zip(graphs, stage1, first.flows, strict=True):
                drop = sro_unused(g1, f)
                g2 = rebuild(sc, g, drop)
                new.append(g2 if g2 is not None else g)
                pruned |= g2 is not None and g2 is not g
            graphs = new
            warm = first.flows
        cancel.check()
        progress(0.4, "solving")
        out = self._solve(sc, graphs, objective, params, clock, cancel, warm)
        cancel.check()
        progress(0.9, "routes")
        plan = self._plan_from(sc, graphs, out.flows, objective)
        ev = evaluate(sc, plan)
        if not ev.feasible:  # never expected: the rates come from the evaluator's own matrix
            raise PlanError("ARO produced an infeasible plan: " + "; ".join(ev.errors + [str(v) for v in ev.violations])[:500])
        bound = None if pruned else out.bound
        if bound is not None:
            bound = max(bound, ev.objective)
        if pruned:
            status = "timeout" if out.timed_out else "feasible"
        elif bound is not None and ev.objective >= bound * (1 - max(float(params["gap"]), 1e-7)) - 1e-9:
            status = "optimal"
        else:
            status = "timeout" if out.timed_out else "feasible"
        plan.bound = bound
        plan.planner = PlannerInfo(self.name, {}, None, f"{solver_name()} (highspy)", 0.0, status)
        plan.extra = {}
        progress(1.0, f"objective {ev.objective:.6g}")
        return plan

    # ------------------------------------------------------------------------------------------

    def _plan_from(self, sc: Scenario, graphs: list[TaskGraph], flows: list[Flows], objective: Objective) -> Plan:
        tps = [TaskPlan(g.task.job, g.task.ps, 0.0, generate_routes(g, f)) for g, f in zip(graphs, flows, strict=True)]
        plan = Plan("", PlannerInfo(self.name), tps)
        rates = best_rates(sc, plan, objective)
        for tp in plan.tasks:
            tp.rate = rates[(tp.job, tp.ps)]
        return plan

    def _route_rates(self, sc: Scenario, graphs: list[TaskGraph], flows: list[Flows], objective: Objective) -> list[float]:
        plan = self._plan_from(sc, graphs, flows, objective)
        return [tp.rate for tp in plan.tasks]

    def _solve(
        self,
        sc: Scenario,
        graphs: list[TaskGraph],
        objective: Objective,
        params: dict[str, Any],
        clock: _Clock,
        cancel: CancelToken,
        warm: list[Flows] | None,
    ) -> Outcome:
        gap = float(params["gap"])
        if len(graphs) == 1:
            return self._single(sc, graphs[0], objective, clock, cancel, None if warm is None else warm[0])
        # 1. each task alone: its exact optimum bounds its rate in any joint plan
        solo = [
            self._single(sc, g, SINGLE, clock, cancel, None if warm is None else warm[i])
            for i, g in enumerate(graphs)
        ]
        timed_out = any(o.timed_out for o in solo)
        hints = {g.task: o.flows[0] for g, o in zip(graphs, solo, strict=True)}
        upper = [o.bound if o.bound is not None else math.inf for o in solo]
        bound_valid = all(math.isfinite(u) for u in upper)
        finite = [u if math.isfinite(u) else o.objective * 1e3 for u, o in zip(upper, solo, strict=True)]
        # 2. the rate bound and the direction reaching it
        bound, rho = rate_bound(sc, graphs, objective, finite)
        best: Outcome | None = None
        for flows in ([warm] if warm is not None else []) + [[o.flows[0] for o in solo]]:
            rates = self._route_rates(sc, graphs, flows, objective)
            obj = objective.value(rates)
            if best is None or obj > best.objective:
                best = Outcome(flows, rates, obj, None)
        assert best is not None

        def closed() -> bool:
            return bound_valid and best.objective >= bound * (1 - gap) - REL

        # 3. the common level theta along a direction rho (rates theta * rho): candidates where a
        #    resource is exactly full, then a few bisection steps between them. With one task per
        #    job and the MJMT objective (Eq. 3) the direction rho_i = L / beta_i makes theta the
        #    max-min term itself, so the first refuted level also bounds that term.
        maxmin = objective.kind == "MJMT" and len(set(objective.job_of)) == len(objective.job_of)
        if maxmin:
            level = min(objective.weights[objective.job_of[i]] * finite[i] for i in range(len(graphs)))
            rho = np.array([level / objective.weights[objective.job_of[i]] for i in range(len(graphs))])
        if not closed() and bound > 0 and rho.max() > 0:
            rho_l = [float(r) for r in rho]
            cands, complete = direction_candidates(sc, graphs, rho_l)

            def check(theta: float) -> tuple[str, list[Flows] | None]:
                return self._feasible(sc, graphs, [theta * r for r in rho_l], clock, cancel, hints=hints)

            def value(flows: list[Flows]) -> float:
                nonlocal best
                plan = self._plan_from(sc, graphs, flows, objective)
                rates = [tp.rate for tp in plan.tasks]
                obj = objective.value(rates)
                if obj > best.objective:
                    best = Outcome(flows, rates, obj, None)
                return direction_max(sc, plan, {(g.task.job, g.task.ps): w for g, w in zip(graphs, rho_l, strict=True)})

            start = min(r / w for r, w in zip(best.rates, rho_l, strict=True) if w > 0)
            found = _search(cands, start, check, value, clock, stop=closed,
                            refine=0 if complete else 3, tol=max(gap, 1e-3))
            timed_out |= found.timed_out
            if maxmin and math.isfinite(found.refuted) and bound_valid:
                top = max((c for c in cands if c < found.refuted * (1 - 1e-12)), default=0.0) if complete \
                    else found.refuted
                weighted = sum(objective.weights[objective.job_of[i]] * finite[i] for i in range(len(graphs)))
                bound = min(bound, max(top, found.lo) * level + MU * weighted)
        # 4. refute the next level for jobs with several tasks (see _refute); a corner that turns
        #    out feasible is a better plan, and the next level is tried from there
        for _ in range(8):
            if closed() or not bound_valid or maxmin or clock.left() <= 0:
                break
            level_now = _main_term(objective, best.rates)
            target = level_now * (1 + max(gap, 1e-4))
            verdict, flows = self._refute(sc, graphs, objective, finite, target, clock, cancel)
            timed_out |= verdict == "unknown"
            if verdict == "refuted":
                extra = 0.0
                if objective.kind == "MJMT":
                    extra = MU * sum(objective.weights[objective.job_of[i]] * finite[i] for i in range(len(graphs)))
                bound = min(bound, target + extra)
                break
            if flows is None:
                break
            rates = self._route_rates(sc, graphs, flows, objective)
            if _main_term(objective, rates) <= level_now * (1 + 1e-9):
                break  # no progress
            best = Outcome(flows, rates, objective.value(rates), None)
        # 5. the exact joint model, on models small enough to pay off (or when asked)
        mode = params["exact"]
        size = sum(len(g.edges) for g in graphs)
        if (mode == "always" or (mode == "auto" and not closed() and size <= EXACT_AUTO_MAX_EDGES)) \
                and clock.left() > 0.2:
            cancel.check()
            em = exact_model(sc, graphs, objective, finite, qsr=bool(params["qsr"]), levels=int(params["qsr_levels"]))
            start = exact_start(em, best.flows, best.rates, objective)
            res = em.milp.solve(time_limit=clock.left(), cancel=cancel, gap=gap, start=start)
            timed_out |= res.status == "timeout"
            if res.values is not None:
                f = [block_flows(b, res.values) for b in em.blocks]
                rates = self._route_rates(sc, graphs, f, objective)
                obj = objective.value(rates)
                if obj > best.objective:
                    best = Outcome(f, rates, obj, None)
            if res.bound is not None and bound_valid:
                # the QSR model rounds rates down to levels: add one level per task back
                slack = em.delta * _level_slack(objective) if em.qsr else 0.0
                bound = min(bound, res.bound + slack)
        best.bound = bound if bound_valid else None
        best.timed_out = timed_out
        return best

    def _refute(
        self,
        sc: Scenario,
        graphs: list[TaskGraph],
        objective: Objective,
        upper: list[float],
        level: float,
        clock: _Clock,
        cancel: CancelToken,
    ) -> tuple[str, list[Flows] | None]:
        """Prove that no plan reaches ``level`` in the main term (the job throughput for SJMT,
        min_s beta_s T_s for MJMT): ('refuted', None), ('feasible', flows) or ('unknown', None).

        A plan reaching it gives each job s a throughput of at least T = level / beta_s, so one of
        its m tasks sends at least T / m and every task j at least T minus the single-task bounds
        of the job's other tasks. Plans are downward closed, so the plan is feasible at one
        of those corner rate vectors (one per choice of the large task in each job); when every
        corner is infeasible, no plan reaches the level. Up to 64 corners are tried."""
        per_job: dict[int, list[int]] = {}
        for i, s in enumerate(objective.job_of):
            per_job.setdefault(s, []).append(i)
        choices = []
        for s, tasks in per_job.items():
            need = level / objective.weights[s] if objective.kind == "MJMT" else level
            opts = []
            for big in tasks:
                corner = {}
                for j in tasks:
                    rest = sum(upper[k] for k in tasks if k != j)
                    corner[j] = max(need - rest, need / len(tasks) if j == big else 0.0)
                if corner not in opts:
                    opts.append(corner)
            choices.append(opts)
        if math.prod(len(c) for c in choices) > 64:
            return "unknown", None
        refuted_one = False
        for combo in itertools.product(*choices):
            rates = [0.0] * len(graphs)
            for corner in combo:
                for j, r in corner.items():
                    rates[j] = r
            if any(r > u * (1 + 1e-9) for r, u in zip(rates, upper, strict=True)):
                continue  # a task above its own optimum: infeasible already
            # once a corner is refuted the others are expected to be too: no greedy attempts
            status, flows = self._feasible(sc, graphs, rates, clock, cancel, heuristics=False,
                                           greedy=not refuted_one)
            if status == "feasible":
                return "feasible", flows
            if status != "infeasible":
                return "unknown", None
            refuted_one = True
        return "refuted", None

    def _single(
        self,
        sc: Scenario,
        g: TaskGraph,
        objective: Objective,
        clock: _Clock,
        cancel: CancelToken,
        warm: Flows | None,
    ) -> Outcome:
        """Exact single-task optimum (Eq. 1). The best rate fills some resource exactly, so it is
        b / k for a resource of bandwidth b and a flow count k: a search over those candidates
        with one feasibility MILP each finds it, and the next candidate's infeasibility proves it."""
        cands = rate_candidates(sc, g)
        top = structural_bound(sc, g)
        if len(g.edges) <= LP_BOUND_MAX_EDGES:
            top = min(top, self._lp_bound(sc, g))
        cands = [c for c in cands if c <= top * (1 + 1e-9)] or cands[:1]
        state: dict[str, Any] = {"flows": warm, "rate": 0.0}
        if warm is not None:
            state["rate"] = self._route_rates(sc, [g], [warm], objective)[0]

        def check(rate: float) -> tuple[str, list[Flows] | None]:
            return self._feasible(sc, [g], [rate], clock, cancel)

        def value(flows: list[Flows]) -> float:
            rate = self._route_rates(sc, [g], flows, objective)[0]
            if state["flows"] is None or rate > state["rate"]:
                state["flows"], state["rate"] = flows[0], rate
            return rate

        found = _search(cands, state["rate"], check, value, clock)
        if state["flows"] is None:
            raise PlanError(f"task {g.task}: no plan found within the time limit")
        lo = state["rate"]
        # the optimum is a candidate below the smallest refuted one, and at least lo
        bound = max(lo, max((c for c in cands if c < found.refuted * (1 - 1e-12)), default=0.0))
        return Outcome([state["flows"]], [lo], lo, bound, found.timed_out)

    def _lp_bound(self, sc: Scenario, g: TaskGraph) -> float:
        """Upper bound on the single-task rate: the LP relaxation of the u = 1/r model."""
        m, _, u = ratio_model(sc, [g], [1.0])
        res = m.solve(relax=True)
        if res.objective is None or res.objective <= 0:
            return math.inf
        return 1.0 / res.objective

    def _feasible(
        self, sc: Scenario, graphs: list[TaskGraph], rates: list[float], clock: _Clock, cancel: CancelToken,
        heuristics: bool = True,
        greedy: bool = True,
        hints: dict | None = None,
    ) -> tuple[str, list[Flows] | None]:
        """('feasible'|'infeasible'|'timeout', flows) for fixed task rates. First the greedy
        (:mod:`greedy`), then, with several tasks, task after task in what the others left (the
        greedy, else a single-task MILP), and last the joint MILP, the only one that can answer
        'infeasible'. Plans not from the joint MILP are checked by the evaluator at those rates.
        ``heuristics=False`` (checks expected to fail) skips the task-after-task step,
        ``greedy=False`` the greedy as well."""
        cancel.check()
        quick = greedy_flows(sc, graphs, rates, cancel) if greedy else None
        if quick is not None and self._holds(sc, graphs, quick, rates):
            return "feasible", quick
        cancel.check()
        m, blocks = feasibility_model(sc, graphs, rates)
        # one check may not take the whole budget: an undecided level leaves lower ones to try
        budget = _Clock(min(clock.left(), max(CHECK_MIN_SECONDS, CHECK_SHARE * clock.left())))
        # the LP relaxation settles most infeasible checks; on large models it costs seconds, so
        # there the task-after-task heuristic goes first
        lp_first = m.n_cols <= LP_FIRST_MAX_COLS
        if lp_first and _relaxation_infeasible(m, budget, cancel):
            return "infeasible", None
        if len(graphs) > 1 and heuristics:
            seq = self._one_by_one(sc, graphs, rates, budget, cancel, hints or {})
            if seq is not None and self._holds(sc, graphs, seq, rates):
                return "feasible", seq
        if not lp_first and _relaxation_infeasible(m, budget, cancel):
            return "infeasible", None
        status, values = _decide(m, budget.left(), cancel, lp_first=False)
        if values is None:
            return status, None
        return "feasible", [block_flows(b, values) for b in blocks]

    def _one_by_one(
        self, sc: Scenario, graphs: list[TaskGraph], rates: list[float], clock: _Clock, cancel: CancelToken,
        hints: dict,
    ) -> list[Flows] | None:
        """Tasks routed one after the other in the bandwidth the earlier ones left: the greedy,
        else a single-task MILP fed through each admissible set of the PS leaf's pipelines (the
        ones behind the most programmable switches earlier tasks left room to reach first). A
        task that cannot be placed moves to the front and all are placed again (once per task)."""
        order = list(range(len(graphs)))
        budget = _Clock(0.8 * clock.left())
        for _attempt in range(len(graphs)):
            left: dict[Resource, float] = {}
            out: dict[int, Flows] = {}
            for i in order:
                f = self._place(sc, graphs[i], rates[i], left, budget, cancel, hints.get(graphs[i].task))
                if f is None:
                    break
                out[i] = f
            else:
                return [out[i] for i in range(len(graphs))]
            if budget.left() <= 0:
                return None
            order = [i] + [j for j in order if j != i]
        return None

    def _place(
        self, sc: Scenario, g: TaskGraph, r: float, left: dict[Resource, float], budget: _Clock, cancel: CancelToken,
        hint: Flows | None = None,
    ) -> Flows | None:
        """One task at rate r in what ``left`` says remains; updates ``left`` on success. Tries
        ``hint`` (the task's own single-task plan) first, then the greedy, then MILPs."""
        cancel.check()
        if hint is not None and _take(sc, g, hint, r, left):
            return hint
        f = route_one(sc, g, r, left, cancel)
        if f is not None:
            return f
        for blocked in itertools.islice(last_hop_options(sc, g, r, left), 4):
            if budget.left() <= 0:
                return None
            closed = {("link", u, v): 0.0 for u, v in blocked}
            m, blocks = feasibility_model(sc, [g], [r], {**left, **closed})
            _, values = _decide(m, budget.left(), cancel)
            if values is None:
                continue
            f = block_flows(blocks[0], values)
            _take(sc, g, f, r, left, force=True)
            return f
        return None

    def _holds(self, sc: Scenario, graphs: list[TaskGraph], flows: list[Flows], rates: list[float]) -> bool:
        """The evaluator's verdict on these flows at these rates (other tasks absent, rate 0)."""
        mine = {g.task: (g, f, r) for g, f, r in zip(graphs, flows, rates, strict=True)}
        plan = Plan("", PlannerInfo(self.name), [
            TaskPlan(t.job, t.ps, mine[t][2], generate_routes(mine[t][0], mine[t][1]))
            if t in mine else TaskPlan(t.job, t.ps, 0.0, [])
            for t in sc.tasks()
        ])
        return evaluate(sc, plan).feasible


SINGLE = Objective("SJST", [0], [1.0])

#: The LP relaxation of the u = 1/r model bounds a single task's rate; on large graphs it costs
#: seconds and is weak, so only :func:`structural_bound` is used there.
LP_BOUND_MAX_EDGES = 2000
#: A feasibility MILP gets at most this share of the remaining time (and at least this many s).
CHECK_SHARE = 0.5
#: Feasibility models up to this many columns get their LP relaxation solved first.
LP_FIRST_MAX_COLS = 10000
CHECK_MIN_SECONDS = 3.0

#: ``exact=auto`` runs the exact joint model only below this many unfolded edges in total: on
#: larger models its LP relaxation is too weak for HiGHS to close anything in seconds.
EXACT_AUTO_MAX_EDGES = 1500


@dataclass
class _Found:
    lo: float  # best value reached
    refuted: float  # smallest candidate proven infeasible (inf if none)
    timed_out: bool


def _search(
    cands: list[float],
    lo: float,
    check,  # noqa: ANN001 - (value) -> (status, flows)
    value,  # noqa: ANN001 - (flows) -> value reached by those flows (>= the value checked)
    clock: _Clock,
    *,
    stop=None,  # noqa: ANN001 - () -> bool: the caller is satisfied
    refine: int = 0,
    tol: float = 1e-4,
) -> _Found:
    """Largest feasible value among sorted ``cands`` given a monotone feasibility ``check``.

    Probes the 1st, 2nd, 3rd, 5th, 9th ... highest remaining candidate until one is feasible
    (infeasible checks near the top end at the root node), then bisects. A feasible check yields a
    plan whose own value may jump past several candidates. ``refine`` extra bisection steps then
    narrow a remaining interval between lo and the refuted value (for non-candidate optima)."""
    refuted = math.inf
    undecided = math.inf
    timed_out = False
    descending, probes = True, 0
    while not (stop and stop()):
        options = [c for c in cands if c > lo * (1 + 1e-9) and c < min(refuted, undecided) * (1 - 1e-12)]
        if not options or clock.left() <= 0:
            break
        if descending:  # the refuted top drops out, so offsets 1, 1, 2, 4 ... walk 1st, 2nd, 3rd, 5th ...
            mid = options[max(len(options) - max(1, 2 ** (probes - 1)), 0)]
            probes += 1
        else:
            mid = options[len(options) // 2]
        status, flows = check(mid)
        if flows is not None:
            descending = False
            got = value(flows)
            if got >= mid * (1 - 1e-6):
                lo = max(lo, got, mid)
            else:  # never expected (solver tolerance): do not loop on this candidate
                lo = max(lo, got)
                undecided = min(undecided, mid)
                timed_out = True
        elif status == "infeasible":
            refuted = mid
        else:
            timed_out = True
            undecided = mid
    top = min(refuted, undecided)
    while refine > 0 and math.isfinite(top) and top - lo > tol * top and clock.left() > 0 and not (stop and stop()):
        refine -= 1
        mid = 0.5 * (lo + top)
        status, flows = check(mid)
        if flows is not None:
            got = value(flows)
            lo = max(lo, got, mid if got >= mid * (1 - 1e-6) else lo)
            if got < mid * (1 - 1e-6):
                top = mid
        else:
            top = mid
            timed_out |= status != "infeasible"
    return _Found(lo, refuted, timed_out or clock.left() <= 0)


def rate_candidates(sc: Scenario, g: TaskGraph) -> list[float]:
    """Every rate at which a resource of the task is exactly full: b / k, k = 1 .. most flows."""
    counts: dict[Resource, int] = {}
    for k, e in enumerate(g.edges):
        for res in e.resources:
            counts[res] = counts.get(res, 0) + g.ub[k]
    out: set[float] = set()
    for res, most in counts.items():
        cap = resource_capacity(sc, res)
        if cap <= 0:
            continue
        out.update(cap / k for k in range(1, most + 1))
    return _dedupe(sorted(out))


def direction_candidates(sc: Scenario, graphs: list[TaskGraph], rho: list[float]) -> tuple[list[float], bool]:
    """Values of theta <= 1 at which a resource is exactly full when task i sends theta * rho_i.

    Complete (every possible optimum along rho is listed) when the tasks sharing each resource
    have equal rho; otherwise only the values where one task fills a resource alone are listed
    (``False`` is returned and the caller bisects between them)."""
    counts: dict[Resource, dict[int, int]] = {}
    for i, g in enumerate(graphs):
        for k, e in enumerate(g.edges):
            for res in e.resources:
                per = counts.setdefault(res, {})
                per[i] = per.get(i, 0) + g.ub[k]
    out: set[float] = {1.0}
    complete = True
    for res, per in counts.items():
        cap = resource_capacity(sc, res)
        if cap <= 0:
            continue
        weights = {rho[i] for i in per if rho[i] > 0}
        if len(weights) == 1:
            (w,) = weights
            total = sum(per.values())
            out.update(cap / (w * k) for k in range(max(1, math.floor(cap / w)), total + 1))
        else:
            complete = False
            for i, most in per.items():
                if rho[i] > 0:
                    out.update(cap / (rho[i] * k) for k in range(max(1, math.floor(cap / rho[i])), most + 1))
    return _dedupe(sorted(c for c in out if c <= 1.0 + 1e-9)), complete


def _dedupe(values: list[float]) -> list[float]:
    """Sorted values with near-equal neighbours (relative 1e-9) merged, keeping the larger."""
    out: list[float] = []
    for v in values:
        if out and v <= out[-1] * (1 + 1e-9):
            out[-1] = max(out[-1], v)
        else:
            out.append(v)
    return out


def _take(sc: Scenario, g: TaskGraph, f: Flows, r: float, left: dict[Resource, float], force: bool = False) -> bool:
    """Subtract what flows ``f`` at rate r use from ``left`` if it fits (or ``force``)."""
    index = {g.edge_key(k): k for k in range(len(g.edges))}
    use: dict[Resource, float] = {}
    for key, y in f.y.items():
        k = index.get(key)
        if k is None:
            return False  # flows of another graph
        for res in g.edges[k].resources:
            use[res] = use.get(res, 0.0) + y * r
    room = {res: left.get(res, resource_capacity(sc, res)) for res in use}
    if not force and any(use[res] > room[res] * (1 + 1e-12) + 1e-9 for res in use):
        return False
    for res, u in use.items():
        left[res] = room[res] - u
    return True


def _relaxation_infeasible(m: Milp, clock: _Clock, cancel: CancelToken) -> bool:
    """True when the LP relaxation is infeasible (then so is the MILP). Interior point: on these
    models it proves infeasibility in a fraction of the simplex time. Presolve off: HiGHS'
    presolve cannot be interrupted (cancel must act within a second)."""
    lp = m.solve(time_limit=max(clock.left(), 0.05), cancel=cancel, presolve=False, relax=True, ipm=True)
    return lp.status == "infeasible"


def _decide(m: Milp, limit: float, cancel: CancelToken, lp_first: bool = True):  # noqa: ANN202
    """(status, values | None) of a feasibility MILP: optionally its LP relaxation first, then the
    MILP with presolve off (it cannot be interrupted and on these models costs more than it
    saves, benchmarks/bench_aro.py)."""
    clock = _Clock(limit)
    if lp_first and _relaxation_infeasible(m, clock, cancel):
        return "infeasible", None
    res = m.solve(time_limit=max(clock.left(), 0.05), cancel=cancel, presolve=False)
    if res.values is None:
        return ("infeasible" if res.status == "infeasible" else "timeout"), None
    return "feasible", res.values


def _main_term(objective: Objective, rates: list[float]) -> float:
    """SJST/SJMT: the job's throughput; MJMT: min over jobs of beta_s T_s (Eq. 3 without mu)."""
    thr = [0.0] * len(objective.weights)
    for i, r in enumerate(rates):
        thr[objective.job_of[i]] += r
    if objective.kind != "MJMT":
        return float(sum(thr))
    return float(min(w * t for w, t in zip(objective.weights, thr, strict=True)))


def _level_slack(objective: Objective) -> float:
    """How much the objective can grow when every task's rate grows by one QSR level."""
    count = [0] * len(objective.weights)
    for s in objective.job_of:
        count[s] += 1
    if objective.kind != "MJMT":
        return float(sum(count))
    weighted = [w * c for w, c in zip(objective.weights, count, strict=True)]
    return float(max(weighted) + 0.001 * sum(weighted))
