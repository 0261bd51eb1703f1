"""The ARO planner: graphs, accelerations, solving, routes, rates (ARO sections III-A to III-D).

The paper's model (Eqs. 4-10) is bilinear in the flow counts y and the rates r. With the rates
fixed it is a linear feasibility MILP (:func:`feasibility_model`) whose integer flow bounds make
its LP relaxation tight; everything below is built from that question, "can task i send at r_i?",
answered first by a greedy (:mod:`greedy`), then by HiGHS. Where the relaxation admits a check,
the pipelines next to each PS are probed before the MILP (:mod:`probing`): on the paper's
scaling setting a crowded PS link leaves room for only some of its switch's pipelines, which the
relaxation spreads over all of them; fixing off those no plan can use refutes checks HiGHS takes
minutes over. A check left undecided leads with that refutation side when it comes again.

* One task (SJST, Eq. 1): the best rate fills some resource exactly, so it is b / k for a
  bandwidth b and a flow count k. Those candidates are searched from the top (probes 1st, 2nd,
  3rd, 5th ... highest, then bisection); the first infeasible candidate above the best plan proves
  it optimal — the exact optimum of the paper's model, no quantisation needed.
* Several tasks (SJMT Eq. 2, MJMT Eq. 3):

  1. every task alone: its exact optimum bounds its rate in any joint plan. A task whose next
     rate is left undecided is searched again with the time left only where its bound counts
     (:meth:`AroPlanner._settle_alone`);
  2. :func:`rate_bound`: the best objective those limits and the links every plan loads
     (workers' access links shared by a job's tasks) allow, and a balanced rate vector reaching
     it — the direction rho. Where a task's own optimum is not proven, rho is the balanced
     vector reaching the best objective of what each task reached alone instead: a bound no plan
     reached would aim the search at rates no check settles;
  3. the common level theta along rho (rates theta * rho), searched over the values where a
     resource is exactly full. With one task per job under MJMT, rho_i = L / beta_i makes theta
     the max-min term itself and the first refuted level bounds it;
  4. if a gap remains on a small model (or ``exact=always``), the exact joint model of
     :func:`exact_model` (QSR levels with exact products, or continuous rates when QSR is off),
     started from the best plan, improves it and tightens the bound with HiGHS' dual bound.

Before step 3, jobs with several tasks try the corner points of what the tasks reached alone
(:func:`corner_points`, :meth:`AroPlanner._corners`: per job every task at its own optimum, or one
there and the others one rate class below), routed task after task with a large-neighbourhood
repair (:meth:`AroPlanner._repair`: a task that does not fit is routed jointly with one or two
placed tasks in what the rest leave). On fat-tree k=16 with 200 workers per job that finds
(33.3, 25, 33.3, 25), 58.3 per job, where every joint check HiGHS is given stays undecided. The top
corner goes first, in slots growing from 3 s while its tasks fit (:meth:`AroPlanner._top_corner`).

Step 4 for several tasks per job (:meth:`AroPlanner._cover`): a level of the main term is refuted
by covering each job's simplex of rate splits with boxes whose least point is infeasible (downward
closedness); levels are bisected between the best plan and the bound, high ones first (few boxes),
and every feasible box point is a plan (on fat-tree k=8 it found the uneven splits that beat every
even one). A box point left undecided is not checked again with as little time. On large models (at
least ``NEGOTIATE_MIN_COLS`` columns) a last pass then refutes levels just below the bound, its
covers splitting the boxes of points left undecided instead of stopping on them (``split_open``;
fat-tree k=16 with 500 workers per job, seed 1: 41.77 -> 40.41-40.55), and the undecided rate
vectors that would beat the best plan are routed by negotiated congestion (:mod:`negotiate`,
:meth:`AroPlanner._negotiate`) with the rest of that stretch of time, where every check had started
HiGHS afresh with a few seconds. Then, with the time left, the climb (:meth:`AroPlanner._climb`)
raises one task's rate at a time from the best plan, the job furthest behind first, keeping the
other tasks' routes (placing the raised task in what they leave, else the repair move, whose
moves may each take all of the time left on small models): on fat-tree k=8 and k=16 it finds
plans between the best one and levels the refutation left undecided, which that bisection never
checks. A plan better than the one the refutation stopped at lets a second pass of it go on
(:meth:`AroPlanner._refute`): the undecided points that stopped it, mostly plans, no longer beat
the best plan, so they are not checked (fat-tree k=8 seed 2: the bound 53.46 -> 51.79 after the
climb's 50.1). On small models, before that pass, the undecided point worth most is checked again
with half the time left (:meth:`AroPlanner._recheck`). With several tasks per job the search of
step 3 yields plans only, so it gets at most half the time left and does not retry an undecided
level; on large models each of its checks gets an eighth of that, and the rate vectors it
leaves undecided are negotiated right after it, before the refutation, with half the time left
(fat-tree k=16 with 200 workers per job, seed 2: after the refutation, negotiation had too little
time left for (25, 25, 25, 25) in 4 of 9 runs). The exact joint model of step 5 runs only on small
models.

At scale (issue 13): the run's clock (:class:`_Clock`, wall or CPU per ``limit_kind``) bounds every
phase: graph and model building, the greedy and the heuristics check it through
:class:`_RunToken`, HiGHS is stopped from its callback. The ``random`` baseline (ATP-style, the
paper's RANDOM) runs first whatever the limit, then ARO's own greedy and ``aggtree`` while time
allows; the best of them is the first incumbent and the floor of the plan returned. The best plan
and the best proven bound so far (:class:`_Record`: a worker-link LP before any graph, the
structural bound, single-task optima, refuted levels, HiGHS' dual bound) are reported through
``progress.update(phase=, incumbent=, bound=)`` and survive a time-out in any phase.

Routes come from the flow counts by Algorithm 1; rates for the routes from the evaluator's
constraint matrix (an LP for the scenario's objective). The plan's ``bound`` is an upper bound on
the optimum over ARO's candidate paths, given only when SRO/APP removed nothing (a pruned model
proves nothing about the full one); ``status`` is ``optimal`` when the bound is reached within
``gap``, ``timeout`` when a time limit cut a step short, else ``feasible``.
"""

from __future__ import annotations

import bisect
import itertools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from inaplanner.errors import Cancelled, PlanError
from inaplanner.evaluate import evaluate
from inaplanner.model import Plan, PlannerInfo, Scenario, TaskPlan
from inaplanner.planners.aro.accel import app_prune, rebuild, sro_stage1, sro_unused
from inaplanner.planners.aro.certificates import WARM_MAX_NNZ, Relaxations
from inaplanner.planners.aro.classes import Refuted, lifted, refuted_floor, same_point
from inaplanner.planners.aro.formulation import (
    MU,
    Flows,
    Objective,
    TaskBlock,
    block_flows,
    exact_model,
    exact_start,
    feasibility_columns,
    feasibility_model,
    objective_for,
    ratio_model,
    resource_usage,
)
from inaplanner.planners.aro.graph import Resource, TaskGraph, resource_capacity, task_graphs
from inaplanner.planners.aro.greedy import (
    TaskIndex,
    greedy_flows,
    last_hop_options,
    plan_links,
    route_one,
)
from inaplanner.planners.aro.milp import Milp, MilpResult
from inaplanner.planners.aro.negotiate import Solve, negotiate, usage
from inaplanner.planners.aro.probing import fix_known, probe_check
from inaplanner.planners.aro.rates import (
    _objective_lp,
    best_rates,
    direction_max,
    rate_bound,
    structural_bound,
)
from inaplanner.planners.aro.routes import flows_from_routes, generate_routes
from inaplanner.planners.base import Param, Progress
from inaplanner.planners.deadline import Deadline
from inaplanner.planners.solver import CancelToken, solver_name
from inaplanner.progress import as_progress, current_progress

REL = 1e-9


@dataclass
class Outcome:
    """Best joint solution found on a set of graphs."""

    flows: list[Flows]
    rates: list[float]
    objective: float
    bound: float | None
    timed_out: bool = False


@dataclass
class _Levels:
    """The level refutation's state, kept across its passes (:meth:`AroPlanner._refute`): the
    lowest level of the main term refuted so far, the objective's part beyond the main term
    (MJMT's mu term at the tasks' own optima, so ``hi + extra`` is the bound), the bandwidths
    of the network, and the rate vectors known feasible, infeasible and undecided (``memo``;
    ``memo["stopped"]``: the point the last cover stopped on, if one did)."""

    hi: float
    extra: float
    bands: set[float]
    memo: dict[str, list] = field(default_factory=dict)
    refuted: Refuted | None = None  # what the refuted points refute (module ``classes``)


class _Clock:
    """Seconds left of a budget on the run's clock (wall or CPU seconds, per ``limit_kind``), never
    more than what its parent budget has left: every phase asks one of these (issue 13 item 2)."""

    def __init__(self, limit: float, kind: str = "wall", parent: _Clock | None = None) -> None:
        self.kind = kind
        self._now = time.process_time if kind == "cpu" else time.perf_counter
        self.end = self._now() + max(limit, 0.0)
        self.parent = parent
        # when the run's clock started, on both clocks (for the CPU share it has had)
        self._born = parent._born if parent is not None else (time.perf_counter(), time.process_time())

    @classmethod
    def of(cls, deadline: Deadline) -> _Clock:
        return cls(math.inf if deadline.seconds is None else deadline.remaining(), deadline.kind)

    def left(self) -> float:
        own = max(self.end - self._now(), 0.0)
        return min(own, self.parent.left()) if self.parent is not None else own

    def sub(self, limit: float) -> _Clock:
        """A child budget of at most ``limit`` seconds."""
        return _Clock(min(limit, self.left()), self.kind, self)

    def expired(self) -> bool:
        return self.left() <= 0.0

    def cpu_share(self) -> float:
        """CPU seconds per wall second this run has had so far, in [0.05, 1] (1 in its first
        second: too little to tell)."""
        wall = time.perf_counter() - self._born[0]
        if wall < 1.0:
            return 1.0
        return min(max((time.process_time() - self._born[1]) / wall, 0.05), 1.0)


class _ExactReport:
    """What HiGHS' MIP callback reports while the exact joint model runs, in the plan's terms:
    the QSR model's dual bound plus its level slack, and never an incumbent below the best plan
    already found (HiGHS' incumbents are QSR-rounded)."""

    def __init__(self, progress: Progress | None, rec: _Record, slack: float) -> None:
        self.progress, self.rec, self.slack = progress, rec, slack

    def update(self, *args: Any, incumbent: float | None = None, bound: float | None = None,
               **kw: Any) -> None:
        if self.progress is None:
            return
        if incumbent is not None:
            incumbent = max(incumbent, self.rec.objective)
        if bound is not None:
            bound = bound + self.slack
            if self.rec.bound is not None:
                bound = min(bound, self.rec.bound)
        self.progress.update(*args, incumbent=incumbent, bound=bound, **kw)


class _GreedyWarm:
    """ARO's own greedy (:mod:`greedy`) as a heuristic plan: flows routed one by one at a rate
    vector along the structural bound's balanced direction (halved until the greedy succeeds),
    then the rates the routes allow. Within every rule by construction (fan-in included)."""

    def __init__(self, graphs: list[TaskGraph], objective: Objective) -> None:
        self.graphs, self.objective = graphs, objective

    def plan(self, sc: Scenario, params: dict[str, Any], progress: Progress, cancel: CancelToken) -> Plan | None:
        struct = [structural_bound(sc, g) for g in self.graphs]
        if not all(math.isfinite(b) for b in struct):
            return None
        rho = struct if len(self.graphs) == 1 else list(rate_bound(sc, self.graphs, self.objective, struct)[1])
        for scale in (0.5, 0.125, 1e-6):
            flows = greedy_flows(sc, self.graphs, [max(r, 1e-9) * scale for r in rho], cancel)
            if flows is not None:
                tps = [TaskPlan(g.task.job, g.task.ps, 0.0, generate_routes(g, f))
                       for g, f in zip(self.graphs, flows, strict=True)]
                return Plan("", PlannerInfo("aro-greedy"), tps)
        return None


def clock_left(token: CancelToken) -> float:
    return token.clock.left() if isinstance(token, _RunToken) else math.inf


class _TimeUp(Cancelled):
    """The run's time limit ran out (raised by :class:`_RunToken`; ``plan`` returns the best plan)."""


class _RunToken(CancelToken):
    """The user's cancel token that also fires when the run's clock runs out, so every
    ``check()`` of graph and model building, the greedy and the warm-start baselines honours the
    limit. HiGHS gets the user's token and the clock as ``stop`` instead (its result is kept)."""

    def __init__(self, user: CancelToken, clock: _Clock) -> None:
        super().__init__()
        self.user = user
        self.clock = clock

    @property
    def cancelled(self) -> bool:  # type: ignore[override]
        return self.user.cancelled or self.clock.expired()

    def __call__(self) -> bool:
        return self.cancelled

    def cancel(self) -> None:
        self.user.cancel()

    def check(self) -> None:
        self.user.check()
        if self.clock.expired():
            raise _TimeUp("time limit")


def _milp_kw(clock: _Clock, cancel: CancelToken) -> dict[str, Any]:
    """``time_limit``/``cancel``/``stop`` for :meth:`Milp.solve`. With a CPU limit HiGHS is
    stopped from its callback when the CPU budget runs out; its own limit is wall-clock, so it
    gets the CPU seconds left (plus half a second) at the CPU share the run has had so far. That
    cap is a backstop: HiGHS' root heuristics can run for many seconds without calling back
    (fat-tree k=16 with 200 workers per job, seed 0: 18.8 s, a 15.8 s overrun of a 120 s limit),
    but they do watch HiGHS' own limit; at a steady load the callback stops it first."""
    user = cancel.user if isinstance(cancel, _RunToken) else cancel
    if clock.kind != "wall":
        left = clock.left()
        cap = (left + 0.5) / clock.cpu_share() if math.isfinite(left) else None
        return {"time_limit": None if cap is None else min(cap, 1e7), "cancel": user, "stop": clock.expired}
    return {"time_limit": max(min(clock.left(), 1e7), 0.05), "cancel": user, "stop": clock.expired}


class _Record:
    """The best joint plan found so far and the best proven bound, reported as they improve."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.flows: list[Flows] | None = None
        self.rates: list[float] | None = None
        self.objective = -math.inf
        self.bound: float | None = None
        self.phase = ""

    def offer(self, flows: list[Flows], rates: list[float], objective: float) -> None:
        if objective > self.objective + 1e-12:
            self.flows, self.rates, self.objective = flows, rates, objective
            self.progress.update(phase=self.phase or None, incumbent=objective)

    def tighten(self, bound: float | None) -> None:
        if bound is not None and math.isfinite(bound) and (self.bound is None or bound < self.bound):
            self.bound = bound
            self.progress.update(phase=self.phase or None, bound=bound)

    def enter(self, phase: str, fraction: float | None = None, message: str | None = None) -> None:
        self.phase = phase
        self.progress.update(fraction, message, phase=phase)

    def stage(self) -> _Record:
        """A view for solves on pruned graphs (SRO, APP): their plans count, their bounds do not."""
        return _Stage(self)


class _Stage(_Record):
    bound = None  # a pruned model proves nothing about the full one

    def __init__(self, parent: _Record) -> None:  # noqa: D107 - shares the parent's state
        self.parent = parent

    @property
    def objective(self) -> float:  # type: ignore[override]
        return self.parent.objective

    @property
    def flows(self) -> list[Flows] | None:  # type: ignore[override]
        return self.parent.flows

    @property
    def rates(self) -> list[float] | None:  # type: ignore[override]
        return self.parent.rates

    def offer(self, flows: list[Flows], rates: list[float], objective: float) -> None:
        self.parent.offer(flows, rates, objective)

    def tighten(self, bound: float | None) -> None:
        pass

    def enter(self, phase: str, fraction: float | None = None, message: str | None = None) -> None:
        self.parent.enter(phase, fraction, message)


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
        """The best plan found within the limit (issue 13): the best heuristic plan is the first
        incumbent, every phase asks the run's clock, and the plan returned is never worse than it."""
        sc = scenario
        clock = _Clock.of(Deadline.from_params(params))
        token = _RunToken(cancel, clock)
        progress = as_progress(progress, cancel)
        rec = _Record(progress)
        tasks = sc.tasks()
        objective = objective_for(sc, tasks)
        full: list[TaskGraph] = []
        pruned = timed_out = False
        warm_plan: Plan | None = None
        try:
            rec.enter("warm start", 0.0, "random baseline")
            rec.tighten(_trivial_bound(sc, tasks, objective))
            from inaplanner.planners.aro_baselines import AggTreePlanner, RandomPlanner
            from inaplanner.planners.routing import task_dags

            # the fallback plan: the fast ATP-style baseline runs to its end whatever the limit
            # (a second at k=24), so a plan exists whenever a heuristic one does. Each task's DAG
            # is made once, for it, the graphs and AggTree (0.13 s a task at fat-tree k=64).
            dags = task_dags(sc, tasks, cancel.check)
            warm_plan = self._better(sc, objective, params, cancel, None, RandomPlanner(dags))
            rec.enter("graphs", 0.02, "building the unfolded graphs")
            full = task_graphs(sc, tasks, check=token.check, dags=dags)
            rec.enter("bound", 0.04, "structural bound")
            rec.tighten(_structural_joint_bound(sc, full, objective))
            rec.enter("warm start", 0.05, "heuristic plans")
            small = sum(len(g.workers) for g in full) <= WARM_ALWAYS_FLOWS
            for heuristic in (_GreedyWarm(full, objective), AggTreePlanner(dags)):
                if warm_plan is not None and clock.left() < WARM_MIN_SECONDS and not small:
                    break
                warm_plan = self._better(sc, objective, params, cancel if small else token, warm_plan, heuristic)
            if warm_plan is not None:
                rec.progress.update(incumbent=float(warm_plan.extra["objective"]))
                flows = [flows_from_routes(sc, g, _routes_of(warm_plan, g)) for g in full]
                if all(f is not None for f in flows):
                    rates = [warm_plan.task_plan(g.task.job, g.task.ps).rate for g in full]  # type: ignore[union-attr]
                    rec.offer(flows, rates, float(warm_plan.extra["objective"]))  # type: ignore[arg-type]
            graphs = full
            if params["app"]:
                token.check()
                drops = app_prune(graphs, float(params["alpha"]))
                new = []
                for g, drop in zip(graphs, drops, strict=True):
                    g2 = rebuild(sc, g, drop)
                    new.append(g2 if g2 is not None else g)
                    pruned |= g2 is not None and g2 is not g
                graphs = new
            warm: list[Flows] | None = rec.flows
            if warm is not None and not all(_fits(g, f) for g, f in zip(graphs, warm, strict=True)):
                warm = None  # the heuristic plan uses aggregators APP pruned
            if params["sro"] and sc.is_tiered():
                rec.enter("SRO", 0.1, "SRO stage 1")
                stage1 = [sro_stage1(sc, g) for g in graphs]
                first = self._solve(sc, stage1, objective, params, clock.sub(clock.left() / 2), token, None,
                                    rec.stage())
                new = []
                for g, g1, f in zip(graphs, stage1, first.flows, strict=True):
                    token.check()
                    drop = sro_unused(g1, f)
                    g2 = rebuild(sc, g, drop)
                    new.append(g2 if g2 is not None else g)
                    pruned |= g2 is not None and g2 is not g
                graphs = new
                warm = first.flows
            rec.enter("solve", 0.4, "solving")
            out = self._solve(sc, graphs, objective, params, clock, token, warm, rec if not pruned else rec.stage())
            timed_out = out.timed_out
        except _TimeUp:
            timed_out = True
        # the final routes, rates and evaluation (outside the limit; cancel still applies)
        cancel.check()
        rec.enter("routes", 0.9, "routes")
        plan: Plan | None = None
        value = -math.inf
        if rec.flows is not None:
            plan = self._plan_from(sc, full, rec.flows, objective)
            ev = evaluate(sc, plan)
            if not ev.feasible:  # never expected: the rates come from the evaluator's own matrix
                raise PlanError("ARO produced an infeasible plan: "
                                + "; ".join(ev.errors + [str(v) for v in ev.violations])[:500])
            value = ev.objective
        if warm_plan is not None and (plan is None or warm_plan.extra["objective"] > value + 1e-12):
            plan, value = warm_plan, float(warm_plan.extra["objective"])
        if plan is None:
            raise PlanError("ARO: no plan found within the time limit and no heuristic plan exists")
        bound = None if pruned else rec.bound
        if bound is not None:
            bound = max(bound, value)
        if bound is not None and value >= bound * (1 - max(float(params["gap"]), 1e-7)) - 1e-9:
            status = "optimal"
        else:
            status = "timeout" if timed_out else "feasible"
        plan.bound = bound
        plan.planner = PlannerInfo(self.name, {}, None, f"{solver_name()} (highspy)", 0.0, status)
        plan.extra = {}
        progress.update(1.0, f"objective {value:.6g}", phase="done", incumbent=value, bound=bound)
        return plan

    def _better(
        self, sc: Scenario, objective: Objective, params: dict[str, Any], token: CancelToken,
        best: Plan | None, heuristic: Any,
    ) -> Plan | None:
        """``best`` or the plan of ``heuristic`` (the ARO paper's ``random``/``aggtree`` baselines,
        or :class:`_GreedyWarm`) with rates maximising ARO's objective on its routes, whichever
        is better; a plan the evaluator rejects (e.g. rule 5) does not count. The objective is
        kept in ``plan.extra["objective"]``."""
        try:
            cand = heuristic.plan(sc, {"seed": int(params.get("seed", 0) or 0)}, Progress(), token)
        except _TimeUp:
            return best
        if cand is None:
            return best
        token.check()
        rates = best_rates(sc, cand, objective)
        for tp in cand.tasks:
            tp.rate = rates[(tp.job, tp.ps)]
        token.check()
        ev = evaluate(sc, cand)
        if not ev.feasible:
            return best
        cand.extra = {"objective": ev.objective}
        if best is None or ev.objective > best.extra["objective"]:
            return cand
        return best

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
        rec: _Record,
    ) -> Outcome:
        gap = float(params["gap"])
        if len(graphs) == 1:
            return self._single(sc, graphs[0], objective, clock, cancel, None if warm is None else warm[0], rec)
        # 1. each task alone: its exact optimum bounds its rate in any joint plan (each gets a
        #    share of the time, so one hard task cannot starve the joint search)
        rec.enter("single", 0.45, "each task alone")
        alone = clock.sub(clock.left() * SOLO_SHARE)  # all of them together, what one leaves the next gets
        solo = [
            self._single(sc, g, SINGLE, alone.sub(alone.left() / (len(graphs) - i)), cancel,
                         None if warm is None else warm[i], retry=False)
            for i, g in enumerate(graphs)
        ]
        solo = self._settle_alone(sc, graphs, objective, solo, alone, cancel)
        timed_out = any(o.timed_out for o in solo)
        hints = {g.task: o.flows[0] for g, o in zip(graphs, solo, strict=True)}
        bound_valid = all(o.bound is not None and math.isfinite(o.bound) for o in solo)
        finite = _limits(solo)
        # 2. the rate bound and the direction reaching it
        bound, rho = rate_bound(sc, graphs, objective, finite)
        reached = [o.objective for o in solo]
        if any(u > r * (1 + 1e-9) for u, r in zip(finite, reached, strict=True)):
            # a task's own optimum left unproven (its next rate undecided) would skew the
            # direction towards a rate it never reached: aim at what each task reached alone
            got = rate_bound(sc, graphs, objective, reached)
            if objective.value(got[1]) > 0:
                rho = got[1]
        if bound_valid:
            rec.tighten(bound)
        best: Outcome | None = None
        for flows in ([warm] if warm is not None else []) + [[o.flows[0] for o in solo]]:
            rates = self._route_rates(sc, graphs, flows, objective)
            obj = objective.value(rates)
            if best is None or obj > best.objective:
                best = Outcome(flows, rates, obj, None)
        assert best is not None
        rec.offer(best.flows, best.rates, best.objective)
        if len(set(objective.job_of)) < len(graphs) and not (
                bound_valid and best.objective >= bound * (1 - gap) - REL):
            rec.enter("corners", 0.48, "corner points of the tasks' own optima")
            best = self._corners(sc, graphs, objective, [o.objective for o in solo], best, clock, cancel, rec,
                                 hints, bound if bound_valid else math.inf)
        rec.enter("search", 0.5, "common level along the balanced direction")

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
        several = len(set(objective.job_of)) < len(graphs)
        large = feasibility_columns(graphs) >= NEGOTIATE_MIN_COLS
        unsettled: list[np.ndarray] = []  # rate vectors the search left undecided
        above: list[list[float]] = []  # the direction's levels the search skipped above them
        if not closed() and bound > 0 and rho.max() > 0:
            rho_l = [float(r) for r in rho]
            cands, complete = direction_candidates(sc, graphs, rho_l)
            # with several tasks per job this search yields plans only (no bound): it may not
            # take the time the climb and the level refutation need (fat-tree k=16 with 200
            # workers per job, seed 2: an undecided check at 25 Gbps each took 54 s, then 43 s
            # again when retried)
            along = clock.sub(SEARCH_SHARE * clock.left()) if several else clock

            # on large models each check of this search gets an eighth of its time, not half:
            # an undecided point goes to negotiation next (3a), and the refutation needs the
            # time (fat-tree k=16 with 200 workers per job, seed 2: with a quarter,
            # (25, 25, 25, 25) was left undecided after 13.6 s instead of 26 s, and the
            # refutation started at 61 s instead of 74 s and refuted 54.17 before the limit;
            # with an eighth, after 6.8 s, and it starts at 40 s and goes on to 53.39)
            share_cap = SEARCH_LARGE_CHECK_SHARE if several and large else math.inf
            undecided_at: list[float] = []  # the levels of ``unsettled``

            def check(theta: float, share: float = CHECK_SHARE) -> tuple[str, list[Flows] | None]:
                share = min(share, share_cap)
                rates = [theta * r for r in rho_l]
                status, flows = self._feasible(sc, graphs, rates, along, cancel, hints=hints, share=share)
                if flows is None and status != "infeasible":
                    unsettled.append(np.asarray(rates))
                    undecided_at.append(theta)
                return status, flows

            def value(flows: list[Flows]) -> float:
                nonlocal best
                plan = self._plan_from(sc, graphs, flows, objective)
                rates = [tp.rate for tp in plan.tasks]
                obj = objective.value(rates)
                if obj > best.objective:
                    best = Outcome(flows, rates, obj, None)
                    rec.offer(flows, rates, obj)
                return direction_max(sc, plan, {(g.task.job, g.task.ps): w for g, w in zip(graphs, rho_l, strict=True)})

            start = min(r / w for r, w in zip(best.rates, rho_l, strict=True) if w > 0)
            if not maxmin and objective.value(rho_l) > 0:
                # only a plan is sought here (no bound comes from this search): the objective is
                # linear in theta, so levels below the best plan's value are not worth a check
                # (fat-tree k=16 with 200 workers per job: after the corner points,
                # (25, 25, 37.5, 25) took 43 s for nothing)
                start = max(start, best.objective / objective.value(rho_l))
            # where every task is at most what it reached alone: often a plan (leaf-spine
            # lambda = 5 with the 32-flow fan-in: 33.3 Gbps each, where the top candidate is
            # undecided for the whole limit), so it is checked before the top
            alone_at = min((o.objective / w for o, w in zip(solo, rho_l, strict=True) if w > 0), default=0.0)
            first = max((c for c in cands if start * (1 + 1e-9) < c <= alone_at * (1 + 1e-9)), default=None)
            found = _search(cands, start, check, value, along, stop=closed,
                            refine=0 if complete else 3, tol=max(gap, 1e-3), first=first, retry=not several,
                            climb_on_fail=several and feasibility_columns(graphs) >= NEGOTIATE_MIN_COLS)
            timed_out |= found.timed_out
            # a check left undecided sends the search below it: the levels above it (and below
            # the refuted one) were never tried, and the guided placement may route them
            # (fat-tree k=16 with 500 workers per job, seed 2: 9.09 Gbps a task undecided, 10 a
            # plan the guided placement finds)
            high = max(undecided_at, default=math.inf)
            above = [[c * r for r in rho_l] for c in cands if high * (1 + 1e-9) < c < found.refuted * (1 - 1e-12)]
            if maxmin and math.isfinite(found.refuted) and bound_valid:
                top = max((c for c in cands if c < found.refuted * (1 - 1e-12)), default=0.0) if complete \
                    else found.refuted
                weighted = sum(objective.weights[objective.job_of[i]] * finite[i] for i in range(len(graphs)))
                bound = min(bound, max(top, found.lo) * level + MU * weighted)
                rec.tighten(bound)
        # 3a. large models: the search's undecided rate vectors, routed by negotiated congestion
        #     before the refutation, with half the time left. A plan found here is the one the
        #     refutation starts from (fat-tree k=16 with 200 workers per job, seed 2:
        #     (25, 25, 25, 25) was left undecided by the search after 26 s and again by the
        #     refutation after 9 s; negotiation, which needs 23-25 s there, came only after both
        #     and failed in 4 of 9 runs). Only points that beat the best plan by
        #     ``CORNER_MIN_GAIN`` or more, as for the corners (the same fat-tree, seed 0: 26 s for
        #     nothing on (33.3, 33.3, 33.3, 25), 0.014 % above the best plan).
        unsettled = [p for p in unsettled if objective.value(p) > best.objective * (1 + CORNER_MIN_GAIN) + REL]
        if several and large and unsettled and not closed() and clock.left() > 0:
            rec.enter("negotiate", 0.52, "negotiated routing of the search's undecided rate vectors")
            best = self._negotiate(sc, graphs, objective, unsettled, best,
                                   clock.sub(EARLY_NEGOTIATE_SHARE * clock.left()), cancel, rec, share=1.0,
                                   above=above)
        # 4. jobs with several tasks: refute levels of the main term by covering each job's
        #    rate simplex with boxes (see _cover), bisecting between the best plan and the bound;
        #    a feasible box point is a plan, often a better one
        extra = 0.0
        if objective.kind == "MJMT":
            extra = MU * sum(objective.weights[objective.job_of[i]] * finite[i] for i in range(len(graphs)))
        levels = _Levels(bound - extra, extra, bandwidths(sc, graphs))
        # 3b. small models: the exact joint model with continuous rates, briefly, before the
        #     refutation. Near an optimum where one task of a job is at 0, the refutation's boxes
        #     double with every halving of the gap (a leaf-spine of 20 links, one job of two
        #     tasks: 0.5 against 0.5029 after the whole 30 s), where this model proves the
        #     optimum in 0.1 s. QSR is not used here: its bound keeps one level per task of
        #     slack (0.54 there), so it could not close such a gap.
        mode = params["exact"]
        small = sum(len(g.edges) for g in graphs) <= EXACT_AUTO_MAX_EDGES
        if mode != "never" and small and not closed() and clock.left() > 0.2:
            best, bound, out_of_time = self._exact(sc, graphs, objective, finite, best, bound, bound_valid, False,
                                                   0, gap, clock.sub(EXACT_FIRST_SHARE * clock.left()), cancel,
                                                   rec, 0.55, "exact joint model, continuous rates")
            timed_out |= out_of_time and clock.left() <= 0
            if bound_valid:  # the main term is at most the objective's bound (the mu term is >= 0)
                levels.hi = min(levels.hi, bound)
        if bound_valid and not maxmin and not closed():
            rec.enter("refute", 0.6, "refuting levels")
            best, out_of_time = self._refute(sc, graphs, objective, finite, levels, best, gap, clock, cancel, rec)
            timed_out |= out_of_time
            bound = min(bound, levels.hi + extra)
        # 4a. large models: the refutation again, its covers splitting the boxes of points left
        #     undecided instead of stopping on them, at levels just below the bound
        if several and large and bound_valid and not maxmin and not closed() and clock.left() > 0:
            rec.enter("refute", 0.61, "refuting levels just below the bound, past undecided points")
            best, _ = self._refute(sc, graphs, objective, finite, levels, best, gap,
                                   clock.sub(SPLIT_OPEN_SHARE * clock.left()), cancel, rec, split_open=True)
            bound = min(bound, levels.hi + extra)
        refuted_with = best.objective
        # 4b. on large models, the undecided rate vectors that would beat the best plan: routed by
        #     negotiated congestion, with one stretch of the time left
        if several and not closed() and clock.left() > 0 and levels.memo.get("undecided") and large:
            rec.enter("negotiate", 0.62, "negotiated routing of undecided rate vectors")
            best = self._negotiate(sc, graphs, objective, [p for p, _ in levels.memo["undecided"]], best, clock, cancel,
                                   rec)
        # 4c. jobs with several tasks: raise one task at a time from the best plan's routes,
        #     with the time the refutation left
        if several and not closed() and clock.left() > 0:
            rec.enter("climb", 0.65, "raising one task at a time")
            best = self._climb(sc, graphs, objective, [o.objective for o in solo], best, clock, cancel, rec,
                               bound if bound_valid else math.inf)
        # 4c'. small models: the undecided rate vector worth most, if it would beat the best plan,
        #     checked again with half the time left
        if several and not closed() and clock.left() > 0 and not large:
            best = self._recheck(sc, graphs, objective, levels, best, clock, cancel, rec)
        # 4d. a plan better than the one the refutation stopped at leaves fewer points worth a
        #     check (_cover): refute again above it
        if several and bound_valid and best.objective > refuted_with * (1 + REL) and not closed() \
                and clock.left() > 0:
            rec.enter("refute", 0.67, "refuting levels above the new best plan")
            best, out_of_time = self._refute(sc, graphs, objective, finite, levels, best, gap, clock, cancel, rec)
            timed_out |= out_of_time
            bound = min(bound, levels.hi + extra)
        # 5. the exact joint model, on models small enough to pay off (or when asked)
        if (mode == "always" or (mode == "auto" and not closed() and small)) and clock.left() > 0.2:
            best, bound, out_of_time = self._exact(sc, graphs, objective, finite, best, bound, bound_valid,
                                                   bool(params["qsr"]), int(params["qsr_levels"]), gap, clock,
                                                   cancel, rec, 0.7, "exact joint model")
            timed_out |= out_of_time
        # the limit cut the last step short with the gap open (fat-tree k=8 seed 1: the recheck
        # ran to the limit, and no exact model came after it to say so)
        timed_out |= clock.left() <= 0 and not closed()
        best.bound = bound if bound_valid else None
        best.timed_out = timed_out
        return best

    def _corners(
        self,
        sc: Scenario,
        graphs: list[TaskGraph],
        objective: Objective,
        reached: list[float],
        best: Outcome,
        clock: _Clock,
        cancel: CancelToken,
        rec: _Record,
        hints: dict,
        bound: float = math.inf,
    ) -> Outcome:
        """Jobs with several tasks: the corner points (:func:`corner_points`) above the best plan,
        the top one briefly, then easiest first (least main term, then least total rate: each
        plan found raises the floor the next must beat), routed task after task with the repair
        move (no joint MILP: that is what stalls on them). Returns the best plan, ``best`` or
        better. At most ``CORNER_MAX`` are tried, together in ``CORNER_SHARE`` of the time left,
        and only those beating the best plan by ``CORNER_MIN_GAIN`` or more.
        Points above ``bound`` (an upper bound on the objective) are not: on fat-tree k=24 with
        50 workers per job every task reaches 100 alone, but the job's workers' links carry 100
        in all, so (100, 50, ...) cannot be a plan. Nor are points whose joint LP relaxation is
        infeasible (on fat-tree k=8 every corner, each in a fraction of a second)."""
        points = corner_points(reached, rates_below(sc, graphs, reached), objective.job_of)
        points.sort(key=lambda p: (_main_term(objective, p), sum(p)))
        # the top corner (every task at its own optimum) goes first, briefly: when it is a plan
        # nothing above it is left to find (fat-tree k=16 with 50 workers per job: 1.1 s, where
        # climbing to it took 2.3 s)
        points = points[-1:] + points[:-1]
        budget = clock.sub(CORNER_SHARE * clock.left())
        lp_first = feasibility_columns(graphs) <= LP_FIRST_MAX_COLS  # else no model is built here
        tried = 0
        for n, point in enumerate(points):
            if budget.left() <= 0 or tried >= CORNER_MAX:
                break
            if not best.objective * (1 + CORNER_MIN_GAIN) + REL < objective.value(point) <= bound * (1 + 1e-9):
                continue
            cancel.check()
            if lp_first and _relaxation_infeasible(feasibility_model(sc, graphs, point, check=cancel.check)[0],
                                                   budget, cancel, _relaxations(graphs)):
                continue  # settled in a fraction of a second (fat-tree k=8), not counted as tried
            tried += 1
            # the top in slots (CORNER_TOP_SECONDS, then twice as long each) while it places
            # tasks; then the first gets half the budget (a plan there needs about 15 s on
            # fat-tree k=16), each next half of what is left, the last all of it
            if n == 0:
                flows = self._top_corner(sc, graphs, point, budget, cancel, hints)
            else:
                each = budget if tried == CORNER_MAX else budget.sub(budget.left() / 2)
                flows = self._one_by_one(sc, graphs, point, each, cancel, hints, repair=True)
            if flows is not None and self._holds(sc, graphs, flows, point):
                best = self._improve(sc, graphs, objective, flows, best, rec)
        return best

    def _top_corner(
        self, sc: Scenario, graphs: list[TaskGraph], point: list[float], budget: _Clock, cancel: CancelToken,
        hints: dict,
    ) -> list[Flows] | None:
        """The top corner, task after task, in slots: the first of at most ``CORNER_TOP_SECONDS``
        (and a quarter of ``budget``), each next twice as long as the one before (and at most half
        of what ``budget`` has left). A plan there closes the gap, so a slot that runs out with
        half of the tasks placed or more, every one having fitted in what the earlier ones left,
        is followed by another, starting from the tasks it placed (given as hints, they fit again
        at once); fewer tasks placed than in the slot before end it, and so do as many when the
        slot could not be given more time than the one before (its cap). Fat-tree k=32 with 200
        workers per job, seeds 1 and 2, on a machine 0.75 times as fast as round 27's: two or
        three tasks placed in the 3 s slot, the rest in a second (round 34's slots, each of 3 s:
        83.5 / 100.2 instead of optimal, in two pairs); seed 1 on a machine 1.76 times as fast:
        three placed at once, and the fourth needs 6 s, which 3 s slots never give it (83.5
        again; it is optimal in 11.6 s when its slot has 8.3 s). One task that does not fit (the
        repair that would follow is what stalls on such corners: fat-tree k=16 with 200 workers
        per job, whose next corner needs the time) ends it at once. Only one task left to place
        as the rule gave k=32 nothing in its pair (the slot had placed two). Returns the plan, or
        None."""
        placed: dict[int, Flows] = {}
        kept = hints
        seconds, share = CORNER_TOP_SECONDS, 0.25
        while not budget.expired():
            partial: dict[int, Flows] = {}
            cap = share * budget.left()
            slot = budget.sub(min(seconds, cap))
            flows = self._one_by_one(sc, graphs, point, slot, cancel, kept, repair=True, partial=partial)
            if flows is not None or len(partial) < len(placed) or 2 * len(partial) < len(graphs) \
                    or (len(partial) == len(placed) and seconds >= cap):
                return flows
            placed = partial
            seconds, share = 2 * seconds, 0.5
            kept = {**hints, **{graphs[i].task: f for i, f in placed.items()}}
        return None

    def _negotiate(
        self, sc: Scenario, graphs: list[TaskGraph], objective: Objective, points: list[np.ndarray], best: Outcome,
        clock: _Clock, cancel: CancelToken, rec: _Record, share: float | None = None,
        above: list[list[float]] | None = None,
    ) -> Outcome:
        """Rate vectors left undecided, best first, routed by negotiated congestion
        (:func:`negotiate`), each with ``share`` of the time left in one stretch
        (``NEGOTIATE_SHARE`` unless given; the refutation's checks each start HiGHS afresh with a
        few seconds; fat-tree k=16 with 200 workers per job, seed 2: (25, 25, 25, 25) was checked
        for 27, 10 and 8 s and never found, where negotiation finds a plan in 19-27 s). The first
        plan negotiation finds ends it: the rest are worth less. On models of at most
        ``LP_FIRST_MAX_COLS`` columns the points are first placed task after task, guided by the
        joint relaxation (:meth:`_guided`), least first, together in ``GUIDED_SHARE`` of the time:
        a plan found there raises the bar the next point must beat instead of ending it, so that
        negotiation still gets the better points (fat-tree k=16 with 500 workers per job, seed 1:
        (14.29, ...) found in 6 s, where best first gave (16.67, ...) all the time; with 200
        workers per job, seed 2, a guided plan at 40.08 that ended it kept negotiation from
        (25, 25, 25, 25)). ``above``: the levels the search never tried above the points given
        (it goes below an undecided check); once every point given is a plan, they are placed
        too, guided, least first, while each is a plan, with two placed tasks freed at most and
        the time left (fat-tree k=16 with 500 workers per job, seed 2: 9.09 Gbps a task, then 10
        in 24 s, whose repair frees two tasks and needs 19 s for that move)."""
        ordered: list[list[float]] = []  # best first, each once
        for point in sorted(points, key=lambda q: -objective.value(q)):
            rates = [float(v) for v in point]
            if not any(same_point(rates, q) for q in ordered):
                ordered.append(rates)
        guided_ok = feasibility_columns(graphs) <= LP_FIRST_MAX_COLS
        if guided_ok:
            # the guided placement, least point first: a plan there raises the bar the next must
            # beat, and negotiation below still gets the better points
            guided_time = clock.sub(GUIDED_SHARE * clock.left())
            for rates in reversed(ordered):
                if objective.value(rates) <= best.objective * (1 + 1e-9):
                    continue
                if guided_time.left() <= 0:
                    break
                guided = self._guided(sc, graphs, rates, guided_time, cancel)
                if guided is not None:
                    best = self._improve(sc, graphs, objective, guided, best, rec)
        for rates in ordered:
            if objective.value(rates) <= best.objective * (1 + 1e-9):
                continue
            if clock.left() <= 0:
                break
            talks = clock.sub((NEGOTIATE_SHARE if share is None else share) * clock.left())
            agreed = negotiate(sc, graphs, rates, _solver(talks, cancel), talks.left, cancel.check)
            if agreed is not None and self._holds(sc, graphs, agreed, rates):
                best = self._improve(sc, graphs, objective, agreed, best, rec)
                break
        if above and guided_ok and ordered and best.objective >= objective.value(ordered[0]) * (1 - 1e-9):
            # every point given is a plan now: climb the levels above them, least first, guided,
            # while each is a plan, with the time left
            for rates in above:
                if objective.value(rates) <= best.objective * (1 + CORNER_MIN_GAIN) + REL:
                    continue
                if clock.left() <= 0:
                    break
                guided = self._guided(sc, graphs, rates, clock, cancel, frees=2)
                if guided is None:
                    break
                best = self._improve(sc, graphs, objective, guided, best, rec)
        return best

    def _guided(
        self, sc: Scenario, graphs: list[TaskGraph], rates: list[float], clock: _Clock, cancel: CancelToken,
        frees: int = 1,
    ) -> list[Flows] | None:
        """Task after task in one pass, guided by the joint relaxation (:func:`_guided_costs`),
        a task that does not fit repaired by freeing one placed task (pairs freed ran out of
        13-26 s each on fat-tree k=16 with 200 workers per job, seed 2, with no plan), or up to
        ``frees``, each move with all the time left, within ``clock``: a plan at ``rates`` (the
        evaluator's verdict included), or None. It goes before negotiation (:meth:`_negotiate`):
        on fat-tree k=16 with 500 workers per job, seed 2, it routes every task at 9.09 in 3 s
        where negotiation found nothing in 46 s."""
        cancel.check()
        m, blocks = feasibility_model(sc, graphs, rates, check=cancel.check)
        lp = _relaxation(m, clock, cancel, _relaxations(graphs))
        if lp.values is None:
            return None
        seq = self._one_by_one(sc, graphs, rates, clock, cancel, {}, repair=True,
                               guide=_relaxed_use(blocks, rates, lp.values), passes=1, frees=frees)
        return seq if seq is not None and self._holds(sc, graphs, seq, rates) else None

    def _exact(
        self, sc: Scenario, graphs: list[TaskGraph], objective: Objective, finite: list[float], best: Outcome,
        bound: float, bound_valid: bool, qsr: bool, qsr_levels: int, gap: float, clock: _Clock,
        cancel: CancelToken, rec: _Record, fraction: float, message: str,
    ) -> tuple[Outcome, float, bool]:
        """The exact joint model (Eqs. 4-10 with (10) linearised exactly; rates quantised when
        ``qsr``, section III-C), started from ``best``, within ``clock``: (the best plan, the bound,
        whether the time ran out). The progress shows phase "exact" at ``fraction`` with ``message``."""
        cancel.check()
        rec.enter("exact", fraction, message)
        em = exact_model(sc, graphs, objective, finite, qsr=qsr, levels=qsr_levels, check=cancel.check)
        start = exact_start(em, best.flows, best.rates, objective)
        slack = em.delta * _level_slack(objective) if em.qsr else 0.0
        res = em.milp.solve(gap=gap, start=start, progress=_ExactReport(current_progress(), rec, slack),
                            **_milp_kw(clock, cancel))
        if res.values is not None:
            best = self._improve(sc, graphs, objective, [block_flows(b, res.values) for b in em.blocks], best, rec)
        if res.bound is not None and bound_valid:
            # the QSR model rounds rates down to levels: add one level per task back
            bound = min(bound, res.bound + slack)
            rec.tighten(bound)
        return best, bound, res.status == "timeout"

    def _improve(
        self, sc: Scenario, graphs: list[TaskGraph], objective: Objective, flows: list[Flows], best: Outcome,
        rec: _Record,
    ) -> Outcome:
        """The plan of ``flows`` (rates for its routes) if it beats ``best`` (then reported), else
        ``best``."""
        rates = self._route_rates(sc, graphs, flows, objective)
        value = objective.value(rates)
        if value <= best.objective:
            return best
        rec.offer(flows, rates, value)
        return Outcome(flows, rates, value, None)

    def _recheck(
        self, sc: Scenario, graphs: list[TaskGraph], objective: Objective, levels: _Levels, best: Outcome,
        clock: _Clock, cancel: CancelToken, rec: _Record,
    ) -> Outcome:
        """The rate vector the refutation left undecided that is worth most, if it would beat
        ``best``, checked again (the whole check, heuristics first) with ``RECHECK_SHARE`` of the
        time left; its plan if one is found and better. Such points are mostly plans: on fat-tree
        k=8 seed 0 the cover left (16.67, 25, 16.67, 25) undecided after 7.9 s in some runs and
        found it a plan after 7.9 s in others, and the exact model then had 44 s and found
        nothing. Found, it lets the second pass of the refutation go on above it (41.75 / 42.84
        instead of 40.08 / 50.14). Large models negotiate these points instead
        (:meth:`_negotiate`)."""
        beaten = _main_term(objective, best.rates)
        open_points = [list(p) for p, _ in levels.memo.get("undecided", [])
                       if _main_term(objective, list(p)) > beaten * (1 + REL)]
        if not open_points:
            return best
        rec.enter("recheck", 0.66, "checking an undecided rate vector again")
        point = max(open_points, key=objective.value)
        _, flows = self._feasible(sc, graphs, point, clock, cancel, share=RECHECK_SHARE)
        return best if flows is None else self._improve(sc, graphs, objective, flows, best, rec)

    def _climb(
        self,
        sc: Scenario,
        graphs: list[TaskGraph],
        objective: Objective,
        reached: list[float],
        best: Outcome,
        clock: _Clock,
        cancel: CancelToken,
        rec: _Record,
        bound: float = math.inf,
    ) -> Outcome:
        """A local search over rates from the best plan: one task's rate goes up to its next
        candidate (:func:`climb_moves`, the job furthest behind first), keeping the other tasks'
        routes; the task is placed in what they leave, else routed jointly with one or two of
        them (:meth:`_repair`, patient on models below ``NEGOTIATE_MIN_COLS``, where the moves
        are few and quick); :meth:`_place` starts from the task's current routes (they may
        still fit at the higher rate) and then keeps the greedy near them. The first move that
        works is taken and the moves are listed again; it stops when none works. Each move gets
        at most ``CLIMB_MOVE_SHARE`` of the time left, and a rate vector that failed is not tried
        again. Levels between the best plan and an undecided one are never checked by the level
        refutation (it bisects above the undecided level); on fat-tree k=8 seed 2 it left 45.09
        where (25, 25, 25, 25) is a plan (50.1). Returns ``best`` or better."""
        cands = [rate_candidates(sc, g) for g in graphs]
        patient = feasibility_columns(graphs) < NEGOTIATE_MIN_COLS
        failed: set[tuple[float, ...]] = set()
        flows, rates = list(best.flows), list(best.rates)
        while clock.left() > 0:
            moved = False
            for point in climb_moves(rates, reached, cands, objective):
                if clock.left() <= 0 or objective.value(point) > bound * (1 + 1e-9):
                    continue
                key = tuple(round(r, 9) for r in point)
                if key in failed:
                    continue
                cancel.check()
                i = next(k for k, (a, b) in enumerate(zip(point, rates, strict=True)) if a != b)
                each = clock.sub(CLIMB_MOVE_SHARE * clock.left())
                placed = {j: f for j, f in enumerate(flows) if j != i}
                left: dict[Resource, float] = {}
                for j, f in placed.items():
                    _take(sc, graphs[j], f, point[j], left, force=True)
                mine = self._place(sc, graphs[i], point[i], left, each.sub(each.left() / 4), cancel, flows[i])
                if mine is not None:
                    new: dict[int, Flows] | None = {**placed, i: mine}
                else:
                    fixed = self._repair(sc, graphs, point, placed, i, each, cancel, patient=patient)
                    new = fixed[0] if fixed is not None else None
                got = None if new is None else [new[j] for j in range(len(graphs))]
                if got is None or not self._holds(sc, graphs, got, point):
                    failed.add(key)
                    continue
                routed = self._route_rates(sc, graphs, got, objective)
                flows, rates = got, [max(a, b) for a, b in zip(routed, point, strict=True)]
                value = objective.value(routed)
                if value > best.objective:
                    best = Outcome(got, routed, value, None)
                    rec.offer(got, routed, value)
                moved = True
                break
            if not moved:
                break
        return best

    def _refute(
        self,
        sc: Scenario,
        graphs: list[TaskGraph],
        objective: Objective,
        upper: list[float],
        levels: _Levels,
        best: Outcome,
        gap: float,
        clock: _Clock,
        cancel: CancelToken,
        rec: _Record,
        split_open: bool = False,
    ) -> tuple[Outcome, bool]:
        """Refute levels of the main term between the best plan and ``levels.hi`` (the lowest
        level refuted so far), bisecting: high levels are refuted with few boxes, levels near the
        optimum need many (:meth:`_cover`). A level the cover leaves undecided is not refuted, so
        the bisection goes on above it. Returns the best plan (a box point may be a better one)
        and whether the time ran out.

        It may run more than once on the same ``levels``. The cover checks only points that would
        beat the best plan, so once a later step has found a better plan, the points that stopped
        an earlier pass may not be worth a check any more: each pass starts again from the best
        plan and forgets the levels an earlier pass left undecided (fat-tree k=8 seed 2: stopped
        at 53.46 with the best plan at 45.09; after the climb's 50.1, a second pass refutes
        51.79). Likewise inside a pass: a cover that finds a plan better than the best ends
        ('better') and the bisection goes on from that plan; and a cover that found a better plan
        and then stopped on a point no better than it (``memo["stopped"]``) does not make its
        level a floor.

        ``split_open``: the covers split the box of a point left undecided instead of stopping
        on it (:meth:`_cover`), and each level tried lies a sixteenth of the way from the bound
        down to the best plan, not halfway: such a cover checks many more points, and only one
        just below the bound can end in the time left (large models, after the pass that
        stopped; ``SPLIT_OPEN_SHARE``)."""
        unknown_at = 0.0
        if levels.refuted is None:
            levels.refuted = Refuted(len(graphs))
        while clock.left() > 0 and best.objective < (levels.hi + levels.extra) * (1 - gap) - REL:
            lo = max(_main_term(objective, best.rates), unknown_at)
            if levels.hi <= lo * (1 + max(gap, 1e-4)):
                break
            below = levels.hi - (levels.hi - lo) / SPLIT_OPEN_STEPS if split_open else 0.5 * (lo + levels.hi)
            target = max(below, lo * (1 + max(gap, 1e-4)))
            before = best.objective
            verdict, flows = self._cover(sc, graphs, objective, upper, target, clock, cancel, rec, levels.memo,
                                         levels.bands, levels.refuted, split_open)
            if verdict == "refuted":
                levels.hi = target
                rec.tighten(target + levels.extra)
                continue
            if flows is not None:
                best = self._improve(sc, graphs, objective, flows, best, rec)
            if verdict == "better":
                if _main_term(objective, best.rates) > lo * (1 + 1e-9):
                    continue  # bisect again from the better plan
                verdict = "unknown"
            if verdict == "unknown":
                if clock.left() <= 0:
                    return best, True
                stopped = levels.memo.get("stopped")
                if stopped and best.objective > before and \
                        _main_term(objective, list(stopped[0])) <= _main_term(objective, best.rates) * (1 + 1e-9):
                    # the point that stopped the cover is no better than a plan the same cover
                    # found before it: bisect again from that plan, where such a point is split,
                    # not checked (fat-tree k=8 seed 0: a cover found (16.67, 25, 16.67, 25) a
                    # plan, 41.75, then left (16.67, 25, 25, 16.67), 41.67, undecided after
                    # 6.7 s; the pass stopped there at 45.6, and no later step ran it again)
                    continue
                unknown_at = max(unknown_at, target)
        return best, False

    def _cover(
        self,
        sc: Scenario,
        graphs: list[TaskGraph],
        objective: Objective,
        upper: list[float],
        level: float,
        clock: _Clock,
        cancel: CancelToken,
        rec: _Record,
        memo: dict[str, list],
        bands: set[float],
        refuted: Refuted | None = None,
        split_open: bool = False,
    ) -> tuple[str, list[Flows] | None]:
        """Is there a plan whose main term (SJMT: the job's throughput, Eq. 2; MJMT: min_s
        beta_s T_s, Eq. 3 without mu) reaches ``level``? ('refuted', None), ('feasible', flows)
        or ('unknown', flows of the best box point found, or None), or ('better', flows) as soon as
        a box point is a plan whose main term beats the best plan's (``rec.rates``) but not the
        level: a level halfway up from the new plan is worth more than this one.

        Such a plan gives each job s a throughput T_s = level / beta_s (rates can only drop:
        plans are downward closed), with task i of s in [0, upper_i]. A box (an interval per task)
        of that simplex is covered by its least point p, p_j = max(lo_j, T_s - sum_{k != j} hi_k):
        every rate vector of the box is >= p, so if p is infeasible (one feasibility MILP, whose LP
        relaxation usually settles it) or above a task's own optimum, so is the whole box. A
        feasible p splits the box's widest interval, and so, unchecked, does a p whose main term
        is no better than the best plan's (``rec.rates``): splitting only covers the same box with
        smaller ones, whose least points rise towards the level; the lower half first. A box
        whose least point (or its lifted point) lies in what a refuted point refutes
        (``refuted``, :class:`~inaplanner.planners.aro.classes.Refuted`: every rate vector
        refusing each count vector that point refuses) needs no check. Boxes narrower than
        ``COVER_TOL`` T_s stop the search (the level is then within that of a point not refuted).
        With one task per job this is a single check. A point left undecided stops the cover
        ('unknown'), or with ``split_open`` splits its box like a feasible one: the smaller boxes
        cover the same rate vectors, and their least points lie above it."""
        per_job: dict[int, list[int]] = {}
        for i, s in enumerate(objective.job_of):
            per_job.setdefault(s, []).append(i)
        need = {s: (level / objective.weights[s] if objective.kind == "MJMT" else level) for s in per_job}
        start = [(0.0, min(upper[i], need[objective.job_of[i]])) for i in range(len(graphs))]
        stack: list[list[tuple[float, float]]] = [start]
        best_flows: list[Flows] | None = None
        best_value = -math.inf
        # rate vectors known feasible (with the rates their routes allow) and known infeasible:
        # plans are downward closed, so a point below a feasible one needs no check, nor one above
        # an infeasible one (``no``: the refuted lifted points and the floors below them)
        yes = memo.setdefault("yes", [])
        no = memo.setdefault("no", [])
        undecided = memo.setdefault("undecided", [])  # (point, the seconds its check had)
        memo["stopped"] = []  # the point an 'unknown' verdict stopped on, if one did
        beaten = -math.inf if rec.rates is None else _main_term(objective, rec.rates)
        # the same points as matrices, column by column (:func:`_above_any`), with the
        # tolerances applied: a cover tests thousands of boxes against hundreds of points
        # (fat-tree k=8 seed 2: a tenth of a run went to testing them one at a time). The
        # feasible points are negated: below one of them is, negated, above it
        width = len(graphs)
        no_low = np.reshape(np.asarray(no, dtype=float), (-1, width)).T * (1 - 1e-12)
        yes_neg = -np.reshape(np.asarray(yes, dtype=float), (-1, width)).T * (1 + 1e-12)

        def refuted_already(v: np.ndarray) -> bool:
            """Above a refuted point or its floor, or in what a refuted point refutes."""
            return _above_any(v, no_low) or (refuted is not None and refuted.holds(v))

        while stack:
            cancel.check()
            if clock.left() <= 0:
                return "unknown", best_flows
            box = stack.pop()
            point = [0.0] * len(graphs)
            for s, tasks in per_job.items():
                for j in tasks:
                    rest = sum(box[k][1] for k in tasks if k != j)
                    point[j] = max(box[j][0], need[s] - rest, 0.0)
            if any(p > u * (1 + 1e-9) for p, u in zip(point, upper, strict=True)):
                continue  # a task above its own optimum: nothing of the box is feasible
            pv = np.asarray(point)
            if refuted_already(pv):
                continue
            # a point no better than the best plan is split, not checked: only refutations
            # help here, and such a point is mostly a plan, some found only after seconds and
            # some left undecided (fat-tree k=8 seed 0, level 45: (25, 16.67, 20, 20) a plan
            # after 18.9 s, (16.67, 25, 20, 20) undecided after 14 s; the cover stopped there,
            # and refutes 45 with 759 checks of 0.06 s when it splits them)
            worth = _main_term(objective, point) > beaten * (1 + 1e-9)
            if worth and not _above_any(-pv, yes_neg):
                # checked where the same flow counts fit with the least room to spare (a tighter
                # LP relaxation, the same integer plans); a refutation covers every point that
                # refuses what this one refuses (module ``classes``)
                top = lifted(point, bands)
                tv = np.asarray(top)
                if refuted_already(tv):
                    # ``top`` admits what ``point`` admits and lies above a point known
                    # infeasible. refuted_floor only halves its way down, so without this (and the
                    # refuted lifted points kept in ``no``) the levels 50.8 to 50.005 of fat-tree
                    # k=8 seed 0 each checked (25, 18.75, 18.75, 18.75) again (0.45 s each)
                    continue
                had = max(CHECK_MIN_SECONDS, COVER_CHECK_SHARE * clock.left())
                # a point left undecided with about as much time is not checked again (fat-tree
                # k=16 with 200 workers per job: levels 57.3 to 58.3 each spent 3.5 s on the same
                # (25, 25, 33.3, 25))
                left_open = any(same_point(top, q) and had <= RECHECK_GROWTH * t for q, t in undecided)
                if left_open and not split_open:
                    memo["stopped"].append(tv)
                    return "unknown", best_flows
                # the relaxation with HiGHS' presolve: COVER_PRESOLVE_MAX_COLS
                status, flows = ("timeout", None) if left_open else \
                    self._feasible(sc, graphs, top, clock, cancel, heuristics=False, greedy=True,
                                   share=COVER_CHECK_SHARE, presolve=True)
                if status == "infeasible":
                    new = [np.asarray(refuted_floor(point, bands)), tv]
                    no.extend(new)
                    no_low = np.hstack([no_low, np.asarray(new).T * (1 - 1e-12)])
                    if refuted is not None:
                        refuted.add(point, bands)
                    continue
                if flows is None:
                    if not left_open:
                        undecided.append((tv, had))
                    if not split_open:
                        memo["stopped"].append(tv)
                        return "unknown", best_flows
                else:
                    rates = self._route_rates(sc, graphs, flows, objective)
                    yes.append(np.maximum(np.asarray(rates), pv))
                    yes_neg = np.hstack([yes_neg, -yes[-1][:, None] * (1 + 1e-12)])
                    if _main_term(objective, rates) >= level * (1 - 1e-9):
                        return "feasible", flows
                    value = objective.value(rates)
                    if value > best_value:
                        best_flows, best_value = flows, value
                        rec.offer(flows, rates, value)
                    if _main_term(objective, rates) > beaten * (1 + 1e-9):
                        # a plan better than the one the level was chosen from: the refutation
                        # bisects again from it, and there points no better than it are split,
                        # not checked (fat-tree k=8 seed 0: the three points symmetric to a plan
                        # at 41.75 just found were checked, each a plan of the same value, 12.6 s
                        # of the 60; raising what the rest of this cover must beat instead split
                        # its boxes without end where the plan lies just below the level)
                        return "better", best_flows
            widths = [(box[i][1] - box[i][0]) / max(need[objective.job_of[i]], 1e-12) for i in range(len(graphs))]
            j = max(range(len(graphs)), key=lambda i: widths[i])
            if widths[j] <= COVER_TOL:
                return "unknown", best_flows
            mid = 0.5 * (box[j][0] + box[j][1])
            low, high = list(box), list(box)
            low[j] = (box[j][0], mid)
            high[j] = (mid, box[j][1])
            # the lower half first: its least points are lower, so a refutation there covers
            # more (every point refusing what it refuses, ``Refuted``), often the higher half
            stack.extend([high, low])
        return "refuted", None

    def _single(
        self,
        sc: Scenario,
        g: TaskGraph,
        objective: Objective,
        clock: _Clock,
        cancel: CancelToken,
        warm: Flows | None,
        rec: _Record | None = None,
        retry: bool = True,
    ) -> Outcome:
        """Exact single-task optimum (Eq. 1). The best rate fills some resource exactly, so it is
        b / k for a resource of bandwidth b and a flow count k: a search over those candidates
        with one feasibility MILP each finds it, and the next candidate's infeasibility proves it.
        ``retry=False``: a candidate left undecided by its share of the time is not checked again
        with the rest (see :meth:`_settle_alone`)."""
        cands = rate_candidates(sc, g)
        top = structural_bound(sc, g)
        if len(g.edges) <= LP_BOUND_MAX_EDGES:
            top = min(top, self._lp_bound(sc, g, clock, cancel))
        if rec is not None:
            rec.tighten(top)
        cands = [c for c in cands if c <= top * (1 + 1e-9)] or cands[:1]
        state: dict[str, Any] = {"flows": warm, "rate": 0.0}
        if warm is not None:
            state["rate"] = self._route_rates(sc, [g], [warm], objective)[0]
            if rec is not None:
                rec.offer([warm], [state["rate"]], state["rate"])

        def check(rate: float, share: float = CHECK_SHARE) -> tuple[str, list[Flows] | None]:
            return self._feasible(sc, [g], [rate], clock, cancel, share=share)

        def value(flows: list[Flows]) -> float:
            rate = self._route_rates(sc, [g], flows, objective)[0]
            if state["flows"] is None or rate > state["rate"]:
                state["flows"], state["rate"] = flows[0], rate
                if rec is not None:
                    rec.offer([flows[0]], [rate], rate)
            return rate

        found = _search(cands, state["rate"], check, value, clock, retry=retry)
        if state["flows"] is None:
            if clock.expired():
                raise _TimeUp("time limit")
            raise PlanError(f"task {g.task}: no plan found within the time limit")
        lo = state["rate"]
        # the optimum is a candidate below the smallest refuted one, and at least lo
        bound = max(lo, max((c for c in cands if c < found.refuted * (1 - 1e-12)), default=0.0))
        if rec is not None and math.isfinite(found.refuted):
            rec.tighten(bound)
        return Outcome([state["flows"]], [lo], lo, bound, found.timed_out)

    def _settle_alone(
        self, sc: Scenario, graphs: list[TaskGraph], objective: Objective, solo: list[Outcome], clock: _Clock,
        cancel: CancelToken,
    ) -> list[Outcome]:
        """Each task alone, second pass: a task whose next rate was left undecided is searched
        again with the time the tasks alone have left, but only where its own bound counts, i.e.
        where proving it at what it reached would lower :func:`rate_bound` by ``CORNER_MIN_GAIN``
        or more. Elsewhere its job's throughput is capped by another job's, and neither its bound
        nor a higher plan of it changes the objective's bound or main term (fat-tree k=16 with 200
        workers per job, seed 1: one task of the job that does not bind spent 14 s and then 13 s
        more on 50 Gbps, undecided both times, 27 of the 33 s the tasks alone took)."""
        solo = list(solo)
        for i, g in enumerate(graphs):
            o = solo[i]
            if o.bound is not None and o.bound <= o.objective * (1 + 1e-9) or clock.left() <= RETRY_MIN_SECONDS:
                continue
            limits = _limits(solo)
            now = rate_bound(sc, graphs, objective, limits)[0]
            limits[i] = o.objective
            if rate_bound(sc, graphs, objective, limits)[0] >= now * (1 - CORNER_MIN_GAIN):
                continue
            cancel.check()
            again = self._single(sc, g, SINGLE, clock, cancel, o.flows[0])
            bounds = [b for b in (o.bound, again.bound) if b is not None]
            top = again if again.objective > o.objective else o
            solo[i] = Outcome(top.flows, top.rates, top.objective, min(bounds) if bounds else None,
                              again.timed_out)
        return solo

    def _lp_bound(self, sc: Scenario, g: TaskGraph, clock: _Clock, cancel: CancelToken) -> float:
        """Upper bound on the single-task rate: the LP relaxation of the u = 1/r model."""
        m, _, u = ratio_model(sc, [g], [1.0])
        res = m.solve(relax=True, **_milp_kw(clock, cancel))
        if res.objective is None or res.objective <= 0:
            return math.inf
        return 1.0 / res.objective

    def _feasible(
        self, sc: Scenario, graphs: list[TaskGraph], rates: list[float], clock: _Clock, cancel: CancelToken,
        heuristics: bool = True,
        greedy: bool = True,
        hints: dict | None = None,
        share: float = 0.5,
        presolve: bool = False,
    ) -> tuple[str, list[Flows] | None]:
        """('feasible'|'infeasible'|'timeout', flows) for fixed task rates. First the greedy
        (:mod:`greedy`), then, with several tasks, task after task in what the others left (the
        greedy, else a single-task MILP), and last the joint MILP, the only one that can answer
        'infeasible'. Plans not from the joint MILP are checked by the evaluator at those rates.
        ``heuristics=False`` (checks expected to fail) skips the task-after-task step and, where
        the LP relaxation goes first, tries the greedy after it; ``greedy=False`` skips the
        greedy as well. With several tasks and the task-after-task step, the
        joint greedy is skipped: that step routes each task with the same greedy (after the
        task's own plan), and on leaf-spine lambda = 5 the joint greedy took 4.7 of a check's
        10.8 s and failed where the task-after-task step found the plan. Where the relaxation
        admits the rates, the pipelines next to each PS are probed before the MILP
        (:mod:`probing`); a check left undecided before leads with the relaxation and the probes.
        ``presolve``: the joint relaxation runs HiGHS' presolve (:func:`_relaxation`; the level
        refutation's checks)."""
        cancel.check()
        joint_greedy = greedy and not (len(graphs) > 1 and heuristics)

        def greedy_plan() -> list[Flows] | None:
            quick = greedy_flows(sc, graphs, rates, cancel)
            return quick if quick is not None and self._holds(sc, graphs, quick, rates) else None

        if joint_greedy and heuristics and (quick := greedy_plan()) is not None:
            return "feasible", quick
        cancel.check()
        # the LP relaxation settles most infeasible checks; on large models it costs seconds, so
        # there the task-after-task heuristic goes first, and the model is built only if it fails.
        # A check left undecided before leads with the relaxation and the probes: its plan side
        # has had its try (leaf-spine lambda = 3 seed 2, every task at 50: the task-after-task
        # step took 14 of the check's 24 s twice, and the probes that refute it never ran)
        undecided_key = _undecided_key(graphs, rates)
        again = undecided_key in graphs[0].memo
        refute_first = feasibility_columns(graphs) <= LP_FIRST_MAX_COLS or again
        # a task alone is probed only when its check was left undecided before: most of its
        # checks are plans (every task alone at 50 Gbps on leaf-spine lambda = 4 with the 32-flow
        # fan-in), and probes there cost 0.5-2.3 s each, a third of the check
        probe = len(graphs) > 1 or again
        # one check may not take the whole budget: an undecided level leaves lower ones to try
        budget = clock.sub(max(CHECK_MIN_SECONDS, share * clock.left()))
        model: tuple[Milp, list[TaskBlock]] | None = None

        def refuted() -> bool:
            """The model with what probing knows fixed (:func:`fix_known`), its relaxation, then
            the joint probes (:func:`probe_check`), each part of the probing with at most
            ``PROBE_SHARE`` of the check's time left; the joint probes of a check left undecided
            before get all of it (``RETRY_PROBE_SHARE``)."""
            nonlocal model
            model = feasibility_model(sc, graphs, rates, check=cancel.check)
            solo = budget.sub(PROBE_SHARE * budget.left())  # a task alone: only what is known
            fix_known(sc, graphs, rates, *model, _probe_relax(solo, cancel), solo.left, cancel.check)
            lp = _relaxation(model[0], budget, cancel, _relaxations(graphs), presolve=presolve)
            if lp.status == "infeasible":
                return True
            if not probe or lp.values is None:
                return False
            joint = budget.sub((RETRY_PROBE_SHARE if again else PROBE_SHARE) * budget.left())
            return probe_check(sc, graphs, rates, *model, lp.values, _probe_relax(joint, cancel), joint.left,
                               cancel.check)

        if refute_first and refuted():
            return "infeasible", None
        if joint_greedy and not heuristics:
            # checks expected to fail: the greedy only once the relaxation has not refuted the
            # point (fat-tree k=8 seed 0: of the hundreds of checks of a level's cover almost
            # all are refuted, in 0.03 s each, and the greedy took another 0.026 s on each)
            if (quick := greedy_plan()) is not None:
                return "feasible", quick
        if len(graphs) > 1 and heuristics:
            seq = self._one_by_one(sc, graphs, rates, budget, cancel, hints or {})
            if seq is not None and self._holds(sc, graphs, seq, rates):
                return "feasible", seq
        if model is None and refuted():
            return "infeasible", None
        assert model is not None
        m, blocks = model
        status, values = _decide(m, budget, cancel, lp_first=False)
        if values is None:
            if status != "infeasible":
                graphs[0].memo[undecided_key] = ()
            return status, None
        return "feasible", [block_flows(b, values) for b in blocks]

    def _one_by_one(
        self, sc: Scenario, graphs: list[TaskGraph], rates: list[float], clock: _Clock, cancel: CancelToken,
        hints: dict, repair: bool = False, guide: list[dict[Resource, float]] | None = None, passes: int | None = None,
        frees: int = 2, partial: dict[int, Flows] | None = None,
    ) -> list[Flows] | None:
        """Tasks routed one after the other in the bandwidth the earlier ones left: the greedy,
        else a single-task MILP fed through each admissible set of the PS leaf's pipelines (the
        ones behind the most programmable switches earlier tasks left room to reach first). A
        task that cannot be placed is (with ``repair``: the corner points' checks and the guided
        placement) routed again jointly with one or two (at most ``frees``) placed tasks
        (:meth:`_repair`); if that fails too it moves to the front and all are placed again (once
        per task, or ``passes`` times). With ``guide`` (each task's use of each resource in the
        joint LP relaxation, :func:`_relaxed_use`) a task's MILP takes the least bandwidth,
        weighted by what the tasks after it use there (:func:`_guided_costs`). Each repair
        move may take all of the time left (``patient``, :meth:`_repair`). When no plan comes,
        ``partial`` (if given) receives the tasks placed before the time ran out, when every
        task so far fitted in what the earlier ones left (none needed a repair)."""
        order = list(range(len(graphs)))
        budget = clock if repair else clock.sub(0.8 * clock.left())  # else the joint MILP follows
        for _attempt in range(len(graphs) if passes is None else passes):
            left: dict[Resource, float] = {}
            out: dict[int, Flows] = {}
            fitted = True  # no task found not to fit in what the earlier ones left
            for n_i, i in enumerate(order):
                later: dict[Resource, float] | None = None
                if guide is not None:
                    later = {}
                    for j in order[n_i + 1:]:
                        for res, v in guide[j].items():
                            later[res] = later.get(res, 0.0) + v
                f = self._place(sc, graphs[i], rates[i], left, budget, cancel, hints.get(graphs[i].task), later)
                if f is not None:
                    out[i] = f
                    continue
                fitted = fitted and budget.expired()
                fixed = self._repair(sc, graphs, rates, out, i, budget, cancel, frees, patient=True) \
                    if repair and out else None
                if fixed is None:
                    break
                out, left = fixed
            else:
                return [out[i] for i in range(len(graphs))]
            if partial is not None and fitted and budget.expired():
                partial.update(out)
            if budget.left() <= 0:
                return None
            order = [i] + [j for j in order if j != i]
        return None

    def _repair(
        self, sc: Scenario, graphs: list[TaskGraph], rates: list[float], placed: dict[int, Flows], i: int,
        clock: _Clock, cancel: CancelToken, frees: int = 2, patient: bool = False,
    ) -> tuple[dict[int, Flows], dict[Resource, float]] | None:
        """A large-neighbourhood move: task i, which does not fit in what the placed tasks left,
        is routed jointly with one (then two, unless ``frees`` is 1) of them in what the others
        leave: a feasibility MILP over the freed tasks only, far smaller than the joint one
        (fat-tree k=16 with 200 workers per job: plans in about 20 s where the joint MILP stays
        undecided after 80 s).
        The placed tasks using most bandwidth on i's resources are freed first. Most moves are
        refuted by their LP relaxation in a fraction of a second; a move whose MILP runs gets
        half of the time left and the last move all of it, or, ``patient`` (the corner points'
        and the guided placement's repairs, :meth:`_one_by_one`), each gets all of it: there
        the move that fits can need most of it (fat-tree k=16 with 200 workers per job, seed 1,
        the corner worth 58.45: 7.5 s where half gave 7.2 s, and 40.08 in six of six runs
        beside another; with 500 workers per job, seed 0, the guided placement at 16.67:
        10.5 s where half gave 8.7 s; seed 2, at 10, two tasks freed: 19 s where half gave
        13.5 s). The climb's moves (:meth:`_climb`) are many and most fail: patient there on
        large models too, fat-tree k=16 with 500 workers per job, seed 0, ended at 28.63
        instead of 33.4, and with 200, seed 2, with its bound at 58.47 instead of 54.3-56.38;
        so the climb is patient on small models only (fat-tree k=8 seed 2 on a machine 0.75
        times as fast as round 27's: the move to (25, 25, 25, 25) needed more than the 6.4 s
        half gave, 45.09 instead of 50.1). Returns the new placement and what it leaves, or
        None."""
        mine = {res for e in graphs[i].edges for res in e.resources}
        weight = {j: sum(v for res, v in (usage(graphs[j], f, rates[j]) or {}).items() if res in mine)
                  for j, f in placed.items()}
        near = sorted(placed, key=lambda j: -weight[j])
        pairs = list(itertools.combinations(near, 2)) if frees >= 2 else []
        options = ([(j,) for j in near] + pairs)[:REPAIR_MAX_MOVES]
        for n_opt, freed in enumerate(options):
            if clock.left() <= 0:
                return None
            cancel.check()
            rest: dict[Resource, float] = {}
            for j, f in placed.items():
                if j not in freed:
                    _take(sc, graphs[j], f, rates[j], rest, force=True)
            tasks = [i, *freed]
            m, blocks = feasibility_model(sc, [graphs[k] for k in tasks], [rates[k] for k in tasks], rest,
                                          check=cancel.check)
            whole = n_opt == len(options) - 1 or patient
            _, values = _decide(m, clock if whole else clock.sub(clock.left() / 2), cancel)
            if values is None:
                continue
            out = {j: f for j, f in placed.items() if j not in freed}
            for k, b in zip(tasks, blocks, strict=True):
                out[k] = block_flows(b, values)
                _take(sc, graphs[k], out[k], rates[k], rest, force=True)
            return out, rest
        return None

    def _place(
        self, sc: Scenario, g: TaskGraph, r: float, left: dict[Resource, float], budget: _Clock, cancel: CancelToken,
        hint: Flows | None = None, later: dict[Resource, float] | None = None,
    ) -> Flows | None:
        """One task at rate r in what ``left`` says remains; updates ``left`` on success. Tries
        ``hint`` (a plan of the task: its own single-task plan, or its routes in the plan being
        improved) first, then the greedy kept close to the hint's links, then the greedy alone,
        then MILPs (with ``later``, what the tasks still to place use in the joint relaxation, no
        greedy, and a MILP takes the bandwidth they will need least: :func:`_guided_costs`).
        Where the hint itself does not fit, the greedy near it routes far more: on fat-tree k=16
        with 200 workers per job, of 121 rate vectors placed task after task, 11-65 instead of
        0-5 (seeds 0-2); on k=8, 7 / 82 / 46 instead of 6 / 72 / 24."""
        cancel.check()
        if hint is not None and _take(sc, g, hint, r, left):
            return hint
        # one index for both searches (fat-tree k=64 with 1,000 workers per job: a second one,
        # made for the second search, took 140 MB more at the run's peak)
        ix = TaskIndex(sc, g)
        # guided, no greedy: it would take what later tasks need (fat-tree k=16 with 500
        # workers per job, seed 2, every task at 9.09: no plan with it, one in 3 s without)
        greedy = [] if later is not None else ([plan_links(hint)] if hint is not None else []) + [None]
        for prefer in greedy:
            f = route_one(sc, g, r, left, cancel, index=ix, prefer=prefer)
            if f is not None:
                return f
        for blocked in itertools.islice(last_hop_options(sc, g, r, left), 4):
            if budget.left() <= 0:
                return None
            closed = {("link", u, v): 0.0 for u, v in blocked}
            m, blocks = feasibility_model(sc, [g], [r], {**left, **closed}, check=cancel.check)
            if later is not None:
                _guided_costs(sc, m, blocks[0], r, left, later)
            _, values = _decide(m, budget, cancel, gap=GUIDED_GAP if later is not None else None)
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
#: After the level refutation, on joint models of at least this many columns, the undecided rate
#: vectors that would beat the best plan are routed by negotiated congestion (:mod:`negotiate`),
#: the best one with this share of the time left. On fat-tree k=16 with 200 workers per job,
#: seed 2, it finds (25, 25, 25, 25) in 19-27 s where the joint MILP needs 72-78 s. On fat-tree
#: k=8 (700-1,400 columns) it found none of the plans the joint MILP finds in 3-32 s. Inside
#: every check (4.3 s of a 27 s check's MILP left) it cost more than it found: k=16 seed 2 fell
#: from 45.09 to 36.75.
NEGOTIATE_MIN_COLS = 4000
NEGOTIATE_SHARE = 0.8
#: The share of the time left that negotiation of the search's undecided rate vectors may take
#: before the level refutation, all of them together; the first (the best) may take all of it.
#: Fat-tree k=16 with 200 workers per job, seed 2: (25, 25, 25, 25) takes 22.6-24.7 s, and with
#: ``NEGOTIATE_SHARE`` of this share (26.7 s in that run) it once failed.
EARLY_NEGOTIATE_SHARE = 0.5
#: A feasibility MILP gets at most this share of the remaining time (and at least this many s).
CHECK_SHARE = 0.5
#: Probing the pipelines next to each PS (:mod:`probing`: the solo probes before a check's
#: relaxation, the joint ones after it) gets at most this share of the check's time left, each.
PROBE_SHARE = 0.8
#: ... and the joint probes of a check left undecided before: its plan side has had its try, and
#: the probes are what refutes such a check (leaf-spine lambda = 3 with the 32-flow fan-in,
#: seed 0, every task at 50 Gbps: three probes of 3-3.5 s, each followed by a relaxation, on a
#: machine half as fast as round 26's; with 0.8 the last relaxation was cut after 2 s at 53 s
#: and the run ended at 33.5 / 50.25 in 2 of 5 runs; on a 52 s limit 33.5 / 50.25 against
#: 33.5 / 33.58 in 49 s).
RETRY_PROBE_SHARE = 1.0
#: ... a probe's relaxation by simplex up to this many columns, by interior point above. A task
#: alone at lambda = 3 (5,600 columns): 0.1 s against 0.35 s; lambda = 4 and 5 with the 32-flow
#: fan-in (11,300 and 17,600 columns): 2.3 and 2.8 times faster; the joint model at lambda = 3
#: (27,900 columns): 5.3 s against 2.5 s.
PROBE_SIMPLEX_MAX_COLS = 20_000
#: Feasibility models up to this many columns get their LP relaxation solved first (a check's, a
#: corner's), and negotiation starts with the placement it guides (:meth:`AroPlanner._guided`).
#: Fat-tree k=16 with 500 workers per job (11,637 columns, 0.4-0.6 s a relaxation): with 10,000
#: its top corner (25, 25, 25, 25) took 67 s of the 120 in repairs; its relaxation and the tasks'
#: probes refute it in 0.7 s.
LP_FIRST_MAX_COLS = 20_000
#: The level refutation's relaxations (:meth:`AroPlanner._cover`) up to this many columns run
#: HiGHS' presolve (0.03-0.06 s at fat-tree k=16's 9,000-12,000 columns, too short to hold up
#: cancel; 0.22-0.25 s at 54,000-66,000). Infeasible ones, nearly all of the refutation's, take
#: 0.37 s instead of 0.61 (medians, k=16 with 500 workers per job, seed 2; 0.48 against 0.55 s
#: with 200), and that seed refuted the level 27.6 in 23 s instead of 37 s, 18 s before its limit
#: instead of 5. Only there: elsewhere the relaxation's point steers the guided placement, which
#: lost seed 0's plan (33.4) when every relaxation up to this size ran presolve (round 31).
COVER_PRESOLVE_MAX_COLS = 20_000
#: Feasibility MILPs up to this many columns are solved with HiGHS' presolve on (:func:`_decide`).
PRESOLVE_MAX_COLS = 2000
CHECK_MIN_SECONDS = 3.0
#: An undecided candidate is tried again with all the time left when at least this much is left.
RETRY_MIN_SECONDS = 2.0
#: Multi-task level refutation (:meth:`AroPlanner._cover`): boxes narrower than this share of a
#: job's throughput are not split.
COVER_TOL = 0.004
#: A box check gets at most this share of the time left (one hard box must not take it all).
COVER_CHECK_SHARE = 0.15
#: A box point left undecided is checked again only with this many times the seconds it had.
RECHECK_GROWTH = 2.0
#: Small models: the share of the time left for checking again, after the climb, the undecided
#: rate vector worth most (:meth:`AroPlanner._recheck`).
RECHECK_SHARE = 0.5
#: Large models: after the level refutation, a pass whose covers split the boxes of points left
#: undecided (:meth:`AroPlanner._refute`, ``split_open``) gets this share of the time left, and
#: each level it tries lies this fraction (1 / SPLIT_OPEN_STEPS) of the way from the bound down
#: to the best plan.
SPLIT_OPEN_SHARE = 0.6
SPLIT_OPEN_STEPS = 16
#: The warm start tries the next heuristic only with at least this many seconds left.
WARM_MIN_SECONDS = 1.0
#: ... but always, whatever the limit, on scenarios with at most this many worker flows (all
#: heuristics take milliseconds there), so ARO never returns less than any of them.
WARM_ALWAYS_FLOWS = 400
#: Multi-task runs: the single-task solves together get at most this share of the time left.
SOLO_SHARE = 0.5
#: A repair (:meth:`AroPlanner._repair`) frees at most this many placed tasks' combinations.
REPAIR_MAX_MOVES = 6
#: Corner points (:func:`corner_points`): at most this many are checked, together in at most
#: this share of the time left.
CORNER_MAX = 4
CORNER_SHARE = 0.6
#: ... the top corner first, in slots while it places tasks, the first of at most this many
#: seconds, each next twice as long as the one before (:meth:`AroPlanner._top_corner`).
CORNER_TOP_SECONDS = 3.0
#: ... and only points that beat the best plan by at least this share: a failed check takes its
#: whole slot. Fat-tree k=16 with 200 workers per job, seed 0: (33.3, 33.3, 25, 25), worth 50.117
#: against the best plan's 50.108, took 20 s for nothing; without it the corners find 53.45 and
#: then 58.45 (bound 58.46) instead of stopping at 50.11 (the search's ``tol`` is alike).
CORNER_MIN_GAIN = 1e-3
#: Task-after-task placement guided by the joint relaxation (:func:`_guided_costs`): the weight of
#: what later tasks need, and the MILP gap a guided placement stops at (it needs a good plan of
#: the task, not the best).
GUIDE_WEIGHT = 10.0
GUIDED_GAP = 0.05
#: ... and before negotiation (models up to ``LP_FIRST_MAX_COLS`` columns) that placement gets
#: this share of negotiation's time, for all the undecided rate vectors together.
GUIDED_SHARE = 0.5

#: With several tasks per job, the search along the balanced direction gets at most this share
#: of the time left (it finds plans, not bounds); one move of the climb (:meth:`AroPlanner._climb`)
#: at most ``CLIMB_MOVE_SHARE`` of the time left.
SEARCH_SHARE = 0.5
#: With several tasks per job on large models (``NEGOTIATE_MIN_COLS``), the share of the search's
#: time one of its checks may take.
SEARCH_LARGE_CHECK_SHARE = 0.125
CLIMB_MOVE_SHARE = 0.5

#: ``exact=auto`` runs the exact joint model only below this many unfolded edges in total: on
#: larger models its LP relaxation is too weak for HiGHS to close anything in seconds.
EXACT_AUTO_MAX_EDGES = 1500
#: ... and there, before the level refutation, the exact model with continuous rates gets this
#: share of the time left: the small cases it closes need a fraction of a second; on fat-tree
#: k=8 (about 1,200 edges, 60 s) a tenth cost seed 2 its refuted level (bound 54.30, not 52.21).
EXACT_FIRST_SHARE = 0.05


@dataclass
class _Found:
    lo: float  # best value reached
    refuted: float  # smallest candidate proven infeasible (inf if none)
    timed_out: bool


def _limits(solo: list[Outcome]) -> list[float]:
    """Each task's rate limit from its outcome alone: its proven bound, or, where none was
    proven, a thousand times what it reached (a limit that never binds)."""
    return [o.bound if o.bound is not None and math.isfinite(o.bound) else o.objective * 1e3 for o in solo]


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
    first: float | None = None,
    climb: float = 1.5,
    retry: bool = True,
    climb_on_fail: bool = False,
) -> _Found:
    """Largest feasible value among sorted ``cands`` given a monotone feasibility ``check``.

    Probes the 1st, 2nd, 3rd, 5th, 9th ... highest remaining candidate until one is feasible
    (infeasible checks near the top end at the root node), then bisects. A feasible check yields a
    plan whose own value may jump past several candidates. ``refine`` extra bisection steps then
    narrow a remaining interval between lo and the refuted value (for non-candidate optima).
    ``first``: a candidate checked before all others (a likely plan). When it is a plan, the
    search climbs from it (the highest candidate within ``climb`` times the best value, as long
    as each is a plan) before it bisects: where the top is undecided for most of the limit
    (leaf-spine lambda = 5 with the 32-flow fan-in), probes from the top would spend the time
    there and leave the plan at the opening. ``retry``: an undecided candidate gets the time left
    (for a bound; a search for plans only moves on). ``climb_on_fail``: when the opening is no
    plan, climb from ``lo`` instead of probing from the top (a search for plans only on large
    models: there the probes from the top give no bound, and each undecided one took its whole
    share; fat-tree k=16 with 200 workers per job, seed 2, on a machine 1.5 times slower: 25, 20
    and 14.3 Gbps a task undecided after 24, 12 and 6 s, and the plan stayed at 20.04)."""
    refuted = math.inf
    undecided = math.inf
    timed_out = False
    mode, probes = ("open" if first is not None else "descend"), 0
    while not (stop and stop()):
        options = [c for c in cands if c > lo * (1 + 1e-9) and c < min(refuted, undecided) * (1 - 1e-12)]
        if not options or clock.left() <= 0:
            break
        if mode == "open" and first in options:
            mid = first
        elif mode == "climb":
            mid = max((c for c in options if c <= lo * climb), default=options[0])
        elif mode in ("open", "descend"):  # the refuted top drops out: offsets 1, 1, 2, 4 ... walk 1st, 2nd, 3rd, 5th ...
            mode = "descend"
            mid = options[max(len(options) - max(1, 2 ** (probes - 1)), 0)]
            probes += 1
        else:
            mid = options[len(options) // 2]
        status, flows = check(mid)
        if flows is None:  # an opening that fails leaves the probes from the top, a climb bisects
            mode = {"open": "climb" if climb_on_fail else "descend", "climb": "bisect"}.get(mode, mode)
        else:
            mode = "climb" if mode in ("open", "climb") else "bisect"
        if flows is not None:
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
    # a candidate left undecided by its share of the time gets the rest (the other candidates
    # above the best plan are settled): it alone separates the plan from the bound
    retries = 0
    while retry and math.isfinite(undecided) and undecided < refuted and clock.left() > RETRY_MIN_SECONDS \
            and retries < 2 and not (stop and stop()):
        retries += 1
        if [c for c in cands if lo * (1 + 1e-9) < c < undecided * (1 - 1e-12)]:
            break  # lower candidates are still open: the search above did not settle them
        status, flows = check(undecided, 1.0)
        if flows is not None:
            got = value(flows)
            lo = max(lo, got, undecided if got >= undecided * (1 - 1e-6) else lo)
            undecided = math.inf
        elif status == "infeasible":
            refuted = min(refuted, undecided)
            undecided = math.inf
    timed_out = timed_out and math.isfinite(undecided)
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
    runs = []
    for res, most in counts.items():
        cap = resource_capacity(sc, res)
        if cap > 0:
            runs.append((cap, 1.0, 1, most))
    return _dedupe_array(_full_at(runs))


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
    runs: list[tuple[float, float, int, int]] = []
    complete = True
    for res, per in counts.items():
        cap = resource_capacity(sc, res)
        if cap <= 0:
            continue
        weights = {rho[i] for i in per if rho[i] > 0}
        if len(weights) == 1:
            (w,) = weights
            runs.append((cap, w, max(1, math.floor(cap / w)), sum(per.values())))
        else:
            complete = False
            for i, most in per.items():
                if rho[i] > 0:
                    runs.append((cap, rho[i], max(1, math.floor(cap / rho[i])), most))
    values = np.append(_full_at(runs), 1.0)
    return _dedupe_array(values[values <= 1.0 + 1e-9]), complete


def _full_at(runs: list[tuple[float, float, int, int]]) -> np.ndarray:
    """cap / (w * k) for k = first .. last of each run (cap, w, first, last): the values at which
    a resource of bandwidth cap is exactly full with k flows of weight w (IEEE the same as
    computing each in Python; fat-tree k=64 with 1,000 workers per job: 0.8 s a task that way)."""
    widest: dict[tuple[float, float, int], int] = {}  # most resources share a bandwidth: one run each
    for cap_, w_, first_, last_ in runs:
        if last_ >= first_:
            key = (cap_, w_, first_)
            widest[key] = max(widest.get(key, last_), last_)
    runs = [(*key, last_) for key, last_ in widest.items()]
    if not runs:
        return np.empty(0)
    cap, w, first, last = (np.array(col) for col in zip(*runs, strict=True))
    sizes = (last - first + 1).astype(np.int64)
    starts = np.repeat(np.cumsum(sizes) - sizes, sizes)
    k = (np.arange(int(sizes.sum())) - starts + np.repeat(first, sizes)).astype(np.float64)
    return np.repeat(cap.astype(np.float64), sizes) / (np.repeat(w.astype(np.float64), sizes) * k)


def _dedupe_array(values: np.ndarray) -> list[float]:
    """The values sorted, near-equal neighbours merged: each run of sorted values within relative
    1e-9 of the one before keeps its largest (its last). Any order, repeats allowed."""
    v = np.sort(values)
    if not len(v):
        return []
    keep = np.ones(len(v), dtype=bool)
    keep[:-1] = v[1:] > v[:-1] * (1 + 1e-9)
    return v[keep].tolist()


def rates_below(sc: Scenario, graphs: list[TaskGraph], reached: list[float]) -> list[float | None]:
    """Per task, the next candidate rate (:func:`rate_candidates`) below what it reached alone, or
    None when there is none: the ``below`` of :func:`corner_points`."""
    out: list[float | None] = []
    for g, r in zip(graphs, reached, strict=True):
        cands = rate_candidates(sc, g)
        below = bisect.bisect_left(cands, r * (1 - 1e-9))  # cands[:below] are the ones under
        out.append(cands[below - 1] if below else None)
    return out


def corner_points(reached: list[float], below: list[float | None], job_of: list[int]) -> list[list[float]]:
    """Rate vectors where each job's tasks sit at the corners of what they reached alone: per job
    either every task at ``reached`` or one (the lead) at ``reached`` and the others at ``below``
    (the next rate below theirs where a resource is exactly full). One vector per combination of
    the jobs' choices; a task with no rate below drops the choices that need one. On fat-tree
    k=16 with 200 workers per job every task reaches 33.3 alone and (33.3, 25, 33.3, 25) is a plan
    (58.3 per job) that no even rate vector gives."""
    per_job: dict[int, list[int]] = {}
    for i, s in enumerate(job_of):
        per_job.setdefault(s, []).append(i)
    choices: list[list[dict[int, float]]] = []
    for tasks in per_job.values():
        mine = [{i: reached[i] for i in tasks}]
        if len(tasks) > 1:
            for lead in tasks:
                rest = [k for k in tasks if k != lead]
                if all(below[k] is not None for k in rest):
                    mine.append({lead: reached[lead], **{k: float(below[k]) for k in rest}})  # type: ignore[arg-type]
        choices.append(mine)
    out: list[list[float]] = []
    for combo in itertools.product(*choices):
        point = [0.0] * len(reached)
        for part in combo:
            for i, r in part.items():
                point[i] = r
        out.append(point)
    return out


def climb_moves(rates: list[float], reached: list[float], candidates: list[list[float]],
                objective: Objective) -> list[list[float]]:
    """The climb's moves from ``rates``: one task's rate raised to its next candidate above it
    (never above what the task reached alone), best first: the highest main term reached (the
    weighted throughput of the job furthest behind), then the job that was furthest behind
    before the move (raising a job already ahead only adds Eq. 3's mu term), then the smallest
    raise. Where no single raise lifts the main term (jobs tied at the bottom), the next move
    must raise another job in what this one leaves: on fat-tree k=8 seed 2, from (20, 25, 25,
    20) (both jobs at 45), raising task 1 or 2 to 33.3 first failed after 3.5 and 7.3 s and
    left (25, 25, 25, 25) a repair too short; the small raises reach it (50.1) in 7.6 s."""
    before = objective.weighted(rates)
    out = []
    for i, r in enumerate(rates):
        up = [c for c in candidates[i] if r * (1 + 1e-9) < c <= reached[i] * (1 + 1e-9)]
        if up:
            point = list(rates)
            point[i] = min(up)
            out.append((-_main_term(objective, point), float(before[objective.job_of[i]]),
                        objective.value(point), i, point))
    out.sort(key=lambda m: m[:4])
    return [m[4] for m in out]


def _take(sc: Scenario, g: TaskGraph, f: Flows, r: float, left: dict[Resource, float], force: bool = False) -> bool:
    """Subtract what flows ``f`` at rate r use from ``left`` if it fits (or ``force``)."""
    use = usage(g, f, r)
    if use is None:
        return False  # flows of another graph
    room = {res: left.get(res, resource_capacity(sc, res)) for res in use}
    if not force and any(use[res] > room[res] * (1 + 1e-12) + 1e-9 for res in use):
        return False
    for res, u in use.items():
        left[res] = room[res] - u
    return True


def _above_any(v: np.ndarray, cols: np.ndarray) -> bool:
    """Whether ``v`` >= some point, the points held column by column (``cols[j]``: every
    point's j-th rate): a cover asks tens of thousands of times (fat-tree k=8 seed 0), and
    comparing one column at a time costs a quarter of one ``all`` over the rows."""
    hit = cols[0] <= v[0]
    for j in range(1, len(v)):
        hit &= cols[j] <= v[j]
    return bool(hit.any())


def _undecided_key(graphs: list[TaskGraph], rates: list[float]) -> tuple:
    """The key under which a joint check of ``graphs`` at ``rates`` left undecided is remembered
    on ``graphs[0].memo`` (:meth:`AroPlanner._feasible`: such a check leads with the relaxation
    and the probes when it comes again)."""
    return ("undecided", tuple(id(g) for g in graphs), tuple(float(r) for r in rates))


def _relaxation(m: Milp, clock: _Clock, cancel: CancelToken, memory: Relaxations | None = None,
                presolve: bool = False) -> MilpResult:
    """The LP relaxation of ``m``. Interior point: on these models it proves infeasibility in a
    fraction of the simplex time. Presolve off (HiGHS' presolve cannot be interrupted, and
    cancel must act within a second) unless ``presolve`` asks for it on a model of at most
    ``COVER_PRESOLVE_MAX_COLS`` columns (the level refutation's checks). With ``memory`` (what
    earlier relaxations of this shape left) and a small model, first the certificates kept, then
    dual simplex from the last basis (:mod:`certificates`: fat-tree k=8's covers in about half
    the time)."""
    if memory is None or len(m.row_idx) > WARM_MAX_NNZ:
        return m.solve(presolve=presolve and m.n_cols <= COVER_PRESOLVE_MAX_COLS, relax=True, ipm=True,
                       **_milp_kw(clock, cancel))
    cancel.check()
    return memory.relax(m, lambda warm: m.solve(presolve=False, relax=True, warm=warm, **_milp_kw(clock, cancel)))


def _relaxed_use(blocks: list[TaskBlock], rates: list[float], values: np.ndarray) -> list[dict[Resource, float]]:
    """Each task's bandwidth on each resource in a solution of the joint relaxation."""
    out: list[dict[Resource, float]] = [{} for _ in blocks]
    for res, per_task in resource_usage(blocks).items():
        for i, edges in per_task.items():
            v = rates[i] * float(sum(values[blocks[i].y[k]] for k in edges))
            if v > 1e-9:
                out[i][res] = v
    return out


def _guided_costs(sc: Scenario, m: Milp, block: TaskBlock, r: float, left: dict[Resource, float],
                  later: dict[Resource, float]) -> None:
    """Costs that make a task's feasibility MILP leave room for the tasks placed after it: each
    flow pays r per resource it crosses, times 1 + ``GUIDE_WEIGHT`` x (what the later tasks use
    there in the joint relaxation) / (what is left there). Unweighted, the MILP fills links to
    the last Gbps that a later task needs (fat-tree k=16 with 500 workers per job, seed 2,
    every task at 9.09: the fourth task finds nineteen of its links full; weighted, the four
    fit in 3 s)."""
    g = block.graph
    for k, c in enumerate(block.y):
        w = 0.0
        for res in g.edges[k].resources:
            room = left.get(res)
            if room is None:
                room = resource_capacity(sc, res)
            w += 1.0 + GUIDE_WEIGHT * later.get(res, 0.0) / max(room, 1e-6)
        m.cost[c] = r * w


def _relaxations(graphs: list[TaskGraph]) -> Relaxations:
    """What the LP relaxations of joint checks of ``graphs`` (one model shape) left for the next,
    kept on ``graphs[0].memo`` for the run."""
    key = ("relaxations", tuple(id(g) for g in graphs))
    entry = graphs[0].memo.get(key)
    if entry is None:
        entry = graphs[0].memo[key] = (Relaxations(),)
    return entry[0]


def _probe_relax(clock: _Clock, cancel: CancelToken) -> Callable[[Milp], MilpResult]:
    """A probe's relaxation within ``clock``: by simplex up to ``PROBE_SIMPLEX_MAX_COLS`` columns
    (a task alone: three times faster there than interior point), by interior point above."""
    def relax(model: Milp) -> MilpResult:
        return model.solve(presolve=False, relax=True, ipm=model.n_cols > PROBE_SIMPLEX_MAX_COLS,
                           **_milp_kw(clock, cancel))
    return relax


def _relaxation_infeasible(m: Milp, clock: _Clock, cancel: CancelToken, memory: Relaxations | None = None) -> bool:
    """True when the LP relaxation is infeasible (then so is the MILP)."""
    return _relaxation(m, clock, cancel, memory).status == "infeasible"


def _solver(clock: _Clock, cancel: CancelToken) -> Solve:
    """:func:`negotiate`'s solve: a MILP with presolve off within ``seconds`` of ``clock``; its
    values or None."""
    def solve(m: Milp, seconds: float, gap: float | None) -> np.ndarray | None:
        return m.solve(presolve=False, gap=gap, **_milp_kw(clock.sub(seconds), cancel)).values
    return solve


def _decide(m: Milp, clock: _Clock, cancel: CancelToken, lp_first: bool = True, gap: float | None = None):  # noqa: ANN202
    """(status, values | None) of a feasibility MILP: optionally its LP relaxation first, then the
    MILP with presolve off (it cannot be interrupted and on these models costs more than it
    saves, benchmarks/bench_aro.py), except on models of at most ``PRESOLVE_MAX_COLS`` columns:
    there it takes hundredths of a second and halves the search (fat-tree k=8 seed 0's plan at
    (16.7, 25, 16.7, 25), 1,358 columns: 3.4-4.8 s over five solver seeds against 7.7-9.8 s).
    ``gap``: a MILP with an objective (a guided placement) stops at that relative gap."""
    if lp_first and _relaxation_infeasible(m, clock, cancel):
        return "infeasible", None
    res = m.solve(presolve=m.n_cols <= PRESOLVE_MAX_COLS, gap=gap, **_milp_kw(clock, cancel))
    if res.values is None:
        return ("infeasible" if res.status == "infeasible" else "timeout"), None
    return "feasible", res.values


def _routes_of(plan: Plan, g: TaskGraph) -> list:
    tp = plan.task_plan(g.task.job, g.task.ps)
    return tp.routes if tp is not None else []


def _trivial_bound(sc: Scenario, tasks: list, objective: Objective) -> float | None:
    """The bound available before any graph: a worker sends one flow per task of its job over
    its own links, and a PS receives at least one per task (an LP over the rates)."""
    rows: list[np.ndarray] = []
    caps: list[float] = []
    n = len(tasks)

    out: dict[str, float] = {}
    into: dict[str, float] = {}
    for lk in sc.links:
        for u, v in ((lk.a, lk.b), (lk.b, lk.a)):
            room = max(lk.capacity - lk.background_from(u), 0.0)
            out[u] = out.get(u, 0.0) + room
            into[v] = into.get(v, 0.0) + room

    def out_cap(node: str, inward: bool = False) -> float:
        return (into if inward else out).get(node, 0.0)

    for job in sc.jobs:
        for w in job.workers:
            row = np.array([1.0 if t.job == job.id and t.ps != w else 0.0 for t in tasks])
            if row.any():
                rows.append(row)
                caps.append(out_cap(w))
    for i, t in enumerate(tasks):
        row = np.zeros(n)
        row[i] = 1.0
        rows.append(row)
        caps.append(out_cap(t.ps, inward=True))
    got = _objective_lp(np.array(rows), np.array(caps), objective, None)
    return None if got is None else got[1]


def bandwidths(sc: Scenario, graphs: list[TaskGraph]) -> set[float]:
    """The bandwidths of the tasks' resources: what rate classes are made of (module ``classes``)."""
    return {resource_capacity(sc, res) for g in graphs for e in g.edges for res in e.resources}


def _fits(g: TaskGraph, f: Flows) -> bool:
    """Whether flows ``f`` use only edges of ``g``."""
    keys = {g.edge_key(k) for k in range(len(g.edges))}
    return all(k in keys for k in f.y)


def _structural_joint_bound(sc: Scenario, graphs: list[TaskGraph], objective: Objective) -> float | None:
    """A bound available at once: each task's :func:`structural_bound` and the links every plan
    loads (:func:`rate_bound`), e.g. the workers' access links a job's tasks share."""
    struct = [structural_bound(sc, g) for g in graphs]
    if not all(math.isfinite(b) for b in struct):
        return None
    if len(graphs) == 1:
        return struct[0]
    return rate_bound(sc, graphs, objective, struct)[0]


def _main_term(objective: Objective, rates: list[float]) -> float:
    """SJST/SJMT: the job's throughput; MJMT: min over jobs of beta_s T_s (Eq. 3 without mu)."""
    if objective.kind != "MJMT":
        return float(objective.throughputs(rates).sum())
    return float(objective.weighted(rates).min())


def _level_slack(objective: Objective) -> float:
    """How much the objective can grow when every task's rate grows by one QSR level."""
    count = [0] * len(objective.weights)
    for s in objective.job_of:
        count[s] += 1
    if objective.kind != "MJMT":
        return float(sum(count))
    weighted = [w * c for w, c in zip(objective.weights, count, strict=True)]
    return float(max(weighted) + 0.001 * sum(weighted))
