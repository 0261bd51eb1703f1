"""What monitoring produces: one :class:`Snapshot` per poll, and the planned loads to compare.

A snapshot holds the observed Gbps of every directed link measured in that poll, keyed by
``(link index, direction)`` as in :attr:`inaplanner.evaluate.Evaluation.link_load`, and the switches
that did not answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import chain

import numpy as np

from inaplanner.model import Plan, Scenario

#: Rates (one directed link at one poll) a monitoring session keeps in memory over all the polls
#: it keeps, about 90 bytes each in the polls' dicts (260 MB in all): fat-tree k=8 keeps its
#: hour of polls (3,600 of 768 links), k=16 488, k=32 61, k=64 (393,216 directed links) 7. With a
#: count alone, the Monitor mode at k=32 grew by 5.4 MB a poll (6.5 GB in an hour of polls every
#: 3 s), and the monitor's own history of 30 polls would hold 1.2 GB at k=64.
KEPT_RATES = 3_000_000


def polls_kept(wanted: int, links: int) -> int:
    """How many polls to keep: ``wanted``, or fewer when ``links`` directed links a poll would
    take more than :data:`KEPT_RATES`; never fewer than two (a rate needs the poll before)."""
    return max(2, min(wanted, KEPT_RATES // max(1, links)))


@dataclass
class Snapshot:
    t: float  # seconds since monitoring started
    wall: float  # UNIX time of the poll
    rates: dict[tuple[int, int], float] = field(default_factory=dict)  # Gbps
    stale: tuple[str, ...] = ()
    reset: tuple[str, ...] = ()  # switches that answer but run no pipeline (restarted blank)
    #: ``rates`` as arrays (link indices, directions, Gbps; in the order of ``rates``) when the
    #: poller made the snapshot, for what reads every link at once (:meth:`arrays`); None: made
    #: from ``rates`` when asked. A snapshot is not changed once made.
    measured: tuple[np.ndarray, np.ndarray, np.ndarray] | None = field(
        default=None, repr=False, compare=False)

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(link indices, directions, Gbps) of the measured links, in the order of ``rates``:
        alerts, the tables and the overlay read every link of fat-tree k=64 (393,216) at every
        poll, and a Python step per link cost them about 0.5 s a poll."""
        if self.measured is not None:
            return self.measured
        n = len(self.rates)
        keys = np.fromiter(chain.from_iterable(self.rates), dtype=np.intp, count=2 * n)
        return keys[0::2], keys[1::2], np.fromiter(self.rates.values(), dtype=float, count=n)

    def loads(self, n_links: int) -> np.ndarray:
        """(L, 2) observed Gbps, NaN where not measured."""
        out = np.full((n_links, 2), np.nan)
        li, d, v = self.arrays()
        inside = (li >= 0) & (li < n_links)
        out[li[inside], d[inside]] = v[inside]
        return out


def planned_loads(scenario: Scenario, plan: Plan) -> np.ndarray:
    """(L, 2) Gbps the plan puts on every directed link, background included, from the
    evaluator (CONTRACTS.md rule 3)."""
    from inaplanner.evaluate import evaluate

    return evaluate(scenario, plan).link_load
