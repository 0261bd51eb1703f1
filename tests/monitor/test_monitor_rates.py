"""The pure rate math: deltas across wraps and resets, rates from counter readings."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from inaplanner.monitor.rates import (
    FIRST,
    OK,
    RESET,
    STALLED,
    WRAP,
    RateTracker,
    Reading,
    counter_delta,
    gbps,
)


def test_counter_delta_growth_wrap_and_reset():
    assert counter_delta(100, 350) == (250, OK)
    top = (1 << 32) - 1
    assert counter_delta(top - 9, 20, bits=32) == (30, WRAP)  # 10 to reach 2**32, then 20
    assert counter_delta(top, 0, bits=32) == (1, WRAP)
    # a drop from far below the top is a restart, not a wrap
    assert counter_delta(5_000_000, 1_000, bits=64) == (None, RESET)
    # with a line-rate bound even a 32-bit drop near the middle is a reset
    assert counter_delta(1 << 30, 10, bits=32, max_step=1e6) == (None, RESET)
    assert counter_delta(top - 100, 50, bits=32, max_step=1e6) == (151, WRAP)
    with pytest.raises(ValueError):
        counter_delta(-1, 5)
    with pytest.raises(ValueError):
        counter_delta(0, 1 << 32, bits=32)


@given(bits=st.sampled_from([16, 32, 64]), start=st.integers(min_value=0),
       steps=st.lists(st.integers(min_value=0), min_size=1, max_size=20))
def test_counter_delta_recovers_every_increment(bits, start, steps):
    """Brute force: a counter that grows by known steps (each under half the range) and wraps
    modulo 2**bits; every delta must be the step."""
    modulus = 1 << bits
    value = start % modulus
    for raw in steps:
        step = raw % (modulus // 2)
        nxt = (value + step) % modulus
        delta, status = counter_delta(value, nxt, bits=bits)
        assert delta == step
        assert status == (WRAP if nxt < value else OK)
        value = nxt


def test_tracker_rates_through_a_wrap_a_reset_and_a_gap():
    bits = 32
    top = 1 << bits
    tr = RateTracker(bits=bits)
    key = ("S1", "tx", 3)
    assert tr.update(key, Reading(0.0, top - 250_000_000, 0)).status == FIRST
    r = tr.update(key, Reading(1.0, top - 125_000_000, 1000), capacity_gbps=10.0)
    assert r.status == OK and r.gbps == pytest.approx(1.0) and r.pps == pytest.approx(1000)
    r = tr.update(key, Reading(2.0, 125_000_000, 2000), capacity_gbps=10.0)  # passed 2**32
    assert r.status == WRAP and r.gbps == pytest.approx(2.0)
    r = tr.update(key, Reading(3.0, 1_000, 2001), capacity_gbps=10.0)  # the switch restarted
    assert r.status == RESET and r.gbps is None
    r = tr.update(key, Reading(3.5, 1_000 + 62_500_000, 2500), capacity_gbps=10.0)
    assert r.status == OK and r.gbps == pytest.approx(1.0)
    assert tr.update(key, Reading(3.5, 2_000_000_000, 3000)).status == STALLED
    tr.forget("S1")  # the switch went away: the next reading is a fresh baseline
    assert tr.update(key, Reading(10.0, 5, 5)).status == FIRST
    assert gbps(125_000_000, 1.0) == pytest.approx(1.0)


def test_windowed_rate_spans_the_window_and_smooths_timing_errors():
    tr = RateTracker(window=1.0)
    key = "k"
    tr.update(key, Reading(0.0, 0, 0))
    # 1 Gbps = 125 MB/s, read every 0.25 s, each reading's time off by +-40 ms (alternating)
    true = [0.25 * k for k in range(1, 9)]
    times = [t + (0.04 if k % 2 == 0 else -0.04) for k, t in enumerate(true, start=1)]
    spans = []
    for t, tt in zip(times, true, strict=True):
        r = tr.update(key, Reading(t, int(125_000_000 * tt), 0))
        spans.append(r.seconds)
    assert 1.0 <= spans[-1] < 1.25
    assert abs(r.gbps - 1.0) <= 0.08 / spans[-1] + 1e-9  # two 40 ms errors over the window
    naive = RateTracker()
    naive.update(key, Reading(times[-2], int(125_000_000 * true[-2]), 0))
    assert abs(naive.update(key, Reading(times[-1], 250_000_000, 0)).gbps - 1.0) > 0.2
    # a wrap inside the window is summed correctly; a reset restarts the window
    w = RateTracker(bits=16, window=10.0)
    w.update(key, Reading(0.0, 65_000, 0))
    w.update(key, Reading(1.0, 65_500, 0))
    r = w.update(key, Reading(2.0, 464, 0))  # +500, then +500 across 2**16
    assert r.status == WRAP and r.seconds == 2.0 and r.gbps == pytest.approx(gbps(1000, 2.0))
    assert w.update(key, Reading(3.0, 10, 0)).status == RESET
    r = w.update(key, Reading(4.0, 110, 0))
    assert r.seconds == 1.0 and r.gbps == pytest.approx(gbps(100, 1.0))


@given(st.lists(st.tuples(st.sampled_from(["S1", "S2", "S3"]), st.sampled_from(["tx", "rx"]),
                          st.integers(1, 4)), min_size=1, max_size=30),
       st.lists(st.one_of(st.sampled_from(["S1", "S2", "S4", "x"]),
                          st.tuples(st.sampled_from(["S1", "S2"]), st.sampled_from(["tx", "rx"]),
                                    st.integers(1, 4))), max_size=4))
def test_forgetting_drops_exactly_the_keys_of_the_switch(keys, forgets):
    """forget(S) keeps an index by switch instead of walking every key; it drops the same keys
    as the walk would, plain keys and whole-key matches included."""
    tr = RateTracker()
    for i, key in enumerate(keys + ["x"]):
        tr.update(key, Reading(float(i), i, i))
    left = set(tr.last)
    for match in forgets:
        left = {k for k in left if not (k == match or (isinstance(k, tuple) and k[0] == match))}
        tr.forget(match)
        assert set(tr.last) == left
    for key in keys:  # a forgotten key starts again from a baseline, the others go on
        status = tr.update(key, Reading(100.0, 10**6, 10**6)).status
        assert (status == FIRST) == (key not in left)
        left.add(key)
