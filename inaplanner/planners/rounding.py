"""Randomized rounding used by R-GRIA (GRID Alg. 1) and R-InArt (InArt Alg. 2). Pure functions.

GRID Alg. 1 line 6: worker n picks aggregation node s with probability r~_n^s / sum_s' r~_n^s'.
InArt section 4.3 ("interval method"): the unit interval is cut into consecutive pieces whose
lengths are the fractional values (switches first, the PS last); one uniform draw picks the piece.
Both are the same operation on a weight vector; the functions below take the draw ``u`` explicitly so
tests can check them without randomness, and a ``random.Random`` for the seeded planners.
"""

from __future__ import annotations

import random
from collections.abc import Hashable, Mapping, Sequence

TINY = 1e-12


def probabilities(weights: Sequence[float]) -> list[float]:
    """Weights normalised to probabilities (negatives count as 0). All-zero weights give the
    uniform distribution: the relaxation expressed no preference."""
    w = [max(float(x), 0.0) for x in weights]
    total = sum(w)
    if not w:
        raise ValueError("nothing to choose from")
    if total <= TINY:
        return [1.0 / len(w)] * len(w)
    return [x / total for x in w]


def interval_choice(weights: Sequence[float], u: float) -> int:
    """Index of the piece of [0, 1) that ``u`` falls in, pieces of length ``probabilities(weights)``
    laid out in order (InArt's example: 0.4, 0.5, 0.1 -> u < 0.4 first, u < 0.9 second, else third).
    Pieces of zero length are never chosen."""
    if not 0.0 <= u < 1.0:
        raise ValueError(f"u must be in [0, 1), got {u}")
    probs = probabilities(weights)
    edge = 0.0
    last = max(i for i, p in enumerate(probs) if p > 0.0)
    for i, p in enumerate(probs):
        edge += p
        if p > 0.0 and (u < edge or i == last):
            return i
    return last  # pragma: no cover - the loop always returns


def draw(weights: Sequence[float], rng: random.Random) -> int:
    """One seeded draw of the interval method."""
    return interval_choice(weights, rng.random())


def rgria_round(r_tilde: Mapping[Hashable, Mapping[Hashable, float]], rng: random.Random) -> dict:
    """GRID Alg. 1 lines 5-7: for each worker (in the mapping's order) the aggregation node drawn
    with probability r~_n^s / sum_s r~_n^s. ``r_tilde[worker][node]`` are the LP's rates."""
    out = {}
    for worker, row in r_tilde.items():
        nodes = list(row)
        out[worker] = nodes[draw([row[s] for s in nodes], rng)]
    return out
