"""What monitoring produces: one :class:`Snapshot` per poll, and the planned loads to compare.

A snapshot holds the observed Gbps of every directed link measured in that poll, keyed by
``(link index, direction)`` as in :attr:`inaplanner.evaluate.Evaluation.link_load`, and the switches
that did not answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from inaplanner.model import Plan, Scenario


@dataclass
class Snapshot:
    t: float  # seconds since monitoring started
    wall: float  # UNIX time of the poll
    rates: dict[tuple[int, int], float] = field(default_factory=dict)  # Gbps
    stale: tuple[str, ...] = ()
    reset: tuple[str, ...] = ()  # switches that answer but run no pipeline (restarted blank)

    def loads(self, n_links: int) -> np.ndarray:
        """(L, 2) observed Gbps, NaN where not measured."""
        out = np.full((n_links, 2), np.nan)
        for (li, d), v in self.rates.items():
            if 0 <= li < n_links:
                out[li, d] = v
        return out


def planned_loads(scenario: Scenario, plan: Plan) -> np.ndarray:
    """(L, 2) Gbps the plan puts on every directed link, background included, from the
    evaluator (CONTRACTS.md rule 3)."""
    from inaplanner.evaluate import evaluate

    return evaluate(scenario, plan).link_load
