"""The load colour scale of reports: the canvas overlay's own scale
(:mod:`inaplanner.views.overlay`, pure data without Qt), so a report looks like the planner's
canvas: light grey idle, a continuous colour-blind-safe ramp (viridis, light to dark) up to 100 %
of capacity, red above."""

from __future__ import annotations

import math

from inaplanner.views.overlay import FULL, TICKS, colour_bar, colour_of, legend_entries

#: (colour, label) rows of the legend, lowest first.
LEGEND = tuple(legend_entries())
#: (load/capacity, colour) stops of a colour bar, and its ticks (the canvas's own).
BAR = tuple(colour_bar())
BAR_TICKS = TICKS


def util_colour(util: float, tol: float = 1e-9) -> str:
    """Colour of a link direction (or switch) at ``util`` = load / capacity; above capacity (by
    more than ``tol``, as the evaluator judges violations) is red."""
    if math.isnan(util):
        return colour_of(0.0)
    return colour_of(util, violated=util > FULL + tol)
