"""Rate vectors the feasibility check cannot tell apart (:mod:`inaplanner.planners.aro.classes`),
against the count vectors each bandwidth admits, enumerated by brute force."""

from __future__ import annotations

import itertools
import random

import pytest

from inaplanner.planners.aro.classes import (
    SAME_POINT_RTOL,
    Refuted,
    lifted,
    refuted_floor,
    same_point,
)


def admitted(rates, b, most=12):
    """Count vectors (at most ``most`` flows per task) that fit in bandwidth b at these rates."""
    return {n for n in itertools.product(range(most + 1), repeat=len(rates))
            if sum(k * r for k, r in zip(n, rates, strict=True)) <= b * (1 + 1e-12)}


def _case(seed):
    rng = random.Random(seed)
    tasks = rng.choice([2, 3])
    bands = rng.sample([100.0, 40.0, 75.0, 60.0], rng.choice([1, 2]))
    rates = [rng.choice([rng.uniform(9.0, 60.0), 100.0 / rng.randint(2, 8)]) for _ in range(tasks)]
    return rates, bands


@pytest.mark.parametrize("seed", range(40))
def test_a_lifted_point_admits_the_same_count_vectors(seed):
    rates, bands = _case(seed)
    q = lifted(rates, bands)
    assert all(a >= b for a, b in zip(q, rates, strict=True))
    for b in bands:
        assert admitted(q, b) == admitted(rates, b)


@pytest.mark.parametrize("seed", range(40))
def test_above_the_refuted_floor_every_refused_count_vector_stays_refused(seed):
    rates, bands = _case(seed)
    f = refuted_floor(rates, bands)
    assert all(a <= b for a, b in zip(f, rates, strict=True))
    rng = random.Random(seed + 1000)
    points = [f] + [[x + rng.uniform(0.0, 1.0) * (p - x + 1.0) for x, p in zip(f, rates, strict=True)]
                    for _ in range(20)]
    for r in points:
        for b in bands:
            assert admitted(r, b) <= admitted(rates, b)


def test_fat_tree_k8_seed0_undecided_point_lies_in_a_refuted_class():
    """Seed 0's undecided (25, 16.88, 16.88, 16.88) admits what (25, 16.89, 16.89, 16.89),
    refuted, admits on 100 Gbps links; so does everything up to 18.75 (25 + 4 x 18.75 = 100)."""
    f = refuted_floor([25.0, 16.89, 16.89, 16.89], [100.0])
    assert all(a <= b for a, b in zip(f, [25.0, 16.88, 16.88, 16.88], strict=True))
    assert f[1] > 100.0 / 6  # six flows of 16.67 fit: below that the class changes
    q = lifted([25.0, 16.88, 16.88, 16.88], [100.0])
    assert q[1] == pytest.approx(18.75, rel=1e-5)
    assert lifted([25.5, 25.0, 25.5, 25.0], [100.0]) == pytest.approx([100.0 / 3, 25.0, 100.0 / 3, 25.0], rel=1e-5)


def test_large_boxes_are_left_alone():
    rates = [0.5] * 6  # 201 ** 6 count vectors per 100 Gbps
    assert lifted(rates, [100.0]) == rates and refuted_floor(rates, [100.0]) == rates
    assert lifted([10.0, 0.0], [100.0])[1] == 0.0  # a task at rate 0 stays there


def test_points_that_differ_only_within_the_margins_are_one():
    """The three lifted points of one fat-tree k=16 run (200 workers per job, seed 1), each
    checked and routed by negotiation as if new, are one point; rate vectors a class apart are
    not."""
    seen = [[31.25, 31.25, 37.5, 25.0], [31.250000000000007, 31.250000000000007, 37.5, 25.0],
            [31.25, 31.2499, 37.5, 25.0]]
    assert all(same_point(p, q) for p in seen for q in seen)
    assert lifted(seen[2], [100.0]) == pytest.approx(seen[0], rel=SAME_POINT_RTOL)
    assert not same_point([31.25, 31.25, 37.5, 25.0], [31.25, 31.25, 37.5, 25.1])
    assert not same_point([25.0, 16.67], [25.0, 20.0])


@pytest.mark.parametrize("seed", range(40))
def test_what_a_refuted_point_refutes_refuses_all_it_refuses_and_holds_its_floor(seed):
    """Every rate vector ``Refuted`` holds refuses each count vector the point refuses (so an
    infeasible check at the point refutes it); every such vector of the samples is held, those
    above ``refuted_floor`` included."""
    rates, bands = _case(seed)
    region = Refuted(len(rates))
    assert region.add(rates, bands)
    floor = refuted_floor(rates, bands)
    rng = random.Random(seed + 2000)
    samples = [[x * rng.uniform(0.6, 1.4) for x in rates] for _ in range(60)]
    samples += [[x + rng.uniform(0.0, 1.0) * (p - x + 1.0) for x, p in zip(floor, rates, strict=True)]
                for _ in range(20)]
    held = 0
    for r in samples:
        refuses = all(admitted(r, b) <= admitted(rates, b) for b in bands)
        if region.holds(r):
            assert refuses, (r, rates, bands)
            held += 1
        elif refuses:  # only a count vector within the margin of a bandwidth may keep it out
            assert any(abs(sum(k * x for k, x in zip(n, r, strict=True)) - b) <= 1e-5 * b
                       for b in bands for n in itertools.product(range(13), repeat=len(r)))
    assert held >= 20  # at least the points above the floor


def test_a_refuted_point_refutes_more_than_its_floor():
    """Fat-tree k=16 with 200 workers per job, seed 2, level 54.17: the floor of the refuted
    (33.33, 25, 33.33, 20.83) lies within 0.01 % of it, so the orthant above it refutes
    nothing more. The region refutes (29.73, 26.44, 29.77, 22.54), a rate vector of a box the
    cover would otherwise check: it refuses every count vector the point refuses on 100 Gbps,
    though three of its rates are lower."""
    p = [100 / 3, 25.0, 100 / 3, 54.17 - 100 / 3]
    region = Refuted(4)
    assert region.add(p, [100.0])
    floor = refuted_floor(p, [100.0])
    assert all(f > x * (1 - 1e-4) for f, x in zip(floor, p, strict=True))
    r = [29.73, 26.44, 29.77, 22.54]
    assert region.holds(r)
    assert admitted(r, 100.0, 5) <= admitted(p, 100.0, 5)
    assert not all(a >= f for a, f in zip(r, floor, strict=True))
    assert not region.holds([30.0, 27.5, 100 / 3, 20.9])  # 30 + 27.5 + 2 x 20.9 fits: not refuted
    assert len(region) == 1 and not Refuted(6).add([0.5] * 6, [100.0])  # too many count vectors
