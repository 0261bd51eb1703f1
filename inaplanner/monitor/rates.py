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

from collections.abc import Hashable, Iterable
from dataclasses import dataclass

import numpy as np

COUNTER_BITS = 64  # P4Runtime carries counters as int64; hardware counters may be narrower

OK = "ok"
FIRST = "first"  # first reading (or first after a reconnect): a baseline, no rate yet
WRAP = "wrap"
RESET = "reset"
STALLED = "stalled"  # no time passed between the readings
#: the statuses by their codes in :attr:`Rates.status`
STATUSES = (OK, FIRST, WRAP, RESET, STALLED)
_OK, _FIRST, _WRAP, _RESET, _STALLED = range(5)


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


def _check_bits(bits: int) -> None:
    if not 1 <= bits <= 64:
        raise ValueError(f"counters must be 1 to 64 bits wide (P4Runtime's int64), got {bits}")


def _at_most(values: np.ndarray, limit: np.ndarray) -> np.ndarray:
    """``values <= limit``, uint64 against float, compared exactly as Python compares an int
    with a float: numpy would round the integers to float first (2**53 + 1 <= 2.0**53)."""
    top = np.floor(limit)
    inside = (top >= 0) & (top < 2.0 ** 64)  # False for NaN
    whole = np.where(inside, top, 0.0).astype(np.uint64)
    return (top >= 2.0 ** 64) | (inside & (values <= whole))


def counter_deltas(prev: np.ndarray, cur: np.ndarray, bits: int = COUNTER_BITS,
                   max_step: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`counter_delta` of many cells at once: the increases (``uint64``; 0 where the
    counter was reset) and their status codes (:data:`STATUSES`). ``max_step`` is a float per
    cell, or None for half the counter's range everywhere.

    The arithmetic is unsigned 64-bit, modulo 2**64, so it is exact for 64-bit counters too:
    ``cur - prev`` modulo 2**64 is ``cur + 2**64 - prev`` when the counter wrapped, and every
    increase is below 2**bits."""
    _check_bits(bits)
    prev = np.asarray(prev, dtype=np.uint64)
    cur = np.asarray(cur, dtype=np.uint64)
    if bits < 64:
        outside = (prev >= np.uint64(1 << bits)) | (cur >= np.uint64(1 << bits))
        if outside.any():
            i = int(np.flatnonzero(outside)[0])
            raise ValueError(f"counter values must be in 0..2**{bits}-1, got {int(prev[i])} "
                             f"and {int(cur[i])}")
    grew = cur >= prev
    delta = cur - prev  # where it wrapped: cur + 2**64 - prev
    fell = ~grew
    if bits < 64:
        delta[fell] += np.uint64(1 << bits)  # back under 2**64: cur + 2**bits - prev
    limit = np.full(delta.shape, 2.0 ** (bits - 1)) if max_step is None \
        else np.asarray(max_step, dtype=np.float64)
    wrapped = fell & _at_most(delta, limit)
    reset = fell & ~wrapped
    delta[reset] = 0
    status = np.full(delta.shape, _OK, dtype=np.uint8)
    status[wrapped] = _WRAP
    status[reset] = _RESET
    return delta, status


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


@dataclass(frozen=True)
class Rates:
    """What new readings of many cells say, aligned with the cells read: Gbps and packets/s
    (NaN where there is no rate), status codes (:data:`STATUSES`) and the seconds each rate
    covers (0 for a first or stalled reading, the interval for a reset)."""

    gbps: np.ndarray
    pps: np.ndarray
    status: np.ndarray
    seconds: np.ndarray


def _exact_float(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """``high * 2**64 + low`` as floats, rounded once as Python rounds an int (``high`` is
    almost always 0: only a window summing increments beyond 2**64 sets it)."""
    out = low.astype(np.float64)
    for i in np.flatnonzero(high).tolist():
        out[i] = float((int(high[i]) << 64) + int(low[i]))
    return out


class RateTracker:
    """Keeps the last reading of each counter cell (any hashable key, e.g. (switch, "tx", port))
    and turns new readings into rates, many cells at once (:meth:`update_cells`) or one
    (:meth:`update`).

    With ``window`` = 0 a rate covers the last interval between two readings. With a window of W
    seconds it covers the last W seconds or a little more (from the newest reading at least W old;
    all readings since the baseline until W have passed): the sum of the wrap-safe increments over
    the time they took, which smooths the error of when each reading was taken. A reset starts a
    new baseline.

    Cells are numbered as they are first named (:meth:`cells`) and their state lives in arrays by
    that number: the last reading, and per cell a ring of the readings in the window (time and
    increments) with the running sum of the increments after its oldest. A poll of fat-tree k=64
    (655,360 cells) is then a few dozen array operations, where a reading object, a dict look-up
    and a deque per cell took about 3 s. The sums are unsigned 64-bit with a carry count, so
    even 64-bit counters sum exactly (:func:`_exact_float`)."""

    def __init__(self, bits: int = COUNTER_BITS, window: float = 0.0) -> None:
        if window < 0:
            raise ValueError("rate window must be >= 0 s")
        _check_bits(bits)
        self.bits = bits
        self.window = window
        self._number: dict[Hashable, int] = {}
        self._keys: list[Hashable] = []
        # cell numbers by their key's first element (the switch), so forgetting one switch
        # does not walk every key; made at the first forget after new cells
        self._by_head: dict[Hashable, list[int]] | None = None
        self._allocate(0, 3)  # a ring of 3: the most a window of 0 s holds, before a drop

    def _allocate(self, size: int, depth: int) -> None:
        """(Re)make the arrays for ``size`` cells and rings of ``depth``, keeping what they
        hold (a ring unrolled to start at 0)."""
        old = getattr(self, "_known", None)
        n = 0 if old is None else min(old.size, size)
        known = np.zeros(size, dtype=bool)
        t = np.zeros(size)
        last_b = np.zeros(size, dtype=np.uint64)
        last_p = np.zeros(size, dtype=np.uint64)
        times = np.zeros((size, depth))
        inc_b = np.zeros((size, depth), dtype=np.uint64)
        inc_p = np.zeros((size, depth), dtype=np.uint64)
        count = np.zeros(size, dtype=np.intp)
        sum_b = np.zeros(size, dtype=np.uint64)
        sum_p = np.zeros(size, dtype=np.uint64)
        carry_b = np.zeros(size, dtype=np.int64)
        carry_p = np.zeros(size, dtype=np.int64)
        if n:
            old_depth = self._times.shape[1]
            order = (self._head[:, None] + np.arange(old_depth)) % old_depth
            for new, held in ((times, self._times), (inc_b, self._inc_b), (inc_p, self._inc_p)):
                new[:n, :old_depth] = np.take_along_axis(held, order, axis=1)
            for new, held in ((known, self._known), (t, self._t), (last_b, self._last_b),
                              (last_p, self._last_p), (count, self._count),
                              (sum_b, self._sum_b), (sum_p, self._sum_p),
                              (carry_b, self._carry_b), (carry_p, self._carry_p)):
                new[:n] = held
        self._known, self._t, self._last_b, self._last_p = known, t, last_b, last_p
        self._times, self._inc_b, self._inc_p = times, inc_b, inc_p
        self._head = np.zeros(size, dtype=np.intp)
        self._count = count
        self._sum_b, self._sum_p, self._carry_b, self._carry_p = sum_b, sum_p, carry_b, carry_p

    def cells(self, keys: Iterable[Hashable]) -> np.ndarray:
        """The numbers of the cells ``keys`` name, numbering the new ones (name a poll's
        cells in one call: the arrays grow to fit them at the end of it)."""
        numbers, named = self._number, self._keys
        out = []
        for key in keys:
            number = numbers.get(key)
            if number is None:
                number = numbers[key] = len(named)
                named.append(key)
                self._by_head = None
            out.append(number)
        if len(named) > self._known.size:
            self._allocate(max(len(named), self._known.size * 3 // 2), self._times.shape[1])
        return np.array(out, dtype=np.intp)

    @property
    def last(self) -> dict[Hashable, Reading]:
        """The baselines kept: the last reading of each cell that has one."""
        return {self._keys[i]: Reading(float(self._t[i]), int(self._last_b[i]),
                                       int(self._last_p[i]))
                for i in np.flatnonzero(self._known[:len(self._keys)]).tolist()}

    def update(self, key: Hashable, reading: Reading, capacity_gbps: float | None = None) -> Rate:
        """What one new reading of ``key`` says (:meth:`update_cells` with one cell)."""
        try:
            values = np.array([reading.bytes, reading.packets], dtype=np.uint64)
        except OverflowError:
            raise ValueError(f"counter values must be in 0..2**{self.bits}-1, got "
                             f"{reading.bytes} and {reading.packets}") from None
        r = self.update_cells(self.cells([key]), np.array([reading.t], dtype=np.float64),
                              values[:1], values[1:],
                              None if capacity_gbps is None else np.array([capacity_gbps],
                                                                         dtype=np.float64))
        g = float(r.gbps[0])
        return Rate(None if g != g else g, None if g != g else float(r.pps[0]),
                    STATUSES[int(r.status[0])], float(r.seconds[0]))

    def update_cells(self, cells: np.ndarray, t: np.ndarray, nbytes: np.ndarray,
                     packets: np.ndarray, capacity_gbps: np.ndarray | None = None) -> Rates:
        """What new readings say: cell ``cells[i]`` (numbers from :meth:`cells`, each at most
        once) read ``nbytes[i]`` and ``packets[i]`` (``uint64``) at time ``t[i]``, on a port
        of ``capacity_gbps[i]`` (0 or None: unknown; it bounds a plausible wrap,
        :func:`max_plausible_bytes`).

        Per cell, as :func:`counter_delta` says it: a first reading is a baseline; a reading
        no later than the last is stalled (the older baseline stays); a reset makes the reading
        the new baseline with no rate; a rise or a plausible wrap gives a rate over the window."""
        cells = np.asarray(cells, dtype=np.intp)
        t = np.asarray(t, dtype=np.float64)
        nbytes = np.asarray(nbytes, dtype=np.uint64)
        packets = np.asarray(packets, dtype=np.uint64)
        n = cells.size
        gbps_ = np.full(n, np.nan)
        pps = np.full(n, np.nan)
        status = np.full(n, _STALLED, dtype=np.uint8)
        seconds = np.zeros(n)
        known = self._known[cells]
        dt = t - self._t[cells]
        new = np.flatnonzero(~known)
        moved = np.flatnonzero(known & ~(dt <= 0))  # dt <= 0: stalled
        dt = dt[moved]
        at = cells[moved]
        limit = None
        if capacity_gbps is not None:
            capacity = np.asarray(capacity_gbps, dtype=np.float64)[moved]
            # max_plausible_bytes where the capacity is known (not <= 0), else half the range
            step = capacity * 1e9 / 8.0 * np.where(1e-3 > dt, 1e-3, dt) * 2.0
            limit = np.where(capacity <= 0, 2.0 ** (self.bits - 1), step)
        d_b, moved_status = counter_deltas(self._last_b[at], nbytes[moved], self.bits, limit)
        d_p, _ = counter_deltas(self._last_p[at], packets[moved], self.bits)
        # every check passed: from here on the state changes
        for cell_rows, rows in ((at, moved), (cells[new], new)):
            self._t[cell_rows] = t[rows]
            self._last_b[cell_rows] = nbytes[rows]
            self._last_p[cell_rows] = packets[rows]
        self._known[cells[new]] = True
        status[new] = _FIRST
        status[moved] = moved_status
        seconds[moved] = dt
        was_reset = moved_status == _RESET
        self._restart(np.concatenate([cells[new], at[was_reset]]),
                      np.concatenate([t[new], t[moved[was_reset]]]))
        grew = ~was_reset
        rows, at = moved[grew], at[grew]
        span = self._append(at, t[rows], d_b[grew], d_p[grew])
        seconds[rows] = span
        gbps_[rows] = gbps(_exact_float(self._sum_b[at], self._carry_b[at]), span)
        pps[rows] = _exact_float(self._sum_p[at], self._carry_p[at]) / span
        return Rates(gbps_, pps, status, seconds)

    def _restart(self, cells: np.ndarray, t: np.ndarray) -> None:
        """A new baseline: the window of ``cells`` holds their reading at ``t`` only."""
        self._head[cells] = 0
        self._count[cells] = 1
        self._times[cells, 0] = t
        for held in (self._sum_b, self._sum_p, self._carry_b, self._carry_p):
            held[cells] = 0

    def _append(self, cells: np.ndarray, t: np.ndarray, d_b: np.ndarray,
                d_p: np.ndarray) -> np.ndarray:
        """Add a reading to the windows of ``cells``, drop those the window no longer needs
        (while more than two are kept and the second oldest is at least ``window`` old), and
        return the seconds each window spans."""
        depth = self._times.shape[1]
        if cells.size and int(self._count[cells].max()) >= depth:
            self._allocate(self._known.size, 2 * depth)
            depth *= 2
        slot = (self._head[cells] + self._count[cells]) % depth
        self._times[cells, slot] = t
        self._inc_b[cells, slot] = d_b
        self._inc_p[cells, slot] = d_p
        self._count[cells] += 1
        for total, carry, amount in ((self._sum_b, self._carry_b, d_b),
                                     (self._sum_p, self._carry_p, d_p)):
            summed = total[cells] + amount
            carry[cells] += summed < amount  # passed 2**64
            total[cells] = summed
        rows, drop_t = cells, t
        while rows.size:
            second = (self._head[rows] + 1) % depth
            drop = (self._count[rows] > 2) & (drop_t - self._times[rows, second] >= self.window)
            rows, drop_t, second = rows[drop], drop_t[drop], second[drop]
            for total, carry, inc in ((self._sum_b, self._carry_b, self._inc_b),
                                      (self._sum_p, self._carry_p, self._inc_p)):
                amount = inc[rows, second]  # the new oldest's increment: no longer summed
                held = total[rows]
                carry[rows] -= held < amount
                total[rows] = held - amount
            self._head[rows] = second
            self._count[rows] -= 1
        return t - self._times[cells, self._head[cells]]

    def forget(self, match: Hashable | None = None) -> None:
        """Drop baselines: all, or those whose key is ``match`` or a tuple starting with it."""
        if match is None:
            self._known[:] = False
            return
        if self._by_head is None:
            self._by_head = {}
            for number, key in enumerate(self._keys):
                head = key[0] if isinstance(key, tuple) and key else key
                self._by_head.setdefault(head, []).append(number)
        numbers = list(self._by_head.get(match, ()))
        if match in self._number:
            numbers.append(self._number[match])
        self._known[numbers] = False
