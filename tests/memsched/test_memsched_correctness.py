"""No gradient is lost or double-counted, under every policy, and runs are reproducible by seed."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from inaplanner.memsched.simulator import simulate
from inaplanner.memsched.workload import POLICIES, SimConfig


@pytest.mark.parametrize("policy", POLICIES)
def test_every_result_is_the_sum_of_the_workers_values(policy: str, mixed: Callable[..., SimConfig]) -> None:
    # a crowded switch (1500 aggregators for 4 jobs x 4 workers) so that collisions, fall-backs,
    # preemptions and reminders all happen; all 62 values of each packet carried as numbers
    cfg = mixed(mb=0.1, aggregators=1500, batch=4, lanes=62, rto_min_s=50e-6)
    r = simulate(cfg, policy)
    total = sum(cfg.packets_of(b) for spec in cfg.jobs for b in spec.workload.partition_bytes)
    assert r.results_checked == total * cfg.iterations  # every packet's result checked once
    assert r.value_errors == 0 and r.double_counts == 0 and r.duplicate_results == 0
    assert r.unfinished_tasks == 0 and r.ok
    assert all(len(j.iteration_s) == cfg.iterations for j in r.jobs)
    if policy == "switchml":
        assert r.collisions == 0 and r.ps_fallback_packets == 0
    else:
        assert r.collisions > 0 and r.ps_fallback_packets > 0
    if policy == "atp":
        assert r.preemptions == 0
    if policy in ("esa", "always-preempt", "half-preempt"):
        assert r.preemptions > 0 and r.reminders > 0
    if policy == "esa":
        assert r.downgrades > 0


@pytest.mark.parametrize("batch", [1, 16])
def test_packet_and_batch_granularity_both_check_out(batch: int, mixed: Callable[..., SimConfig]) -> None:
    r = simulate(mixed(jobs=3, workers=3, mb=0.05, aggregators=300, batch=batch), "esa")
    assert r.ok and r.preemptions > 0


def test_same_seed_same_results_other_seed_other_results(mixed: Callable[..., SimConfig]) -> None:
    cfg = mixed(mb=0.1, aggregators=1500, batch=8)

    def fingerprint(seed: int, policy: str) -> dict:
        d = simulate(cfg.with_(seed=seed), policy).to_dict()
        d.pop("wall_s")
        return d

    for policy in ("atp", "esa", "half-preempt"):
        assert fingerprint(3, policy) == fingerprint(3, policy)
    assert fingerprint(3, "esa")["avg_jct_s"] != fingerprint(4, "esa")["avg_jct_s"]
