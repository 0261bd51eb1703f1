"""The cases of a sweep: named generators of what-if change sets.

A sweep is a base scenario plus a list of :class:`Case`; each case is a tuple of the existing
what-if changes (:mod:`inaplanner.views.whatif`: fail a link, fail a switch, set a capacity, add
or remove a job), so a case can be opened in the GUI as a what-if exactly as the sweep ran it.

Generators (``--cases`` names):

- ``single-link``: every switch-to-switch link and every host access link fails alone.
- ``single-switch``: every switch fails alone (its links go with it).
- ``pod``: every pod fails as a whole (on a three-tier Clos, the aggregation and edge switches
  that stay connected when the top tier is removed; on a two-tier Clos, a leaf is its own pod),
  and every *plane* of the top tier (top-tier switches with the same neighbours: in a fat-tree
  the (k/2) cores behind aggregation index i; on a leaf-spine each spine).
- ``random-k``: ``sample`` cases of ``k`` simultaneous link failures, drawn with ``seed``.
- ``capacity``: every tier pair's links (e.g. edge-agg) set to each value of a grid.
- ``jobs``: growth steps: the first 1, 2, ..., n jobs of the scenario, then every job with 25,
  50 and 75 % of its workers.

The order of the cases is deterministic (it depends only on the scenario and the arguments),
and so are the seeds, so a local run and a cluster run of the same sweep give the same results.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from inaplanner.errors import InaplannerError
from inaplanner.model import Scenario, Switch
from inaplanner.topologies.structure import planes, pods
from inaplanner.views.whatif import (
    Change,
    FailLink,
    FailSwitch,
    RemoveJob,
    ScaleWorkers,
    SetCapacity,
)

GENERATORS = ("single-link", "single-switch", "pod", "random-k", "capacity", "jobs")


@dataclass(frozen=True)
class Case:
    """One what-if of a sweep.

    ``id`` is stable and unique within the sweep (it keys stored results, so a resumed sweep knows
    what is done). ``element`` names what failed or changed. When symmetric cases are collapsed,
    ``members`` lists every element this case stands for and ``weight`` is their number.
    """

    id: str
    generator: str
    element: str
    changes: tuple[Change, ...] = field(default=(), hash=False)
    members: tuple[str, ...] = ()
    weight: int = 1

    def describe(self) -> str:
        return "; ".join(c.describe() for c in self.changes) or "no change"


BASELINE = Case("baseline", "baseline", "(no failure)", ())


def link_name(a: str, b: str) -> str:
    return f"{a}-{b}"


# ---- generators ------------------------------------------------------------------------------


def single_link(sc: Scenario) -> list[Case]:
    return [Case(f"link:{link_name(lk.a, lk.b)}", "single-link", link_name(lk.a, lk.b),
                 (FailLink(lk.a, lk.b),)) for lk in sc.links]


def single_switch(sc: Scenario) -> list[Case]:
    return [Case(f"switch:{s.id}", "single-switch", s.id, (FailSwitch(s.id),)) for s in sc.switches()]


def pod_cases(sc: Scenario) -> list[Case]:
    if not sc.is_tiered():
        raise InaplannerError("sweep: the pod generator needs a Clos network (every switch has a tier)")
    out = []
    for i, grp in enumerate(pods(sc), 1):
        out.append(Case(f"pod:{i}", "pod", f"pod {i} ({', '.join(grp)})",
                        tuple(FailSwitch(s) for s in grp)))
    for i, grp in enumerate(planes(sc), 1):
        out.append(Case(f"plane:{i}", "pod", f"plane {i} ({', '.join(grp)})",
                        tuple(FailSwitch(s) for s in grp)))
    return out


def random_k(sc: Scenario, k: int, sample: int, seed: int) -> list[Case]:
    """``sample`` distinct sets of ``k`` links failing together, drawn with ``seed``."""
    n = len(sc.links)
    if k < 1 or k > n:
        raise InaplannerError(f"sweep: random-k needs 1 <= k <= {n} links, got k={k}")
    rng = random.Random(f"random-k:{seed}:{k}")
    total = _comb(n, k)
    want = min(sample, total)
    seen: set[tuple[int, ...]] = set()
    out = []
    while len(out) < want:
        pick = tuple(sorted(rng.sample(range(n), k)))
        if pick in seen:
            continue
        seen.add(pick)
        lks = [sc.links[i] for i in pick]
        name = " + ".join(link_name(lk.a, lk.b) for lk in lks)
        out.append(Case(f"random-{k}:{seed}:{len(out) + 1:04d}", "random-k", name,
                        tuple(FailLink(lk.a, lk.b) for lk in lks)))
    return out


def tier_of(sc: Scenario, node_id: str) -> str:
    n = sc.node(node_id)
    return (n.tier or "switch") if isinstance(n, Switch) else "host"


def link_class(sc: Scenario, a: str, b: str) -> str:
    """The tier pair of a link, lower tier first: ``host-edge``, ``edge-agg``, ``agg-core`` ..."""
    ends = sorted((a, b), key=lambda x: (sc.rank(x), x))
    return f"{tier_of(sc, ends[0])}-{tier_of(sc, ends[1])}"


def capacity_cases(sc: Scenario, values: Sequence[float]) -> list[Case]:
    """Each tier pair's links all set to each capacity of ``values`` (Gbps)."""
    if not values:
        raise InaplannerError("sweep: the capacity generator needs values (--capacities 25,50,100)")
    classes: dict[str, list[tuple[str, str]]] = {}
    for lk in sc.links:
        classes.setdefault(link_class(sc, lk.a, lk.b), []).append((lk.a, lk.b))
    out = []
    for cls in sorted(classes):
        for v in values:
            out.append(Case(f"capacity:{cls}={v:g}", "capacity", f"{cls} links at {v:g} Gbps",
                            tuple(SetCapacity(a, b, float(v)) for a, b in classes[cls])))
    return out


#: worker shares of the ``jobs`` generator's second series
WORKER_STEPS = (0.25, 0.5, 0.75)


def job_growth(sc: Scenario) -> list[Case]:
    """Growth steps: the first i jobs (i = 1 .. n; the last step is the scenario itself), then
    every job with 25, 50 and 75 % of its workers (at least one)."""
    ids = [j.id for j in sc.jobs]
    out = [Case(f"jobs:{i}", "jobs", f"first {i} of {len(ids)} jobs",
                tuple(RemoveJob(j) for j in ids[i:])) for i in range(1, len(ids) + 1)]
    for share in WORKER_STEPS:
        changes = tuple(ScaleWorkers(j.id, max(1, int(len(j.workers) * share))) for j in sc.jobs)
        out.append(Case(f"workers:{int(share * 100)}%", "jobs",
                        f"every job with {int(share * 100)} % of its workers", changes))
    return out


def parse_generators(spec: str) -> list[str]:
    names = [s.strip() for s in spec.split(",") if s.strip()]
    if not names:
        raise InaplannerError("sweep: --cases needs at least one generator")
    for name in names:
        base = name.split(":")[0]
        if base not in GENERATORS:
            raise InaplannerError(f"sweep: unknown case generator {name!r} (one of {', '.join(GENERATORS)})")
    return names


def generate(sc: Scenario, generators: Sequence[str], *, k: int = 2, sample: int | None = None,
             seed: int = 0, capacities: Sequence[float] = (), collapse: bool = False) -> list[Case]:
    """All cases of ``generators`` in a deterministic order, without duplicates of an id.

    ``sample`` draws that many cases (seeded) from the generated ones (``random-k`` uses it as its
    own count, default 20). ``collapse`` merges cases equivalent under the network's symmetry
    (:mod:`inaplanner.sweeps.symmetry`) into one representative with a weight.
    """
    cases: list[Case] = []
    for name in generators:
        if name == "single-link":
            cases += single_link(sc)
        elif name == "single-switch":
            cases += single_switch(sc)
        elif name == "pod":
            cases += pod_cases(sc)
        elif name == "random-k":
            cases += random_k(sc, k, sample or 20, seed)
        elif name == "capacity":
            cases += capacity_cases(sc, capacities)
        elif name == "jobs":
            cases += job_growth(sc)
    seen: set[str] = set()
    unique = []
    for c in cases:
        if c.id not in seen:
            seen.add(c.id)
            unique.append(c)
    if collapse:
        from inaplanner.sweeps.symmetry import collapse_cases

        unique = collapse_cases(sc, unique)
    if sample is not None and "random-k" not in generators and sample < len(unique):
        rng = random.Random(f"sample:{seed}")
        keep = sorted(rng.sample(range(len(unique)), sample))
        unique = [unique[i] for i in keep]
    return unique


def _comb(n: int, k: int) -> int:
    from math import comb

    return comb(n, k)


