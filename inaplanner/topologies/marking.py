"""Marking programmable switches and placing jobs, as the papers' simulations do."""

from __future__ import annotations

import random
from collections.abc import Iterable

from inaplanner.errors import ValidationError
from inaplanner.model import Job, Scenario, Switch

LEAF_TIERS = ("leaf", "tor", "edge")


def mark_programmable(
    sc: Scenario,
    share: float | None = None,
    *,
    tiers: Iterable[str] | None = None,
    seed: int = 0,
    pipelines: int = 1,
    aggregation_capacity: float | None = None,
    aggregators: int | None = None,
    target: str | None = None,
    include: Iterable[str] = (),
    max_fan_in: int | None = None,
) -> list[str]:
    """Make switches programmable and return their ids.

    ``share=None`` marks every switch of ``tiers`` (default: the leaves/ToRs, GRID scenario (a));
    a ``share`` in [0, 1] marks round(share * n) switches drawn with ``seed`` among the switches of
    ``tiers`` (all switches when ``tiers`` is None: GRID scenario (b), ARO's gamma). Switches in
    ``include`` are always marked (ARO: the PS's leaf) and count toward the share.
    Marked switches get ``pipelines`` and the optional capacity, aggregator slots, target and
    max_fan_in."""
    switches = sc.switches()
    tier_set = set(tiers) if tiers is not None else (set(LEAF_TIERS) if share is None else None)
    eligible = [s for s in switches if tier_set is None or s.tier in tier_set]
    forced = [s for s in switches if s.id in set(include)]
    if share is None:
        chosen = eligible
    else:
        if not 0.0 <= share <= 1.0:
            raise ValidationError(f"share of programmable switches must be in [0, 1], got {share}")
        count = round(share * len(eligible))
        rest = [s for s in eligible if s not in forced]
        rng = random.Random(seed)
        chosen = rest if count - len(forced) >= len(rest) else rng.sample(rest, max(count - len(forced), 0))
    marked: list[str] = []
    for s in switches:
        if s in chosen or s in forced:
            s.programmable = True
            s.pipelines = pipelines
            s.port_pipeline = None
            if aggregation_capacity is not None:
                s.aggregation_capacity = aggregation_capacity
            if aggregators is not None:
                s.aggregators = aggregators
            if target is not None:
                s.target = target
            if max_fan_in is not None:
                s.max_fan_in = max_fan_in
            marked.append(s.id)
    sc.touch()
    return marked


def set_max_fan_in(sc: Scenario, max_fan_in: int | None, *, programmable_only: bool = True) -> list[str]:
    """Set ``max_fan_in`` (CONTRACTS.md rule 5; None = 32) on the programmable switches (or on
    every switch) and validate; returns the ids changed. The reproduction benchmarks use it to
    lift the limit the papers do not have (e.g. 1024)."""
    changed = []
    for s in sc.switches():
        if s.programmable or not programmable_only:
            s.max_fan_in = max_fan_in
            changed.append(s.id)
    sc.touch()
    sc.validate()
    return changed


def hosts_by_switch(sc: Scenario) -> dict[str, list[str]]:
    """Each switch's directly attached hosts, in link order (switches in scenario order)."""
    out: dict[str, list[str]] = {s.id: [] for s in sc.switches()}
    for lk in sc.links:
        for h, s in ((lk.a, lk.b), (lk.b, lk.a)):
            if not sc.is_switch(h) and sc.is_switch(s):
                out[s].append(h)
    return out


def leaf_switches(sc: Scenario) -> list[Switch]:
    """Leaves/ToRs of a tiered network, else every switch with a host attached."""
    if sc.is_tiered():
        return [s for s in sc.switches() if s.tier in LEAF_TIERS]
    attached = hosts_by_switch(sc)
    return [s for s in sc.switches() if attached[s.id]]


def place_jobs(
    sc: Scenario,
    jobs: int = 1,
    tasks_per_job: int | list[int] = 1,
    workers_per_job: int | list[int] = 8,
    *,
    seed: int = 0,
    programmable_ps_leaf: bool = True,
    model_mb: float = 100.0,
    weights: list[float] | None = None,
) -> list[Job]:
    """Place jobs as ARO's evaluation (section V-A) does: the PS of the i-th task (over all jobs)
    is a host under the i-th leaf, and that leaf is made programmable when
    ``programmable_ps_leaf``; workers are drawn uniformly at random (seeded) from the other hosts,
    disjoint across jobs. Appends the jobs to the scenario and returns them."""
    rng = random.Random(seed)
    tpj = [tasks_per_job] * jobs if isinstance(tasks_per_job, int) else list(tasks_per_job)
    wpj = [workers_per_job] * jobs if isinstance(workers_per_job, int) else list(workers_per_job)
    if len(tpj) != jobs or len(wpj) != jobs:
        raise ValidationError("tasks_per_job and workers_per_job need one value per job")
    leaves = leaf_switches(sc)
    attached = hosts_by_switch(sc)
    total_tasks = sum(tpj)
    if total_tasks > len(leaves):
        raise ValidationError(f"{total_tasks} tasks need as many leaves with hosts, the network has {len(leaves)}")
    used = {h for j in sc.jobs for h in (*j.workers, *j.parameter_servers)}
    ps_hosts: list[str] = []
    for leaf in leaves:
        if len(ps_hosts) == total_tasks:
            break
        free = [h for h in attached[leaf.id] if h not in used]
        if not free:
            continue
        ps_hosts.append(free[0])
        used.add(free[0])
        if programmable_ps_leaf and not leaf.programmable:
            leaf.programmable = True
    if len(ps_hosts) < total_tasks:
        raise ValidationError("not enough free hosts under the leaves for the parameter servers")
    pool = [h.id for h in sc.hosts() if h.id not in used]
    if sum(wpj) > len(pool):
        raise ValidationError(f"{sum(wpj)} workers requested, only {len(pool)} free hosts")
    rng.shuffle(pool)
    placed: list[Job] = []
    start = len(sc.jobs)
    for j in range(jobs):
        workers, pool = pool[: wpj[j]], pool[wpj[j]:]
        pss, ps_hosts = ps_hosts[: tpj[j]], ps_hosts[tpj[j]:]
        weight = weights[j] if weights else 1.0
        job = Job(f"job{start + j}", sorted(workers, key=_natural), pss, model_mb=model_mb, weight=weight)
        placed.append(job)
    sc.jobs.extend(placed)
    sc.touch()
    sc.validate()
    return placed


def _natural(name: str) -> tuple[str, int]:
    head = name.rstrip("0123456789")
    tail = name[len(head):]
    return head, int(tail) if tail else -1
