"""The unlimited-memory run bounds every policy's JCT from below (see inaplanner.memsched.bound)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from inaplanner.memsched.bound import lower_bound, speedup_ceiling, unlimited_memory
from inaplanner.memsched.simulator import simulate
from inaplanner.memsched.workload import POLICIES, SimConfig


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_no_policy_beats_unlimited_memory(mixed: Callable[..., SimConfig], seed: int) -> None:
    # little memory, so that every shared policy collides, falls back, preempts and reminds
    cfg = mixed(jobs=3, workers=3, mb=0.05, aggregators=240, seed=seed)
    bound = lower_bound(cfg)
    assert bound.ok and bound.collisions == 0
    for policy in POLICIES:
        r = simulate(cfg, policy)
        assert r.ok
        assert r.avg_jct_s >= bound.avg_jct_s * (1 - 1e-12), policy
        for job, free in zip(r.jobs, bound.jobs, strict=True):
            assert job.jct_s >= free.jct_s * (1 - 1e-12), (policy, job.id)
        assert speedup_ceiling(r, bound) >= 1.0
    # the memory-starved shared pool really costs something, so the bound is not trivially met
    assert simulate(cfg, "atp").avg_jct_s > 1.05 * bound.avg_jct_s


def test_unlimited_memory_gives_every_packet_a_slot(mixed: Callable[..., SimConfig]) -> None:
    cfg = mixed(jobs=2, workers=2, mb=0.05, batch=4)
    free = unlimited_memory(cfg)
    per_job = sum(cfg.packets_of(b) for b in cfg.jobs[0].workload.partition_bytes)
    assert free.n_aggregators // len(cfg.jobs) >= per_job
    assert free.n_aggregators // len(cfg.jobs) % cfg.batch == 0
    # more memory than that changes nothing
    more = simulate(free.with_(aggregators=4 * free.n_aggregators), "switchml")
    assert more.avg_jct_s == pytest.approx(lower_bound(cfg).avg_jct_s, rel=1e-12)
