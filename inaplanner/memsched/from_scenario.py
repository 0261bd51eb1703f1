"""Build a memory-scheduling simulation from a scenario: the jobs that meet at one switch.

The simulator models one switch (ESA §7.2.1). From a scenario we take a programmable switch (the one
with the most job workers attached, unless named), every job with workers attached to it (one worker
per server, the job's first PS), the switch's aggregator slots (``aggregators`` x the payload of a
packet; ESA's 5 MB when unset) and the line rate of its links to those workers.

Each job is simulated with the paper's two-layer abstraction: its ``model_mb`` is split into two
layers of two partitions each (capped at ``max_partition_mb`` per partition so that big models stay
quick to simulate), and its computation per layer is set so that communication : computation equals
the job's ``comm_comp_ratio`` (1 when unset), as for DNN A and DNN B.
"""

from __future__ import annotations

from inaplanner.errors import ValidationError
from inaplanner.memsched.workload import MB, JobSpec, SimConfig, two_layer_dnn
from inaplanner.model import Scenario, Switch


def pick_switch(sc: Scenario, switch: str | None = None) -> Switch:
    """The named switch, or the programmable switch with the most job workers attached."""
    if switch is not None:
        node = sc.node(switch)
        if not isinstance(node, Switch):
            raise ValidationError(f"{switch!r} is not a switch", "--switch")
        return node
    best: tuple[int, int] | None = None
    chosen: Switch | None = None
    for i, sw in enumerate(sc.switches()):
        if not sw.programmable:
            continue
        n = sum(1 for job in sc.jobs for w in job.workers if sc.link_between(w, sw.id) is not None)
        if n and (best is None or (n, -i) > best):
            best, chosen = (n, -i), sw
    if chosen is None:
        raise ValidationError("no programmable switch has job workers attached", "nodes")
    return chosen


def config_from_scenario(
    sc: Scenario,
    switch: str | None = None,
    *,
    max_partition_mb: float = 4.0,
    memory_bytes: int | None = None,
    **knobs: object,
) -> SimConfig:
    """A :class:`SimConfig` for the jobs that aggregate at one switch of ``sc`` (see module doc)."""
    sw = pick_switch(sc, switch)
    jobs = []
    rates = []
    for job in sc.jobs:
        attached = [w for w in job.workers if sc.link_between(w, sw.id) is not None]
        if not attached:
            continue
        rates += [sc.link_between(w, sw.id).capacity for w in attached]  # type: ignore[union-attr]
        part_mb = min(job.model_mb / 4.0, max_partition_mb)
        ratio = job.comm_comp_ratio if job.comm_comp_ratio is not None else 1.0
        jobs.append((job.id, part_mb, ratio, len(attached)))
    if not jobs:
        raise ValidationError(f"switch {sw.id!r} has no job workers attached", f"switch {sw.id}")
    rate = min(rates)
    if rate <= 0:
        raise ValidationError(f"switch {sw.id!r}: a worker link has capacity 0", f"switch {sw.id}")
    specs = []
    for job_id, part_mb, ratio, n in jobs:
        comm_layer_s = 2 * part_mb * MB * 8 / (rate * 1e9)
        wl = two_layer_dnn(job_id, part_mb, comm_layer_s / ratio * 1e3, ratio)
        specs.append(JobSpec(id=job_id, workload=wl, workers=n))
    memory: dict[str, object] = {}
    if memory_bytes is not None:
        memory["memory_bytes"] = memory_bytes
    elif sw.aggregators:
        memory["aggregators"] = sw.aggregators
    return SimConfig(jobs=tuple(specs), link_gbps=rate, extra={"switch": sw.id},
                     **memory, **knobs)  # type: ignore[arg-type]
