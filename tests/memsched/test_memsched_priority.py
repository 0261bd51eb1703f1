"""ESA Eq. (1), the 8-bit fixed-point priority and downgrading (ESA §5.1, §5.4)."""

from __future__ import annotations

import math

import pytest

from inaplanner.errors import InaplannerError
from inaplanner.memsched.priority import (
    PRIORITY_MAX,
    choose_frac_bits,
    dequantise,
    downgrade,
    priority,
    quantise,
)


def test_eq1_matches_the_formula_by_hand() -> None:
    # P = 1/T * L/l * Comm/Comp
    assert priority(1, 2, 2.0, 0.004) == pytest.approx(1 / 0.004 * 2 / 1 * 2.0)
    assert priority(2, 2, 0.5, 0.004) == pytest.approx(1 / 0.004 * 1 * 0.5)
    assert priority(3, 16, 1.0, 3600.0) == pytest.approx(16 / 3 / 3600)


def test_eq1_orders_as_the_paper_intends() -> None:
    base = priority(2, 4, 1.0, 10.0)
    assert priority(1, 4, 1.0, 10.0) > base  # front layers first
    assert priority(2, 4, 2.0, 10.0) > base  # communication-heavy models first
    assert priority(2, 4, 1.0, 5.0) > base  # shortest remaining time first


@pytest.mark.parametrize("args", [(0, 2, 1.0, 1.0), (3, 2, 1.0, 1.0), (1, 0, 1.0, 1.0),
                                  (1, 2, 0.0, 1.0), (1, 2, 1.0, 0.0), (1, 2, 1.0, math.inf)])
def test_eq1_refuses_bad_input(args: tuple) -> None:
    with pytest.raises(InaplannerError):
        priority(*args)


def test_quantise_is_fixed_point_rounded_and_clamped() -> None:
    assert quantise(3.0, 4) == 48  # 3 * 2^4
    assert quantise(3.03, 4) == 48  # 48.48 rounds down
    assert quantise(3.04, 4) == 49  # 48.64 rounds up
    assert quantise(1000.0, 0) == PRIORITY_MAX  # clamped to 8 bits
    assert quantise(1e-9, 0) == 1  # a positive priority never encodes as "empty"
    assert quantise(0.0, 5) == 0
    assert quantise(96.0, -2) == 24  # negative fractional bits: coarser than integers
    assert dequantise(48, 4) == 3.0
    with pytest.raises(InaplannerError):
        quantise(-1.0, 0)


def test_choose_frac_bits_is_the_largest_scale_that_fits() -> None:
    for values in ([0.004], [1.0, 2.0, 3.0], [255.0], [256.0], [1e-6, 5e-5], [1333.3, 166.7],
                   [0.49999]):
        f = choose_frac_bits(values)
        top = max(values)
        assert math.floor(math.ldexp(top, f) + 0.5) <= PRIORITY_MAX
        assert math.floor(math.ldexp(top, f + 1) + 0.5) > PRIORITY_MAX  # brute force: f+1 overflows
    assert choose_frac_bits([]) == 0


def test_quantised_priorities_keep_their_order_and_relative_error() -> None:
    values = [priority(layer, 2, ratio, t) for layer in (1, 2) for ratio in (0.5, 2.0)
              for t in (0.002, 0.004, 0.008)]
    f = choose_frac_bits(values)
    qs = [quantise(v, f) for v in values]
    assert max(qs) in (PRIORITY_MAX - 1, PRIORITY_MAX) or max(qs) > PRIORITY_MAX // 2
    for a, qa in zip(values, qs, strict=True):
        for b, qb in zip(values, qs, strict=True):
            if a > b:
                assert qa >= qb  # never inverted
        if qa >= 16:  # 8 bits keep ~3 % precision once the value uses 4+ bits
            assert abs(dequantise(qa, f) - a) / a < 0.035


def test_downgrade_halves_the_stored_value() -> None:
    assert downgrade(200) == 100
    assert downgrade(201) == 100
    assert downgrade(1) == 0
    q = 255
    for _ in range(8):
        q = downgrade(q)
    assert q == 0
