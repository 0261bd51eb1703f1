"""Rate vectors that ARO's feasibility check cannot tell apart (used by the level refutation).

With the task rates fixed (:func:`inaplanner.planners.aro.formulation.feasibility_model`, Eq. (10)
with the rates fixed), the rates reach the model only through its resources: a link or a switch
of bandwidth b carries whole flows of the tasks, n_i of task i (CONTRACTS.md rules 3 and 4), and
it admits the count vectors A_b(r) = {n >= 0 integer : n . r <= b}. Which integer plans exist
depends on the rates only through those sets. So a check answered at rates p answers for every r
that admits the same count vectors on every bandwidth:

* :func:`refuted_floor` — if p is infeasible, so is every r whose admitted sets are inside p's,
  i.e. every r that still refuses each count vector p refuses. The rate vectors >= the returned
  floor all do (a region below p, not only the box above it).
* :func:`lifted` — a point q >= p that admits every count vector p admits (so A(q) = A(p)): a
  check at q answers for p, with a tighter LP relaxation (fat-tree k=8 seed 0: the check at
  (25, 16.88, 16.88, 16.88) stayed undecided for 3 s where (25, 16.89, 16.89, 16.89), a point
  with the same admitted sets, was refuted in 0.6 s); a plan found at q is a better plan.

Both enumerate the count vectors of a box (at most ``floor(b / p_i) + 1`` flows of task i), so they
give up (return p) when the box is large (many tasks at small rates). They keep margins well
above the model's tolerances (``1e-12`` relative on shared rows, ``1e-9`` on one task's flow
bound): a count vector within ``MARGIN`` of a bandwidth holds its coordinates where they are.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

#: Largest box of count vectors enumerated per bandwidth.
MAX_COUNT_VECTORS = 200_000
#: Count vectors within this share of a bandwidth are left alone (coordinates not moved).
MARGIN = 1e-6


def _counts(rates: np.ndarray, b: float, extra: int) -> np.ndarray | None:
    """Every count vector with n_i <= floor(b / rates_i) + extra (rates > 0), as rows."""
    tops = [int(math.floor(b / r + 1e-9)) + extra for r in rates]
    size = math.prod(t + 1 for t in tops)
    if size > MAX_COUNT_VECTORS:
        return None
    grids = np.meshgrid(*[np.arange(t + 1) for t in tops], indexing="ij")
    return np.stack([g.ravel() for g in grids], axis=1).astype(float)


def _usable(rates: list[float], bandwidths: Iterable[float]) -> tuple[np.ndarray, list[int], list[float]] | None:
    p = np.asarray(rates, dtype=float)
    pos = [i for i, r in enumerate(rates) if r > 0]
    bands = sorted({float(b) for b in bandwidths if math.isfinite(b) and b > 0})
    if not pos or not bands or min(p[pos]) < 1e-3 * max(bands):
        return None
    return p, pos, bands


def refuted_floor(rates: list[float], bandwidths: Iterable[float]) -> list[float]:
    """The lowest point, coordinate after coordinate, above which every rate vector refuses each
    count vector ``rates`` refuses on each bandwidth (so an infeasible check at ``rates``
    refutes all of them). Each refused count vector stays more than ``MARGIN`` above the
    bandwidth; ``rates`` itself when the boxes are too large."""
    use = _usable(rates, bandwidths)
    if use is None:
        return list(rates)
    p, pos, bands = use
    q = p[pos].copy()
    refused: list[tuple[np.ndarray, np.ndarray, float]] = []
    hold = np.zeros(len(pos), dtype=bool)
    for b in bands:
        n = _counts(p[pos], b, 1)
        if n is None:
            return list(rates)
        s = n @ p[pos]
        out = s > b * (1 + 1e-12)
        near = out & (s <= b * (1 + MARGIN))
        hold |= (n[near] > 0).any(axis=0)  # refused by a hair: its tasks stay put
        keep = out & ~near
        refused.append((n[keep], s[keep], b))
    for j in range(len(pos)):
        if hold[j]:
            continue
        d = math.inf
        for n, _s, b in refused:
            has = n[:, j] > 0
            if has.any():  # each stays MARGIN * b above b (it started at least that far)
                excess = n[has] @ q - b * (1 + MARGIN)
                d = min(d, float(np.min(0.5 * excess / n[has, j])))
        if math.isfinite(d) and d > 0:
            q[j] -= d
    out_rates = list(rates)
    for k, i in enumerate(pos):
        out_rates[i] = float(q[k])
    return out_rates


def lifted(rates: list[float], bandwidths: Iterable[float]) -> list[float]:
    """A point >= ``rates``, coordinate after coordinate as high as it goes, that admits every
    count vector ``rates`` admits on each bandwidth (so the feasibility check there answers for
    ``rates``); each admitted vector stays ``MARGIN`` below the bandwidth. ``rates`` itself when
    the boxes are too large."""
    use = _usable(rates, bandwidths)
    if use is None:
        return list(rates)
    p, pos, bands = use
    q = p[pos].copy()
    admitted: list[tuple[np.ndarray, float]] = []
    hold = np.zeros(len(pos), dtype=bool)
    for b in bands:
        n = _counts(p[pos], b, 0)
        if n is None:
            return list(rates)
        s = n @ p[pos]
        inside = s <= b * (1 + 1e-12)
        near = inside & (s > b * (1 - MARGIN))
        hold |= (n[near] > 0).any(axis=0)  # full to a hair: its tasks stay put
        admitted.append((n[inside & ~near], b))
    for j in range(len(pos)):
        if hold[j]:
            continue
        u = math.inf
        for n, b in admitted:
            has = n[:, j] > 0
            if has.any():
                room = b * (1 - MARGIN) - n[has] @ q
                u = min(u, float(np.min(room / n[has, j])))
        if math.isfinite(u) and u > 0:
            q[j] += u
    out_rates = list(rates)
    for k, i in enumerate(pos):
        out_rates[i] = float(q[k])
    return out_rates
