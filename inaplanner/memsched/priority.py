"""ESA priorities: the paper's Eq. (1), its 8-bit fixed-point encoding and downgrading (ESA §5.1, §5.4).

Eq. (1):  P_j(l) = (1 / T_j) x (L_j / l) x (Comm_j / Comp_j)

with T_j the job's remaining time to convergence (or, when unknown, the service it has attained so
far), L_j its number of layers, l the layer (1 = front layer, the most urgent) and Comm_j / Comp_j its
communication-to-computation ratio.

The packet header has an 8-bit priority field (§5.1). The paper omits the encoding ("similar to
float-point gradients converted to fixed point"); we use an unsigned fixed-point number with
``frac_bits`` fractional bits: ``q = round(P * 2**frac_bits)`` clamped to ``1..255`` (a positive
priority never encodes as 0, so every real gradient still beats an empty aggregator's 0). All jobs that
can meet at an aggregator must use the same ``frac_bits``; :func:`choose_frac_bits` picks the largest
one that keeps the highest priority in range. Downgrading (§5.4) halves the stored value: a right shift
by one bit.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from inaplanner.errors import InaplannerError

PRIORITY_BITS = 8
PRIORITY_MAX = (1 << PRIORITY_BITS) - 1
#: Range of fractional bits we allow (a priority can be ~1e-6 for a job with weeks left, or ~1e4).
FRAC_BITS_RANGE = (-48, 48)


def priority(layer: int, layers: int, comm_comp_ratio: float, remaining_s: float) -> float:
    """Eq. (1) of ESA §5.4 for the gradients of ``layer`` (1-based) of a job.

    ``remaining_s`` is T_j (seconds left, or attained service when the remaining time is unknown).
    """
    if not isinstance(layers, int) or layers < 1:
        raise InaplannerError(f"priority: layers must be an integer >= 1, got {layers!r}")
    if not isinstance(layer, int) or not 1 <= layer <= layers:
        raise InaplannerError(f"priority: layer must be in 1..{layers}, got {layer!r}")
    if not (comm_comp_ratio > 0 and math.isfinite(comm_comp_ratio)):
        raise InaplannerError(f"priority: comm_comp_ratio must be > 0, got {comm_comp_ratio!r}")
    if not (remaining_s > 0 and math.isfinite(remaining_s)):
        raise InaplannerError(f"priority: remaining time must be > 0 s, got {remaining_s!r}")
    return (1.0 / remaining_s) * (layers / layer) * comm_comp_ratio


def quantise(value: float, frac_bits: int) -> int:
    """Encode a priority as the 8-bit fixed-point header value (``value * 2**frac_bits``, rounded
    half up, clamped to 1..255; 0 only for a priority of exactly 0)."""
    if value < 0 or not math.isfinite(value):
        raise InaplannerError(f"priority must be a finite number >= 0, got {value!r}")
    if value == 0:
        return 0
    q = math.floor(math.ldexp(value, frac_bits) + 0.5)
    return max(1, min(PRIORITY_MAX, q))


def dequantise(q: int, frac_bits: int) -> float:
    """The priority an 8-bit value stands for."""
    return math.ldexp(q, -frac_bits)


def choose_frac_bits(values: Iterable[float]) -> int:
    """The largest number of fractional bits with which the largest of ``values`` still fits in 8 bits
    (so the biggest priority uses the top of the range and the others keep the most resolution)."""
    top = max((v for v in values if v > 0), default=0.0)
    if top <= 0:
        return 0
    lo, hi = FRAC_BITS_RANGE
    # largest f with round(top * 2^f) <= 255
    f = math.floor(math.log2(PRIORITY_MAX / top))
    while f > lo and math.floor(math.ldexp(top, f) + 0.5) > PRIORITY_MAX:
        f -= 1
    while f < hi and math.floor(math.ldexp(top, f + 1) + 0.5) <= PRIORITY_MAX:
        f += 1
    return max(lo, min(hi, f))


def downgrade(q: int) -> int:
    """ESA §5.4: on a collision without preemption the aggregator's priority is halved (>> 1)."""
    return q >> 1
