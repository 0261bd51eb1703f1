"""The time limit of a planner run, in wall-clock or CPU seconds, for every phase alike.

A planner makes one :class:`Deadline` from its ``time_limit`` and ``limit_kind`` parameters
(:data:`~inaplanner.planners.base.COMMON_PARAMS`) at the start of ``plan`` and asks it in every
phase (candidate and path generation, model building, solving, rounding, route generation), so
``--time-limit T`` bounds the whole run, not only the solver. ``limit_kind="cpu"`` counts the
process's CPU seconds (all threads), so a loaded machine does not silently change the answer:
the same run gets the same amount of work however many other processes share the cores.
"""

from __future__ import annotations

import time

from inaplanner.progress import CancelToken

LIMIT_KINDS = ("wall", "cpu")


class Deadline:
    """``seconds`` from now on the chosen clock; ``None`` means no limit."""

    def __init__(self, seconds: float | None, kind: str = "wall") -> None:
        if kind not in LIMIT_KINDS:
            raise ValueError(f"limit kind {kind!r} is not one of {LIMIT_KINDS}")
        self.kind = kind
        self.seconds = seconds
        self._clock = time.process_time if kind == "cpu" else time.perf_counter
        self._start = self._clock()

    @classmethod
    def from_params(cls, params: dict) -> Deadline:
        return cls(params.get("time_limit"), params.get("limit_kind", "wall"))

    def elapsed(self) -> float:
        return self._clock() - self._start

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
