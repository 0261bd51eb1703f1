"""What deployment writes into packets and switch tables for aggregator-memory scheduling.

:func:`deployment_params` is the entry point the data-plane helper calls. For every switch that
aggregates, and every job aggregated there, it gives a :class:`JobMemParams`:

* the job's 16-bit number (``job_num``) carried in packet headers and hashed with the sequence number;
* the 8-bit ESA priority of each layer (Eq. (1) of ESA §5.4, fixed point with ``priority_frac_bits``
  fractional bits, one scale for the whole scenario so that priorities of different jobs compare);
  workers write ``layer_priorities[l - 1]`` into the header of a fragment of layer l;
* the job's aggregator range on that switch, ``agg_base`` .. ``agg_base + agg_size - 1`` (the same on
  every pipeline that aggregates it; each pipeline has its own ``aggregators`` slots), and how a
  fragment's sequence number picks its aggregator:

  - ``indexing == "hash"`` (ATP, ESA): ``agg_base + CRC32(hash_seed:32 || job_num:16 || seq:32) mod
    agg_size`` (:func:`inaplanner.memsched.hashing.agg_index`); the whole pool is shared;
  - ``indexing == "modulo"`` (SwitchML): ``agg_base + seq mod agg_size``; the pool is split evenly
    among the jobs aggregated at the switch and each slice is held for the job's lifetime;

* ``aggregates``: per (PS, pipeline) where the job's flows are merged at that switch, the fan-in (how
  many distinct flows the aggregator waits for before the result is complete).

Without a plan, each job is aggregated at the programmable switch(es) its workers are attached to,
on the pipeline of each worker's port, with fan-in = the job's workers on that pipeline. With a plan,
the evaluator's aggregates (CONTRACTS.md, rule 1) are used; an invalid plan is refused.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from inaplanner.errors import ValidationError
from inaplanner.memsched.hashing import seed_for
from inaplanner.memsched.priority import choose_frac_bits, dequantise, priority, quantise
from inaplanner.model import Job, Plan, Scenario, Switch

#: ESA §7.2.1's 5 MB of INA memory in aggregators of ATP's 62 x 4-byte payload.
DEFAULT_AGGREGATORS = 5_000_000 // 248
DEPLOY_POLICIES = ("esa", "atp", "switchml")


@dataclass(frozen=True)
class AggregateSpec:
    """Where a job's flows toward one PS are merged at a switch, and how many."""

    ps: str
    pipeline: int
    fan_in: int


@dataclass(frozen=True)
class JobMemParams:
    """Per (switch, job): everything the data plane needs to aggregate the job there."""

    job: str
    job_num: int
    policy: str
    priority: int
    layer_priorities: tuple[int, ...]
    priority_value: float
    priority_frac_bits: int
    agg_base: int
    agg_size: int
    indexing: str
    hash_seed: int
    aggregators: int
    aggregates: tuple[AggregateSpec, ...]

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["layer_priorities"] = list(self.layer_priorities)
        d["aggregates"] = [asdict(a) for a in self.aggregates]
        return d


def job_priority_value(job: Job, layer: int = 1, *, attained_s: float | None = None) -> float:
    """Eq. (1) for a scenario job: T_j = ``remaining_s``, else the attained service ``attained_s``
    (§5.4), else 1 s (neutral); L_j = ``layers`` (default 1); Comm/Comp = ``comm_comp_ratio``
    (default 1)."""
    layers = job.layers or 1
    ratio = job.comm_comp_ratio if job.comm_comp_ratio is not None else 1.0
    t = job.remaining_s if job.remaining_s is not None else attained_s
    if t is None or t <= 0:
        t = 1.0
    return priority(layer, layers, ratio, t)


def _aggregation_points(sc: Scenario, plan: Plan | None) -> dict[str, dict[str, list[AggregateSpec]]]:
    """switch -> job -> aggregates there."""
    out: dict[str, dict[str, list[AggregateSpec]]] = {}
    if plan is None:
        for job in sc.jobs:
            counts: dict[tuple[str, int], int] = {}
            for w in job.workers:
                for nb in sc.neighbours(w):
                    node = sc.node(nb)
                    if isinstance(node, Switch) and node.programmable:
                        key = (nb, sc.ingress_pipeline(w, nb))
                        counts[key] = counts.get(key, 0) + 1
            for (sw, pipe), n in sorted(counts.items()):
                specs = out.setdefault(sw, {}).setdefault(job.id, [])
                specs.extend(AggregateSpec(ps, pipe, n) for ps in job.parameter_servers)
        return out
    from inaplanner.evaluate import evaluate  # the one place that walks plans (CONTRACTS.md rules)

    ev = evaluate(sc, plan)
    if ev.errors:
        raise ValidationError(f"the plan is invalid: {ev.errors[0]}", "plan")
    for agg in ev.aggregates:
        specs = out.setdefault(agg.switch, {}).setdefault(agg.task.job, [])
        specs.append(AggregateSpec(agg.task.ps, agg.pipeline, agg.inputs))
    return out


def deployment_params(
    scenario: Scenario,
    plan: Plan | None = None,
    *,
    policy: str = "esa",
    attained_s: dict[str, float] | None = None,
    salt: int = 0,
    default_aggregators: int | None = DEFAULT_AGGREGATORS,
) -> dict[str, dict[str, JobMemParams]]:
    """Per switch that aggregates, per job aggregated there: priorities, aggregator range, hash seed.

    ``policy``: ``esa`` (default) or ``atp`` (hash into the shared pool) or ``switchml`` (even static
    split). ``attained_s``: per job id, service attained so far, used as T_j when the job has no
    ``remaining_s``. ``salt`` changes every switch's hash seed. A switch without ``aggregators`` gets
    ``default_aggregators`` (None: refuse). Switches and jobs come out in scenario order.
    """
    if policy not in DEPLOY_POLICIES:
        raise ValidationError(f"unknown memory policy {policy!r} (one of {', '.join(DEPLOY_POLICIES)})",
                              "policy")
    sc = scenario
    if len(sc.jobs) >= 1 << 16:
        raise ValidationError("more than 65535 jobs do not fit the 16-bit job number", "jobs")
    attained = attained_s or {}
    values = {j.id: [job_priority_value(j, layer, attained_s=attained.get(j.id))
                     for layer in range(1, (j.layers or 1) + 1)] for j in sc.jobs}
    frac = choose_frac_bits(v for vs in values.values() for v in vs)
    job_num = {j.id: i + 1 for i, j in enumerate(sc.jobs)}
    points = _aggregation_points(sc, plan)
    result: dict[str, dict[str, JobMemParams]] = {}
    for sw in sc.switches():
        jobs_here = [j for j in sc.jobs if j.id in points.get(sw.id, {})]
        if not jobs_here:
            continue
        size = sw.aggregators if sw.aggregators is not None else default_aggregators
        if size is None:
            raise ValidationError(
                f"switch {sw.id!r} aggregates jobs but has no 'aggregators' (slots per pipeline)",
                f"switch {sw.id}",
            )
        if policy == "switchml":
            share = size // len(jobs_here)
            if share < 1:
                raise ValidationError(
                    f"switch {sw.id!r}: {size} aggregators cannot be split among {len(jobs_here)} jobs",
                    f"switch {sw.id}",
                )
        per_job: dict[str, JobMemParams] = {}
        for i, job in enumerate(jobs_here):
            qs = tuple(quantise(v, frac) for v in values[job.id])
            if policy == "switchml":
                base, span, indexing, seed = i * share, share, "modulo", 0
            else:
                base, span, indexing, seed = 0, size, "hash", seed_for(sw.id, salt)
            per_job[job.id] = JobMemParams(
                job=job.id,
                job_num=job_num[job.id],
                policy=policy,
                priority=qs[0],
                layer_priorities=qs,
                priority_value=values[job.id][0],
                priority_frac_bits=frac,
                agg_base=base,
                agg_size=span,
                indexing=indexing,
                hash_seed=seed,
                aggregators=size,
                aggregates=tuple(points[sw.id][job.id]),
            )
        result[sw.id] = per_job
    return result


def priority_summary(params: dict[str, dict[str, JobMemParams]]) -> list[dict[str, Any]]:
    """One row per (switch, job) for reports: the encoded priority and what it stands for."""
    rows = []
    for sw, jobs in params.items():
        for jp in jobs.values():
            rows.append({
                "switch": sw, "job": jp.job, "priority": jp.priority,
                "decoded": dequantise(jp.priority, jp.priority_frac_bits),
                "exact": jp.priority_value,
                "rel_error": (abs(dequantise(jp.priority, jp.priority_frac_bits) - jp.priority_value)
                              / jp.priority_value) if jp.priority_value > 0 else math.nan,
                "range": [jp.agg_base, jp.agg_base + jp.agg_size - 1],
            })
    return rows
