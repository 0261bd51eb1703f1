"""The load colour scale of reports: the canvas overlay's own scale
(:mod:`inaplanner.views.overlay`, pure data without Qt), so a report looks like the planner's
canvas: grey idle, a green-to-yellow ramp below 80 % of capacity, orange up to 100 %, red above."""

from __future__ import annotations

import math

from inaplanner.views.overlay import FULL, colour_of, legend_entries

#: (colour, label) rows of the legend, lowest first.
LEGEND = tuple(legend_entries())


def util_colour(util: float, tol: float = 1e-9) -> str:
    """Colour of a link direction (or switch) at ``util`` = load / capacity; above capacity (by
    more than ``tol``, as the evaluator judges violations) is red."""
    if math.isnan(util):
        return colour_of(0.0)
    return colour_of(util, violated=util > FULL + tol)
