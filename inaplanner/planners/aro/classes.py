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
* :class:`Refuted` — all of what an infeasible p refutes: every r that refuses each count
  vector p refuses, the intersection of the half-spaces n . r > b of p's minimal refused
  vectors (the orthant above :func:`refuted_floor` is one corner of it).
* :func:`lifted` — a point q >= p that admits every count vector p admits (so A(q) = A(p)): a
  check at q answers for p, with a tighter LP relaxation (fat-tree k=8 seed 0: the check at
  (25, 16.88, 16.88, 16.88) stayed undecided for 3 s where (25, 16.89, 16.89, 16.89), a point
  with the same admitted sets, was refuted in 0.6 s); a plan found at q is a better plan.

All three enumerate the count vectors of a box (at most ``floor(b / p_i) + 1`` flows of task i),
so they give up when the box is large (many tasks at small rates): the functions return p,
``Refuted`` adds nothing. They keep margins well
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
#: Rate vectors closer than this (relative, per coordinate) are one point (:func:`same_point`).
SAME_POINT_RTOL = 10 * MARGIN


def same_point(p: Iterable[float], q: Iterable[float]) -> bool:
    """Whether two rate vectors differ only within the margins :func:`lifted` and
    :func:`refuted_floor` keep (``SAME_POINT_RTOL``). Their checks can differ only on count
    vectors within that share of a bandwidth, so checking one after the other checks nearly the
    same thing again. Used only where treating two points as one is safe (not checking or
    routing a point again), never to refute. Fat-tree k=16 with 200 workers per job, seed 1:
    the levels of one run lifted to (31.25, 31.25, 37.5, 25), (31.250000000000007,
    31.250000000000007, 37.5, 25) and (31.25, 31.2499, 37.5, 25); the first two were checked
    (7.8 and 6.6 s, both undecided) and all three routed by negotiation (6.3-6.6 s each)."""
    return bool(np.allclose(np.asarray(list(p), dtype=float), np.asarray(list(q), dtype=float),
                            rtol=SAME_POINT_RTOL, atol=0.0))


def _counts(rates: np.ndarray, b: float, extra: int) -> np.ndarray | None:
    """Every count vector with n_i <= floor(b / rates_i) + extra (rates > 0), as rows."""
    tops = [int(math.floor(b / r + 1e-9)) + extra for r in rates]
    size = math.prod(t + 1 for t in tops)
    if size > MAX_COUNT_VECTORS:
        return None
    grids = np.meshgrid(*[np.arange(t + 1) for t in tops], indexing="ij")
    return np.stack([g.ravel() for g in grids], axis=1).astype(float)


def _boxes(rates: list[float], bandwidths: Iterable[float], extra: int
           ) -> tuple[np.ndarray, list[int], list[tuple[np.ndarray, np.ndarray, float]]] | None:
    """(the positive rates, their indices, per bandwidth b: the count vectors of the box with
    n_i <= floor(b / r_i) + extra and their loads n . r), or None when there is nothing to move
    or a box is too large."""
    pos = [i for i, r in enumerate(rates) if r > 0]
    bands = sorted({float(b) for b in bandwidths if math.isfinite(b) and b > 0})
    p = np.asarray([rates[i] for i in pos], dtype=float)
    if not pos or not bands or p.min() < 1e-3 * bands[-1]:
        return None
    boxes = []
    for b in bands:
        n = _counts(p, b, extra)
        if n is None:
            return None
        boxes.append((n, n @ p, b))
    return p, pos, boxes


def _placed(rates: list[float], pos: list[int], q: np.ndarray) -> list[float]:
    out = list(rates)
    for k, i in enumerate(pos):
        out[i] = float(q[k])
    return out


def refuted_floor(rates: list[float], bandwidths: Iterable[float]) -> list[float]:
    """The lowest point, coordinate after coordinate, above which every rate vector refuses each
    count vector ``rates`` refuses on each bandwidth (so an infeasible check at ``rates``
    refutes all of them). Each refused count vector stays more than ``MARGIN`` above the
    bandwidth (a coordinate takes half of what is left above that); ``rates`` itself when the
    boxes are too large."""
    return _move(rates, bandwidths, up=False)


def lifted(rates: list[float], bandwidths: Iterable[float]) -> list[float]:
    """A point >= ``rates``, coordinate after coordinate as high as it goes, that admits every
    count vector ``rates`` admits on each bandwidth (so the feasibility check there answers for
    ``rates``); each admitted vector stays ``MARGIN`` below the bandwidth. ``rates`` itself when
    the boxes are too large."""
    return _move(rates, bandwidths, up=True)


def _move(rates: list[float], bandwidths: Iterable[float], up: bool) -> list[float]:
    """Up: keep every admitted count vector admitted; down: keep every refused one refused.
    Count vectors within ``MARGIN`` of a bandwidth hold their tasks' coordinates where they are."""
    boxes = _boxes(rates, bandwidths, 0 if up else 1)
    if boxes is None:
        return list(rates)
    p, pos, per_band = boxes
    q = p.copy()
    kept: list[tuple[np.ndarray, float]] = []
    hold = np.zeros(len(pos), dtype=bool)
    for n, s, b in per_band:
        if up:
            side = s <= b * (1 + 1e-12)
            near = side & (s > b * (1 - MARGIN))
        else:
            side = s > b * (1 + 1e-12)
            near = side & (s <= b * (1 + MARGIN))
        hold |= (n[near] > 0).any(axis=0)
        kept.append((n[side & ~near], b))
    for j in np.flatnonzero(~hold):
        step = math.inf
        for n, b in kept:
            has = n[:, j] > 0
            if has.any():
                load = n[has] @ q
                room = b * (1 - MARGIN) - load if up else 0.5 * (load - b * (1 + MARGIN))
                step = min(step, float(np.min(room / n[has, j])))
        if math.isfinite(step) and step > 0:
            q[j] += step if up else -step
    return _placed(rates, pos, q)


class Refuted:
    """Rate vectors refuted by count vectors: for each point added, every rate vector that refuses
    each count vector the point refuses, on each bandwidth. That set is convex, the intersection
    of the half-spaces ``n . r > b`` of the minimal count vectors n the point refuses, and an
    infeasible check at the point (or at a point admitting the same vectors, :func:`lifted`)
    refutes all of it. :func:`refuted_floor` gives one orthant inside it; the set is larger
    (docs/scale.md, round 25).

    Kept on the safe side of the model's tolerances: a vector is refused at the point as in
    the model's shared rows (above the bandwidth by more than ``1e-12`` of it; a one-task row
    refuses no more than that), and a rate vector belongs to the set only if it refuses each
    such vector by more than ``MARGIN``. A point whose boxes are too large to
    enumerate adds nothing. The distinct half-spaces are kept in one matrix and each point's
    as bits, so asking costs one small product and one pass over the bits (fat-tree k=8 seed 0:
    0.27 ms a question with every half-space of every point in the matrix)."""

    def __init__(self, size: int) -> None:
        self.size = size
        # the distinct half-spaces (count vector, the bandwidth it must exceed with the margin):
        # fat-tree k=8 seed 0 adds 79,745 of them over 1,730 points, 543 distinct
        self._rows = np.zeros((0, size))
        self._caps = np.zeros(0)
        self._index: dict[tuple[tuple[float, ...], float], int] = {}
        # per point, which half-spaces it takes, as bits (64 to a word)
        self._bits = np.zeros((0, 1), dtype=np.uint64)

    def __len__(self) -> int:
        return len(self._bits)

    def add(self, rates: list[float], bandwidths: Iterable[float]) -> bool:
        """Add the region of ``rates``; False when its boxes are too large (nothing added)."""
        boxes = _boxes(rates, bandwidths, 1)
        if boxes is None or len(rates) != self.size:
            return False
        p, pos, per_band = boxes
        ids: list[int] = []
        fresh: list[tuple[tuple[float, ...], float]] = []
        for n, s, b in per_band:
            # refused, and minimal: one flow fewer of any task it has is admitted (the box
            # holds every such vector, and refusal only grows with the counts)
            refused = s > b * (1 + 1e-12)
            less = np.where(n > 0, s[:, None] - p[None, :], -np.inf)
            minimal = refused & np.all(less <= b * (1 + 1e-12), axis=1)
            full = np.zeros((int(minimal.sum()), self.size))
            full[:, pos] = n[minimal]
            cap = b * (1 + MARGIN)
            for row in full:
                key = (tuple(row.tolist()), cap)
                k = self._index.get(key)
                if k is None:
                    k = self._index[key] = len(self._index)
                    fresh.append(key)
                ids.append(k)
        if not ids:
            return False
        if fresh:
            self._rows = np.vstack([self._rows, np.array([k[0] for k in fresh])])
            self._caps = np.concatenate([self._caps, [k[1] for k in fresh]])
        words = (len(self._index) + 63) // 64
        if words > self._bits.shape[1]:
            self._bits = np.hstack([self._bits, np.zeros((len(self._bits), words - self._bits.shape[1]),
                                                         dtype=np.uint64)])
        self._bits = np.vstack([self._bits, _pack(np.asarray(ids), self._bits.shape[1])])
        return True

    def holds(self, point: Iterable[float]) -> bool:
        """Whether ``point`` lies in the region of some added point: some point none of whose
        half-spaces ``point`` misses."""
        if not len(self._bits):
            return False
        r = np.asarray(list(point), dtype=float)
        missed = _pack(np.flatnonzero(~(self._rows @ r > self._caps)), self._bits.shape[1])
        return bool(np.any(np.all((self._bits & missed) == 0, axis=1)))


def _pack(ids: np.ndarray, words: int) -> np.ndarray:
    """The set ``ids`` as a row of ``words`` 64-bit words."""
    out = np.zeros(words, dtype=np.uint64)
    np.bitwise_or.at(out, ids // 64, np.left_shift(np.uint64(1), (ids % 64).astype(np.uint64)))
    return out
