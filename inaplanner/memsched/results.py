"""What a memory-scheduling simulation reports (ESA §7.2-7.3 metrics)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any


@dataclass
class JobStats:
    """One job's outcome. ``iteration_s``: per iteration, computation completion minus communication
    start (ESA §7.2.1's JCT); ``comm_s``: communication start to the last result received;
    ``utilisation``: mean over iterations of (gradient bytes / line rate) / ``comm_s`` (§7.3)."""

    id: str
    workload: str
    workers: int
    start_s: float
    finish_s: float = math.nan
    iteration_s: list[float] = field(default_factory=list)
    comm_s: list[float] = field(default_factory=list)
    utilisation: float = math.nan

    @property
    def jct_s(self) -> float:
        return sum(self.iteration_s) / len(self.iteration_s) if self.iteration_s else math.nan


@dataclass
class SimResult:
    """Outcome of one policy on one configuration. Times in seconds, traffic in packets/bytes.

    * ``avg_jct_s``: mean over jobs of the per-iteration JCT (§7.2.1); ``avg_job_time_s``: mean over
      jobs of finish minus start.
    * ``utilisation``: switch memory utilisation as §7.3 defines it, averaged over jobs.
    * ``occupancy``: time-average fraction of aggregators allocated (first start to last finish).
    * ``ps_fallback_packets``: packets that reached a PS instead of being aggregated in the switch:
      collision fall-backs + evicted partial results + partial results fetched by reminders (ATP's
      normal result path through its PS is not counted).
    * ``reminders``: reminder packets a PS sent to the switch (Fig. 4); ``worker_reminders``: those
      a worker's dupACK asked for; ``timeout_reminders``: those sent when an entry's timer (RTO,
      1 ms minimum, §6) ran out because neither dupACK fired, each a stall of that long.
    * correctness: ``results_checked`` packet results compared with the sum of the workers' values;
      ``value_errors`` mismatches, ``double_counts`` merges of overlapping bitmaps or contributions
      arriving after completion, ``duplicate_results`` results delivered twice, ``unfinished_tasks``
      packets never completed.
    """

    policy: str
    jobs: list[JobStats]
    avg_jct_s: float
    avg_job_time_s: float
    utilisation: float
    occupancy: float
    aggregators: int
    batch: int
    packets_sent: int
    ps_fallback_packets: int
    collision_packets: int
    evicted_packets: int
    reminded_packets: int
    preemptions: int
    downgrades: int
    collisions: int
    reminders: int
    worker_reminders: int
    timeout_reminders: int
    results_checked: int
    value_errors: int
    double_counts: int
    duplicate_results: int
    unfinished_tasks: int
    packet_bytes: int
    events: int
    wall_s: float
    trace: list[tuple[Any, ...]] | None = None

    @property
    def ps_fallback_bytes(self) -> int:
        return self.ps_fallback_packets * self.packet_bytes

    @property
    def ok(self) -> bool:
        """Every result equalled the workers' sum; nothing counted twice, lost or left unfinished."""
        return not (self.value_errors or self.double_counts or self.duplicate_results
                    or self.unfinished_tasks) and self.results_checked > 0

    def to_dict(self) -> dict[str, Any]:
        d = {k: v for k, v in self.__dict__.items() if k not in ("jobs", "trace")}
        d["ps_fallback_bytes"] = self.ps_fallback_bytes
        d["ok"] = self.ok
        d["jobs"] = [
            {"id": j.id, "workload": j.workload, "workers": j.workers, "start_s": j.start_s,
             "finish_s": j.finish_s, "jct_s": j.jct_s, "iteration_s": list(j.iteration_s),
             "comm_s": list(j.comm_s), "utilisation": j.utilisation}
            for j in self.jobs
        ]
        return d
