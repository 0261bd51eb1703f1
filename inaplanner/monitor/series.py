"""What monitoring produces: one :class:`Snapshot` per poll, and the planned loads to compare.

A snapshot holds the observed Gbps of every directed link measured in that poll, keyed by
``(link index, direction)`` as in :attr:`inaplanner.evaluate.Evaluation.link_load`, and the switches
that did not answer.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

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
    #: Gbps by (link index, direction): a dict from the poller, a :class:`PollRates` (the same
    #: reads, on the arrays) from a recording
    rates: Mapping[tuple[int, int], float] = field(default_factory=dict)
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


class RateKeys:
    """The (link index, direction) keys of a poll's rates as arrays, shared by the polls of a
    recording that measured the same links (most of them: every poll of a run whose switches all
    answer), with a position per key made when first looked up."""

    __slots__ = ("links", "directions", "_position")

    def __init__(self, links: np.ndarray, directions: np.ndarray) -> None:
        self.links = links
        self.directions = directions
        self._position: np.ndarray | None = None

    def same(self, links: np.ndarray, directions: np.ndarray) -> bool:
        return np.array_equal(self.links, links) and np.array_equal(self.directions, directions)

    def position(self) -> np.ndarray:
        """Index of each key (2 * link + direction) in the arrays, -1 where absent."""
        if self._position is None:
            code = self.links.astype(np.int64) * 2 + self.directions
            pos = np.full(int(code.max()) + 1 if code.size else 0, -1, dtype=np.int64)
            pos[code] = np.arange(code.size)
            self._position = pos
        return self._position


class PollRates(Mapping[tuple[int, int], float]):
    """A poll's Gbps by (link index, direction), read from arrays: what a replay keeps of a poll.
    A dict of fat-tree k=64's 393,216 directed links took 79 MB a poll, so reading a recording
    of 12 polls took 998 MB, and one at the 1 GB size limit (100 polls) 7.0 GB; the Gbps alone
    take 3.1 MB, the keys are shared (:class:`RateKeys`). Iterates in the arrays' order."""

    __slots__ = ("keys_", "gbps")

    def __init__(self, keys: RateKeys, gbps: np.ndarray) -> None:
        self.keys_ = keys
        self.gbps = gbps

    def _at(self, key: Any) -> int:
        """Index of ``key`` in the arrays, -1 when absent (or not a key at all)."""
        if not isinstance(key, tuple) or len(key) != 2:
            return -1
        li, d = key
        if not isinstance(li, (int, np.integer)) or not isinstance(d, (int, np.integer)) \
                or li < 0 or not 0 <= d <= 1:
            return -1
        pos = self.keys_.position()
        code = 2 * int(li) + int(d)
        return int(pos[code]) if code < pos.size else -1

    def __getitem__(self, key: tuple[int, int]) -> float:
        i = self._at(key)
        if i < 0:
            raise KeyError(key)
        return float(self.gbps[i])

    def __contains__(self, key: object) -> bool:
        return self._at(key) >= 0

    def get(self, key: tuple[int, int], default: Any = None) -> Any:  # type: ignore[override]
        i = self._at(key)
        return default if i < 0 else float(self.gbps[i])

    def __iter__(self) -> Iterator[tuple[int, int]]:
        return zip(self.keys_.links.tolist(), self.keys_.directions.tolist(), strict=True)

    def __len__(self) -> int:
        return int(self.gbps.size)

    def __repr__(self) -> str:
        return f"PollRates({len(self)} directed links)"


def compact(snap: Snapshot, keys: RateKeys | None = None) -> RateKeys:
    """Replace ``snap.rates`` (a dict, as a recording is read) by a :class:`PollRates` and set its
    arrays, in the dict's order; ``keys``: those of an earlier poll, shared when they are the
    same. Returns the keys used (for the next poll)."""
    rates = snap.rates
    n = len(rates)
    flat = np.fromiter(chain.from_iterable(rates), dtype=np.intp, count=2 * n)
    return set_arrays(snap, flat[0::2], flat[1::2], np.fromiter(rates.values(), dtype=float, count=n),
                      keys)


def set_arrays(snap: Snapshot, links: np.ndarray, directions: np.ndarray, gbps: np.ndarray,
               keys: RateKeys | None = None) -> RateKeys:
    """Give ``snap`` these rates (distinct keys) as a :class:`PollRates` and its arrays;
    ``keys``: those of an earlier poll, shared when they are the same. Returns the keys used."""
    if keys is None or not keys.same(links, directions):
        keys = RateKeys(np.ascontiguousarray(links, dtype=np.intp).copy(),
                        np.ascontiguousarray(directions, dtype=np.intp).copy())
    snap.rates = PollRates(keys, gbps)
    snap.measured = (keys.links, keys.directions, gbps)
    return keys


def planned_loads(scenario: Scenario, plan: Plan) -> np.ndarray:
    """(L, 2) Gbps the plan puts on every directed link, background included, from the
    evaluator (CONTRACTS.md rule 3)."""
    from inaplanner.evaluate import evaluate

    return evaluate(scenario, plan).link_load
