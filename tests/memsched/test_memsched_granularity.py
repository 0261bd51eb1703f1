"""Batching packets in time (``batch`` > 1) gives the packet-granularity JCT within 2 %.

Allocation stays per packet in both runs; only time is coarse. Random collisions make single runs
differ by a few percent either way, so the check is on the mean JCT over eight seeds, in a crowded
switch where fall-backs, preemptions and reminders matter, and in a roomy one. The PS timeout is
scaled down with the workload (50 us) so that rare 1 ms timeouts do not swamp the comparison."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from inaplanner.memsched.simulator import simulate
from inaplanner.memsched.workload import SimConfig

SEEDS = range(8)
BATCH = 8  # the default of `inaplanner memsim` and of the benchmark


def mean_jct(cfg: SimConfig, policy: str, batch: int) -> float:
    return sum(simulate(cfg.with_(batch=batch, seed=s), policy).avg_jct_s for s in SEEDS) / len(SEEDS)


@pytest.mark.slow
@pytest.mark.parametrize("policy", ["atp", "esa", "half-preempt"])
def test_batched_jct_within_2_percent_when_crowded(policy: str, mixed: Callable[..., SimConfig]) -> None:
    cfg = mixed(mb=0.25, aggregators=1500, rto_min_s=50e-6)
    fine = mean_jct(cfg, policy, 1)
    coarse = mean_jct(cfg, policy, BATCH)
    assert abs(coarse / fine - 1) < 0.02, (policy, fine, coarse)


@pytest.mark.parametrize("policy", ["switchml", "atp", "esa"])
def test_batched_jct_within_2_percent_when_roomy(policy: str, mixed: Callable[..., SimConfig]) -> None:
    cfg = mixed(mb=0.25, aggregators=10_000_000)  # (almost) no collisions at all
    for seed in (0, 1):
        fine = simulate(cfg.with_(batch=1, seed=seed), policy).avg_jct_s
        coarse = simulate(cfg.with_(batch=BATCH, seed=seed), policy).avg_jct_s
        assert abs(coarse / fine - 1) < 0.02, (policy, seed, fine, coarse)
