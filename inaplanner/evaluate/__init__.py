"""The one place loads and objectives are computed (see ``core``) and the max-min rate filler."""

from inaplanner.evaluate.core import (
    MU,
    RULE_KINDS,
    Aggregate,
    Evaluation,
    Violation,
    evaluate,
    fan_in_limit,
    fan_in_message,
    is_up_down,
    objective_of,
    valley_message,
)
from inaplanner.evaluate.maxmin import (
    constraint_matrix,
    max_min_rates,
    progressive_filling,
    with_rates,
)

__all__ = [
    "MU",
    "RULE_KINDS",
    "Aggregate",
    "Evaluation",
    "Violation",
    "constraint_matrix",
    "evaluate",
    "fan_in_limit",
    "fan_in_message",
    "is_up_down",
    "max_min_rates",
    "objective_of",
    "progressive_filling",
    "valley_message",
    "with_rates",
]
