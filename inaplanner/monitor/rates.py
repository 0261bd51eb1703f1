"""Rates from counter readings: the pure math of monitoring (no I/O, no threads).

A port counter only grows, except when it wraps (it passes its maximum, ``2**bits - 1``, and
starts again from 0) or is reset (the switch restarted or its pipeline was pushed again). Between
two readings ``prev`` and ``cur``:

* ``cur >= prev``: the counter grew by ``cur - prev``;
* ``cur < prev`` and ``cur + 2**bits - prev`` is no more than the counter can plausibly grow in
  the interval (``max_step``, from the line rate): it wrapped once;
* otherwise it was reset: the increase over this interval is unknown, so no rate is given and
  ``cur`` becomes the new baseline.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable
from dataclasses import dataclass

COUNTER_BITS = 64  # P4Runtime carries counters as int64; hardware counters may be narrower

OK = "ok"
FIRST = "first"  # first reading (or first after a reconnect): a baseline, no rate yet
WRAP = "wrap"
RESET = "reset"
STALLED = "stalled"  # no time passed between the readings


def counter_delta(prev: int, cur: int, bits: int = COUNTER_BITS,
                  max_step: float | None = None) -> tuple[int | None, str]:
    """(increase, status) of a ``bits``-wide free-running counter from ``prev`` to ``cur``.

    ``max_step`` bounds a plausible increase (default half the counter's range); a decrease whose
    wrapped increase exceeds it is a reset and gives ``(None, "reset")``."""
    modulus = 1 << bits
    if not (0 <= prev < modulus and 0 <= cur < modulus):
        raise ValueError(f"counter values must be in 0..2**{bits}-1, got {prev} and {cur}")
    if cur >= prev:
        return cur - prev, OK
    wrapped = cur + modulus - prev
    limit = modulus // 2 if max_step is None else max_step
    if wrapped <= limit:
        return wrapped, WRAP
    return None, RESET


def gbps(delta_bytes: float, seconds: float) -> float:
    """Bytes over an interval as Gbps (10**9 bits per second)."""
    return delta_bytes * 8.0 / seconds / 1e9


def max_plausible_bytes(capacity_gbps: float | None, seconds: float, slack: float = 2.0) -> float | None:
    """The most bytes a port of ``capacity_gbps`` can count in ``seconds`` (times ``slack``, for
    clock jitter); None when the capacity is unknown."""
    if capacity_gbps is None or capacity_gbps <= 0:
        return None
    return capacity_gbps * 1e9 / 8.0 * max(seconds, 1e-3) * slack


@dataclass(frozen=True)
class Reading:
    """One counter cell read at time ``t`` (seconds, monotonic)."""

    t: float
    bytes: int
    packets: int


@dataclass(frozen=True)
class Rate:
    """What one new reading says: Gbps and packets/s over ``seconds``, or None with ``status``."""

    gbps: float | None
    pps: float | None
    status: str
    seconds: float = 0.0


class RateTracker:
    """Keeps the last reading of each counter cell (any hashable key, e.g. (switch, "tx", port))
    and turns each new reading into a :class:`Rate`.

    With ``window`` = 0 a rate covers the last interval between two readings. With a window of W
    seconds it covers the last W seconds or a little more (from the newest reading at least W old;
    all readings since the baseline until W have passed): the sum of the wrap-safe increments over
    the time they took, which smooths the error of when each reading was taken. A reset starts a
    new baseline."""

    def __init__(self, bits: int = COUNTER_BITS, window: float = 0.0) -> None:
        if window < 0:
            raise ValueError("rate window must be >= 0 s")
        self.bits = bits
        self.window = window
        self.last: dict[Hashable, Reading] = {}
        # per key: (time, bytes, packets) counted since the baseline, unwrapped, oldest first
        self._totals: dict[Hashable, deque[tuple[float, int, int]]] = {}
        # keys by their first element (the switch), so forgetting one switch does not walk
        # every key (fat-tree k=32: 49,152 cells, 21 ms for each switch that failed a poll)
        self._by_head: dict[Hashable, set[Hashable]] = {}

    def update(self, key: Hashable, reading: Reading, capacity_gbps: float | None = None) -> Rate:
        prev = self.last.get(key)
        if prev is None:
            self.last[key] = reading
            self._totals[key] = deque([(reading.t, 0, 0)])
            if isinstance(key, tuple) and key:
                self._by_head.setdefault(key[0], set()).add(key)
            return Rate(None, None, FIRST)
        dt = reading.t - prev.t
        if dt <= 0:
            return Rate(None, None, STALLED)  # keep the older baseline
        self.last[key] = reading
        step = max_plausible_bytes(capacity_gbps, dt)
        db, status = counter_delta(prev.bytes, reading.bytes, self.bits, step)
        if db is None:
            self._totals[key] = deque([(reading.t, 0, 0)])
            return Rate(None, None, status, dt)
        dp, _ = counter_delta(prev.packets, reading.packets, self.bits, None)
        totals = self._totals[key]
        _, sum_b, sum_p = totals[-1]
        totals.append((reading.t, sum_b + db, sum_p + (dp or 0)))
        while len(totals) > 2 and reading.t - totals[1][0] >= self.window:
            totals.popleft()
        t0, b0, p0 = totals[0]
        span = reading.t - t0
        _, b1, p1 = totals[-1]
        return Rate(gbps(b1 - b0, span), (p1 - p0) / span, status, span)

    def forget(self, match: Hashable | None = None) -> None:
        """Drop baselines: all, or those whose key is ``match`` or a tuple starting with it."""
        if match is None:
            self.last.clear()
            self._totals.clear()
            self._by_head.clear()
            return
        keys = self._by_head.pop(match, set())
        if match in self.last:
            keys.add(match)
        for key in keys:
            self.last.pop(key, None)
            self._totals.pop(key, None)
            if isinstance(key, tuple) and key and key[0] != match:
                self._by_head.get(key[0], set()).discard(key)
