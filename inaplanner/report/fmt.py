"""Number formatting of the reports: the program's one formatter, :mod:`inaplanner.views.fmt`
(kept under this name because every report module and its tests import it from here)."""

from __future__ import annotations

from inaplanner.views.fmt import delta, fixed, gbps, nbytes, num, pct, seconds, signed, signed_pct

__all__ = ["delta", "fixed", "gbps", "nbytes", "num", "pct", "seconds", "signed", "signed_pct"]
