"""The JCT no memory policy can beat: the same jobs with unlimited aggregator memory.

In the simulated setting (ESA §7.2.1) every server has its own link and every job its own PS, so the
only thing the policies share, and differ in, is the switch's aggregator memory. Give every job a
private aggregator for every packet of an iteration and run SwitchML's static split on that:

* no packet ever collides, falls back to a PS, is evicted or waits for a reminder;
* a worker's window (its private slots) never stops it before its own next partition, so each
  worker sends as early as its start time, its stragglers' jitter and its uplink allow;
* each result is multicast by the switch the moment the last worker's packet arrives (ESA's and
  SwitchML's path; ATP's detour through its PS is only later).

Every policy's packet must wait for the same last worker, on the same links, so no policy's
per-iteration JCT can be below this run's (``tests/memsched`` checks it for all five policies on
small cases at packet granularity). ``speedup_ceiling`` is therefore the most any memory policy can
gain over a given result in that configuration.
"""

from __future__ import annotations

from inaplanner.memsched.results import SimResult
from inaplanner.memsched.simulator import simulate
from inaplanner.memsched.workload import SimConfig


def unlimited_memory(config: SimConfig) -> SimConfig:
    """``config`` with one private aggregator per packet of an iteration for every job."""
    per_job = max(sum(config.packets_of(b) for b in spec.workload.partition_bytes) for spec in config.jobs)
    per_job = -(-per_job // config.batch) * config.batch + config.batch
    return config.with_(aggregators=per_job * len(config.jobs))


def lower_bound(config: SimConfig) -> SimResult:
    """The unlimited-memory run of ``config`` (policy ``switchml`` on :func:`unlimited_memory`)."""
    return simulate(unlimited_memory(config), "switchml")


def speedup_ceiling(result: SimResult, bound: SimResult) -> float:
    """Largest JCT speed-up any memory policy could have over ``result`` (same configuration)."""
    return result.avg_jct_s / bound.avg_jct_s
