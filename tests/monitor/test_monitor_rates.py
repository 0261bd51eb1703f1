"""The pure rate math: deltas across wraps and resets, rates from counter readings."""

from __future__ import annotations

import math
import random
from collections import deque

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from inaplanner.monitor.rates import (
    FIRST,
    OK,
    RESET,
    STALLED,
    STATUSES,
    WRAP,
    RateTracker,
    Reading,
    counter_delta,
    counter_deltas,
    gbps,
    max_plausible_bytes,
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


class ReferenceTracker:
    """The monitor's tracker as it was, cell by cell: a reading, a dict look-up and a deque of
    running totals per cell, the math done by counter_delta and max_plausible_bytes. The
    tracker on arrays must give the very same rates."""

    def __init__(self, bits: int, window: float) -> None:
        self.bits, self.window = bits, window
        self.last: dict = {}
        self.totals: dict = {}

    def update(self, key, t: float, nbytes: int, packets: int, capacity: float | None):
        prev = self.last.get(key)
        if prev is None:
            self.last[key] = (t, nbytes, packets)
            self.totals[key] = deque([(t, 0, 0)])
            return None, None, FIRST, 0.0
        dt = t - prev[0]
        if dt <= 0:
            return None, None, STALLED, 0.0
        self.last[key] = (t, nbytes, packets)
        db, status = counter_delta(prev[1], nbytes, self.bits, max_plausible_bytes(capacity, dt))
        if db is None:
            self.totals[key] = deque([(t, 0, 0)])
            return None, None, status, dt
        dp, _ = counter_delta(prev[2], packets, self.bits, None)
        totals = self.totals[key]
        _, sum_b, sum_p = totals[-1]
        totals.append((t, sum_b + db, sum_p + (dp or 0)))
        while len(totals) > 2 and t - totals[1][0] >= self.window:
            totals.popleft()
        t0, b0, p0 = totals[0]
        _, b1, p1 = totals[-1]
        return gbps(b1 - b0, t - t0), (p1 - p0) / (t - t0), status, t - t0

    def forget(self, switch) -> None:
        for key in [k for k in self.last if k[0] == switch]:
            del self.last[key], self.totals[key]


def _next_value(rng: random.Random, value: int, bits: int) -> int:
    """A counter's next reading: a rise (none, small, large, to the top), a wrap (small or
    past half the range), or a reset to a small value."""
    top = (1 << bits) - 1
    kind = rng.randrange(8)
    if kind == 0:
        return value
    if kind == 1:
        return min(top, value + rng.randrange(1, 1000))
    if kind == 2:
        return min(top, value + rng.randrange(1 << (bits - 2)))
    if kind == 3:
        return top - rng.randrange(3)
    if kind == 4:
        return (value + rng.randrange(1, 10**6)) % (top + 1)  # wraps when near the top
    if kind == 5:
        return (value + (1 << (bits - 1)) + rng.randrange(-2, 3)) % (top + 1)  # half a range
    if kind == 6:
        return rng.randrange(100)  # a reset, or a rise from a small value
    return rng.randrange(top + 1)


@pytest.mark.parametrize("window", [0.0, 1.0])
@pytest.mark.parametrize("seed", range(20))
def test_rates_on_arrays_equal_the_cell_by_cell_reference(seed, window):
    """Brute force: polls of several switches, each answering all or some of its cells at one
    time per switch (or not at all: forgotten, as the poller does after a failure), with
    rises, wraps, resets, equal values, stalled and near-simultaneous reads, 16-, 32- and 64-bit
    counters up to 2**64 - 1, capacities known, unknown or 0, windows of 0 and more. Every
    rate, status and span must be exactly the reference's (the same floats)."""
    rng = random.Random(seed)
    bits = rng.choice([16, 32, 64])
    switches = [f"S{i}" for i in range(rng.randrange(2, 5))]
    keys = [(sw, kind, port) for sw in switches for kind in ("tx", "rx")
            for port in range(rng.randrange(1, 4))]
    capacity = {k: rng.choice([None, 0.0, 1e-9, 1e-6, 10.0, 400.0, 1e12]) for k in keys}
    tracker, reference = RateTracker(bits, window), ReferenceTracker(bits, window)
    numbers = dict(zip(keys, tracker.cells(keys).tolist(), strict=True))
    values = {k: (rng.randrange(1 << bits), rng.randrange(1 << bits)) for k in keys}
    clock = {sw: 0.0 for sw in switches}
    seen = set()
    for _ in range(60):
        cells, times, nbytes, packets, caps, want = [], [], [], [], [], []
        for sw in switches:
            what = rng.randrange(10)
            if what == 0:  # failed: its baselines dropped
                tracker.forget(sw)
                reference.forget(sw)
                continue
            if what == 1:
                continue  # not polled this time (backing off)
            clock[sw] += rng.choice([0.0, 1e-4, 0.25, 0.25, 1.0, 3.0])  # 0: stalled
            mine = [k for k in keys if k[0] == sw]
            if what == 2:  # answered some of its cells only
                mine = rng.sample(mine, rng.randrange(len(mine) + 1))
            for key in mine:
                b, p = values[key]
                values[key] = (_next_value(rng, b, bits), _next_value(rng, p, bits))
                cells.append(numbers[key])
                times.append(clock[sw])
                nbytes.append(values[key][0])
                packets.append(values[key][1])
                caps.append(0.0 if capacity[key] is None else capacity[key])
                want.append(reference.update(key, clock[sw], *values[key], capacity[key]))
        got = tracker.update_cells(np.array(cells, dtype=np.intp), np.array(times),
                                   np.array(nbytes, dtype=np.uint64),
                                   np.array(packets, dtype=np.uint64), np.array(caps))
        for i, (g, pps, status, seconds) in enumerate(want):
            assert STATUSES[got.status[i]] == status
            assert got.seconds[i] == seconds
            if g is None:
                assert np.isnan(got.gbps[i]) and np.isnan(got.pps[i])
            else:
                assert got.gbps[i] == g and got.pps[i] == pps
            seen.add(status)
    assert seen == set(STATUSES)  # every case came up


def test_a_window_summing_past_2_to_the_64_is_exact():
    """64-bit counters that grow by more than half their range at each reading: over a window
    of several readings the increments sum past 2**64 (a carry in the arrays' sums), and the
    rate is still the one Python's integers give."""
    half = 1 << 63
    tracker, reference = RateTracker(64, window=10.0), ReferenceTracker(64, 10.0)
    cell = tracker.cells(["c"])
    value = 5
    for step in range(12):
        value = (value + half - 100 * step) % (1 << 64)  # every increase under half: a wrap
        want = reference.update("c", float(step), value, value, None)
        got = tracker.update_cells(cell, np.array([float(step)]), np.array([value], np.uint64),
                                   np.array([value], np.uint64))
        assert STATUSES[got.status[0]] == want[2]
        if want[0] is not None:
            assert got.gbps[0] == want[0] and got.pps[0] == want[1] and got.seconds[0] == want[3]
    assert want[3] == 10.0 and want[0] * 1e9 / 8 * want[3] > 2.0**66  # summed past 2**64


def test_counter_deltas_equal_counter_delta():
    """The increases on arrays are counter_delta's, cell by cell: equal values, rises, wraps
    and resets, 64-bit values near 2**64 (beyond int64), and bounds compared exactly (an
    integer just above a float bound of 2**53 is above it, where float rounding says equal)."""
    rng = random.Random(3)
    for bits in (1, 8, 16, 32, 53, 63, 64):
        top = (1 << bits) - 1
        near = [v for v in (0, 1, 2, top // 2, top // 2 + 1, top - 1, top) if 0 <= v <= top]
        prev = [rng.choice(near + [rng.randrange(top + 1)]) for _ in range(400)]
        cur = [rng.choice(near + [p, rng.randrange(top + 1)]) for p in prev]
        steps = [rng.choice([0.0, 0.5, 1.0, 1e3, 2.0**53, 2.0**53 + 2, 2.0**63, 2.0**64, -1.0,
                             math.inf, math.nan, float(rng.randrange(top + 1)),
                             float((c - p) % (top + 1))]) for p, c in zip(prev, cur, strict=True)]
        p_arr, c_arr = np.array(prev, np.uint64), np.array(cur, np.uint64)
        for max_step in (None, steps):
            delta, status = counter_deltas(p_arr, c_arr, bits,
                                           None if max_step is None else np.array(max_step))
            for i, (p, c) in enumerate(zip(prev, cur, strict=True)):
                want, why = counter_delta(p, c, bits, None if max_step is None else max_step[i])
                assert STATUSES[status[i]] == why
                assert int(delta[i]) == (0 if want is None else want)
    with pytest.raises(ValueError):
        counter_deltas(np.array([1], np.uint64), np.array([1 << 16], np.uint64), 16)
