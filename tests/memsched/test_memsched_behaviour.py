"""Properties of the model that follow from the paper's mechanisms, and input checks."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from inaplanner.errors import InaplannerError
from inaplanner.memsched.simulator import priority_table, simulate
from inaplanner.memsched.workload import (
    DNN_A,
    DNN_B,
    WINDOWS,
    JobSpec,
    SimConfig,
    paper_jobs,
    preset,
    window_knobs,
)


def test_a_lone_job_with_room_to_spare(mixed: Callable[..., SimConfig]) -> None:
    # the window capped at 60 KB (the cap60 model; the default lets it grow, see below)
    cfg = mixed(jobs=1, workers=4, mb=0.25, aggregators=10_000_000, **window_knobs("cap60"))
    r = {p: simulate(cfg, p) for p in ("switchml", "atp", "esa")}
    # ESA and SwitchML both multicast from the switch (sub-RTT, 5 us); ESA's 60 KB window covers
    # ~95 % of that bandwidth-delay product, SwitchML's slice (here huge) is its window
    assert r["switchml"].avg_jct_s < r["esa"].avg_jct_s < 1.1 * r["switchml"].avg_jct_s
    assert r["esa"].preemptions == 0 and r["esa"].ps_fallback_packets == 0
    assert simulate(cfg, "always-preempt").avg_jct_s == r["esa"].avg_jct_s  # nothing to preempt
    # ATP's results go round the PS: twice the RTT for the same 60 KB window
    assert r["atp"].avg_jct_s > 1.2 * r["esa"].avg_jct_s
    assert r["atp"].utilisation < r["esa"].utilisation


def test_the_default_window_grows_to_line_rate(mixed: Callable[..., SimConfig]) -> None:
    """ESA §5.1: 60 KB is the *initial* window; ATP's AIMD lets it grow past the 60 KB that only
    carry ~48 Gbps over a 10 us RTT. ATP, whose results go round the PS (a full RTT), gains most."""
    room = {"jobs": 1, "workers": 4, "mb": 0.25, "aggregators": 10_000_000}
    aimd, capped = mixed(**room), mixed(**room, **window_knobs("cap60"))
    assert aimd.max_window_bytes is None and aimd.window_increase == "per-rtt" and aimd.loss_backoff
    for policy in ("atp", "esa"):
        grow, cap = simulate(aimd, policy), simulate(capped, policy)
        assert grow.ok and cap.ok
        assert grow.utilisation > cap.utilisation and grow.avg_jct_s < cap.avg_jct_s
    a, c = simulate(aimd, "atp"), simulate(capped, "atp")
    assert c.avg_jct_s - a.avg_jct_s > 0.1 * c.avg_jct_s  # ATP was window-bound at 60 KB


def test_window_models_are_named_and_checked() -> None:
    assert set(WINDOWS) == {"atp", "cap60"}
    assert window_knobs("cap60")["max_window_bytes"] == 60_000
    with pytest.raises(InaplannerError, match="window model"):
        window_knobs("cubic")
    with pytest.raises(InaplannerError, match="window_increase"):
        preset("dnn-a", window_increase="per-packet")


def test_loss_backoff_halves_on_timeouts(mixed: Callable[..., SimConfig]) -> None:
    """ATP's multiplicative decrease on a loss (a PS timeout): it changes a run with timeouts and
    leaves a run without any alone."""
    tight = mixed(mb=0.1, aggregators=300, batch=4, rto_min_s=50e-6)
    on, off = simulate(tight, "esa"), simulate(tight.with_(loss_backoff=False), "esa")
    assert on.ok and off.ok and on.timeout_reminders + off.timeout_reminders > 0
    assert (on.avg_jct_s, on.events) != (off.avg_jct_s, off.events)
    room = mixed(jobs=1, workers=4, mb=0.25, aggregators=10_000_000)
    quiet = simulate(room, "esa")
    assert quiet.timeout_reminders == 0
    assert simulate(room.with_(loss_backoff=False), "esa").avg_jct_s == quiet.avg_jct_s


def test_switchml_slices_are_never_shared(mixed: Callable[..., SimConfig]) -> None:
    r = simulate(mixed(mb=0.1, aggregators=400), "switchml")
    assert r.ok and r.collisions == 0 and r.preemptions == 0 and r.reminders == 0


def test_priorities_follow_eq1() -> None:
    cfg = SimConfig(jobs=(JobSpec("a", DNN_A, 2), JobSpec("b", DNN_B, 2)), iterations=3)
    table, frac = priority_table(cfg)
    a, b = table
    layer = DNN_A.partition_layer  # (2, 1, 1, 2)
    for k in range(3):
        assert a[k][1] > a[k][0] and a[k][2] > a[k][3]  # layer 1 ahead of layer 2
        assert a[k][1] > b[k][1]  # communication-heavy model ahead
    assert a[2][0] > a[0][0]  # less time left, higher priority
    assert max(max(row) for rows in table for row in rows) <= 255 and layer[1] == 1
    fixed = SimConfig(jobs=(JobSpec("a", DNN_A, 2, priority=7),), iterations=2)
    assert priority_table(fixed)[0] == [[[7] * 4] * 2]


def test_stragglers_slow_a_job_down(mixed: Callable[..., SimConfig]) -> None:
    base = mixed(jobs=2, workers=4, mb=0.1, aggregators=10_000_000)
    slow = base.with_(straggler_prob=1.0, straggler_delay_s=200e-6)
    assert simulate(slow, "esa").avg_jct_s > simulate(base, "esa").avg_jct_s + 150e-6


def test_outstanding_window_mode_runs_and_checks_out(mixed: Callable[..., SimConfig]) -> None:
    r = simulate(mixed(mb=0.1, aggregators=1500, window_mode="outstanding", batch=4), "esa")
    assert r.ok and r.preemptions > 0


def test_presets() -> None:
    cfg = preset("dnn-ab")
    assert [j.workload.name for j in cfg.jobs] == ["A", "B"] * 4
    assert all(j.workers == 8 for j in cfg.jobs)
    assert cfg.n_aggregators == 20161 and cfg.packet_bytes == 306 and cfg.rtt_s == 10e-6
    # DNN A: 4 MB partitions, comm : comp = 2 : 1 at 100 Gbps; DNN B: 2 MB, 1 : 2
    comm_a = 2 * DNN_A.partition_bytes[0] * 8 / 100e9
    assert comm_a / DNN_A.compute_per_layer_s == pytest.approx(2.0)
    assert (2 * DNN_B.partition_bytes[0] * 8 / 100e9) / DNN_B.compute_per_layer_s == pytest.approx(0.5)
    assert len(paper_jobs("b", 3, 5)) == 3
    with pytest.raises(InaplannerError, match="preset"):
        preset("dnn-c")


@pytest.mark.parametrize("changes, message", [
    ({"jobs": ()}, "at least one job"),
    ({"aggregators": 0}, "aggregator"),
    ({"window_mode": "sliding"}, "window_mode"),
    ({"lanes": 99}, "lanes"),
    ({"straggler_prob": 2.0}, "straggler_prob"),
])
def test_bad_configs_are_refused(changes: dict, message: str) -> None:
    base = {"jobs": (JobSpec("a", DNN_A, 2),)}
    base.update(changes)
    with pytest.raises(InaplannerError, match=message):
        SimConfig(**base)


def test_switchml_needs_a_slice_per_job() -> None:
    cfg = SimConfig(jobs=tuple(JobSpec(f"j{i}", DNN_A, 2) for i in range(4)), aggregators=20, batch=8)
    with pytest.raises(InaplannerError, match="switchml"):
        simulate(cfg, "switchml")
    with pytest.raises(InaplannerError, match="unknown memory policy"):
        simulate(cfg, "lru")
