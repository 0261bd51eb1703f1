"""The one place loads and objectives are computed (see ``core``) and the max-min rate filler."""

from inaplanner.evaluate.core import (
    MU,
    Aggregate,
    Evaluation,
    Violation,
    evaluate,
    is_up_down,
    objective_of,
)
from inaplanner.evaluate.maxmin import (
    constraint_matrix,
    max_min_rates,
    progressive_filling,
    with_rates,
)

__all__ = [
    "MU",
    "Aggregate",
    "Evaluation",
    "Violation",
    "constraint_matrix",
    "evaluate",
    "is_up_down",
    "max_min_rates",
    "objective_of",
    "progressive_filling",
    "with_rates",
]
