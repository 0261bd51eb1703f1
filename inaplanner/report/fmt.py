"""Number formatting shared by every report format (HTML, PDF, CSV, text diff), so a figure reads
the same everywhere and tests can format the evaluator's values the same way."""

from __future__ import annotations

import math


def num(x: float | None, digits: int = 6) -> str:
    """A float with ``digits`` significant digits (``-`` for None, ``inf`` kept readable)."""
    if x is None:
        return "-"
    if isinstance(x, float) and math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if isinstance(x, float) and math.isnan(x):
        return "nan"
    text = f"{x:.{digits}g}"
    return "0" if text == "-0" else text


def pct(u: float | None) -> str:
    """A utilisation (1.0 = 100 %) as a percentage with one decimal."""
    if u is None:
        return "-"
    if math.isinf(u):
        return "inf %"
    return f"{100.0 * u:.1f} %"


def signed(x: float, digits: int = 6) -> str:
    """A delta with its sign (``+0.5``, ``-1``)."""
    text = num(x, digits)
    return text if text.startswith("-") or text == "0" else "+" + text
