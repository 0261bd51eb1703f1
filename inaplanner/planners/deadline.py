"""The time limit of a planner run, in wall-clock or CPU seconds, for every phase alike.

A planner makes one :class:`Deadline` from its ``time_limit`` and ``limit_kind`` parameters
(:data:`~inaplanner.planners.base.COMMON_PARAMS`) at the start of ``plan`` and asks it in every
phase (candidate and path generation, model building, solving, rounding, route generation), so
``--time-limit T`` bounds the whole run, not only the solver. ``limit_kind="cpu"`` counts the
process's CPU seconds (all threads), so other processes sharing the cores do not take the run's
time: it gets about the same amount of work however loaded the machine is. About: on a virtual
machine a CPU second does less work while the other cores are busy, so a check that ends at its
budget can still end differently. Nor is a run that ends at its limit exactly repeatable on an
idle machine: where a stop falls inside a solver differs slightly from run to run (docs/scale.md,
"what load and repeated runs change").
"""

from __future__ import annotations

import time

from inaplanner.progress import CancelToken

LIMIT_KINDS = ("wall", "cpu")


class OutOfTime(Exception):  # noqa: N818 - a signal between phases, not an error the user sees
    """A phase ran out of the run's time limit: the planner stops it and returns its best plan."""


class ModelTooLarge(OutOfTime):  # noqa: N818 - same signal as OutOfTime: return the best plan so far
    """A model would not fit in memory (R-InArt's LP, GRID's per-worker MILP): the planner
    returns its fallback plan, as for a time-out, but the status says the limit did not stop it."""


class Deadline:
    """``seconds`` from now on the chosen clock; ``None`` means no limit."""

    def __init__(self, seconds: float | None, kind: str = "wall") -> None:
        if kind not in LIMIT_KINDS:
            raise ValueError(f"limit kind {kind!r} is not one of {LIMIT_KINDS}")
        self.kind = kind
        self.seconds = seconds
        self._clock = time.process_time if kind == "cpu" else time.perf_counter
        self._start = self._clock()
        self._wall_start = time.perf_counter()
        self._seen = (time.perf_counter(), 0.0)  # (wall time of the last CPU clock read, elapsed)

    @classmethod
    def from_params(cls, params: dict) -> Deadline:
        return cls(params.get("time_limit"), params.get("limit_kind", "wall"))

    #: the process CPU clock is read at most this often (seconds of wall time): reading it can
    #: cost milliseconds on a loaded machine, and planners ask in tight loops
    CPU_READ_EVERY = 0.2

    def elapsed(self) -> float:
        if self.kind == "wall":
            return self._clock() - self._start
        now = time.perf_counter()
        last, value = self._seen
        if now - last < self.CPU_READ_EVERY:
            return value  # one process uses at most one CPU second per wall second here
        value = self._clock() - self._start
        self._seen = (now, value)
        return value

    def remaining(self) -> float:
        """Seconds left on this deadline's clock (``inf`` without a limit; never negative)."""
        if self.seconds is None:
            return float("inf")
        return max(0.0, self.seconds - self.elapsed())

    def expired(self) -> bool:
        return self.remaining() <= 0.0

    def fraction(self) -> float:
        """How much of the limit is used, in [0, 1] (0 without a limit)."""
        if not self.seconds:
            return 0.0
        return min(1.0, self.elapsed() / self.seconds)

    def stop(self, cancel: CancelToken | None = None) -> bool:
        """True when the work should stop now: the limit ran out or cancel was requested."""
        return self.expired() or (cancel is not None and cancel.cancelled)

    def check(self, cancel: CancelToken | None = None) -> None:
        """Raise :class:`~inaplanner.errors.Cancelled` when cancel was requested, then
        :class:`OutOfTime` when the limit ran out (call it often inside long loops)."""
        if cancel is not None:
            cancel.check()
        if self.expired():
            raise OutOfTime(f"the {self.kind} time limit of {self.seconds:g} s ran out")

    def solver_seconds(self, floor: float = 0.05) -> float:
        """Seconds to hand a solver, whose own limit counts wall-clock time: what is left, at
        least ``floor`` (a solver needs a moment to return what it has). For a CPU limit the CPU
        seconds left are scaled by this run's wall/CPU ratio so far, so that a loaded machine
        does not cut the solve short of its CPU budget."""
        left = self.remaining()
        if self.kind == "cpu" and left != float("inf"):
            cpu = self.elapsed()
            wall = time.perf_counter() - self._wall_start
            if cpu > 0.05:
                left *= max(1.0, min(wall / cpu, 20.0))
        return max(left, floor)
