"""The climb (issue 13): one task's rate raised at a time from the best plan's routes. Its moves
are every single-task raise ordered by the job furthest behind; its plans hold, never lose the
incumbent and never beat the exhaustive optimum. Also: the level refutation does not check an
undecided point again with as little time, goes on where undecided points stopped it once a better
plan is known, and the search for plans only does not retry."""

from __future__ import annotations

import contextlib
import itertools
import math
import random

import numpy as np
import pytest

from inaplanner.evaluate import evaluate
from inaplanner.planners import CancelToken, get
from inaplanner.planners.aro import planner as planner_module
from inaplanner.planners.aro.classes import Refuted
from inaplanner.planners.aro.formulation import MU, Objective, feasibility_model, objective_for
from inaplanner.planners.aro.graph import task_graphs
from inaplanner.planners.aro.planner import (
    SINGLE,
    SPLIT_OPEN_STEPS,
    Outcome,
    _Clock,
    _Levels,
    _main_term,
    _Record,
    _relaxation_infeasible,
    _search,
    bandwidths,
    climb_moves,
    rate_candidates,
)
from inaplanner.planners.base import Progress

MJMT2 = dict(leaves=4, spines=2, hosts=3, jobs=2, tasks=2, workers=2, capacities=(1.0, 2.0))


def _profile(objective, point):
    """Weighted job throughputs, written out per job."""
    out = []
    for s, w in enumerate(objective.weights):
        out.append(w * sum(r for r, j in zip(point, objective.job_of, strict=True) if j == s))
    return sorted(out)


@pytest.mark.parametrize("seed", range(6))
def test_climb_moves_are_every_single_raise_job_furthest_behind_first(seed):
    rng = random.Random(seed)
    n = rng.choice([2, 3, 4, 5])
    job_of = [rng.randrange(2) for _ in range(n)]
    job_of[0], job_of[-1] = 0, 1
    objective = Objective("MJMT", job_of, [rng.choice([1.0, 2.0]) for _ in range(2)])
    cands = [sorted(rng.sample([100 / k for k in range(1, 9)], 5)) for _ in range(n)]
    rates = [rng.choice(c[:3]) for c in cands]
    reached = [rng.choice([r for r in c if r >= rates[i]]) for i, c in enumerate(cands)]
    got = climb_moves(rates, reached, cands, objective)
    # straight from the definition: task i to the least candidate above its rate, if it is not
    # above what the task reached alone
    expected = set()
    for i in range(n):
        up = [c for c in cands[i] if c > rates[i]]
        if up and min(up) <= reached[i]:
            expected.add(tuple(min(up) if k == i else r for k, r in enumerate(rates)))
    assert {tuple(p) for p in got} == expected and len(got) == len(expected)
    # best first: the main term reached, then the job furthest behind before the move, then
    # the smallest raise
    def key(p):
        i = next(k for k in range(n) if p[k] != rates[k])
        before = _profile(objective, rates)
        job = objective.weights[job_of[i]] * sum(r for r, j in zip(rates, job_of, strict=True) if j == job_of[i])
        assert job in before
        return (-_profile(objective, p)[0], job, objective.value(p))
    keys = [key(p) for p in got]
    assert all(a <= b for a, b in itertools.pairwise(keys))
    # a task at what it reached alone is never raised
    at_top = [i for i in range(n) if rates[i] == reached[i]]
    assert all(p[i] == rates[i] for p in got for i in at_top)


def test_climb_moves_raise_the_job_behind_before_the_job_ahead():
    """Jobs at 45 and 40: raising the job at 40 comes first, even when raising the job at 45
    would add more to the objective's mu term."""
    objective = Objective("MJMT", [0, 0, 1, 1], [1.0, 1.0])
    cands = [[20.0, 25.0, 100 / 3]] * 4
    got = climb_moves([20.0, 25.0, 20.0, 20.0], [100 / 3] * 4, cands, objective)
    assert got[0][0] == 20.0 and got[0][1] == 25.0 and max(got[0][2:]) == 25.0
    # the last: the larger raise of the job at 45 (to 53.3), the other still at 40
    assert got[-1][:2] == [20.0, 100 / 3] and got[-2][:2] == [25.0, 25.0]


def test_climb_moves_with_the_jobs_tied_raise_least_first():
    """Both jobs at 45: no single raise lifts the main term, and the next move must raise the
    other job in what this one leaves, so the raises to 25 come before those to 33.3."""
    objective = Objective("MJMT", [0, 0, 1, 1], [1.0, 1.0])
    cands = [[20.0, 25.0, 100 / 3]] * 4
    got = climb_moves([20.0, 25.0, 25.0, 20.0], [100 / 3] * 4, cands, objective)
    assert sorted(map(tuple, got[:2])) == [(20.0, 25.0, 25.0, 25.0), (25.0, 25.0, 25.0, 20.0)]
    assert {max(p) for p in got[2:]} == {100 / 3} and len(got) == 4


def _low_start(sc):
    """ARO's climb from a poor plan: the tasks' own routes at a small common rate."""
    graphs = task_graphs(sc)
    objective = objective_for(sc, sc.tasks())
    aro = get("aro")
    solo = [aro._single(sc, g, SINGLE, _Clock(10), CancelToken(), None) for g in graphs]
    low = min(o.objective for o in solo) / 8
    status, flows = aro._feasible(sc, graphs, [low] * len(graphs), _Clock(10), CancelToken())
    assert status == "feasible"
    rates = [low] * len(graphs)
    start = Outcome(flows, rates, objective.value(rates), None)
    return aro, graphs, objective, [o.objective for o in solo], start


@pytest.mark.parametrize("seed", range(4))
def test_climb_plans_hold_never_lose_and_never_beat_brute_force(seed, make_leaf_spine, brute):
    sc = make_leaf_spine(seed, **MJMT2)
    aro, graphs, objective, reached, start = _low_start(sc)
    got = aro._climb(sc, graphs, objective, reached, start, _Clock(30), CancelToken(), _Record(Progress()))
    assert got.objective >= start.objective
    ev = evaluate(sc, aro._plan_from(sc, graphs, got.flows, objective))
    assert ev.valid and ev.feasible
    assert ev.objective == pytest.approx(got.objective, rel=1e-6)
    assert got.objective <= brute(sc) * (1 + 1e-6)
    # it climbs: far above a start at an eighth of the lowest task's own optimum
    assert got.objective > 2 * start.objective


@pytest.mark.parametrize("large", [False, True])
def test_the_climbs_repairs_are_patient_on_small_models_only(make_leaf_spine, monkeypatch, large):
    """The climb's moves are many and most fail: on large models (``NEGOTIATE_MIN_COLS``) its
    repairs give a move half of the time left (patient there, fat-tree k=16 with 500 workers per
    job, seed 0, ended at 28.63 instead of 33.4); on small ones each move gets all of it
    (fat-tree k=8 seed 2 on a slower machine: the move to (25, 25, 25, 25) needed more than the
    half it got, 45.09 instead of 50.1)."""
    sc = make_leaf_spine(0, **MJMT2)
    aro, graphs, objective, reached, start = _low_start(sc)
    if large:
        monkeypatch.setattr(planner_module, "NEGOTIATE_MIN_COLS", 1)
    asked = []

    def repair(sc, graphs, rates, placed, i, clock, cancel, frees=2, patient=False):
        asked.append(patient)
        return None

    monkeypatch.setattr(aro, "_place", lambda *a, **k: None)  # no move fits alone: each repairs
    monkeypatch.setattr(aro, "_repair", repair)
    got = aro._climb(sc, graphs, objective, reached, start, _Clock(30), CancelToken(), _Record(Progress()))
    assert got is start
    assert asked and all(p is not large for p in asked)


def test_climb_stops_below_a_bound(make_leaf_spine):
    """No move is tried whose objective would pass the bound: with the bound at the start's
    objective nothing moves."""
    sc = make_leaf_spine(0, **MJMT2)
    aro, graphs, objective, reached, start = _low_start(sc)
    got = aro._climb(sc, graphs, objective, reached, start, _Clock(30), CancelToken(), _Record(Progress()),
                     bound=start.objective)
    assert got is start


def test_cover_does_not_check_an_undecided_point_again_with_as_little_time(make_leaf_spine, monkeypatch):
    """A box point left undecided answers 'unknown' at once the next time, unless the check
    would now get at least twice the seconds it had."""
    sc = make_leaf_spine(0, **MJMT2)
    graphs = task_graphs(sc)
    objective = objective_for(sc, sc.tasks())
    aro = get("aro")
    upper = [aro._single(sc, g, SINGLE, _Clock(10), CancelToken(), None).objective for g in graphs]
    checked = []

    def undecided(sc, graphs, rates, clock, cancel, **kw):
        checked.append(list(rates))
        return "timeout", None

    monkeypatch.setattr(aro, "_feasible", undecided)  # every check undecided, as on fat-tree k=16
    memo: dict = {}
    level = 0.9 * min(upper) * 2

    def cover(seconds):
        return aro._cover(sc, graphs, objective, upper, level, _Clock(seconds), CancelToken(), _Record(Progress()),
                          memo, bandwidths(sc, graphs))

    assert cover(20.0)[0] == "unknown" and len(checked) == 1
    assert cover(20.0)[0] == "unknown" and len(checked) == 1  # the same point: not checked again
    assert cover(200.0)[0] == "unknown" and len(checked) == 2  # ten times the time: checked
    assert checked[0] == checked[1]


def test_a_search_for_plans_only_does_not_retry():
    """``retry=False``: the undecided top stays undecided (no second check with all the time)."""
    shares = []

    def check(x, share=0.5):
        shares.append((x, share))
        return ("timeout", None) if x == 3.0 else ("feasible", [x])

    found = _search([1.0, 2.0, 3.0], 0.0, check, lambda f: f[0], _Clock(10), retry=False)
    assert found.lo == 2.0 and found.timed_out and all(s < 1.0 for _, s in shares)
    shares.clear()
    _search([1.0, 2.0, 3.0], 0.0, check, lambda f: f[0], _Clock(10))
    assert shares[-1] == (3.0, 1.0)


def test_rate_candidates_are_what_the_climb_steps_through(make_leaf_spine):
    """Each step of the climb is a candidate of its task (a resource exactly full)."""
    sc = make_leaf_spine(1, **MJMT2)
    aro, graphs, objective, reached, start = _low_start(sc)
    cands = [rate_candidates(sc, g) for g in graphs]
    for p in climb_moves(start.rates, reached, cands, objective):
        assert any(p[i] in cands[i] and p[i] != start.rates[i] for i in range(len(p)))


def test_cancel_during_the_climb_stops_within_seconds():
    """Fat-tree k=8 with 50 workers per job, seed 2: from (20, 20, 20, 20) each move is a MILP of
    seconds; a cancel 0.5 s into the climb ends it (Cancelled, not a plan) within seconds."""
    import threading
    import time

    from inaplanner.errors import Cancelled
    from inaplanner.topologies import fat_tree, mark_programmable, place_jobs

    sc = fat_tree(8, 100.0)
    mark_programmable(sc, 0.2, pipelines=4, seed=2)
    place_jobs(sc, 2, 2, 50, seed=2)
    graphs = task_graphs(sc)
    objective = objective_for(sc, sc.tasks())
    aro = get("aro")
    reached = [aro._single(sc, g, SINGLE, _Clock(20), CancelToken(), None).objective for g in graphs]
    status, flows = aro._feasible(sc, graphs, [20.0] * 4, _Clock(30), CancelToken())
    assert status == "feasible"
    rates = aro._route_rates(sc, graphs, flows, objective)
    start = Outcome(flows, rates, objective.value(rates), None)
    token = CancelToken()
    threading.Timer(0.5, token.cancel).start()
    t0 = time.perf_counter()
    with pytest.raises(Cancelled):
        aro._climb(sc, graphs, objective, reached, start, _Clock(60), token, _Record(Progress()))
    assert time.perf_counter() - t0 < 10.0  # generous: a loaded 2-core machine


def _cover_case(make_leaf_spine, seed, **shape):
    """A small case of two jobs with two tasks each for the level refutation (``shape``
    overrides ``MJMT2``): the planner, the scenario, its task graphs, the objective, the highest
    level the tasks' own optima allow, and the cover at a level (a fresh memo, no best plan and
    no ``Refuted`` unless given)."""
    sc = make_leaf_spine(seed, **{**MJMT2, **shape})
    graphs = task_graphs(sc)
    objective = objective_for(sc, sc.tasks())
    aro = get("aro")
    upper = [aro._single(sc, g, SINGLE, _Clock(10), CancelToken(), None).objective for g in graphs]
    top = min(objective.weights[s] * sum(u for u, j in zip(upper, objective.job_of, strict=True) if j == s)
              for s in set(objective.job_of))
    bands = bandwidths(sc, graphs)

    def cover(level, rec=None, memo=None, refuted=None, split_open=False):
        return aro._cover(sc, graphs, objective, upper, level, _Clock(60), CancelToken(),
                          _Record(Progress()) if rec is None else rec, {} if memo is None else memo, bands,
                          refuted, split_open)

    return aro, sc, graphs, objective, top, cover


@contextlib.contextmanager
def _recorded_checks(aro):
    """Every feasibility check the planner makes meanwhile, as (rates, status)."""
    real = aro._feasible
    log: list[tuple[list[float], str]] = []

    def recorded(sc, graphs, rates, clock, cancel, **kw):
        status, flows = real(sc, graphs, rates, clock, cancel, **kw)
        log.append((list(rates), status))
        return status, flows

    aro._feasible = recorded
    try:
        yield log
    finally:
        del aro._feasible


def _first_plan_down(cover, top):
    """The first plan the cover finds on the way down from the level ``top``, in steps of 3 %."""
    for k in range(1, 40):
        verdict, flows = cover(top * (1 - 0.03 * k))
        if verdict == "feasible":
            return flows
    raise AssertionError("no plan found below the top level")


@pytest.mark.parametrize("seed", [0, 4])
def test_cover_checks_no_refuted_point_twice_across_levels(make_leaf_spine, seed):
    """Levels walked down as the refutation does, with one memo: no rate vector is checked
    again once found infeasible (``refuted_floor`` alone halves its way down, and each level
    checked the same lifted point again), and every verdict is the one a fresh memo gives."""
    aro, sc, graphs, objective, top, cover = _cover_case(make_leaf_spine, seed)
    levels = [top * (1 - 0.03 * k) for k in range(1, 16)]

    def verdicts(memo=None):
        return [cover(level, memo=memo)[0] for level in levels]

    fresh = verdicts()
    with _recorded_checks(aro) as log:
        shared = verdicts({})
    refused = [tuple(round(r, 9) for r in rates) for rates, status in log if status == "infeasible"]
    refuted = [v == "refuted" for v in shared]
    assert refuted == [v == "refuted" for v in fresh] and any(refuted) and not all(refuted)
    assert refused and len(refused) == len(set(refused))


@pytest.mark.parametrize("seed", [0, 4])
def test_cover_checks_only_points_that_would_beat_the_best_plan(make_leaf_spine, seed):
    """With a best plan known, a box point no better than it is split, not checked (such points
    are mostly plans, and on fat-tree k=8 some take seconds or stay undecided). Every rate
    vector checked would beat the best plan, and every level the cover refutes without a best
    plan it refutes with one (splitting only covers the same box with smaller ones); on these
    cases it also refutes a level that the cover without one leaves open."""
    aro, sc, graphs, objective, top, cover = _cover_case(make_leaf_spine, seed)

    found = _first_plan_down(cover, top)  # the best plan
    rates = aro._route_rates(sc, graphs, found, objective)
    beaten = _main_term(objective, rates)
    rec = _Record(Progress())
    rec.offer(found, rates, objective.value(rates))
    levels = [beaten + (top - beaten) * f for f in (0.3, 0.9)]
    with _recorded_checks(aro) as log:
        with_best = [cover(level, rec=rec)[0] for level in levels]
    checked = [rates for rates, _ in log]
    without = [cover(level)[0] for level in levels]
    assert checked and all(_main_term(objective, p) > beaten for p in checked)
    assert all(b == "refuted" for b, w in zip(with_best, without, strict=True) if w == "refuted")
    assert with_best.count("refuted") > without.count("refuted")


@pytest.mark.parametrize("seed", [0, 4])
def test_only_the_covers_relaxations_run_highs_presolve(make_leaf_spine, monkeypatch, seed):
    """On models relaxed by interior point (here every model: the warm-start path is closed),
    the level refutation's checks run HiGHS' presolve on their relaxations (fat-tree k=16 with
    500 workers per job, seed 2: the level 27.6 refuted in paired runs where it was not),
    and the other checks do not (the relaxation's point steers the guided placement: with
    presolve there k=16 with 500 workers per job, seed 0, lost its plan). The cover's verdicts
    are the ones it gives with presolve off."""
    monkeypatch.setattr(planner_module, "WARM_MAX_NNZ", 0)
    aro, sc, graphs, objective, top, cover = _cover_case(make_leaf_spine, seed)
    levels = [top * (1 - 0.03 * k) for k in range(1, 12)]
    real = planner_module.Milp.solve
    calls: list[bool] = []

    def solve(m, **kw):
        if kw.get("relax") and kw.get("ipm"):
            calls.append(bool(kw.get("presolve")))
        return real(m, **kw)

    monkeypatch.setattr(planner_module.Milp, "solve", solve)
    with_presolve = [cover(level)[0] for level in levels]
    assert calls and all(calls)
    calls.clear()
    aro._feasible(sc, graphs, [top / len(graphs)] * len(graphs), _Clock(30), CancelToken(),
                  heuristics=False)
    assert calls and not any(calls)
    real_feasible = aro._feasible
    monkeypatch.setattr(aro, "_feasible", lambda *a, **kw: real_feasible(*a, **{**kw, "presolve": False}))
    calls.clear()
    assert [cover(level)[0] for level in levels] == with_presolve
    assert calls and not any(calls)
    assert "refuted" in with_presolve


@pytest.mark.parametrize("seed", range(6))
def test_a_cover_that_finds_a_better_plan_ends_there(make_leaf_spine, seed):
    """A box point that is a plan better than the best one (none here) but below the level
    ends the cover ('better'): the refutation then bisects from it, where points no better are
    split, not checked (fat-tree k=8 seed 0: three points symmetric to a plan just found were
    checked, each a plan of the same value, 12.6 s of a 60 s run). Only a plan reaching the
    level ends it as 'feasible'."""
    aro, sc, graphs, objective, top, cover = _cover_case(make_leaf_spine, seed)
    better = 0
    for level in [top * (1 - 0.03 * k) for k in range(1, 16)]:  # each cover fresh: no best plan
        with _recorded_checks(aro) as log:
            verdict, flows = cover(level)
        plans = [k for k, (_, status) in enumerate(log) if status == "feasible"]
        assert plans == ([len(log) - 1] if verdict in ("better", "feasible") else [])
        if verdict == "better":
            better += 1
            reached = _main_term(objective, aro._route_rates(sc, graphs, flows, objective))
            assert reached < level * (1 - 1e-9)
    assert better


@pytest.mark.parametrize("seed", [0, 4])
def test_a_better_plan_lets_the_refutation_go_on_where_it_stopped(make_leaf_spine, brute, seed):
    """Rate vectors a check leaves undecided are mostly plans (fat-tree k=8). When they stop the
    level refutation and a later step (the climb) finds a better plan, a second pass on the same
    levels refutes lower ones than the first could: those vectors no longer beat the best plan,
    so they are not checked. The planner runs such a pass after the climb. Its bound stays valid:
    never below the exhaustive optimum."""
    aro, sc, graphs, objective, top, cover = _cover_case(make_leaf_spine, seed)
    found = _first_plan_down(cover, top)  # the better plan
    rates = aro._route_rates(sc, graphs, found, objective)
    better = Outcome(found, rates, objective.value(rates), None)
    beaten = _main_term(objective, rates)
    _, _, _, upper, start = _low_start(sc)
    assert start.objective < better.objective
    real = aro._feasible
    undecided: list[list[float]] = []

    def slow(sc, graphs, rates, clock, cancel, heuristics=True, **kw):
        if not heuristics and _main_term(objective, rates) <= beaten * (1 + 1e-9):
            undecided.append(list(rates))
            return "timeout", None  # a plan the check does not find in time, as on fat-tree k=8
        return real(sc, graphs, rates, clock, cancel, heuristics=heuristics, **kw)

    extra = MU * sum(objective.weights[s] * u for s, u in zip(objective.job_of, upper, strict=True))
    levels = _Levels(top, extra, bandwidths(sc, graphs))
    rec = _Record(Progress())
    rec.offer(start.flows, start.rates, start.objective)
    aro._feasible = slow
    try:
        first, _ = aro._refute(sc, graphs, objective, upper, levels, start, 1e-4, _Clock(60, "cpu"), CancelToken(),
                               rec)
        stopped_at = levels.hi
        assert undecided and first.objective < better.objective  # the first pass stopped on such a point
        rec.offer(better.flows, better.rates, better.objective)
        undecided.clear()
        # its first levels are refuted in a fraction of a second; the levels close above the
        # better plan take many boxes, so it stops when its 5 CPU seconds are over
        aro._refute(sc, graphs, objective, upper, levels, better, 1e-4, _Clock(5, "cpu"), CancelToken(), rec)
    finally:
        del aro._feasible
    assert levels.hi < stopped_at * (1 - 1e-6)
    assert not undecided  # none of those points was worth a check any more
    assert levels.hi + extra >= brute(sc) * (1 - 1e-6)


@pytest.mark.parametrize("seed", [2, 5])
def test_a_cover_says_which_point_stopped_it(make_leaf_spine, brute, seed):
    """A cover that stops on a check left undecided names that point (``memo["stopped"]``), which
    the refutation compares with the best plan; a refuted level names none. Here the first point
    a cover checks after a plan was found is left undecided (fat-tree k=8 seed 0: (16.67, 25,
    16.67, 25) a plan, then (16.67, 25, 25, 16.67) undecided after 6.7 s; such a point, no better
    than the plan, is now split instead, so the next point checked stands in for it). The pass
    goes on and its bound stays valid."""
    aro, sc, graphs, objective, top, cover = _cover_case(make_leaf_spine, seed)
    _, _, _, upper, start = _low_start(sc)
    real_cover, real = aro._cover, aro._feasible
    state: dict = {"found": -math.inf}
    left_open: list[list[float]] = []
    said: list[tuple[str, list]] = []

    def one_cover(sc, graphs, objective, upper, level, clock, cancel, rec, memo, *args, **kw):
        verdict, flows = real_cover(sc, graphs, objective, upper, level, clock, cancel, rec, memo, *args, **kw)
        said.append((verdict, [list(p) for p in memo["stopped"]]))
        return verdict, flows

    def slow(sc, graphs, rates, clock, cancel, heuristics=True, **kw):
        if not heuristics and not left_open and state["found"] > -math.inf:
            left_open.append(list(rates))
            return "timeout", None  # a plan the check does not find in time, as on fat-tree k=8
        status, flows = real(sc, graphs, rates, clock, cancel, heuristics=heuristics, **kw)
        if flows is not None and not heuristics:
            got = _main_term(objective, aro._route_rates(sc, graphs, flows, objective))
            state["found"] = max(state["found"], got)
        return status, flows

    extra = MU * sum(objective.weights[s] * u for s, u in zip(objective.job_of, upper, strict=True))
    levels = _Levels(top, extra, bandwidths(sc, graphs))
    rec = _Record(Progress())
    rec.offer(start.flows, start.rates, start.objective)
    aro._cover, aro._feasible = one_cover, slow
    try:
        best, _ = aro._refute(sc, graphs, objective, upper, levels, start, 1e-4, _Clock(5, "cpu"), CancelToken(),
                              rec)
    finally:
        del aro._cover, aro._feasible
    assert left_open  # the case happened
    assert ("unknown", [pytest.approx(left_open[0])]) in said
    assert len(said) > 1 and all(not stopped for verdict, stopped in said if verdict != "unknown")
    assert best.objective > start.objective
    assert levels.hi + extra >= brute(sc) * (1 - 1e-6)


@pytest.mark.parametrize("seed", [0, 4])
def test_a_cover_stopped_by_a_point_its_own_plan_beats_does_not_stop_the_refutation(make_leaf_spine, seed):
    """The refutation's rule, with a scripted cover: a cover finds a plan and stops on a point no
    better than it. The pass bisects again from that plan (the cover splits such points
    there, it does not check them) and goes on below the level it stopped on; before, that level
    was the floor of the pass (fat-tree k=8 seed 0 ended at 41.75 / 45.6 where the other runs
    reached 41.75 / 42.84). The script refutes every later level above 1.01 times the plan."""
    aro, sc, graphs, objective, top, cover = _cover_case(make_leaf_spine, seed)
    found = _first_plan_down(cover, top)
    rates = aro._route_rates(sc, graphs, found, objective)
    beaten = _main_term(objective, rates)
    _, _, _, upper, start = _low_start(sc)
    stopped_at: list[float] = []

    def scripted(sc, graphs, objective, upper, level, clock, cancel, rec, memo, *args, **kw):
        memo["stopped"] = []
        if not stopped_at and level > 1.02 * beaten:  # the first cover that could refute its level
            stopped_at.append(level)
            memo["stopped"] = [np.asarray(rates)]  # no better than the plan it returns
            return "unknown", found
        return ("refuted", None) if level > 1.01 * beaten else ("unknown", None)

    levels = _Levels(top, 0.0, bandwidths(sc, graphs))
    aro._cover = scripted
    try:
        best, _ = aro._refute(sc, graphs, objective, upper, levels, start, 1e-3, _Clock(30), CancelToken(),
                              _Record(Progress()))
    finally:
        del aro._cover
    assert stopped_at and best.objective >= objective.value(rates) * (1 - 1e-9)
    assert levels.hi < stopped_at[0] and levels.hi <= 1.01 * beaten * (1 + 2e-3)


@pytest.mark.parametrize("seed", [0, 4])
def test_cover_checks_try_the_greedy_only_where_the_relaxation_leaves_a_chance(make_leaf_spine, seed,
                                                                               monkeypatch):
    """The cover's checks are expected to fail, and on small models the LP relaxation refutes
    most of them in a fraction of a second: the greedy (0.026 s a check on fat-tree k=8) runs
    only on points the relaxation does not refute, and still finds the plans there. Verdicts
    are those of a fresh cover with the greedy first."""
    aro, sc, graphs, objective, top, cover = _cover_case(make_leaf_spine, seed)
    levels = [top * (1 - 0.03 * k) for k in range(1, 16)]
    greedy_on: list[list[float]] = []
    real_greedy = planner_module.greedy_flows
    found: list[bool] = []

    def greedy(sc, graphs, rates, cancel):
        greedy_on.append(list(rates))
        flows = real_greedy(sc, graphs, rates, cancel)
        found.append(flows is not None)
        return flows

    monkeypatch.setattr(planner_module, "greedy_flows", greedy)
    with _recorded_checks(aro) as log:
        verdicts = [cover(level)[0] for level in levels]
    refused = [rates for rates, status in log if status == "infeasible"]
    assert any(r not in greedy_on for r in refused)  # refuted checks that ran no greedy
    for rates in greedy_on:
        m, _ = feasibility_model(sc, graphs, rates)
        assert not _relaxation_infeasible(m, _Clock(10), CancelToken())
    assert any(found)  # the greedy still finds plans among the points it is given
    monkeypatch.undo()
    assert verdicts == [cover(level)[0] for level in levels]


@pytest.mark.parametrize("seed", [0, 4])
def test_cover_does_not_check_again_a_point_left_undecided_up_to_the_margins(make_leaf_spine, seed):
    """A point left undecided is not checked again with about as much time, also when the next
    level lifts its box to a point that differs only within the margins of ``lifted`` (fat-tree
    k=16 with 200 workers per job, seed 1: 7.8 s, then 6.6 s again, on one point)."""
    aro, sc, graphs, objective, top, cover = _cover_case(make_leaf_spine, seed)
    level = top * 0.97
    with _recorded_checks(aro) as log:
        cover(level)
        assert log
        first = log[0][0]
        log.clear()
        memo = {"undecided": [(np.asarray([r * (1 - 3e-6) for r in first]), 1e9)]}
        verdict, _ = cover(level, memo=memo)
    assert verdict == "unknown" and not log


@pytest.mark.parametrize("seed", [0, 4])
def test_an_undecided_point_worth_more_than_the_best_plan_is_checked_again(make_leaf_spine, seed):
    """Small models: after the climb, the rate vector the refutation left undecided that is worth
    most is checked again with half the time left, if it would beat the best plan (fat-tree k=8
    seed 0: 41.75 / 42.84 where the run otherwise ended at 40.08 / 50.14). Its plan replaces
    the best one and passes the evaluator. Points the best plan already beats are not checked."""
    aro, sc, graphs, objective, top, cover = _cover_case(make_leaf_spine, seed)
    found = _first_plan_down(cover, top)
    plan_rates = aro._route_rates(sc, graphs, found, objective)
    _, _, _, _, start = _low_start(sc)
    assert objective.value(plan_rates) > start.objective
    levels = _Levels(top, 0.0, bandwidths(sc, graphs))
    low = [0.5 * r for r in plan_rates]  # undecided too, but worth less than the other point
    levels.memo["undecided"] = [(np.asarray(low), 1.0), (np.asarray(plan_rates), 1.0)]
    with _recorded_checks(aro) as log:
        got = aro._recheck(sc, graphs, objective, levels, start, _Clock(30), CancelToken(), _Record(Progress()))
    assert [rates for rates, _ in log] == [pytest.approx(plan_rates)]
    assert got.objective >= objective.value(plan_rates) * (1 - 1e-6)
    ev = evaluate(sc, aro._plan_from(sc, graphs, got.flows, objective))
    assert ev.valid and ev.feasible and ev.objective == pytest.approx(got.objective, rel=1e-6)
    with _recorded_checks(aro) as log:
        again = aro._recheck(sc, graphs, objective, levels, got, _Clock(30), CancelToken(), _Record(Progress()))
    assert log == [] and again is got


@pytest.mark.parametrize("seed", [0, 4])
def test_a_cover_that_splits_points_left_undecided_goes_on_past_them(make_leaf_spine, seed):
    """With ``split_open`` a cover splits the box of a point left undecided like that of a
    feasible point instead of stopping on it: the smaller boxes cover the same rate vectors and
    their least points lie above it. Here the first point a cover refutes is given as left
    undecided with more time than the cover has: without ``split_open`` the cover stops at once,
    with it the cover never checks that point and still refutes the level."""
    aro, sc, graphs, objective, top, cover = _cover_case(make_leaf_spine, seed)
    level = top * 0.97
    with _recorded_checks(aro) as log:
        assert cover(level)[0] == "refuted"
        first = log[0][0]
        assert log[0][1] == "infeasible"
        log.clear()
        assert cover(level, memo={"undecided": [(np.asarray(first), 1e9)]})[0] == "unknown" and not log
        memo = {"undecided": [(np.asarray(first), 1e9)]}
        verdict, _ = cover(level, memo=memo, split_open=True)
    assert verdict == "refuted"
    assert log and not any(np.allclose(rates, first) for rates, _ in log)
    assert all(status == "infeasible" for _, status in log)


def test_a_refutation_that_splits_points_left_undecided_tries_levels_just_below_the_bound(make_leaf_spine):
    """Large models, after the level refutation, a pass with ``split_open`` (fat-tree k=16 with
    500 workers per job, seed 0, 150 s: 40.73 -> 39.85 in 18 s, where negotiation found
    nothing): its covers check many more points, so each level it tries lies a sixteenth of the
    way from the bound down to the best plan, not halfway; its covers get ``split_open``."""
    aro, sc, graphs, objective, top, cover = _cover_case(make_leaf_spine, 0)
    _, _, _, upper, start = _low_start(sc)
    lo = _main_term(objective, start.rates)
    tried: list[tuple[float, bool]] = []

    def scripted(sc, graphs, objective, upper, level, clock, cancel, rec, memo, bands, refuted, split_open=False):
        tried.append((level, split_open))
        memo["stopped"] = []
        return ("refuted", None) if len(tried) < 3 else ("unknown", None)

    for split_open, share in ((False, 1 / 2), (True, 1 / SPLIT_OPEN_STEPS)):
        tried.clear()
        levels = _Levels(top, 0.0, bandwidths(sc, graphs))
        aro._cover = scripted
        try:
            aro._refute(sc, graphs, objective, upper, levels, start, 1e-3, _Clock(5), CancelToken(),
                        _Record(Progress()), split_open=split_open)
        finally:
            del aro._cover
        hi = top
        for level, flag in tried[:3]:
            assert flag == split_open and level == pytest.approx(hi - share * (hi - lo))
            hi = min(hi, level)


def test_what_refuted_points_refute_spares_checks_and_loses_no_level(make_leaf_spine):
    """Levels walked down as the refutation does (one memo, the best plan found so far kept:
    a cover ends at the first plan that beats it), once with what each refuted point refutes
    (``Refuted``: every rate vector refusing each count vector it refuses) and once with the
    orthants above the refuted floors alone. Every level refuted without it is refuted with it,
    with no more checks in all; on seed 3, down to the first level left undecided, the same
    levels take 80 checks instead of 88 (before covers ended at a better plan: 51 instead of
    104, and seed 0 refuted one more level)."""
    aro, sc, graphs, objective, top, cover = _cover_case(make_leaf_spine, 3, workers=3)
    levels = [top * (1 - 0.03 * k) for k in range(1, 16)]

    def walk(region):
        memo: dict = {}
        rec = _Record(Progress())
        out = []
        with _recorded_checks(aro) as log:
            for level in levels:
                start = len(log)
                verdict, flows = cover(level, rec=rec, memo=memo, refuted=region)
                if flows is not None:
                    rates = aro._route_rates(sc, graphs, flows, objective)
                    rec.offer(flows, rates, objective.value(rates))
                out.append((verdict == "refuted", len(log) - start))
                if verdict == "unknown":
                    break  # the refutation bisects above such a level; the walk ends there
        return out

    plain = walk(None)
    levels = levels[:len(plain)]
    region = Refuted(len(graphs))
    regioned = walk(region)
    assert len(region) > 0 and sum(p for p, _ in plain) >= 8
    assert all(r for (p, _), (r, _) in zip(plain, regioned, strict=True) if p)  # no level lost
    both = [(pc, rc) for (p, pc), (r, rc) in zip(plain, regioned, strict=True) if p and r]
    assert sum(rc for _, rc in both) < sum(pc for pc, _ in both)
