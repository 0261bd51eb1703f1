"""GRID: gradient routing with in-network aggregation (Fang et al., GRID paper sections 4.2-4.4).

The GRIA model, Eq. (1), for one task (job, PS alpha): every worker n picks one aggregation node
s in S u {alpha} (a programmable switch or the PS itself, x_n^s binary, sum_s x_n^s = 1) and sends
at r_n^s <= x_n^s * T; a switch used as aggregator sends one aggregate at y_s >= r_n^s; the switch
aggregates sum_n r_n^s <= C_s; the PS receives sum_n r_n^alpha + sum_s y_s <= B_alpha; maximise the
minimum rate lambda <= sum_s r_n^s. C_s is the switch's ``aggregation_capacity`` minus
``aggregation_background`` (no constraint when the capacity is null), B_alpha the PS's access
link(s) toward the PS. Links inside the network are not in the model (the paper assumes them
sufficient); the shared evaluator judges them afterwards.

T, a deviation from the paper by default: section 4.2 defines T as "the maximum sending rate (i.e.,
the ingress bandwidth of the PS)"; we take each worker's access link (capacity minus background),
which no worker can exceed anyway, so the LP bound is tighter. Parameter ``T=ps-ingress`` follows the
paper. Figures: on GRID Fig. 1 (links 3 Gbps, PS ingress 9) the LP optimum is 3.0 with the worker
link and 3.9 with the paper's T; the paper's rounding then reaches 3.0 and 2.25 Gbps (the repair
brings the latter to 3.0). Where the access links equal the PS ingress (ARO's and GRID's
simulation settings, 100 Gbps everywhere) both give the same plan.

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

The ``exact`` variant (``grid-exact``) solves the MILP instead and uses its assignment; its
tie-break re-solves are MILPs too, each capped at ``TIE_MIP_FACTOR`` times the first (holding the
optimum can make one far harder: fat-tree k=8, 0.3 s and then past any limit). Like the
paper, GRID is pipeline-agnostic: flows merged at a multi-pipeline switch may form several
aggregates, which the evaluator counts.

Routes: GRID picks nodes, not paths. A worker aggregated at switch s follows a shortest path to s
and the aggregate a shortest path from s to the PS (one per task and switch: flows merged at s go on
together); a worker aggregated at the PS follows a shortest path to it. ``merge_at`` lists only the
chosen switch: GRID merges each gradient at most once (section 4.2, constraint 1), so flows that
merely pass a switch are not merged there. On tiered (Clos) networks the candidate aggregators of a
worker are the switches on some up-down path worker -> switch -> PS, as ARO section IV-A does when
it runs GRID; the rule applied is recorded in the plan's params (``aggregator_rule``).

Scale (issue 13): candidates come from the path index of :mod:`inaplanner.planners.paths` (closed
form distances on a Clos network), workers that Eq. (1) cannot tell apart share their LP variables
(:class:`Group`), and every phase honours the run's time limit with the ATP-style plan on default
paths as the fallback. Rules 5 and 6: see :class:`GridPlanner`. ``grid-aro-eval`` is GRID as ARO
section IV-A evaluates it (:class:`GridAroEval`).

Final rates come from the evaluator (:func:`inaplanner.planners.ina_common.finish_plan`); the plan's
``bound`` is the LP optimum (the MILP's dual bound for ``grid-exact``), an upper bound on every plan
of this form since the LP's constraints are implied by the evaluator's rules 3-4.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pulp

from inaplanner.errors import InaplannerError, PlanError
from inaplanner.evaluate import MU
from inaplanner.model import Plan, PlannerInfo, Route, Scenario, Switch, Task
from inaplanner.planners.base import Param, Progress
from inaplanner.planners.deadline import Deadline, ModelTooLarge, OutOfTime
from inaplanner.planners.ina_common import (
    access_capacity,
    atp_style,
    default_paths_plan,
    equal_split,
    fan_in_limit,
    finish_plan,
    report,
    rng_for,
    status_for,
    switch_room,
)
from inaplanner.planners.paths import PATH_LIMIT, Paths
from inaplanner.planners.rounding import draw
from inaplanner.planners.solver import CancelToken, WarmLp, new_variable, solve

RULES = {
    "updown": "up-down: switches on an up-down path worker -> switch -> PS (ARO section IV-A)",
    "any": "any programmable switch that shortest paths worker -> switch -> PS join into a simple path",
}

Link = tuple[str, str]
#: bisection steps on the share of the LP's task rates the repair aims at
REPAIR_STEPS = 7
#: R-GRIA draws stop after this many draws in a row without a better plan
ROUND_PATIENCE = 4
#: The repair weighs the moves of at most this many workers (a seeded sample) per step; 32 and 24
#: were measured 10-15 % faster on leaf-spine lambda = 3 but lost 27 % on one seed of three.
REPAIR_MOVERS = 48
#: ``grid-exact``: each MILP re-solve of the link tie-break gets at most this many times what the
#: first MILP took (at least 1 s, at most half the time left)
TIE_MIP_FACTOR = 5.0
#: A GRIA model is refused past this many columns. ``grid-exact``'s MILP (a binary x and a rate r
#: per worker group and candidate): PuLP's model takes about 5.6 kB a column (fat-tree k=32, 200 /
#: 500 / 1,000 workers per job: 592 MB, 1.3 GB, 2.5 GB at peak), and at that size HiGHS solves
#: none of them in 60 s. ``grid``'s LP (an r each): k=32 with 1,000 workers per job has 105,000
#: and solves in 39 s (758 MB at peak); k=64 with 1,000 has 703,000, took 3.8 GB and solved
#: nothing in 60 s
GRIA_MAX_COLUMNS = 150_000
#: The link tie-break is skipped when its link rows would have more nonzeros than this. They are
#: held as PuLP terms and then in HiGHS, about 0.4 kB a nonzero in all: fat-tree k=32 with 500
#: workers per job has 1.74 million (15,316 links), and they took GRID from 453 MB to 1.1 GB
#: at peak, for a re-solve the 60 s limit then cut (the plan the same); with 200 workers per job
#: 0.91 million (up to 705 MB at peak)
TIE_MAX_NONZEROS = 1_000_000


def aggregator_rule(sc: Scenario, choice: str) -> str:
    """Resolve the ``aggregators`` parameter: ``auto`` is up-down on tiered networks, else any."""
    if choice == "auto":
        return "updown" if sc.is_tiered() else "any"
    if choice == "updown" and not sc.is_tiered():
        raise InaplannerError("aggregators=updown needs a tiered scenario (every switch with a tier)")
    if choice == "any" and sc.is_tiered():
        raise InaplannerError("aggregators=any would route over valley paths, which a Clos network "
                              "forbids (CONTRACTS.md rule 6): use auto or updown")
    return choice


@dataclass
class Group:
    """Workers of one task that GRIA cannot tell apart: the same access switches and the same T.

    Eq. (1) is symmetric in such workers (same candidates, hop counts and default paths past the
    access link), so the LP has an optimum that gives them equal rates, and one set of rate
    variables per group (each member's rate; loads count ``len(members)`` times) has the same
    optimum as the per-worker LP. The MILP (``grid-exact``) keeps one group per worker."""

    key: tuple
    members: list[str]
    t_cap: float
    nodes: list[str] = field(default_factory=list)  # candidate switches, then the PS
    hops: dict[str, int] = field(default_factory=dict)  # node -> hops worker -> node -> PS
    arrive: dict[str, tuple[int, ...]] = field(default_factory=dict)  # switch -> arrival phases
    checked: set[str] = field(default_factory=set)  # switches where a repeated node was possible


@dataclass
class Candidates:
    """Per task the worker groups with their candidate aggregation nodes; per (task, switch) the
    aggregate's start phase and arrival phases. ECMP link shares are computed on demand."""

    paths: Paths
    groups: dict[Task, list[Group]] = field(default_factory=dict)
    agg: dict[tuple[Task, str], tuple[int, tuple[int, ...]]] = field(default_factory=dict)
    _spread: dict[tuple, dict[Link, float]] = field(default_factory=dict, repr=False)
    _counts: dict[tuple, int] = field(default_factory=dict, repr=False)  # links of uncached shares

    @property
    def workers(self) -> dict[Task, dict[str, list[str]]]:
        """Each worker's candidate switches (the PS excluded), per task."""
        return {t: {n: g.nodes[:-1] for g in gs for n in g.members} for t, gs in self.groups.items()}

    def group_of(self, task: Task) -> dict[str, Group]:
        return {n: g for g in self.groups[task] for n in g.members}

    def worker_links(self, task: Task, g: Group, node: str) -> dict[Link, float]:
        """ECMP share of a member's traffic worker -> node per directed link, its access link left
        out (Eq. (1)'s T already bounds it). Shared by every group with the same access switches."""
        key = self._worker_key(g, node)
        if key not in self._spread:
            self._spread[key] = self._worker_spread(g, node)
        return self._spread[key]

    def agg_links(self, task: Task, s: str) -> dict[Link, float]:
        key = ("a", s, task.ps)
        if key not in self._spread:
            self._spread[key] = self._agg_spread(task, s)
        return self._spread[key]

    def worker_link_count(self, g: Group, node: str) -> int:
        """How many links :meth:`worker_links` gives, without keeping shares not cached already
        (fat-tree k=32 with 500 workers per job: kept, they took 230 MB)."""
        return self._count(self._worker_key(g, node), lambda: self._worker_spread(g, node))

    def agg_link_count(self, task: Task, s: str) -> int:
        """How many links :meth:`agg_links` gives, as :meth:`worker_link_count`."""
        return self._count(("a", s, task.ps), lambda: self._agg_spread(task, s))

    def _count(self, key: tuple, make: Callable[[], dict[Link, float]]) -> int:
        if key in self._spread:
            return len(self._spread[key])
        if key not in self._counts:
            self._counts[key] = len(make())
        return self._counts[key]

    @staticmethod
    def _worker_key(g: Group, node: str) -> tuple:
        return ("w", g.key[0], node, g.arrive.get(node, (0, 1)))

    def _worker_spread(self, g: Group, node: str) -> dict[Link, float]:
        return self.paths.spread(g.members[0], node, ends=g.arrive.get(node, (0, 1)), skip_first=True)

    def _agg_spread(self, task: Task, s: str) -> dict[Link, float]:
        return self.paths.spread(s, task.ps, start=self.agg[(task, s)][0])


def _checked_hops(paths: Paths, n: str, s: str, ps: str, arrive: tuple[int, ...],
                  max_options: int) -> int | None:
    """Hops of a simple path n -> s -> ps (s's aggregate on one of its first ``max_options``
    shortest paths, the worker's path avoiding it), None when none of them joins."""
    options, _ = paths.aggregate_paths(s, ps, limit=max_options)
    for opt in options:
        wp = paths.worker_paths(n, s, opt, arrive, limit=1)
        if wp:
            return len(wp[0]) - 1 + len(opt) - 1
    return None


def gria_candidates(sc: Scenario, paths: Paths, *, singletons: bool = False, max_options: int = 4,
                    deadline: Deadline | None = None, cancel: CancelToken | None = None,
                    allowed: Callable[[str, str, str], bool] | None = None,
                    t_rule: str = "worker-link") -> Candidates:
    """Which switches may aggregate which workers of which task, with hop counts.

    Distances come from the path index (closed form on a Clos network), one evaluation per worker
    group and switch. A path worker -> s -> PS built from two shortest valid segments can repeat
    a node only if the worker and the PS share an ancestor ranked below s (proof: a repeated node
    lies below s on the worker's climb and on the aggregate's descent, hence above both ends);
    only then are concrete paths searched (the first ``max_options`` aggregate paths, the worker's
    path avoiding them). Off Clos networks every pair is searched that way."""
    out = Candidates(paths)
    switches = [s for s in sc.switches() if s.programmable and (switch_room(s) is None or switch_room(s) > 0)]
    for task in sc.tasks():
        job = sc.job(task.job)
        ps = task.ps
        aggs: dict[str, tuple[tuple[int, ...], int]] = {}
        for s in switches:
            start, arrive, d2 = paths.aggregate_start(s.id, ps)
            if d2 is None:
                continue
            aggs[s.id] = (arrive, d2)
            out.agg[(task, s.id)] = (start, arrive)
        keyed: dict[tuple, list[str]] = {}
        b_ps = access_capacity(sc, ps, inbound=True)
        for n in job.workers:
            t_cap = access_capacity(sc, n, inbound=False) if t_rule == "worker-link" else b_ps
            key = ((n,), t_cap) if singletons else (paths.attach(n), t_cap)
            keyed.setdefault(key, []).append(n)
        groups: list[Group] = []
        for gi, (key, members) in enumerate(keyed.items()):
            if deadline is not None and gi % 8 == 0:
                deadline.check(cancel)
            rep = members[0]
            g = Group(key, members, key[1])
            d0 = paths.distance(rep, ps)
            if d0 is None:
                raise PlanError(f"no {'up-down ' if paths.updown else ''}path from worker {rep} to PS {ps}")
            shared: dict[int, bool] = {}  # common_below(rep, ps, rank) depends on s only by its rank
            for sid, (arrive, d2) in aggs.items():
                if allowed is not None and not allowed(rep, sid, ps):
                    continue
                d1 = paths.distance(rep, sid, ends=arrive)
                if d1 is None:
                    continue
                rank = paths.rank[sid]
                if paths.updown and rank not in shared:
                    shared[rank] = paths.common_below(rep, ps, rank)
                if not paths.updown or shared[rank]:
                    hops = _checked_hops(paths, rep, sid, ps, arrive, max_options)
                    if hops is None:
                        continue
                    g.checked.add(sid)
                else:
                    hops = d1 + d2
                g.nodes.append(sid)
                g.hops[sid] = hops
                g.arrive[sid] = arrive
            g.nodes.append(ps)
            g.hops[ps] = d0
            groups.append(g)
        out.groups[task] = groups
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
    tie_break: str = "not run"  # what the link tie-break did (run / skipped and why)
    #: the first optimum's rates when a tie-break or link model replaced them (rounded as well)
    first_rates: dict[tuple[Task, str], dict[str, float]] | None = None


def solve_gria(
    sc: Scenario,
    cands: Candidates,
    *,
    integer: bool,
    time_limit: float | None = None,
    cancel: CancelToken | None = None,
    links: str = "tie-break",
    deadline: Deadline | None = None,
    printed: bool = False,
    default_capacity: float | None = None,
) -> GriaSolution:
    """GRIA Eq. (1) (``integer``) or its LP relaxation, one block per task, rule-5 objective.

    ``links``: ``tie-break`` (among Eq. (1)'s optima, least link overload on the default paths, then
    fewest hop-Gbps), ``model`` (Eq. (1) plus the default paths' link capacities, then fewest
    hop-Gbps), ``ignore`` (the solver's optimum of Eq. (1)). ``printed`` keeps the relaxed x
    variables of Eq. (1) as the paper prints them (the GRID authors' LP; use one group per worker)
    instead of projecting them out. ``default_capacity`` is C_s in the model for switches whose
    capacity is null (ARO's evaluation of GRID uses 3200). The tie-break re-solves run only
    when they can change something: when the first optimum overloads a link of its default
    (ECMP-spread) paths. Otherwise the first optimum is already link-feasible on those paths and
    both re-solves were measured to return the same plans (see docs/scale.md). Nor do they run
    when their link rows would pass ``TIE_MAX_NONZEROS`` (memory) or less time is left than
    the first solve took."""
    deadline = deadline or Deadline(time_limit)
    started = deadline.elapsed()
    # an r per (worker group, candidate), and in the MILP an x each. ``printed`` (the benchmark's
    # reference, the GRID authors' LP) is built whatever its size: lambda = 5 has 243,000 columns
    columns = (2 if integer else 1) * sum(len(g.nodes) for groups in cands.groups.values() for g in groups)
    if columns > GRIA_MAX_COLUMNS and not printed:
        raise ModelTooLarge(f"the GRIA {'MILP' if integer else 'LP'} would have {columns:,} columns, over "
                            f"{GRIA_MAX_COLUMNS:,} (memory: about 1 GB); the ATP-style plan is returned")
    prob = pulp.LpProblem("gria", pulp.LpMaximize)
    cat = pulp.LpBinary if integer else pulp.LpContinuous
    x: dict[tuple[Task, int, str], Any] = {}
    r: dict[tuple[Task, int, str], Any] = {}
    y: dict[tuple[Task, str], Any] = {}
    lam: dict[Task, Any] = {}
    mult: dict[tuple[Task, int, str], int] = {}
    count = 0

    def var(low: float = 0.0, up: float | None = None, kind: str = pulp.LpContinuous):
        nonlocal count
        count += 1
        return new_variable(prob, f"v{count}", low, up, kind)

    b_cap = {ps: access_capacity(sc, ps, inbound=True) for j in sc.jobs for ps in j.parameter_servers}
    by_switch: dict[str, list[Any]] = {}
    by_ps: dict[str, list[Any]] = {}
    by_worker: dict[tuple[str, tuple], tuple[float, list[Any]]] = {}
    for task, groups in cands.groups.items():
        lam[task] = var()
        used: dict[str, list[int]] = {}
        for gi, g in enumerate(groups):
            if gi % 64 == 0:
                deadline.check(cancel)
            m = len(g.members)
            total = []
            for s in g.nodes:
                k = (task, gi, s)
                r[k] = var()
                mult[k] = m
                if integer or printed:
                    x[k] = var(0.0, 1.0, cat)
                    prob += r[k] <= g.t_cap * x[k]
                total.append(r[k])
                if s != task.ps:
                    used.setdefault(s, []).append(gi)
                    by_switch.setdefault(s, []).append(m * r[k])
            if integer or printed:
                prob += pulp.lpSum(x[(task, gi, s)] for s in g.nodes) == 1
            # relaxed, x_n^s = r_n^s / T_n satisfies r <= x T and sum_s x <= 1 (padding x_n^alpha
            # up to 1 keeps it feasible), so x is projected out: sum_s r_n^s <= T_n below suffices
            prob += lam[task] <= pulp.lpSum(total)
            by_worker.setdefault((task.job, g.key), (g.t_cap, []))[1].extend(total)
            by_ps.setdefault(task.ps, []).append(m * r[(task, gi, task.ps)])
        for s in sorted(used):
            y[(task, s)] = var()
            by_ps.setdefault(task.ps, []).append(y[(task, s)])
            for gi in used[s]:
                prob += r[(task, gi, s)] <= y[(task, s)]
    deadline.check(cancel)
    for s, terms in by_switch.items():
        node = sc.node(s)
        assert isinstance(node, Switch)
        room = switch_room(node)
        if room is None and default_capacity is not None:
            room = max(default_capacity - node.aggregation_background, 0.0)
        if room is not None:
            prob += pulp.lpSum(terms) <= room
    for ps, terms in by_ps.items():
        prob += pulp.lpSum(terms) <= b_cap[ps]
    for t_cap, terms in by_worker.values():
        prob += pulp.lpSum(terms) <= t_cap
    # CONTRACTS.md rule 7 (objectives)
    jobs = sc.jobs
    thr = {j.id: pulp.lpSum(lam[t] for t in cands.groups if t.job == j.id) for j in jobs}
    if len(jobs) == 1:
        objective = thr[jobs[0].id]
    else:
        z = var()
        for j in jobs:
            prob += z <= j.weight * thr[j.id]
        objective = z + MU * pulp.lpSum(j.weight * thr[j.id] for j in jobs)
    prob += objective
    deadline.check(cancel)
    built = deadline.elapsed() - started
    if deadline.remaining() < built:  # handing the model over takes about as long as building it
        raise OutOfTime("the GRIA LP could not be solved within the time limit (building it took "
                        f"{built:.1f} s)")
    given = deadline.solver_seconds()
    # the MILP's solutions are not yet plans (links are judged after rounding): its bound only
    res = solve(prob, time_limit=given, cancel=cancel, reports="bound")
    if res.objective is None or res.status == "infeasible":
        if res.status == "timeout" or deadline.expired() or res.seconds >= 0.9 * given:
            raise OutOfTime("the GRIA model found no solution within the time limit")
        raise PlanError("GRIA model has no solution")
    best = float(res.objective)
    bound = res.bound if res.status == "optimal" else (res.bound if integer else None)
    values = first_values = _values(x, r, lam)
    rounded_from = best
    tie = "not run"
    always = links == "tie-break-always"  # for measurements: the re-solves even when useless
    links = "tie-break" if always else links
    eligible = links != "ignore" and res.status == "optimal" and best > 1e-12 and not deadline.expired()
    if eligible and deadline.remaining() < res.seconds:
        # the link rows and a re-solve cost about what the first solve did (fat-tree k=32 with
        # 1,000 workers per job: 39 s, then 35 s and 0.8 GB for the rows alone)
        tie = "skipped: less time left than the first solve took"
    elif eligible and not always and (why := _link_rows_too_large(cands, r, y, deadline, cancel)):
        tie = why
    elif eligible:
        terms = _link_terms(cands, r, y, mult)
        caps = {e: _room(sc, e) for e in terms}
        excess = {e: load - caps[e] for e, load in _loads(terms).items()}
        if links == "tie-break" and sum(max(x, 0.0) for x in excess.values()) <= 1e-9 and not always:
            tie = "skipped: the optimum overloads no link of its default paths"
        else:
            tie = "run"
            hot = {e for e, x in excess.items() if x > 0}
            # a MILP re-solve holding the optimum can be far harder than the first solve (fat-tree
            # k=8: 0.3 s, then past a 60 s limit, which left the rounding no time and the plan the
            # fallback's): each gets a few times what the first took, and half the time left
            cap = min(max(TIE_MIP_FACTOR * res.seconds, 1.0), 0.5 * deadline.remaining()) if integer else None
            values, rounded_from, cut = _tie_break(prob, objective, best, links, terms, caps, hot, cands, r,
                                                   mult, var, deadline, cancel, lambda: _values(x, r, lam), values,
                                                   cap)
            if cut:
                tie = ("cut short by the time limit" if cap is None or deadline.expired()
                       else f"cut short: a MILP re-solve ran past its {cap:.3g} s")
    xv, rv, lv = values

    def per_worker(vals: dict) -> dict[tuple[Task, str], dict[str, float]]:
        out: dict[tuple[Task, str], dict[str, float]] = {}
        for task, groups in cands.groups.items():
            for gi, g in enumerate(groups):
                row = {s: vals.get((task, gi, s), 0.0) for s in g.nodes}
                for n in g.members:
                    out[(task, n)] = row
        return out

    first = per_worker(first_values[1]) if values is not first_values else None
    return GriaSolution(per_worker(rv), per_worker(xv), lv, best, rounded_from, bound, res.status,
                        res.solver, tie, first)


def _room(sc: Scenario, e: Link) -> float:
    lk = sc.link_between(*e)
    assert lk is not None
    return max(lk.capacity - lk.background_from(e[0]), 0.0)


def _tie_break(prob: pulp.LpProblem, objective: Any, best: float, links: str, terms: dict, caps: dict,
               hot: set[Link], cands: Candidates, r: dict, mult: dict, var: Callable, deadline: Deadline,
               cancel: CancelToken | None, read: Callable[[], tuple], values: tuple,
               cap: float | None = None) -> tuple[tuple, float, bool]:
    """The re-solves of :func:`solve_gria`'s link tie-break, each from the last basis: (``model``)
    Eq. (1) with the default paths' link capacities, then, holding the objective, (``tie-break``)
    the least overload of those links, then the fewest hop-Gbps. Returns the values of the last
    stage solved, the objective the rounding starts from, and whether the limit (or ``cap``,
    seconds per re-solve) cut a stage (its building or its solve: the stages solved before it
    stand)."""
    rounded_from = best
    hold = best
    warm = WarmLp(prob)
    try:
        if links == "model":
            for n, (e, row) in enumerate(terms.items()):
                if n % 256 == 0:
                    deadline.check(cancel)
                warm.add(pulp.LpAffineExpression(list(row.items())) <= caps[e])
            step = _try_solve(warm, objective, False, deadline, cancel, cap)
            if step is not None:
                hold = rounded_from = float(step.objective)
                values = read()
        warm.add(objective >= hold * (1.0 - 1e-7), "hold_objective")
        stages = []
        if links == "tie-break":
            stages.append(_overload(terms, caps, hot, warm, var, deadline, cancel))
        hop_terms = []
        for (task, gi, s), v in r.items():
            g = cands.groups[task][gi]
            hop_terms.append(g.hops[s] * mult[(task, gi, s)] * v)
        stages.append(pulp.lpSum(hop_terms))
        for si, stage in enumerate(stages):
            step = _try_solve(warm, stage, True, deadline, cancel, cap)
            if step is None:
                return values, rounded_from, True
            values = read()
            if si + 1 < len(stages):
                warm.add(stage <= float(step.objective) * (1.0 + 1e-7) + 1e-9, f"hold_stage{si}")
    except OutOfTime:
        return values, rounded_from, True
    return values, rounded_from, False


def _try_solve(warm: WarmLp, objective: Any, minimize: bool, deadline: Deadline, cancel: CancelToken | None,
               cap: float | None = None):
    """A follow-up solve of ``objective`` in the time left (at most ``cap`` seconds), from the last
    basis; None when it yields nothing usable (the previous values stay)."""
    if deadline.expired():
        return None
    given = deadline.solver_seconds() if cap is None else min(deadline.solver_seconds(), cap)
    try:
        step = warm.solve(objective, minimize=minimize, time_limit=given, cancel=cancel)
    except PlanError:
        return None
    if step.objective is None or step.status != "optimal":
        return None
    return step


def _link_terms(cands: Candidates, r, y, mult) -> dict[Link, dict]:
    """Directed link -> {variable: coefficient} of the rates crossing it on the default paths (ECMP
    spread evenly)."""
    terms: dict[Link, dict] = {}
    for (task, gi, s), v in r.items():
        g = cands.groups[task][gi]
        m = mult[(task, gi, s)]
        for e, share in cands.worker_links(task, g, s).items():
            row = terms.setdefault(e, {})
            row[v] = row.get(v, 0.0) + share * m
    for (task, s), v in y.items():
        for e, share in cands.agg_links(task, s).items():
            row = terms.setdefault(e, {})
            row[v] = row.get(v, 0.0) + share
    return terms


def _link_nonzeros(cands: Candidates, r, y, deadline: Deadline, cancel: CancelToken | None,
                   most: float = math.inf) -> int:
    """The nonzeros :func:`_link_terms` would make, counted from the ECMP shares without building
    its rows or keeping shares (each variable enters a link's row once); the count stops once it
    passes ``most`` (fat-tree k=32 with 500 workers per job: 1.8 s for all 1.74 million)."""
    counts = itertools.chain((cands.worker_link_count(cands.groups[task][gi], s) for task, gi, s in r),
                             (cands.agg_link_count(task, s) for task, s in y))
    total = 0
    for n, links in enumerate(counts):
        if n % 1024 == 0:
            deadline.check(cancel)
        total += links
        if total > most:
            break
    return total


def _link_rows_too_large(cands: Candidates, r, y, deadline: Deadline, cancel: CancelToken | None) -> str:
    """Why the tie-break's link rows are not built: over ``TIE_MAX_NONZEROS`` (their memory), or
    the limit ran out while they were counted; "" when they may be built."""
    try:
        if _link_nonzeros(cands, r, y, deadline, cancel, TIE_MAX_NONZEROS) > TIE_MAX_NONZEROS:
            return f"skipped: its link rows would have more than {TIE_MAX_NONZEROS:,} nonzeros (memory)"
    except OutOfTime:
        return "cut short by the time limit"
    return ""


def _loads(terms: dict[Link, dict]) -> dict[Link, float]:
    """Gbps on each link of the default paths for the variables' current values."""
    return {e: sum(c * float(v.value() or 0.0) for v, c in row.items()) for e, row in terms.items()}


def _overload(terms: dict[Link, dict], caps: dict[Link, float], hot: set[Link], warm: WarmLp, var,
              deadline: Deadline, cancel: CancelToken | None):
    """Sum over directed links of the Gbps above capacity (minus background) on the default paths;
    adds one overload variable and row per used link to the model and returns the sum. The
    re-solve starts where the last one ended with each overloaded link's variable at its overload
    (basic in its row's place), a feasible start (:meth:`WarmLp.add_row`); ``hot``: the links
    the current values overload."""
    over = []
    for n, (e, row) in enumerate(terms.items()):
        if n % 256 == 0:
            deadline.check(cancel)
        o = var()
        warm.add_row([(o, 1.0), *((v, -c) for v, c in row.items())], -caps[e], math.inf,  # o >= load - cap
                     basic=o if e in hot else None)
        over.append(o)
    return pulp.lpSum(over)


def _values(x, r, lam):
    def val(v) -> float:
        out = v.value()
        return max(float(out), 0.0) if out is not None else 0.0

    return ({k: val(v) for k, v in x.items()}, {k: val(v) for k, v in r.items()}, {k: val(v) for k, v in lam.items()})


# ---- routes --------------------------------------------------------------------------------------


class Layout:
    """One task's routes in GRID's form: each worker's aggregation node, its path there (the whole
    path when the node is the PS) and one path per aggregate switch to the PS."""

    def __init__(self, task: Task, workers: list[str]) -> None:
        self.task = task
        self.workers = workers
        self.node: dict[str, str] = {}
        self.wpath: dict[str, list[str]] = {}
        self.apath: dict[str, list[str]] = {}

    def copy(self) -> Layout:
        out = Layout(self.task, self.workers)
        out.node = dict(self.node)
        out.wpath = dict(self.wpath)
        out.apath = dict(self.apath)
        return out

    def routes(self) -> list[Route]:
        out = []
        for n in self.workers:
            s = self.node[n]
            if s == self.task.ps:
                out.append(Route(n, list(self.wpath[n]), []))
            else:
                out.append(Route(n, [*self.wpath[n], *self.apath[s][1:]], [s]))
        return out


def _worker_path(paths: Paths, n: str, s: str, apath: list[str], arrive: tuple[int, ...],
                 rng, checked: bool) -> list[str] | None:
    """A seeded shortest path worker -> s that joins ``apath`` into a simple path."""
    wp = paths.random_shortest(n, s, rng, ends=arrive)
    if wp is not None and not (checked and set(wp[:-1]) & set(apath)):
        return wp
    alt = paths.worker_paths(n, s, apath, arrive, limit=PATH_LIMIT)
    return rng.choice(alt) if alt else None


def build_layouts(sc: Scenario, cands: Candidates, assignment: dict[tuple[Task, str], str], rng,
                  deadline: Deadline | None = None, cancel: CancelToken | None = None,
                  ) -> tuple[dict[Task, Layout], int]:
    """Routes for an assignment worker -> aggregation node (a switch or the PS), ECMP choices drawn
    from ``rng``. Returns the layouts and how many workers had to go to the PS unaggregated because
    no simple path joined them to the aggregate's path (0 on Clos networks but for switches above
    a common ancestor of worker and PS)."""
    paths = cands.paths
    layouts: dict[Task, Layout] = {}
    repairs = 0
    for task in sc.tasks():
        if deadline is not None:
            deadline.check(cancel)
        job = sc.job(task.job)
        lay = Layout(task, list(job.workers))
        group = cands.group_of(task)
        members: dict[str, list[str]] = {}
        for n in job.workers:
            members.setdefault(assignment[(task, n)], []).append(n)
        direct = list(members.pop(task.ps, []))
        for s, ms in members.items():
            start, arrive = cands.agg[(task, s)]
            checked = any(s in group[n].checked for n in ms)
            if checked:
                options, _ = paths.aggregate_paths(s, task.ps, limit=8)
                order = list(range(len(options)))
                rng.shuffle(order)
                best: tuple[list[str], dict[str, list[str]]] | None = None
                for oi in order:
                    got = {}
                    for n in ms:
                        wp = _worker_path(paths, n, s, options[oi], arrive, rng, True)
                        if wp is not None:
                            got[n] = wp
                    if best is None or len(got) > len(best[1]):
                        best = (options[oi], got)
                    if len(got) == len(ms):
                        break
                assert best is not None
                apath, got = best
            else:
                apath = paths.random_shortest(s, task.ps, rng, start=start) or []
                got = {n: wp for n in ms
                       if (wp := _worker_path(paths, n, s, apath, arrive, rng, False)) is not None}
            if got:
                lay.apath[s] = apath
            for n in ms:
                if n in got:
                    lay.node[n] = s
                    lay.wpath[n] = got[n]
                else:
                    direct.append(n)
                    repairs += 1
        for n in direct:
            wp = paths.random_shortest(n, task.ps, rng)
            if wp is None:
                raise PlanError(f"no path from worker {n} to PS {task.ps}")
            lay.node[n] = task.ps
            lay.wpath[n] = wp
        layouts[task] = lay
    return layouts, repairs


def capped_rounding(sc: Scenario, cands: Candidates, sol: GriaSolution, rng,
                    exact: bool = False) -> dict[tuple[Task, str], str]:
    """R-GRIA's draw (Alg. 1 lines 5-7: node s with probability r~_n^s / sum_s r~_n^s), workers in
    job order, with CONTRACTS.md rule 5: once ``max_fan_in`` workers of a task are drawn to a
    switch, the switch leaves the later workers' choice (their probabilities renormalised over the
    other nodes; the PS when nothing else is left). GRID merges each gradient once, at the node
    drawn, so the group at a switch is exactly its drawn workers: the limit is kept per switch
    (any pipeline), which is never looser than rule 5. ``exact`` takes each row's largest x."""
    limit = {s.id: fan_in_limit(s) for s in sc.switches() if s.programmable}
    out: dict[tuple[Task, str], str] = {}
    for task in sc.tasks():
        count: dict[str, int] = {}
        for n in sc.job(task.job).workers:
            key = (task, n)
            row = sol.chosen[key] if exact else sol.rates[key]
            nodes = [s for s in row if s == task.ps or count.get(s, 0) < limit[s]]
            if exact:
                pick = max(nodes, key=lambda s: row[s])
            else:
                weights = [row[s] for s in nodes]
                if sum(weights) <= 1e-12 and sum(row.values()) > 1e-12:
                    pick = task.ps  # every switch the LP chose is full: the PS aggregates
                else:
                    pick = nodes[draw(weights, rng)]
            out[key] = pick
            if pick != task.ps:
                count[pick] = count.get(pick, 0) + 1
    return out


def _with_rates(sol: GriaSolution, rates: dict[tuple[Task, str], dict[str, float]]) -> GriaSolution:
    return GriaSolution(rates, sol.chosen, sol.task_rate, sol.objective, sol.rounded_objective,
                        sol.bound, sol.status, sol.solver, sol.tie_break)


def lp_split(sc: Scenario, task_rate: dict[Task, float]) -> dict[Task, float]:
    """Each job's model split from the LP's task rates (equal when the job's LP rates are all 0)."""
    split: dict[Task, float] = {}
    for j in sc.jobs:
        rates = [max(task_rate.get(Task(j.id, ps), 0.0), 0.0) for ps in j.parameter_servers]
        total = sum(rates)
        for ps, rate in zip(j.parameter_servers, rates, strict=True):
            split[Task(j.id, ps)] = rate / total if total > 1e-12 else 1.0 / len(j.parameter_servers)
    return split


# ---- repair ----------------------------------------------------------------------------------------


class _Loads:
    """Link and switch loads of GRID layouts at fixed task rates (the repair's own tally; the
    evaluator judges the result). The overloaded links and switches are kept as a set, so finding
    the worst one costs what is overloaded, not every link."""

    def __init__(self, sc: Scenario, layouts: dict[Task, Layout], rate: dict[Task, float]) -> None:
        self.sc = sc
        self.rate = rate
        self.load: dict[Link, float] = {}
        self.cap: dict[Link, float] = {}
        self.sw: dict[str, float] = {}
        self.sw_cap: dict[str, float] = {}
        self.members: dict[Task, dict[str, int]] = {t: {} for t in layouts}  # workers per node
        self.over: set[Link] = set()
        self.sw_over: set[str] = set()
        self._rank: dict[Link, int] = {}  # insertion order of ``load``'s keys (ties in worst())
        self._sw_rank: dict[str, int] = {}
        for s in sc.switches():
            room = switch_room(s)
            if s.programmable and room is not None:
                self.sw_cap[s.id] = room
        for lk in sc.links:
            for u, v in ((lk.a, lk.b), (lk.b, lk.a)):
                self.cap[(u, v)] = max(lk.capacity - lk.background_from(u), 0.0)
        for task, lay in layouts.items():
            for n in lay.workers:
                self._add_path(lay.wpath[n], rate[task])
                s = lay.node[n]
                if s != task.ps:
                    self._sw_rank.setdefault(s, len(self._sw_rank))
                    self.sw[s] = self.sw.get(s, 0.0) + rate[task]
                    mt = self.members[task]
                    mt[s] = mt.get(s, 0) + 1
            for s, p in lay.apath.items():
                if self.members[task].get(s):
                    self._add_path(p, rate[task])
        self.over = {e for e, ld in self.load.items() if ld - self.cap[e] > 1e-9}
        self.sw_over = {s for s, ld in self.sw.items() if s in self.sw_cap and ld - self.sw_cap[s] > 1e-9}
        # the same loads as arrays for weighing many moves at once (:meth:`deltas`): position 0 is
        # a dummy (load and capacity 0) that pads short change vectors, then every directed link,
        # then every switch with an aggregation limit
        self.pos: dict[Any, int] = {}
        for key in (*self.cap, *self.sw_cap):
            self.pos[key] = len(self.pos) + 1
        self.arr_load = np.zeros(len(self.pos) + 1)
        self.arr_cap = np.zeros(len(self.pos) + 1)
        for e, c in self.cap.items():
            self.arr_cap[self.pos[e]] = c
            self.arr_load[self.pos[e]] = self.load.get(e, 0.0)
        for sid, c in self.sw_cap.items():
            self.arr_cap[self.pos[sid]] = c
            self.arr_load[self.pos[sid]] = self.sw.get(sid, 0.0)

    def _add_path(self, p: list[str], r: float) -> None:
        for e in zip(p, p[1:], strict=False):
            self._rank.setdefault(e, len(self._rank))
            self.load[e] = self.load.get(e, 0.0) + r

    def worst(self) -> tuple[str, Any, float]:
        """The most overloaded link or switch: (kind, which, Gbps over), kind '' when none (ties:
        the first in link, then switch, order of first load)."""
        best: tuple[str, Any, float] = ("", None, 1e-9)
        for e in sorted(self.over, key=self._rank.__getitem__):
            ld = self.load[e]
            if ld - self.cap[e] > best[2]:
                best = ("link", e, ld - self.cap[e])
        for s in sorted(self.sw_over, key=self._sw_rank.__getitem__):
            ld = self.sw[s]
            if ld - self.sw_cap[s] > best[2]:
                best = ("switch", s, ld - self.sw_cap[s])
        return best

    def vector(self, changes: dict[Link, float], sw_changes: dict[str, float]) -> tuple[list[int], list[float]]:
        """The changes as positions in the load arrays and amounts: links, then the switches with
        an aggregation limit (others have no overload), each in its dict's order."""
        pos = self.pos
        idx = [pos[e] for e in changes]
        coef = list(changes.values())
        for sid, c in sw_changes.items():
            if sid in self.sw_cap:
                idx.append(pos[sid])
                coef.append(c)
        return idx, coef

    def deltas(self, idx: np.ndarray, coef: np.ndarray) -> np.ndarray:
        """The change of the total overload (Gbps above capacity) if each change vector were
        applied: rows of ``idx``/``coef`` from :meth:`vector`, padded with position 0. Each row is
        the sequential sum of max(load + c - cap, 0) - max(load - cap, 0) over its entries in
        order, the float a scalar loop gives bit for bit (tested), so the repair's choices, ties
        included, are those of weighing every move one by one."""
        old = self.arr_load[idx]
        room = self.arr_cap[idx]
        terms = np.maximum(old + coef - room, 0.0) - np.maximum(old - room, 0.0)
        out = terms[:, 0].copy()
        for j in range(1, terms.shape[1]):  # column by column: a sequential sum, as a scalar loop
            out += terms[:, j]
        return out

    def apply(self, changes: dict[Link, float], sw_changes: dict[str, float]) -> None:
        pos, arr = self.pos, self.arr_load
        for e, c in changes.items():
            self._rank.setdefault(e, len(self._rank))
            ld = self.load[e] = self.load.get(e, 0.0) + c
            arr[pos[e]] = ld
            if ld - self.cap[e] > 1e-9:
                self.over.add(e)
            else:
                self.over.discard(e)
        for s, c in sw_changes.items():
            self._sw_rank.setdefault(s, len(self._sw_rank))
            ld = self.sw[s] = self.sw.get(s, 0.0) + c
            if s in self.sw_cap:
                arr[pos[s]] = ld
            if s in self.sw_cap and ld - self.sw_cap[s] > 1e-9:
                self.sw_over.add(s)
            else:
                self.sw_over.discard(s)


class _MoveTable:
    """The repair's candidate moves, each weighed once per state it depends on.

    A move (task, worker, target) is a change vector of link and switch loads; it depends on the
    worker's current node and path (``moved``: the worker's move count), on whether the worker is
    its node's only member (its aggregate's path leaves with it) and on the target's state (empty,
    so a new aggregate path; open, joining the existing one; full under its fan-in limit; and how
    often it emptied, since a new aggregate may take another path). Its loads change every step,
    its vector does not: the vectors are kept as rows of two arrays and weighed together against
    the current loads (:meth:`_Loads.deltas`). Payloads are (worker path, aggregate path, link
    changes, switch changes), or None for a move that cannot be made. A second table keeps the
    moves of whole aggregates, keyed by (aggregate node, target); their state is who is at the
    aggregate node (a count of its membership changes), the target's aggregate path (how often
    it emptied) and whether the target has room for them all.

    Plans do not change: leaf-spine lambda = 3 with the 32-flow fan-in, seeds 0-2, and fat-trees
    k=8 and 16 give the same routes as weighing every move afresh at every step, with the repair
    taking about 4 s instead of 8 on lambda = 3 (docs/scale.md)."""

    def __init__(self, loads: _Loads) -> None:
        self.loads = loads
        #: per task, (worker, target) -> (the state it was weighed in, its row, its payload)
        self.entry: dict[Task, dict[tuple[str, str], tuple[tuple, int, Any]]] = {t: {} for t in loads.members}
        self.width = 16
        self.idx = np.zeros((256, self.width), dtype=np.intp)
        self.coef = np.zeros((256, self.width))
        self.rows = 0

    def put(self, task: Task, key: tuple[str, str], sig: tuple, payload: Any) -> tuple[tuple, int, Any]:
        """Record a move weighed in state ``sig`` (payload None: it cannot be made; else its last
        two items are its link and switch load changes); returns its entry."""
        got = self.entry[task].get(key)
        row = got[1] if got is not None else -1
        if payload is not None:
            idx, coef = self.loads.vector(payload[-2], payload[-1])
            if row < 0:
                row = self.rows
                self.rows += 1
                if row >= len(self.idx):
                    self.idx = np.concatenate([self.idx, np.zeros_like(self.idx)])
                    self.coef = np.concatenate([self.coef, np.zeros_like(self.coef)])
            if len(idx) > self.width:
                extra = max(len(idx), 2 * self.width) - self.width
                self.idx = np.pad(self.idx, ((0, 0), (0, extra)))
                self.coef = np.pad(self.coef, ((0, 0), (0, extra)))
                self.width += extra
            k = len(idx)
            self.idx[row, :k] = idx
            self.idx[row, k:] = 0
            self.coef[row, :k] = coef
            self.coef[row, k:] = 0.0
        out = self.entry[task][key] = (sig, row, payload)
        return out

    def deltas(self, rows: list[int]) -> np.ndarray:
        return self.loads.deltas(self.idx[rows], self.coef[rows])


class _MoverIndex:
    """Which workers' own flows cross a link, and which workers an aggregation node holds, kept
    up to date as the repair moves workers: finding the workers to try moving costs what crosses
    the overloaded link, not a scan of every worker's path. Movers come out in the order a scan
    of the layouts would give (task order, then worker order), so results do not change."""

    def __init__(self, layouts: dict[Task, Layout]) -> None:
        self.rank: dict[tuple[Task, str], tuple[int, int]] = {}
        self.wcross: dict[Link, set[tuple[Task, str]]] = defaultdict(set)
        self.acr: dict[Link, set[tuple[Task, str]]] = defaultdict(set)
        self.held: dict[tuple[Task, str], set[str]] = defaultdict(set)
        for ti, (task, lay) in enumerate(layouts.items()):
            for wi, n in enumerate(lay.workers):
                self.rank[(task, n)] = (ti, wi)
                self._path(task, n, lay.wpath[n], True)
                self.held[(task, lay.node[n])].add(n)
            for s0, ap in lay.apath.items():
                self.add_agg(task, s0, ap)

    def _path(self, task: Task, n: str, p: list[str], add: bool) -> None:
        for e in zip(p, p[1:], strict=False):
            if add:
                self.wcross[e].add((task, n))
            else:
                self.wcross[e].discard((task, n))

    def add_agg(self, task: Task, s0: str, ap: list[str]) -> None:
        for e in zip(ap, ap[1:], strict=False):
            self.acr[e].add((task, s0))

    def drop_agg(self, task: Task, s0: str, ap: list[str]) -> None:
        for e in zip(ap, ap[1:], strict=False):
            self.acr[e].discard((task, s0))

    def move(self, task: Task, n: str, old: str, old_path: list[str], new: str, new_path: list[str]) -> None:
        self._path(task, n, old_path, False)
        self._path(task, n, new_path, True)
        self.held[(task, old)].discard(n)
        self.held[(task, new)].add(n)

    def movers(self, kind: str, which: Any, layouts: dict[Task, Layout],
               members: dict[Task, dict[str, int]]) -> list[tuple[Task, str]]:
        """Workers on the overloaded switch, or whose own flow (raw to their node, or the
        aggregate they alone form) crosses the overloaded link."""
        found: set[tuple[Task, str]] = set()
        if kind == "switch":
            for task in layouts:
                if which != task.ps:
                    found.update((task, n) for n in self.held.get((task, which), ()))
        else:
            found.update(self.wcross.get(which, ()))
            for task, s0 in self.acr.get(which, ()):
                if s0 != task.ps and members[task].get(s0) == 1:
                    found.update((task, n) for n in self.held.get((task, s0), ()))
        return sorted(found, key=self.rank.__getitem__)


def _shift(changes: dict[Link, float], path: list[str], r: float) -> None:
    """Add ``r`` to every directed link of ``path`` in ``changes`` (a flow joining or, with r < 0,
    leaving it)."""
    for e in zip(path, path[1:], strict=False):
        changes[e] = changes.get(e, 0.0) + r


def _leaving(lay: Layout, n: str, r: float, members: dict[str, int]) -> tuple[dict[Link, float], dict[str, float]]:
    """The load changes of worker n leaving its node: its own flow, and the aggregate's path on
    when it is the node's only member (``members``: the task's workers per node)."""
    cur = lay.node[n]
    out_links: dict[Link, float] = {}
    out_sw: dict[str, float] = {}
    _shift(out_links, lay.wpath[n], -r)
    if cur != lay.task.ps:
        out_sw[cur] = -r
        if members.get(cur) == 1:
            _shift(out_links, lay.apath[cur], -r)
    return out_links, out_sw


def _leaving_group(lay: Layout, s0: str, held: set[str], rank: dict[tuple[Task, str], tuple[int, int]],
                   r: float) -> tuple[list[str], dict[Link, float]]:
    """The workers aggregated at s0 in worker order, and the link load changes of all of them
    leaving (the aggregate's path on, then each worker's own path)."""
    ms = sorted(held, key=lambda n: rank[(lay.task, n)])
    out: dict[Link, float] = {}
    _shift(out, lay.apath[s0], -r)
    for n in ms:
        _shift(out, lay.wpath[n], -r)
    return ms, out


def repair_layouts(sc: Scenario, cands: Candidates, layouts: dict[Task, Layout], rate: dict[Task, float],
                   rng, deadline: Deadline, cancel: CancelToken | None, max_moves: int | None = None,
                   ) -> tuple[dict[Task, Layout], int, bool]:
    """Make the rounded plan feasible at the given task rates by moving workers, instead of scaling
    every rate down (what max-min filling does to an overloaded rounding).

    Repeatedly take the most overloaded link (or switch) at the target rates; among the workers
    whose own flow crosses it (raw to their node, or the aggregate they alone form), try every other
    candidate node of theirs (another switch with room under its fan-in limit, or the PS) on a
    seeded shortest path and apply the move that lowers the total overload most. Stops when
    nothing is overloaded, when no move helps, after ``max_moves`` moves (default: four per worker)
    or at the time limit. Returns the new layouts, the number of moves and whether nothing is
    overloaded at the given rates."""
    layouts = {t: lay.copy() for t, lay in layouts.items()}
    loads = _Loads(sc, layouts, rate)
    limit = {s.id: fan_in_limit(s) for s in sc.switches() if s.programmable}
    groups = {t: cands.group_of(t) for t in layouts}
    moves = 0
    tabu: dict[Task, set[str]] = {}
    max_moves = max_moves if max_moves is not None else 4 * sum(len(lay.workers) for lay in layouts.values())
    paths = cands.paths
    feasible = False
    index = _MoverIndex(layouts)
    # one seeded draw per (worker, target, path to join) for the whole repair: the same candidate
    # move is weighed again at every step its link stays the worst, and drawing its paths afresh
    # each time was most of the repair's time (leaf-spine lambda = 3: 10-11 s instead of 17-23 s,
    # the same objectives on lambda = 3, docs/scale.md)
    drawn: dict[tuple, list[str] | None] = {}

    def cached(key: tuple, make: Callable[[], list[str] | None]) -> list[str] | None:
        if key not in drawn:
            drawn[key] = make()
        return drawn[key]

    def to_ps(n: str, ps: str) -> list[str] | None:
        return cached(("ps", n, ps), lambda: paths.random_shortest(n, ps, rng))

    def agg_path(node: str, ps: str, start: int) -> list[str] | None:
        return cached(("agg", node, ps, start), lambda: paths.random_shortest(node, ps, rng, start=start))

    def join(n: str, node: str, apath: list[str], arrive: tuple[int, ...], checked: bool) -> list[str] | None:
        return cached(("w", n, node, tuple(apath), arrive, checked),
                      lambda: _worker_path(paths, n, node, apath, arrive, rng, checked))

    table = _MoveTable(loads)
    moved: dict[Task, dict[str, int]] = {t: {} for t in layouts}  # moves of each worker so far
    emptied: dict[Task, dict[str, int]] = {t: {} for t in layouts}  # times each aggregate emptied

    def weigh(task: Task, n: str, node: str, out: tuple[dict[Link, float], dict[str, float]]) -> Any:
        """Moving worker n of task to node: (worker path, aggregate path, link changes, switch
        changes), None when it cannot be made (the node full, or no path)."""
        lay = layouts[task]
        r = rate[task]
        g = groups[task][n]
        ch = dict(out[0])
        sw = dict(out[1])
        apath = None
        if node == task.ps:
            wp = to_ps(n, node)
        else:
            if loads.members[task].get(node, 0) >= limit[node]:
                return None
            start, arrive = cands.agg[(task, node)]
            if loads.members[task].get(node):
                apath = lay.apath[node]
            else:
                apath = agg_path(node, task.ps, start)
                if apath is None:
                    return None
                _shift(ch, apath, r)
            wp = join(n, node, apath, arrive, node in g.checked)
            sw[node] = sw.get(node, 0.0) + r
        if wp is None:
            return None
        _shift(ch, wp, r)
        return wp, apath, ch, sw

    gtable = _MoveTable(loads)
    version: dict[Task, dict[str, int]] = {t: {} for t in layouts}  # membership changes per node

    def weigh_group(task: Task, s0: str, node: str, ms: list[str], out: dict[Link, float]) -> Any:
        """Moving the whole aggregate at s0 (workers ``ms``, leaving with load changes ``out``)
        to node: (new worker paths, link changes, switch changes), None when it cannot be made."""
        lay = layouts[task]
        r = rate[task]
        if node != task.ps and (loads.members[task].get(node, 0) + len(ms) > limit[node]
                                or any(node not in groups[task][n].nodes for n in ms)):
            return None
        ch = dict(out)
        sw = {s0: -r * len(ms)}
        new_paths = {}
        for n in ms:
            if node == task.ps:
                wp = to_ps(n, node)
            else:
                _start, arrive = cands.agg[(task, node)]
                wp = join(n, node, lay.apath[node], arrive, node in groups[task][n].checked)
                sw[node] = sw.get(node, 0.0) + r
            if wp is None:
                return None
            new_paths[n] = wp
            _shift(ch, wp, r)
        return new_paths, ch, sw

    while moves < max_moves:
        deadline.check(cancel)
        kind, which, _ = loads.worst()
        if not kind:
            feasible = True
            break
        movers = index.movers(kind, which, layouts, loads.members)
        if len(movers) > REPAIR_MOVERS:
            movers = rng.sample(movers, REPAIR_MOVERS)
        best: tuple[float, Any] | None = None
        rows: list[int] = []
        weighed: list[tuple[Task, str, str, Any]] = []
        special: list[bool] = []  # moves to the PS, or by a worker moved before
        for task, n in movers:
            lay = layouts[task]
            cur = lay.node[n]
            ps = task.ps
            mt, et, te = loads.members[task], emptied[task], table.entry[task]
            head = (moved[task].get(n, 0), cur != ps and mt.get(cur) == 1)
            again = n in tabu.get(task, ())
            out: tuple[dict[Link, float], dict[str, float]] | None = None
            for node in groups[task][n].nodes:
                if node == cur:
                    continue
                if node == ps:
                    sig: tuple = head
                else:
                    m = mt.get(node, 0)
                    sig = (head, et.get(node, 0), 0 if not m else 2 if m >= limit[node] else 1)
                got = te.get((n, node))
                if got is None or got[0] != sig:
                    if out is None:
                        out = _leaving(lay, n, rate[task], mt)
                    got = table.put(task, (n, node), sig, weigh(task, n, node, out))
                if got[2] is not None:
                    rows.append(got[1])
                    weighed.append((task, n, node, got[2]))
                    special.append(again or node == ps)
        if rows:
            ds = table.deltas(rows)
            # a move that only keeps the overload (a new aggregate others can then join) is
            # allowed once per worker, so the search can leave a plateau without cycling
            allowed = (ds <= 1e-9) & ((ds <= -1e-9) | ~np.array(special))
            if allowed.any():
                i = int(np.argmin(np.where(allowed, ds, np.inf)))  # the first of the best, as a scan
                task, n, node, (wp, apath, ch, sw) = weighed[i]
                best = (float(ds[i]), (task, n, node, wp, apath, ch, sw))
        if kind == "link":  # merge a whole aggregate crossing the link into another one (or the PS)
            grows: list[int] = []
            gweighed: list[tuple[Task, str, str, Any]] = []
            for task, lay in layouts.items():
                vt, et, mt, ge = version[task], emptied[task], loads.members[task], gtable.entry[task]
                for s0, ap in lay.apath.items():
                    if which not in zip(ap, ap[1:], strict=False):
                        continue
                    size, v0 = mt[s0], vt.get(s0, 0)
                    leave: tuple[list[str], dict[Link, float]] | None = None
                    for node in [t for t in lay.apath if t != s0] + [task.ps]:
                        # the state: who is at s0, and the target's aggregate path and room
                        sig = (v0,) if node == task.ps else (
                            v0, et.get(node, 0), mt.get(node, 0) + size <= limit[node])
                        got = ge.get((s0, node))
                        if got is None or got[0] != sig:
                            if leave is None:
                                leave = _leaving_group(lay, s0, index.held[(task, s0)], index.rank, rate[task])
                            got = gtable.put(task, (s0, node), sig, weigh_group(task, s0, node, *leave))
                        if got[2] is not None:
                            grows.append(got[1])
                            gweighed.append((task, s0, node, got[2]))
            if grows:
                gds = gtable.deltas(grows)
                ok = gds < -1e-9
                if best is not None:
                    ok &= gds < best[0]
                if ok.any():
                    i = int(np.argmin(np.where(ok, gds, np.inf)))  # the first of the best, as a scan
                    task, s0, node, (new_paths, ch, sw) = gweighed[i]
                    best = (float(gds[i]), ("group", task, s0, node, new_paths, ch, sw))
        if best is None:
            break
        if best[1][0] == "group":
            _, task, s0, node, new_paths, ch, sw = best[1]
            lay = layouts[task]
            index.drop_agg(task, s0, lay.apath[s0])
            del lay.apath[s0]
            mt, et, mv, vt = loads.members[task], emptied[task], moved[task], version[task]
            mt[s0] = 0
            et[s0] = et.get(s0, 0) + 1
            vt[s0] = vt.get(s0, 0) + 1
            vt[node] = vt.get(node, 0) + 1
            for n, wp in new_paths.items():
                mv[n] = mv.get(n, 0) + 1
                index.move(task, n, lay.node[n], lay.wpath[n], node, wp)
                lay.node[n] = node
                lay.wpath[n] = wp
                if node != task.ps:
                    mt[node] = mt.get(node, 0) + 1
            loads.apply(ch, sw)
            moves += 1
            continue
        task, n, node, wp, apath, ch, sw = best[1]
        tabu.setdefault(task, set()).add(n)
        lay = layouts[task]
        cur = lay.node[n]
        index.move(task, n, cur, lay.wpath[n], node, wp)
        mt, et, mv, vt = loads.members[task], emptied[task], moved[task], version[task]
        mv[n] = mv.get(n, 0) + 1
        vt[cur] = vt.get(cur, 0) + 1
        vt[node] = vt.get(node, 0) + 1
        if cur != task.ps:
            mt[cur] -= 1
            if not mt[cur]:
                index.drop_agg(task, cur, lay.apath[cur])
                del lay.apath[cur]
                et[cur] = et.get(cur, 0) + 1
        lay.node[n] = node
        lay.wpath[n] = wp
        if node != task.ps:
            if not mt.get(node):
                lay.apath[node] = apath
                index.add_agg(task, node, apath)
            mt[node] = mt.get(node, 0) + 1
        loads.apply(ch, sw)
        moves += 1
    return layouts, moves, feasible or not loads.worst()[0]


# ---- the planner -----------------------------------------------------------------------------------


def atp_on_routes(sc: Scenario, routes: dict[Task, list[Route]], split: dict[Task, float], name: str,
                  bound: float | None) -> tuple[Plan, float]:
    """The ATP-style plan on the same paths as ``routes`` (merges re-chosen by :func:`atp_style`)."""
    new = {t: atp_style(sc, [(r.worker, r.path) for r in rs]) for t, rs in routes.items()}
    plan, ev = finish_plan(sc, new, split, PlannerInfo(name), bound)
    return plan, ev.objective


class GridPlanner:
    """R-GRIA (``grid``) or the exact GRIA MILP (``grid-exact``).

    Limits and fan-in: every phase (candidates, model building, solving, rounding, routes, repair)
    checks the run's :class:`~inaplanner.planners.deadline.Deadline` (``time_limit`` in wall or CPU
    seconds, ``limit_kind``) and the cancel token. Before any of them the ATP-style plan on
    default paths is built, so a plan exists whatever phase the limit cuts; the plan's status is
    then ``timeout``. Rule 5 (``max_fan_in``): GRID's logic is a per-worker choice of one
    aggregation node, so a full switch drops out of the later workers' draw and they take their
    next choice by the LP's weights (another switch, else the PS), see :func:`capped_rounding`.
    The repair and the ATP-style plans respect the same limit.

    Rounding and repair: the paper's rounding (best of ``rounds`` draws) often overloads links the
    LP never saw; the plan returned is the best of that rounding (``rounded_objective``), the
    repair of it (:func:`repair_layouts`, ``repaired_objective``), the ATP-style plan on the same
    routes and the ATP-style plan on default paths, all evaluated by the evaluator."""

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
                  "roundings at most (ECMP path draws for the exact variant), stopping after 4 in a "
                  "row without a better plan; the best evaluated plan is kept",
                  min=1, max=100000),
            Param("aggregators", str, "auto",
                  "candidate aggregators: auto (up-down on tiered networks, else any), updown, any",
                  choices=("auto", "updown", "any")),
            Param("links", str, "tie-break",
                  "links in the model R-GRIA rounds: tie-break (Eq. 1 as the paper; among its optima "
                  "the least link overload on the default paths, run only when the first optimum "
                  "overloads one), model (Eq. 1 plus the default paths' link capacities; our "
                  "extension), ignore (the solver's optimum of Eq. 1)",
                  choices=("tie-break", "model", "ignore")),
            Param("T", str, "worker-link",
                  "GRID's maximum sending rate T: worker-link (each worker's access link, our "
                  "default) or ps-ingress (the PS's ingress bandwidth, as the paper defines T)",
                  choices=("worker-link", "ps-ingress")),
            Param("repair", bool, True,
                  "repair the best rounding (move workers off overloaded links) and compare with the "
                  "ATP-style plan on the same routes; off: the paper's rounding only"),
            Param("repair_budget", float, 1.0,
                  "the repair moves workers at most this many times per worker flow in all (its time "
                  "grows with the moves; a count, so a seed gives the same plan on any machine); "
                  "0: only the time limit bounds it",
                  min=0.0, max=1000.0),
        )

    def plan(self, scenario: Scenario, params: dict[str, Any], progress: Progress, cancel: CancelToken) -> Plan:
        sc = scenario
        deadline = Deadline.from_params(params)
        rule = aggregator_rule(sc, params["aggregators"])
        seed = int(params["seed"])
        report(progress, 0.01, "path index", phase="paths")
        paths = Paths(sc, updown=(rule == "updown"), check=cancel.check)
        report(progress, 0.02, "ATP-style plan on default paths (the fallback)", phase="fallback")
        split = equal_split(sc)
        fb_plan, fb_obj, _ = default_paths_plan(sc, paths, split, self.name, seed, cancel)
        best: tuple[Plan, float] = (fb_plan, fb_obj)
        source = "ATP-style plan on default paths"
        report(progress, 0.05, "fallback ready", incumbent=fb_obj)
        extra: dict[str, Any] = {"fallback_objective": fb_obj}
        sol: GriaSolution | None = None
        cut = ""
        too_large = False
        try:
            report(progress, 0.06, "candidate aggregators", phase="candidates")
            cands = gria_candidates(sc, paths, singletons=self.exact, deadline=deadline, cancel=cancel,
                                    t_rule=params["T"])
            report(progress, 0.15, "building and solving the GRIA " + ("MILP" if self.exact else "LP"),
                   phase="solve")
            sol = solve_gria(sc, cands, integer=self.exact, cancel=cancel, links=params["links"],
                             deadline=deadline)
            report(progress, 0.5, "rounding", phase="rounding", incumbent=best[1], bound=sol.bound)
            split = lp_split(sc, sol.task_rate)
            rounded: tuple[Plan, float, dict[Task, Layout], int] | None = None
            rounds = int(params["rounds"])
            last_gain = 0
            for k in range(rounds):
                deadline.check(cancel)
                rng = rng_for(seed, self.name, k)
                # when the link tie-break replaced the first optimum, every other round rounds the
                # first one: on fat-trees the tie-broken optimum rounds worse (docs/scale.md)
                use = sol if k % 2 == 0 or sol.first_rates is None else _with_rates(sol, sol.first_rates)
                assignment = capped_rounding(sc, cands, use, rng, exact=self.exact)
                layouts, repairs = build_layouts(sc, cands, assignment, rng, deadline, cancel)
                routes = {t: lay.routes() for t, lay in layouts.items()}
                plan, ev = finish_plan(sc, routes, split, PlannerInfo(self.name), sol.bound)
                if rounded is None or ev.objective > rounded[1] + 1e-12:
                    rounded = (plan, ev.objective, layouts, repairs)
                report(progress, 0.5 + 0.3 * (k + 1) / rounds, f"round {k + 1}/{rounds}: best {rounded[1]:.6g}",
                       incumbent=max(best[1], rounded[1]))
                if sol.bound is not None and rounded[1] >= sol.bound * (1 - 1e-9):
                    break  # nothing better exists
                if ev.objective > rounded[1] - 1e-12 and rounded[0] is plan:
                    last_gain = k
                if k - last_gain >= ROUND_PATIENCE:
                    break  # no better draw for a while: the repair does more with the time
            assert rounded is not None
            extra["rounded_objective"] = rounded[1]
            extra["unaggregated_repairs"] = rounded[3]
            if rounded[1] >= best[1] - 1e-12:  # GRID's own plan wins ties with the fallback
                best, source = (rounded[0], rounded[1]), "R-GRIA rounding"
            if params.get("repair", True) and not (sol.bound is not None and rounded[1] >= sol.bound * (1 - 1e-9)):
                routes0 = {t: lay.routes() for t, lay in rounded[2].items()}
                atp_plan, atp_obj = atp_on_routes(sc, routes0, split, self.name, sol.bound)
                extra["atp_same_routes_objective"] = atp_obj
                if atp_obj > best[1] + 1e-12:
                    best, source = (atp_plan, atp_obj), "ATP-style merges on the rounding's routes"
                report(progress, 0.85, "repairing the rounding", phase="repair", incumbent=best[1])
                # the LP's rates are often out of reach on real links: bisect on the share of
                # the LP's task rates the repaired layout must carry without overload
                moves_total = 0
                repaired: float | None = None
                lo, hi = min(best[1] / sol.objective, 1.0), 1.0
                # a budget of moves over all steps (each step takes about one move per worker
                # flow on leaf-spine lambda = 3; the time goes with the moves)
                share = float(params.get("repair_budget", 1.0))
                flows = sum(len(lay.workers) for lay in rounded[2].values())
                budget = max(int(share * flows), 1) if share > 0 else None
                for it in range(REPAIR_STEPS):
                    theta = hi if it == 0 else 0.5 * (lo + hi)
                    if hi <= lo * 1.02 or (budget is not None and moves_total >= budget):
                        break
                    target = {t: theta * sol.task_rate.get(t, 0.0) for t in sc.tasks()}
                    rng = rng_for(seed, self.name, "repair", it)
                    fixed, moves, fits = repair_layouts(
                        sc, cands, rounded[2], target, rng, deadline, cancel,
                        max_moves=None if budget is None else budget - moves_total)
                    moves_total += moves
                    routes1 = {t: lay.routes() for t, lay in fixed.items()}
                    plan1, ev1 = finish_plan(sc, routes1, split, PlannerInfo(self.name), sol.bound)
                    repaired = ev1.objective if repaired is None else max(repaired, ev1.objective)
                    if ev1.objective > best[1] + 1e-12:
                        best, source = (plan1, ev1.objective), "repaired R-GRIA rounding"
                    if moves:
                        atp1, atp1_obj = atp_on_routes(sc, routes1, split, self.name, sol.bound)
                        if atp1_obj > best[1] + 1e-12:
                            best, source = (atp1, atp1_obj), "ATP-style merges on the repaired routes"
                    if fits:
                        lo = max(lo, theta)
                        if it == 0:
                            break
                    else:
                        hi = theta
                    report(progress, 0.85 + 0.15 * (it + 1) / REPAIR_STEPS,
                           f"step {it + 1}: best {best[1]:.6g}", incumbent=best[1])
                extra["repaired_objective"] = repaired if repaired is not None else rounded[1]
                extra["repair_moves"] = moves_total
                extra["repair_limit"] = f"{budget} moves" if budget is not None else "time limit"
        except OutOfTime as exc:
            cut = str(exc)
            too_large = isinstance(exc, ModelTooLarge)
        plan, objective = best
        bound = sol.bound if sol is not None else None
        plan.bound = bound
        if too_large:
            status = "heuristic"  # the fallback, at once: no limit stopped anything
        else:
            status = "timeout" if cut else status_for(objective, bound, sol.status if sol else "timeout")
        info = PlannerInfo(self.name, solver=sol.solver if sol else "", status=status)
        info.params = {
            "aggregator_rule": RULES[rule],
            "multi_ps": "one GRIA block per PS in a joint LP (shared switch, worker and PS capacity)",
            "lp_objective": sol.objective if sol else None,
            "rounded_lp_objective": sol.rounded_objective if sol else None,
            "tie_break": sol.tie_break if sol else "not run",
            "plan_source": source,
            "limit_used": f"{deadline.kind} {deadline.seconds:g} s",
            **extra,
        }
        if cut:
            info.params["stopped"] = cut
        plan.planner = info
        report(progress, 1.0, f"best {objective:.6g}", phase="done", incumbent=objective, bound=bound)
        return plan


def authors_rgria(sc: Scenario, seed: int = 0, time_limit: float | None = None,
                  cancel: CancelToken | None = None) -> tuple[Plan, float]:
    """R-GRIA as the GRID paper prints it (Alg. 1), the reference our default is timed against:
    Eq. (1) has no topology, so every programmable switch is a candidate of every worker (S); its
    LP relaxation with every worker's x and r variables (no projection, no grouping of identical
    workers), the solver's optimum as it comes (no link tie-break), one randomized rounding, routes
    on shortest paths as the paper's simulator (no up-down rule: on a Clos network the plan may
    hold valley paths, which CONTRACTS.md rule 6 rejects), rates from the evaluator. Returns the
    plan and its objective."""
    deadline = Deadline(time_limit)
    paths = Paths(sc, updown=False)
    cands = gria_candidates(sc, paths, singletons=True, max_options=1)
    sol = solve_gria(sc, cands, integer=False, links="ignore", deadline=deadline, cancel=cancel,
                     printed=True)
    rng = rng_for(seed, "grid-authors", 0)
    assignment = capped_rounding(sc, cands, sol, rng)
    layouts, _ = build_layouts(sc, cands, assignment, rng)
    routes = {t: lay.routes() for t, lay in layouts.items()}
    split = lp_split(sc, sol.task_rate)
    try:
        plan, ev = finish_plan(sc, routes, split, PlannerInfo("grid-authors"), sol.bound)
        return plan, ev.objective
    except PlanError:  # valley paths (rule 6): the rates the links allow, the plan stays invalid
        from inaplanner.evaluate import evaluate, max_min_rates
        from inaplanner.model import TaskPlan

        plan = Plan("", PlannerInfo("grid-authors", status="heuristic"),
                    [TaskPlan(t.job, t.ps, 0.0, routes[t]) for t in sc.tasks()], bound=sol.bound)
        rates = max_min_rates(sc, plan)
        for tp in plan.tasks:
            tp.rate = rates[(tp.job, tp.ps)]
        return plan, evaluate(sc, plan).objective


def aro_eval_allowed(paths: Paths) -> Callable[[str, str, str], bool]:
    """ARO section IV-A's candidate aggregators for GRID: a worker's own (programmable) leaf, every
    programmable switch of the top tier (the spines), and the PS's leaf."""
    top = max((paths.rank[n] for n in paths.adj if not paths.is_host[n]), default=0)

    def allowed(n: str, s: str, ps: str) -> bool:
        return paths.rank[s] == top or s in paths.adj[n] or s in paths.adj[ps]

    return allowed


class GridAroEval:
    """GRID as ARO's evaluation runs it (ARO section IV-A, "Baselines"): switch processing capacity
    3200 in the model, the LP relaxation of Eq. (1) with each worker's candidates restricted to its
    own leaf, every programmable spine and the PS's leaf (so routes stay up-down), one aggregator
    per worker from the LP (R-GRIA's draw, Alg. 1), aggregation only there, then the best routes for
    that assignment (``rounds`` seeded ECMP draws stand in for ARO's route MILP), pipelines applied
    by the evaluator (flows entering on different pipelines are separate aggregates, rule 2). No
    link tie-break, no repair, no ATP-style comparison; the ATP-style plan on default paths is
    returned only when the time limit cuts the run (status ``timeout``). Fan-in: as ``grid``."""

    name = "grid-aro-eval"
    description = "GRID as ARO's evaluation runs it (C_s = 3200, leaf/spine/PS-leaf candidates, one draw)"
    params = (
        Param("rounds", int, 32, "ECMP route draws for the fixed assignment; the best is kept",
              min=1, max=100000),
        Param("capacity", float, 3200.0, "C_s in the model for switches without a capacity", min=0.0),
        Param("assign", str, "draw", "aggregator from the LP: draw (R-GRIA) or argmax (largest rate)",
              choices=("draw", "argmax")),
    )

    def plan(self, scenario: Scenario, params: dict[str, Any], progress: Progress, cancel: CancelToken) -> Plan:
        sc = scenario
        deadline = Deadline.from_params(params)
        seed = int(params["seed"])
        paths = Paths(sc, check=cancel.check)
        split = equal_split(sc)
        report(progress, 0.02, "ATP-style plan on default paths (kept for a timeout)", phase="fallback")
        fb_plan, fb_obj, _ = default_paths_plan(sc, paths, split, self.name, seed, cancel)
        best: tuple[Plan, float] | None = None
        sol: GriaSolution | None = None
        cut = ""
        try:
            report(progress, 0.05, "candidate aggregators", phase="candidates")
            cands = gria_candidates(sc, paths, deadline=deadline, cancel=cancel,
                                    allowed=aro_eval_allowed(paths) if paths.updown else None)
            report(progress, 0.15, "solving the GRIA LP", phase="solve")
            sol = solve_gria(sc, cands, integer=False, links="ignore", deadline=deadline, cancel=cancel,
                             default_capacity=float(params["capacity"]))
            split = lp_split(sc, sol.task_rate)
            rng = rng_for(seed, self.name, "assign")
            if params["assign"] == "argmax":
                assignment = {k: max(row, key=lambda s, row=row: row[s]) for k, row in sol.rates.items()}
            else:
                assignment = capped_rounding(sc, cands, sol, rng)
            rounds = int(params["rounds"])
            for k in range(rounds):
                deadline.check(cancel)
                layouts, _ = build_layouts(sc, cands, assignment, rng_for(seed, self.name, k), deadline, cancel)
                plan, ev = finish_plan(sc, {t: lay.routes() for t, lay in layouts.items()}, split,
                                       PlannerInfo(self.name), sol.bound)
                if best is None or ev.objective > best[1] + 1e-12:
                    best = (plan, ev.objective)
                report(progress, 0.3 + 0.7 * (k + 1) / rounds, f"route draw {k + 1}/{rounds}",
                       phase="routes", incumbent=best[1])
        except OutOfTime as exc:
            cut = str(exc)
        if best is None:
            best = (fb_plan, fb_obj)
        plan, objective = best
        plan.bound = sol.bound if sol is not None else None
        plan.planner = PlannerInfo(self.name, solver=sol.solver if sol else "",
                                   status="timeout" if cut else "heuristic")
        plan.planner.params = {
            "lp_objective": sol.objective if sol else None,
            "aggregators_used": len({r.merge_at[0] for tp in plan.tasks for r in tp.routes if r.merge_at}),
            "limit_used": f"{deadline.kind} {deadline.seconds:g} s",
            **({"stopped": cut} if cut else {}),
        }
        report(progress, 1.0, f"plan {objective:.6g}", phase="done", incumbent=objective, bound=plan.bound)
        return plan


PLANNERS = [GridPlanner(exact=False), GridPlanner(exact=True), GridAroEval()]
