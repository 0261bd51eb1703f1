"""Infeasibility certificates kept from one LP relaxation for the next (issue 13, item 1).

ARO's level refutation (:meth:`AroPlanner._refute`) proves a level out of reach by refuting
every point of a cover: each is a joint feasibility check (ARO Eqs. 4-10 with the rates fixed,
:func:`~inaplanner.planners.aro.formulation.feasibility_model`), and almost all are settled by the
LP relaxation being infeasible. On fat-tree k=8 (2 jobs x 2 tasks, 50 workers per job) a run
solves about a thousand such relaxations, 1,358 columns each, 0.035 s apiece: after the first
plan, the refutation is nothing else.

Neighbouring points of a cover differ in their rates only, so the models have one shape and
differ in coefficients and bounds. Two things carry over:

* **the basis**: dual simplex started from the last relaxation's final basis needs a fifth of
  the iterations of a cold start (282 against 1,350 on k=8 seed 0's cover; half the time of
  interior point);
* **Farkas certificates**: the dual ray of an infeasible relaxation is a row combination
  ``lambda`` that no point of the column box can satisfy. It is a proof for *any* model it is
  applied to once :func:`farkas_refutes` has checked the inequality on that model's own
  coefficients and bounds, so a certificate found at one point refutes many neighbours without
  an LP (172 of 300 consecutive checks of that cover).

Only models up to ``WARM_MAX_NNZ`` nonzeros take this path. On fat-tree k=16 with 200 workers
per job a task alone (7,883 nonzeros) took 0.6 s against 2.3 s by interior point for 30
relaxations, feasible ones as fast; the four tasks' joint model (34,362 nonzeros) took 52 s
against 23 s for the 46 relaxations of a real run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from inaplanner.planners.aro.milp import LpWarm, Milp, MilpResult
from inaplanner.planners.solver import solver_name

#: Models with at most this many nonzeros are relaxed by warm dual simplex with certificates.
WARM_MAX_NNZ = 12_000
#: The most certificates kept per model shape; the one that refuted last moves to the front.
POOL_SIZE = 24
#: A certificate refutes only with this margin per unit of its weights: every point of the box
#: then misses some row or bound by more than HiGHS' own feasibility tolerance (1e-7), so it
#: refutes nothing HiGHS would call feasible.
MARGIN = 1e-7


@dataclass
class _Shape:
    """A model's arrays, in the form every certificate test needs them."""

    rows: np.ndarray  # the row of each nonzero
    cols: np.ndarray
    vals: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    lb: np.ndarray
    ub: np.ndarray

    @classmethod
    def of(cls, m: Milp) -> _Shape:
        starts = np.asarray(m.row_start, dtype=np.int64)
        return cls(np.repeat(np.arange(m.n_rows), np.diff(starts)), np.asarray(m.row_idx, dtype=np.int64),
                   np.asarray(m.row_val, dtype=float), np.asarray(m.row_lo, dtype=float),
                   np.asarray(m.row_hi, dtype=float), np.asarray(m.lb, dtype=float), np.asarray(m.ub, dtype=float))


def _refutes(s: _Shape, lam: np.ndarray) -> bool:
    """Farkas: every x in the box [lb, ub] with lo <= A x <= hi satisfies lam' A x <= R, where R
    takes hi where lam > 0 and lo where lam < 0; and lam' A x = c' x >= L over the box, c = A'
    lam. L > R (with the margin) leaves no x."""
    if lam.shape != s.lo.shape:
        return False
    pos = lam > 0
    neg = lam < 0
    if np.isinf(s.hi[pos]).any() or np.isinf(s.lo[neg]).any():
        return False
    right = float(lam[pos] @ s.hi[pos] + lam[neg] @ s.lo[neg])
    c = np.bincount(s.cols, weights=lam[s.rows] * s.vals, minlength=s.lb.size)
    cp = c > 0
    cn = c < 0
    if np.isinf(s.lb[cp]).any() or np.isinf(s.ub[cn]).any():
        return False
    left = float(c[cp] @ s.lb[cp] + c[cn] @ s.ub[cn])
    slack = MARGIN * (float(np.abs(lam).sum()) + float(np.abs(c).sum())) + 1e-9 * (1.0 + abs(right))
    return left > right + slack


def farkas_refutes(m: Milp, lam: np.ndarray) -> bool:
    """True when the row multipliers ``lam`` prove that ``m``'s LP relaxation has no solution."""
    return _refutes(_Shape.of(m), np.asarray(lam, dtype=float))


@dataclass
class Relaxations:
    """What the LP relaxations of one model shape (one list of task graphs) leave for the next:
    the last basis and the certificates that refuted."""

    warm: LpWarm = field(default_factory=LpWarm)
    pool: list[np.ndarray] = field(default_factory=list)
    #: counters, for the benchmarks and tests: refuted by a kept certificate / LPs solved
    reused: int = 0
    solved: int = 0

    def relax(self, m: Milp, solve: Callable[[LpWarm], MilpResult]) -> MilpResult:
        """``m``'s LP relaxation: 'infeasible' at once when a kept certificate proves it (no LP),
        else ``solve(self.warm)`` (dual simplex from the last basis), keeping the dual ray of an
        infeasible answer in whichever sign proves it."""
        shape = _Shape.of(m)
        for k, lam in enumerate(self.pool):
            if _refutes(shape, lam):
                self.pool.insert(0, self.pool.pop(k))
                self.reused += 1
                return MilpResult("infeasible", None, None, None, 0.0, solver_name())
        res = solve(self.warm)
        self.solved += 1
        ray = self.warm.ray
        if res.status == "infeasible" and ray is not None:
            for lam in (ray, -ray):
                if _refutes(shape, lam):
                    self.pool.insert(0, lam)
                    del self.pool[POOL_SIZE:]
                    break
        return res
