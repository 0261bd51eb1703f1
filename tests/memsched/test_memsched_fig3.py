"""ESA Fig. 3: a straggling low-priority job is preempted by a high-priority one; the evicted partial
result and the stragglers' part are summed at the PS. Also the same trace under ATP, and Fig. 5's
downgrading (a failed preemption halves the aggregator's priority)."""

from __future__ import annotations

from inaplanner.memsched.simulator import simulate
from inaplanner.memsched.workload import JobSpec, SimConfig, Workload


def fig3_config(one: Workload, job2_priority: int = 200, third: JobSpec | None = None) -> SimConfig:
    # Job 1: W1..W4, W3 and W4 straggle by 100 us. Job 2: W5, W6 start at 20 and 22 us.
    jobs = [JobSpec("job1", one, 4, start_s=0.0, worker_delays_s=(0.0, 0.0, 100e-6, 100e-6),
                    priority=10),
            JobSpec("job2", one, 2, start_s=0.0, worker_delays_s=(20e-6, 22e-6),
                    priority=job2_priority)]
    if third is not None:
        jobs.append(third)
    return SimConfig(jobs=tuple(jobs), aggregators=1, iterations=1, batch=1, jitter_s=0.0,
                     start_spread_s=0.0, lanes=62)


def steps(trace: list) -> list[tuple[str, str, int | None]]:
    """(what, job, worker bits) for each traced event."""
    out = []
    for _t, what, job, _seq, _k, detail in trace:
        bits = detail[0] if isinstance(detail, tuple) else None
        out.append((what, job, bits))
    return out


def test_esa_preempts_as_fig3_narrates(one_packet: Workload) -> None:
    r = simulate(fig3_config(one_packet), "esa", trace=True)
    assert r.ok and r.preemptions == 1 and r.evicted_packets == 1
    W1, W2, W3, W4, W5, W6 = 1, 2, 4, 8, 1, 2
    assert steps(r.trace) == [
        ("allocate", "job1", W1),  # (1)
        ("aggregate", "job1", W2),  # (2) the aggregator waits for W3, W4
        ("preempt", "job1", W1 | W2),  # (3)(4) g5 has the higher priority: g1+g2 go to the PS
        ("allocate", "job2", W5),
        ("aggregate", "job2", W6),  # (5)
        ("multicast", "job2", None),  # (6) g5+g6 to W5, W6; the aggregator is free
        ("ps-partial", "job1", W1 | W2),
        ("allocate", "job1", W3),  # (7)
        ("aggregate", "job1", W4),  # (8)
        ("reminder-flush", "job1", W3 | W4),  # (9) g3+g4 to the PS (reminder, Fig. 4)
        ("ps-partial", "job1", W3 | W4),
        ("ps-complete", "job1", None),
        ("multicast", "job1", None),  # (10) the PS multicasts g1+g2+g3+g4
    ]
    values = {}
    for _t, what, job, _s, _k, detail in r.trace:
        if what in ("allocate", "aggregate"):
            values[(job, detail[0])] = detail[1]
    g = {w: values[("job1", b)] for w, b in (("g1", W1), ("g2", W2), ("g3", W3), ("g4", W4))}
    by_what = {(e[1], e[2]): e[5] for e in r.trace}
    assert by_what[("preempt", "job1")][1] == g["g1"] + g["g2"]
    assert by_what[("reminder-flush", "job1")][1] == g["g3"] + g["g4"]
    assert by_what[("ps-complete", "job1")] == sum(g.values())
    assert by_what[("multicast", "job1")] == sum(g.values())
    assert by_what[("multicast", "job2")] == values[("job2", W5)] + values[("job2", W6)]
    # job 2 finished within its own RTT; job 1 needed the PS's timeout (RTO_min = 1 ms)
    jct = {j.id: j.jct_s for j in r.jobs}
    assert jct["job2"] < 30e-6 and 1e-3 < jct["job1"] < 1.1e-3


def test_atp_serves_first_come_first(one_packet: Workload) -> None:
    r = simulate(fig3_config(one_packet), "atp", trace=True)
    assert r.ok and r.preemptions == 0
    seen = steps(r.trace)
    assert ("fallback", "job2", 1) in seen and ("fallback", "job2", 2) in seen
    assert ("ps-complete", "job2", None) in seen  # job 2 is aggregated at its PS
    assert ("ps-complete", "job1", None) not in seen  # job 1 completes in the switch
    assert r.collision_packets == 2 and r.ps_fallback_packets == 2


def test_failed_preemption_downgrades_until_a_lower_priority_wins(one_packet: Workload) -> None:
    # job 2 (priority 5) fails twice against job 1 (10): 10 -> 5 -> 2; job 3 (priority 3) then
    # preempts, which it could not have done against the undowngraded 10.
    third = JobSpec("job3", one_packet, 1, start_s=0.0, worker_delays_s=(40e-6,), priority=3)
    r = simulate(fig3_config(one_packet, job2_priority=5, third=third), "esa", trace=True)
    assert r.ok
    assert r.downgrades == 2
    seen = steps(r.trace)
    assert seen.count(("fallback", "job2", 1)) == 1 and seen.count(("fallback", "job2", 2)) == 1
    assert ("preempt", "job1", 3) in seen  # job 3 evicts job 1's g1+g2
    assert r.preemptions == 1
