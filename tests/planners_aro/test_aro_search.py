"""The pieces of ARO's search: candidate search, direction candidates, level refutation by
corners, quick bounds and the greedy, each checked against exhaustive search or the evaluator."""

from __future__ import annotations

import math

import pytest

from inaplanner.evaluate import evaluate
from inaplanner.model import Plan, PlannerInfo, TaskPlan
from inaplanner.planners import CancelToken, get
from inaplanner.planners.aro.formulation import objective_for
from inaplanner.planners.aro.graph import task_graphs
from inaplanner.planners.aro.greedy import greedy_flows
from inaplanner.planners.aro.planner import (
    SINGLE,
    _Clock,
    _main_term,
    _Record,
    _search,
    bandwidths,
    direction_candidates,
    rate_candidates,
)
from inaplanner.planners.aro.rates import structural_bound
from inaplanner.planners.aro.routes import generate_routes
from inaplanner.planners.base import Progress

MJMT2 = dict(leaves=4, spines=2, hosts=3, jobs=2, tasks=2, workers=2, capacities=(1.0, 2.0))


def test_search_finds_the_largest_feasible_candidate_and_its_refutation():
    cands = [float(c) for c in range(1, 101)]
    calls = []

    def check(x):
        calls.append(x)
        return ("feasible", ["plan"]) if x <= 37 else ("infeasible", None)

    found = _search(cands, 0.0, check, lambda flows: 37.0 if calls[-1] > 30 else calls[-1], _Clock(10))
    assert found.lo == 37.0 and found.refuted == 38.0 and not found.timed_out
    assert len(calls) < 20  # far fewer than a scan
    assert calls[:2] == [100.0, 99.0]  # from the top: 1st, 2nd highest ...


def test_search_stops_at_undecided_checks():
    found = _search([1.0, 2.0, 3.0], 0.0, lambda x, *share: ("timeout", None), lambda f: 0.0, _Clock(10))
    assert found.timed_out and math.isinf(found.refuted) and found.lo == 0.0


class _Spent:
    """A budget that checks use up: ``left()`` as :class:`_Clock` has it, with no real time."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def left(self) -> float:
        return self.seconds


def _climb_case(first):
    """Rates 100 / k; plans up to 33.3; the top (50) undecided for the whole limit, as on
    leaf-spine lambda = 5 with the 32-flow fan-in; every other check takes 1 s of 10."""
    cands = sorted(100.0 / k for k in range(2, 13))
    clock, calls = _Spent(10.0), []

    def check(x, share=0.5):
        calls.append(x)
        if x >= 50.0:
            clock.seconds = 0.0
            return "timeout", None
        clock.seconds -= 1.0
        return ("feasible", ["plan"]) if x <= 100.0 / 3 + 1e-9 else ("infeasible", None)

    found = _search(cands, 100.0 / 12, check, lambda flows: calls[-1], clock, first=first)
    return found, calls


def test_search_opened_at_a_likely_plan_climbs_before_the_top():
    found, calls = _climb_case(first=100.0 / 7)
    assert found.lo == pytest.approx(100.0 / 3)
    # each probe the highest candidate within 1.5 times the best plan, the top last
    assert calls == pytest.approx([100.0 / 7, 20.0, 25.0, 100.0 / 3, 50.0])
    found, calls = _climb_case(first=None)  # from the top, the limit goes there
    assert calls == [50.0] and found.lo == pytest.approx(100.0 / 12)


def test_an_opening_that_fails_leaves_the_probes_from_the_top():
    found, calls = _climb_case(first=40.0)  # not a candidate: ignored
    assert calls[0] == 50.0
    cands = [float(c) for c in range(1, 101)]
    calls = []

    def check(x, share=0.5):
        calls.append(x)
        return ("feasible", ["plan"]) if x <= 37 else ("infeasible", None)

    found = _search(cands, 0.0, check, lambda flows: calls[-1], _Clock(10), first=60.0)
    assert calls[:3] == [60.0, 59.0, 58.0]  # refuted: then from the highest left, as without it
    assert found.lo == 37.0 and found.refuted == 38.0


def test_a_search_for_plans_only_climbs_from_the_best_plan_when_the_opening_fails():
    """With several tasks per job the search along the balanced direction gives plans, no bound.
    On large models, probes from the top each took their whole share undecided on a slower
    machine (fat-tree k=16 with 200 workers per job, seed 2: 25, 20 and 14.3 Gbps a task), and the
    plan stayed where it was; it now climbs from the best plan by at most 1.5 times a step."""
    cands = [float(c) for c in range(1, 101)]
    calls = []

    def check(x, share=0.5):
        calls.append(x)
        if x <= 37:
            return "feasible", ["plan"]
        return ("timeout", None) if x < 90 else ("infeasible", None)

    found = _search(cands, 10.0, check, lambda flows: calls[-1], _Clock(10), first=95.0, retry=False,
                    climb_on_fail=True)
    assert calls[:4] == [95.0, 15.0, 22.0, 33.0]  # the opening, then up from 10 by 1.5 at most
    assert found.lo == 37.0
    calls.clear()
    found = _search(cands, 10.0, check, lambda flows: calls[-1], _Clock(10), first=95.0)  # for a bound
    assert calls[:3] == [95.0, 94.0, 93.0]  # from the top, as before


def test_the_single_task_solves_share_half_the_limit(monkeypatch, make_leaf_spine):
    """Multi-task runs: each task alone, in turn, gets what is left of SOLO_SHARE of the limit, so
    the joint search keeps the rest however long the tasks alone take."""
    import types

    import inaplanner.planners.aro.planner as aro

    now = [0.0]
    monkeypatch.setattr(aro, "time", types.SimpleNamespace(process_time=lambda: now[0],
                                                           perf_counter=lambda: now[0]))
    sc = make_leaf_spine(0, **MJMT2)
    graphs = task_graphs(sc)
    given = []

    class Stop(Exception):
        pass

    def single(self, sc, g, objective, clock, cancel, warm, rec=None, retry=True):
        given.append(clock.left())
        now[0] += clock.left()  # a hard task: it takes all it gets
        if len(given) == len(graphs):
            raise Stop

    monkeypatch.setattr(aro.AroPlanner, "_single", single)
    planner = get("aro")
    clock = _Clock(60.0, "cpu")
    with pytest.raises(Stop):
        planner._solve(sc, graphs, objective_for(sc, sc.tasks()), {"gap": 1e-4}, clock, CancelToken(), None,
                       _Record(Progress()))
    assert given[0] == pytest.approx(60.0 * aro.SOLO_SHARE / len(graphs))
    assert sum(given) == pytest.approx(60.0 * aro.SOLO_SHARE)
    assert clock.left() == pytest.approx(60.0 * (1 - aro.SOLO_SHARE))


@pytest.mark.parametrize("seed", range(3))
def test_quick_bounds_are_upper_bounds(seed, make_leaf_spine, brute):
    sc = make_leaf_spine(seed, spines=3, hosts=3, workers=5, capacities=(1.0, 2.0))
    (g,) = task_graphs(sc)
    best = brute(sc)
    assert structural_bound(sc, g) >= best - 1e-9
    assert any(abs(c - best) < 1e-9 for c in rate_candidates(sc, g))


def test_direction_candidates_complete_for_equal_weights(make_leaf_spine):
    sc = make_leaf_spine(0, **MJMT2)
    graphs = task_graphs(sc)
    cands, complete = direction_candidates(sc, graphs, [1.0] * len(graphs))
    assert complete and cands[-1] == 1.0 and cands == sorted(cands)
    _, mixed = direction_candidates(sc, graphs, [1.0, 0.5, 1.0, 0.5])
    assert not mixed


def _merged(values):
    """Sorted, with neighbours closer than relative 1e-9 merged into the larger: the lists'
    definition, written out one value at a time."""
    out = []
    for v in sorted(set(values)):
        if out and v <= out[-1] * (1 + 1e-9):
            out[-1] = max(out[-1], v)
        else:
            out.append(v)
    return out


@pytest.mark.parametrize("seed", range(6))
def test_candidate_lists_equal_their_definition_value_by_value(seed, make_leaf_spine):
    """The candidate rates and levels are computed as arrays, one run per bandwidth (fat-tree k=64
    with 1,000 workers per job: 3.2 -> 1.0 s): the same floats as b / (w k) one by one."""
    import random

    from inaplanner.planners.aro.graph import resource_capacity
    from inaplanner.planners.aro.planner import rates_below

    sc = make_leaf_spine(seed, **MJMT2, agg_capacity=(0.5, 1.0, 3.0))
    graphs = task_graphs(sc)
    rng = random.Random(seed)
    per: list[dict] = []
    for g in graphs:
        counts: dict = {}
        for k, e in enumerate(g.edges):
            for res in e.resources:
                counts[res] = counts.get(res, 0) + g.ub[k]
        per.append(counts)
        caps = {res: resource_capacity(sc, res) for res in counts}
        want = _merged(caps[r] / k for r, most in counts.items() if caps[r] > 0 for k in range(1, most + 1))
        assert rate_candidates(sc, g) == want
        reached = rng.choice(want)
        (got,) = rates_below(sc, [g], [reached])
        assert got == max((c for c in want if c < reached * (1 - 1e-9)), default=None)
    for rho in ([1.0] * len(graphs), [rng.choice([0.0, 0.5, 1.0, 1.5]) for _ in graphs]):
        want_levels, want_complete = {1.0}, True
        for res in {r for counts in per for r in counts}:
            cap = resource_capacity(sc, res)
            mine = {i: counts[res] for i, counts in enumerate(per) if res in counts}
            weights = {rho[i] for i in mine if rho[i] > 0}
            if cap <= 0:
                continue
            if len(weights) == 1:
                (w,) = weights
                want_levels |= {cap / (w * k) for k in range(max(1, math.floor(cap / w)), sum(mine.values()) + 1)}
            else:
                want_complete = False
                for i, most in mine.items():
                    if rho[i] > 0:
                        want_levels |= {cap / (rho[i] * k) for k in range(max(1, math.floor(cap / rho[i])), most + 1)}
        assert direction_candidates(sc, graphs, rho) == (_merged(c for c in want_levels if c <= 1.0 + 1e-9),
                                                         want_complete)


@pytest.mark.parametrize("seed", range(3))
def test_the_greedys_kept_values_give_the_flows_of_a_fresh_search(seed, monkeypatch):
    """The greedy keeps its search's values from one worker to the next and drops those a routed
    flow changed (fat-tree k=64: 15.5 -> 5.9 s). With every value dropped after each worker
    instead, the flows must be the same, with aggregation capacities and fan-in limits in play.
    (A fat-tree k=8: on a small leaf-spine every flow changes what all values read.)"""
    import random

    from inaplanner.planners.aro import greedy as G
    from inaplanner.topologies import fat_tree, mark_programmable, place_jobs

    sc = fat_tree(8)
    mark_programmable(sc, 0.3, pipelines=4, seed=seed)
    place_jobs(sc, 2, 2, 50, seed=seed)
    rng = random.Random(seed)
    for sw in sc.switches():
        if sw.programmable and rng.random() < 0.5:
            sw.max_fan_in = rng.choice([2, 3, 8])
            if rng.random() < 0.5:
                sw.aggregation_capacity = rng.choice([30.0, 60.0, 150.0])
    sc.touch()
    graphs = task_graphs(sc)
    found = 0
    for scale in (1.0, 0.5, 0.25, 0.1, 0.03, 0.01):
        rates = [structural_bound(sc, g) * scale * rng.choice([0.7, 1.0, 1.3]) for g in graphs]
        kept = greedy_flows(sc, graphs, rates)
        monkeypatch.setattr(G, "KEEP_VALUES", False)
        fresh = greedy_flows(sc, graphs, rates)
        monkeypatch.setattr(G, "KEEP_VALUES", True)
        assert (kept is None) == (fresh is None)
        if kept is not None:
            found += 1
            assert [(f.y, f.x) for f in kept] == [(f.y, f.x) for f in fresh]
    assert found  # the comparison saw flows


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_level_refutation_is_sound(seed, make_leaf_spine, brute):
    """_cover never refutes a level some plan reaches (exhaustive search knows the best), and a
    'feasible' answer comes with flows; far above the optimum every box is refuted."""
    sc = make_leaf_spine(seed, **MJMT2)
    graphs = task_graphs(sc)
    objective = objective_for(sc, sc.tasks())
    best = brute(sc)  # min_s T_s + 0.001 sum_s T_s with unit weights
    aro = get("aro")
    params = {"sro": False, "app": False, "qsr": False, "alpha": 0.6, "qsr_levels": 100,
              "gap": 1e-6, "exact": "always", "time_limit": 30}
    plan = aro.plan(sc, params, lambda f, m: None, CancelToken())
    ev = evaluate(sc, plan)
    assert ev.objective == pytest.approx(best, rel=1e-6)
    main = _main_term(objective, list(ev.rates))
    upper = [aro._single(sc, g, SINGLE, _Clock(10), CancelToken(), None).bound for g in graphs]
    verdicts = {}
    for factor in (0.5, 1.0, 1.001, 1.5, 4.0):
        verdict, flows = aro._cover(sc, graphs, objective, upper, main * factor, _Clock(30), CancelToken(),
                                    _Record(Progress()), {}, bandwidths(sc, graphs))
        verdicts[factor] = verdict
        if factor <= 1.0:
            assert verdict != "refuted"  # this level is reached by the optimal plan
        if verdict == "feasible":
            assert flows is not None and len(flows) == len(graphs)
    assert verdicts[4.0] == "refuted"


@pytest.mark.parametrize("seed", range(4))
def test_greedy_plans_hold_at_their_rates(seed, make_leaf_spine):
    sc = make_leaf_spine(seed, leaves=4, spines=3, hosts=3, jobs=2, tasks=1, workers=4, capacities=(1.0, 2.0))
    graphs = task_graphs(sc)
    for rate in (0.1, 0.25, 0.5, 1.0):
        flows = greedy_flows(sc, graphs, [rate] * len(graphs))
        if flows is None:
            continue
        plan = Plan("", PlannerInfo("t"), [
            TaskPlan(g.task.job, g.task.ps, rate, generate_routes(g, f)) for g, f in zip(graphs, flows, strict=True)
        ])
        ev = evaluate(sc, plan)
        assert ev.valid and ev.feasible, (rate, ev.errors[:2], [str(v) for v in ev.violations[:2]])
    assert greedy_flows(sc, graphs, [0.05] * len(graphs)) is not None  # easy levels are found


def test_an_undecided_candidate_gets_the_time_left():
    """The top candidate undecided at its share is checked again with all the time left (share
    1.0), and it then holds a plan."""
    shares = []

    def check(x, share=0.5):
        shares.append((x, share))
        if x == 3.0:
            return ("feasible", [3.0]) if share == 1.0 else ("timeout", None)
        return "feasible", [x]

    found = _search([1.0, 2.0, 3.0], 0.0, check, lambda f: f[0], _Clock(10))
    assert found.lo == 3.0 and shares[-1] == (3.0, 1.0) and not found.timed_out


@pytest.mark.parametrize("large", [False, True])
def test_on_large_models_a_check_of_the_search_gets_an_eighth_of_its_time(monkeypatch, make_leaf_spine, large):
    """With several tasks per job the search along the balanced direction yields plans only.
    On large models (``NEGOTIATE_MIN_COLS`` columns, here lowered to 0 to make this one large)
    each of its checks may take an eighth of its time, not half: an undecided point is
    negotiated next, and the refutation needs the time (fat-tree k=16 with 200 workers per job,
    seed 2: it starts at 40 s instead of 74 s, and 52-54 s with a quarter)."""
    import inaplanner.planners.aro.planner as aro

    if large:
        monkeypatch.setattr(aro, "NEGOTIATE_MIN_COLS", 0)
    sc = make_leaf_spine(2, **MJMT2)  # a case whose joint search makes several checks
    graphs = task_graphs(sc)
    inside = [False]
    shares: list[float] = []
    real_search, real_feasible = aro._search, aro.AroPlanner._feasible

    class Done(Exception):
        pass

    def search(*args, **kwargs):
        inside[0] = True
        try:
            found = real_search(*args, **kwargs)
        finally:
            inside[0] = False
        if shares:  # the joint search is over: nothing after it matters here
            raise Done
        return found

    def feasible(self, sc, graphs, rates, clock, cancel, **kwargs):
        if inside[0] and len(graphs) > 1:  # the joint search (each task alone searches too)
            shares.append(kwargs.get("share", 0.5))
        return real_feasible(self, sc, graphs, rates, clock, cancel, **kwargs)

    monkeypatch.setattr(aro, "_search", search)
    monkeypatch.setattr(aro.AroPlanner, "_feasible", feasible)
    params = {"sro": False, "app": False, "qsr": False, "alpha": 0.6, "qsr_levels": 100, "gap": 1e-6,
              "exact": "never", "seed": 0}
    with pytest.raises(Done):
        get("aro")._solve(sc, graphs, objective_for(sc, sc.tasks()), params, _Clock(20, "cpu"), CancelToken(), None,
                          _Record(Progress()))
    assert shares
    if large:
        assert max(shares) == pytest.approx(aro.SEARCH_LARGE_CHECK_SHARE)
    else:
        assert max(shares) == pytest.approx(aro.CHECK_SHARE)
