"""Rounding: the interval method (InArt section 4.3) and R-GRIA's probabilities (GRID Alg. 1)."""

from __future__ import annotations

import math
import random

import pytest

from inaplanner.planners.grid import gria_candidates, solve_gria
from inaplanner.planners.ina_common import rng_for
from inaplanner.planners.paths import Paths
from inaplanner.planners.rounding import draw, interval_choice, probabilities, rgria_round
from inaplanner.topologies import grid_fig1


def test_interval_method_paper_example():
    # y_v1 = 0.4, y_v2 = 0.5, direct 0.1: (0, 0.4] first switch, (0.4, 0.9] second, (0.9, 1] PS
    w = [0.4, 0.5, 0.1]
    assert interval_choice(w, 0.0) == 0
    assert interval_choice(w, 0.39) == 0
    assert interval_choice(w, 0.41) == 1
    assert interval_choice(w, 0.89) == 1
    assert interval_choice(w, 0.91) == 2
    assert interval_choice(w, 0.999999) == 2


def test_interval_method_edges():
    assert interval_choice([0.0, 2.0, 0.0], 0.0) == 1  # zero-length pieces never win
    assert interval_choice([0.0, 2.0, 0.0], 0.999) == 1
    assert probabilities([0.0, 0.0]) == [0.5, 0.5]
    assert probabilities([3.0, -1.0, 1.0]) == [0.75, 0.0, 0.25]
    with pytest.raises(ValueError):
        interval_choice([1.0], 1.0)
    with pytest.raises(ValueError):
        probabilities([])


def _chi_square(counts: list[int], probs: list[float]) -> float:
    n = sum(counts)
    return sum((c - n * p) ** 2 / (n * p) for c, p in zip(counts, probs, strict=True) if p > 0)


def test_rgria_probabilities_statistically():
    """Worker n picks node s with probability r~_n^s / sum_s r~_n^s (GRID Alg. 1 line 6)."""
    r_tilde = {"W1": {"S1": 2.25, "S2": 0.75, "PS": 0.0}, "W2": {"S1": 1.0, "S3": 1.0, "PS": 2.0}}
    draws = 20000
    counts = {w: dict.fromkeys(row, 0) for w, row in r_tilde.items()}
    for seed in range(draws):
        for w, node in rgria_round(r_tilde, random.Random(seed)).items():
            counts[w][node] += 1
    for w, row in r_tilde.items():
        probs = probabilities(list(row.values()))
        observed = [counts[w][s] for s in row]
        assert all(c == 0 for c, p in zip(observed, probs, strict=True) if p == 0)  # never drawn
        # chi-square critical value at p = 1e-4 for 1-2 degrees of freedom is below 18.5
        assert _chi_square(observed, probs) < 18.5, (w, observed, probs)


def test_rgria_on_fig1_lp_matches_probabilities():
    """The planner's own draws (seeded per round) follow the LP's rates on GRID Fig. 1."""
    sc = grid_fig1()
    sol = solve_gria(sc, gria_candidates(sc, Paths(sc)), integer=False, time_limit=10)
    rows = {key[1]: row for key, row in sol.rates.items()}
    key_w4 = next(k for k in sol.rates if k[1] == "W4")
    nodes = list(sol.rates[key_w4])
    probs = probabilities([sol.rates[key_w4][s] for s in nodes])
    assert sum(1 for p in probs if p > 0) >= 2  # the LP splits W4: a real random choice
    counts = dict.fromkeys(nodes, 0)
    draws = 8000
    for k in range(draws):
        counts[rgria_round(sol.rates, rng_for(0, "grid", k))[key_w4]] += 1
    assert _chi_square([counts[s] for s in nodes], probs) < 18.5
    # every worker's expected rate equals the LP's lambda (Theorem 7: sum_s r~_n^s >= lambda)
    lam = next(iter(sol.task_rate.values()))
    assert lam == pytest.approx(3.0)
    assert all(sum(row.values()) >= lam - 1e-7 for row in rows.values())


def test_draw_is_seeded():
    w = [0.2, 0.3, 0.5]
    a = [draw(w, random.Random(7)) for _ in range(5)]
    b = [draw(w, random.Random(7)) for _ in range(5)]
    assert a == b
    assert math.isclose(sum(probabilities(w)), 1.0)
