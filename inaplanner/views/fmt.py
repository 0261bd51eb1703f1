"""The one number formatter: every figure the CLI, the GUI and the reports print goes through here.

Small pure functions, no dependencies, so a figure reads the same everywhere and tests can format
the evaluator's values the same way. The rules:

* **significant digits**, not fixed decimals (``num``), except where a table column needs fixed
  decimals (``fixed``), and then ``-0.00`` is never printed;
* **no float noise**: ``100.19999999999`` prints ``100.2``, ``0.1 + 0.2`` prints ``0.3``, ``60.0``
  prints ``60`` (never ``60.000000``), a value below :data:`ZERO` prints ``0``, and a difference
  smaller than the precision its operands are shown with prints ``0`` (``delta``: never
  ``+3.38206e-06`` for two objectives that both print ``100``);
* **units** scale to a readable prefix: ``gbps(1e-6)`` is ``1 kbps``, ``seconds(0.0042)`` is
  ``4.2 ms``, ``nbytes(5e6)`` is ``5 MB`` (1 MB = 10**6 bytes, as in :mod:`inaplanner.memsched`);
* plain notation from 1e-4 up to 1e15 (``1000``, not ``1e+03``), optional thousands separators,
  and a short exponent outside that (``1e-6``, ``2.5e20``);
* ``None`` prints ``-``; ``inf``/``-inf``/``nan`` print as such.
"""

from __future__ import annotations

import math
from numbers import Real

__all__ = ["ZERO", "delta", "fixed", "gbps", "names", "nbytes", "num", "pct", "progress_text",
           "seconds", "signed", "signed_pct"]

#: Magnitudes below this are float noise for every quantity the program shows (Gbps, seconds,
#: bytes, shares) and print as ``0``.
ZERO = 1e-12

_PLAIN_LO = 1e-4
_PLAIN_HI = 1e15


def _special(x: float | None) -> str | None:
    if x is None:
        return "-"
    if isinstance(x, float):
        if math.isnan(x):
            return "nan"
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
    return None


def _group(int_text: str, sep: str) -> str:
    sign = "-" if int_text.startswith("-") else ""
    digits = int_text.lstrip("-")
    groups = []
    while len(digits) > 3:
        groups.append(digits[-3:])
        digits = digits[:-3]
    groups.append(digits)
    return sign + sep.join(reversed(groups))


def num(x: float | None, digits: int = 6, *, thousands: bool = False, zero: float = ZERO) -> str:
    """``x`` rounded to ``digits`` significant digits, without trailing zeros.

    ``num(60.0) == "60"``, ``num(100.19999999999) == "100.2"``, ``num(1e-6) == "1e-6"``,
    ``num(1234567, 3) == "1230000"`` (``"1,230,000"`` with ``thousands``), ``num(1e-13) == "0"``.
    """
    special = _special(x)
    if special is not None:
        return special
    assert x is not None
    if isinstance(x, bool) or not isinstance(x, Real):
        return str(x)
    digits = max(1, int(digits))
    v = float(x)
    if abs(v) < zero or v == 0.0:
        return "0"
    rounded = float(f"{v:.{digits - 1}e}")  # round to the significant digits first
    mag = abs(rounded)
    if _PLAIN_LO <= mag < _PLAIN_HI:
        exponent = math.floor(math.log10(mag))
        decimals = max(0, digits - 1 - exponent)
        text = f"{rounded:.{decimals}f}"
        if "." in text:
            text = text.rstrip("0").rstrip(".")
        if thousands:
            int_part, dot, frac = text.partition(".")
            text = _group(int_part, ",") + dot + frac
    else:
        mant, _, exp = f"{rounded:.{digits - 1}e}".partition("e")
        if "." in mant:
            mant = mant.rstrip("0").rstrip(".")
        text = f"{mant}e{int(exp)}"
    return "0" if text in ("-0", "0") else text


def fixed(x: float | None, decimals: int = 2) -> str:
    """``x`` with exactly ``decimals`` decimals, for table columns (never ``-0.00``)."""
    special = _special(x)
    if special is not None:
        return special
    assert x is not None
    v = float(x)
    if abs(v) >= _PLAIN_HI:
        return num(v)
    text = f"{v:.{decimals}f}"
    if text.startswith("-") and float(text) == 0.0:
        text = text[1:]
    return text


def signed(x: float | None, digits: int = 6) -> str:
    """A change with its sign: ``+0.5``, ``-1``, ``0``."""
    text = num(x, digits)
    if text in ("-", "nan", "0") or text.startswith("-"):
        return text
    return "+" + text


def delta(a: float | None, b: float | None, digits: int = 6) -> str:
    """``b - a`` with its sign, ``0`` when the change is below the last significant digit the
    larger operand is shown with (``num(…, digits)``): solver tolerance noise is not a change."""
    if a is None or b is None:
        return "-"
    a, b = float(a), float(b)
    if not (math.isfinite(a) and math.isfinite(b)):
        return signed(b - a if not (math.isinf(a) and math.isinf(b)) else math.nan, digits)
    d = b - a
    scale = max(abs(a), abs(b))
    if scale > 0 and abs(d) < scale * 10.0 ** (1 - digits) / 2:
        return "0"
    return signed(d, digits)


def pct(u: float | None, decimals: int = 1) -> str:
    """A share (1.0 = 100 %) as a percentage with ``decimals`` decimals: ``pct(1.002) == "100.2 %"``."""
    special = _special(u)
    if special is not None:
        return special if special == "-" else f"{special} %"
    assert u is not None
    return f"{fixed(100.0 * float(u), decimals)} %"


def signed_pct(u: float | None, decimals: int = 1) -> str:
    """A change of a share as a signed percentage: ``+12.5 %``, ``-3.0 %``, ``0.0 %``."""
    text = pct(u, decimals)
    if text in ("-", "nan %") or text.startswith("-"):
        return text
    if text.startswith("inf") or float(text.split()[0]) != 0.0:
        return "+" + text
    return text


def _scaled(x: float | None, units: tuple[tuple[float, str], ...], digits: int, base_unit: str) -> str:
    special = _special(x)
    if special is not None:
        return special if special == "-" else f"{special} {base_unit}"
    assert x is not None
    v = float(x)
    mag = abs(v)
    if mag < ZERO:
        return f"0 {base_unit}"
    for factor, unit in units:  # largest first
        if mag >= factor * (1 - 0.5 * 10.0 ** (1 - digits)):
            return f"{num(v / factor, digits)} {unit}"
    factor, unit = units[-1]
    return f"{num(v / factor, digits)} {unit}"


_GBPS = ((1e3, "Tbps"), (1.0, "Gbps"), (1e-3, "Mbps"), (1e-6, "kbps"), (1e-9, "bps"))
_SECONDS = ((1.0, "s"), (1e-3, "ms"), (1e-6, "us"), (1e-9, "ns"))
_BYTES = ((1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB"), (1.0, "B"))


def gbps(x: float | None, digits: int = 4) -> str:
    """A rate given in Gbps, with a prefix that reads: ``1 kbps``, ``2.5 Gbps``, ``1.6 Tbps``."""
    return _scaled(x, _GBPS, digits, "Gbps")


def seconds(x: float | None, digits: int = 3) -> str:
    """A duration given in seconds: ``60 s``, ``4.2 ms``, ``10 us`` (long ones stay in seconds)."""
    return _scaled(x, _SECONDS, digits, "s")


def nbytes(x: float | None, digits: int = 4) -> str:
    """A size given in bytes, decimal prefixes (1 MB = 10**6 bytes): ``306 B``, ``5 MB``."""
    return _scaled(x, _BYTES, digits, "B")


def names(items: list[str], limit: int = 12) -> str:
    """Up to ``limit`` names, then how many more: ``A, B, C and 253 more`` (a label stays a line
    or two at fat-tree k=32's 256 programmable switches)."""
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def progress_text(phase: str = "", message: str = "", incumbent: float | None = None,
                  bound: float | None = None, gap: float | None = None) -> str:
    """One progress report as the terminal's bar, the planner panel and the Deploy dialog show
    it: ``phase: message (incumbent X, bound Y, gap Z %)``, leaving out what is not known."""
    parts = [phase] if phase else []
    if message and message != phase:
        parts.append(message)
    what = ": ".join(parts)
    figures = []
    if incumbent is not None:
        figures.append(f"incumbent {num(incumbent)}")
    if bound is not None:
        figures.append(f"bound {num(bound)}")
    if gap is not None:
        figures.append(f"gap {pct(gap, 2)}")
    if figures:
        what = f"{what} ({', '.join(figures)})" if what else ", ".join(figures)
    return what
