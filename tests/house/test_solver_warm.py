"""Follow-up solves from the last basis (:class:`~inaplanner.planners.solver.WarmLp`), as GRID's
link tie-break uses them: the same optima as solving each stage from scratch, in fewer simplex
iterations, values written back to the PuLP variables, cancel honoured."""

from __future__ import annotations

import random

import pulp
import pytest

from inaplanner.errors import Cancelled
from inaplanner.planners.solver import CancelToken, WarmLp, new_variable, solve


def _lp(seed: int, n: int = 120, m: int = 80):
    """max sum c x over a random packing polytope (x in [0, 5]); a second cost d for the tie-break."""
    rng = random.Random(seed)
    prob = pulp.LpProblem("p", pulp.LpMaximize)
    x = [new_variable(prob, f"x{i}", 0.0, 5.0) for i in range(n)]
    for j in range(m):
        cols = rng.sample(range(n), 6)
        prob += pulp.lpSum(rng.randint(1, 4) * x[i] for i in cols) <= rng.randint(5, 20), f"r{j}"
    c = pulp.lpSum(rng.choice([1, 1, 2]) * v for v in x)  # many ties: the second stage matters
    d = pulp.lpSum(rng.uniform(0.0, 1.0) * v for v in x)
    prob += c
    return prob, x, c, d


def _cold(seed: int, first: float):
    """Stage 2 solved from scratch: min d subject to c >= first."""
    prob, x, c, d = _lp(seed)
    prob += c >= first * (1 - 1e-9), "hold"
    prob.sense = pulp.LpMinimize
    prob.setObjective(d)
    res = solve(prob)
    return res, prob.solverModel.getInfo().simplex_iteration_count, [v.value() for v in x]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_second_stage_equals_a_cold_solve_in_fewer_iterations(seed):
    prob, x, c, d = _lp(seed)
    first = solve(prob)
    assert first.status == "optimal"
    warm = WarmLp(prob)
    warm.add(c >= first.objective * (1 - 1e-9), "hold")
    second = warm.solve(d, minimize=True, time_limit=None)
    warm_iters = warm.h.getInfo().simplex_iteration_count
    cold, cold_iters, _ = _cold(seed, first.objective)
    assert second.status == "optimal"
    assert second.objective == pytest.approx(cold.objective, rel=1e-7, abs=1e-7)
    # the values went back to PuLP: they hold the first objective and give the second
    assert pulp.value(c) >= first.objective * (1 - 1e-7)
    assert pulp.value(d) == pytest.approx(second.objective, rel=1e-7, abs=1e-7)
    assert warm_iters < cold_iters


def test_new_variables_and_rows_reach_the_live_model():
    """An overload variable added after the first solve (GRID's tie-break adds one per link)."""
    prob = pulp.LpProblem("q", pulp.LpMaximize)
    a, b = new_variable(prob, "a", 0.0, 3.0), new_variable(prob, "b", 0.0, 3.0)
    prob += a + b <= 4
    prob += a + b
    assert solve(prob).objective == pytest.approx(4.0)
    warm = WarmLp(prob)
    warm.add(a + b >= 4.0)
    over = new_variable(prob, "over", 0.0, None)
    warm.add(over >= a - 1.5)  # overload of a above 1.5
    res = warm.solve(over, minimize=True, time_limit=None)
    assert res.objective == pytest.approx(0.0, abs=1e-9)
    assert a.value() <= 1.5 + 1e-9 and b.value() == pytest.approx(4.0 - a.value())
    res = warm.solve(1.0 * a, minimize=True, time_limit=None)  # and again: b at its bound 3, a = 1
    assert res.objective == pytest.approx(1.0) and b.value() == pytest.approx(3.0)


def test_cancel_before_a_warm_solve_raises():
    prob, _x, c, d = _lp(0)
    solve(prob)
    warm = WarmLp(prob)
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        warm.solve(d, minimize=True, time_limit=None, cancel=token)


@pytest.mark.parametrize("live", [True, False])
def test_add_row_is_the_same_row_as_a_pulp_constraint(live):
    """GRID's overload rows go in as (variable, coefficient) lists: the same optimum as the PuLP
    constraint, on the live HiGHS model and on the fallback that re-solves the PuLP problem (a
    WarmLp of a problem never solved has no live model)."""
    results = []
    for fast in (True, False):
        prob, x, c, d = _lp(3)
        first = solve(prob)
        warm = WarmLp(prob) if live else WarmLp(pulp.LpProblem("unsolved", pulp.LpMaximize))
        if not live:  # the fallback adds its rows to the PuLP problem it was given
            warm.prob = prob
        assert (warm.h is not None) == live
        warm.add(c >= first.objective * (1 - 1e-9), "hold")
        over = new_variable(prob, "over", 0.0, None)
        load = pulp.lpSum(x[:10])
        if fast:  # over >= load - 3, i.e. 3 <= over - load
            warm.add_row([(over, 1.0), *((v, -1.0) for v in x[:10])], -3.0, float("inf"))
        else:
            warm.add(over >= load - 3.0)
        res = warm.solve(over, minimize=True, time_limit=None)
        assert res.status == "optimal"
        assert over.value() >= pulp.value(load) - 3.0 - 1e-7
        results.append(res.objective)
    assert results[0] == pytest.approx(results[1], rel=1e-7, abs=1e-7)


def _overload_stage(seed: int, swap: bool):
    """GRID's overload stage on the random LP: hold c, then the least total excess of 30 random
    "links" over half of what the first optimum puts on them (so most rows start broken)."""
    prob, x, c, _d = _lp(seed)
    first = solve(prob)
    warm = WarmLp(prob)
    warm.add(c >= first.objective * (1 - 1e-9), "hold")
    rng = random.Random(seed + 100)
    over, broken = [], 0
    for j in range(30):
        cols = rng.sample(range(len(x)), 12)
        load = sum(x[i].value() for i in cols)
        cap = 0.5 * load
        o = new_variable(prob, f"o{j}", 0.0, None)
        broken += load > cap
        warm.add_row([(o, 1.0), *((x[i], -1.0) for i in cols)], -cap, float("inf"),
                     basic=o if swap and load > cap else None)
        over.append(o)
    res = warm.solve(pulp.lpSum(over), minimize=True, time_limit=None)
    return res, warm.h.getInfo().simplex_iteration_count, broken


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_broken_row_s_own_variable_starts_basic(seed):
    """``add_row(..., basic=o)``: the overload variable takes the broken row's place in the starting
    basis, so the solve starts feasible: the same optimum in fewer simplex iterations."""
    plain, plain_iters, broken = _overload_stage(seed, swap=False)
    swapped, swapped_iters, _ = _overload_stage(seed, swap=True)
    assert broken >= 20
    assert plain.status == swapped.status == "optimal"
    assert swapped.objective == pytest.approx(plain.objective, rel=1e-7, abs=1e-7)
    assert swapped_iters < plain_iters
