"""What the memory-scheduling simulator runs: DNN workloads, jobs and the switch setting (ESA §7.2.1).

The paper's simulation: one switch with 64 servers on 100 Gbps links, 10 us base RTT, 5 MB of switch
memory for INA, 306-byte packets (ATP's). Every DNN has two layers of the same size, each split into
two tensor partitions, sent in the order: first partition of layer 2, layer 1 (both partitions), second
partition of layer 2. DNN A is communication-heavy (4 MB partitions, 0.32 ms of computation per layer,
communication : computation = 2 : 1); DNN B computation-heavy (2 MB, 0.64 ms, 1 : 2). Jobs start at
U(0, 1 ms); each worker's sending side gets a jitter U(0, 300 us).

Sizes: 1 MB = 10**6 bytes (with it the paper's 2 : 1 and 1 : 2 ratios come out exactly at 100 Gbps).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from inaplanner.errors import InaplannerError

MB = 1_000_000
POLICIES = ("switchml", "atp", "esa", "always-preempt", "half-preempt")
#: What each policy is (for help texts and reports).
POLICY_HELP = {
    "switchml": "static even split of the memory among jobs, held for the job's lifetime",
    "atp": "hash(job, seq) into a shared pool, first come first served, collisions fall back to the PS",
    "esa": "hash(job, seq), preempt when the newcomer's priority is higher, else downgrade (ESA)",
    "always-preempt": "straw-man 1 of ESA §7.3: preempt on every collision",
    "half-preempt": "straw-man 2 of ESA §7.3: preempt on a collision with probability 1/2",
}


@dataclass(frozen=True)
class Workload:
    """A DNN as the simulation sees it: tensor partitions in sending order and compute per layer."""

    name: str
    partition_bytes: tuple[int, ...]
    partition_layer: tuple[int, ...]
    layers: int
    compute_per_layer_s: float
    comm_comp_ratio: float

    def __post_init__(self) -> None:
        if not self.partition_bytes or len(self.partition_bytes) != len(self.partition_layer):
            raise InaplannerError(f"workload {self.name}: one layer per tensor partition is needed")
        if any(b <= 0 for b in self.partition_bytes):
            raise InaplannerError(f"workload {self.name}: partition sizes must be > 0 bytes")
        if set(self.partition_layer) != set(range(1, self.layers + 1)):
            raise InaplannerError(f"workload {self.name}: every layer 1..{self.layers} needs a partition")
        if self.compute_per_layer_s < 0 or self.comm_comp_ratio <= 0:
            raise InaplannerError(f"workload {self.name}: compute time >= 0 and ratio > 0 needed")


def two_layer_dnn(name: str, partition_mb: float, compute_ms: float, comm_comp_ratio: float) -> Workload:
    """ESA §7.2.1's model: two equal layers, two partitions each, order L2a, L1a, L1b, L2b."""
    size = int(round(partition_mb * MB))
    return Workload(
        name=name,
        partition_bytes=(size, size, size, size),
        partition_layer=(2, 1, 1, 2),
        layers=2,
        compute_per_layer_s=compute_ms * 1e-3,
        comm_comp_ratio=comm_comp_ratio,
    )


DNN_A = two_layer_dnn("A", 4.0, 0.32, 2.0)
DNN_B = two_layer_dnn("B", 2.0, 0.64, 0.5)


@dataclass(frozen=True)
class JobSpec:
    """One job on the switch: ``workers`` workers (one per server) and one PS.

    ``start_s`` None draws U(0, start_spread); ``worker_delays_s`` (tests, traces) replaces the random
    sending jitter of the first partition of every iteration by fixed per-worker delays; ``priority``
    fixes the 8-bit priority of all the job's packets instead of Eq. (1).
    """

    id: str
    workload: Workload
    workers: int
    start_s: float | None = None
    worker_delays_s: tuple[float, ...] | None = None
    priority: int | None = None

    def __post_init__(self) -> None:
        if self.workers < 1:
            raise InaplannerError(f"job {self.id}: needs at least one worker")
        if self.worker_delays_s is not None and len(self.worker_delays_s) != self.workers:
            raise InaplannerError(f"job {self.id}: worker_delays_s needs one delay per worker")
        if self.priority is not None and not 0 <= self.priority <= 255:
            raise InaplannerError(f"job {self.id}: a fixed priority must fit 8 bits (0..255)")


@dataclass(frozen=True)
class SimConfig:
    """The switch, the network and the simulation knobs (defaults: ESA §7.2.1).

    * Memory: ``aggregators`` slots, or ``memory_bytes`` / payload (one packet's values per slot).
    * Timing: ``batch`` consecutive packets of a worker are one simulation event (allocation stays
      per packet; see :mod:`inaplanner.memsched.simulator`); ``batch=1`` is packet granularity.
    * Window (§5.1): starts at ``window_bytes`` (60 KB at 100 Gbps, ESA's *initial* window) and,
      with ``congestion_control``, follows ATP's congestion control, which ESA reuses (§5.1): AIMD.
      Additive increase of ``window_increase_bytes`` (one 1500-byte MTU) per window of results,
      i.e. per RTT (``window_increase="per-rtt"``; ``"per-result"`` adds it for every result);
      multiplicative decrease, at most once per RTT, on a result that crossed a switch egress queue
      above ``ecn_bytes`` (ECN) and, with ``loss_backoff``, on a timeout of the job (the PS's
      reminder timer; ATP detects loss by timeout and halves). ``max_window_bytes`` caps it
      (None: only the pool), so line rate is reachable:
      60 KB over a 10 us RTT carries only ~48 Gbps. :data:`WINDOWS` names the default (``atp``)
      and the old model (``cap60``: capped at 60 KB, +1500 B per result, ECN only).
      ``window_mode`` ``in-order`` slides on the first missing result (§5.1); ``outstanding``
      counts packets in flight instead (a sensitivity variant, not the paper's).
    * Reminders (§5.1, §6): after ``dupacks`` later results, or ``rto_min_s`` at the PS.
    * Stragglers: U(0, ``jitter_s``) before each partition (``jitter_per="partition"``) or only
      before the first of an iteration; plus ``straggler_delay_s`` with ``straggler_prob``.
    * ``lanes``: gradient values each packet carries as exact numbers (None: all
      ``values_per_packet``; the default 8 keeps large runs fast and still catches any loss or
      double count, since every lane of a lost or doubled contribution is off).
    """

    jobs: tuple[JobSpec, ...]
    memory_bytes: int = 5 * MB
    aggregators: int | None = None
    packet_bytes: int = 306
    values_per_packet: int = 62
    value_bytes: int = 4
    link_gbps: float = 100.0
    rtt_s: float = 10e-6
    iterations: int = 3
    start_spread_s: float = 1e-3
    jitter_s: float = 300e-6
    jitter_per: str = "partition"
    straggler_prob: float = 0.0
    straggler_delay_s: float = 0.0
    window_bytes: int = 60_000
    max_window_bytes: int | None = None
    window_increase_bytes: int = 1500
    window_increase: str = "per-rtt"
    loss_backoff: bool = True
    window_mode: str = "in-order"
    congestion_control: bool = True
    ecn_bytes: int = 100_000
    rto_min_s: float = 1e-3
    dupacks: int = 3
    batch: int = 1
    lanes: int | None = 8
    seed: int = 0
    extra: dict[str, object] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        if not self.jobs:
            raise InaplannerError("memsim: at least one job is needed")
        ids = [j.id for j in self.jobs]
        if len(set(ids)) != len(ids):
            raise InaplannerError("memsim: job ids must be unique")
        if len(self.jobs) >= 1 << 16:
            raise InaplannerError("memsim: at most 65535 jobs (16-bit job numbers)")
        for key in ("packet_bytes", "values_per_packet", "value_bytes", "iterations", "batch",
                    "window_bytes", "dupacks"):
            if getattr(self, key) < 1:
                raise InaplannerError(f"memsim: {key} must be >= 1")
        for key in ("link_gbps", "rtt_s"):
            if not getattr(self, key) > 0:
                raise InaplannerError(f"memsim: {key} must be > 0")
        for key in ("start_spread_s", "jitter_s", "straggler_delay_s", "rto_min_s"):
            if getattr(self, key) < 0:
                raise InaplannerError(f"memsim: {key} must be >= 0")
        if not 0 <= self.straggler_prob <= 1:
            raise InaplannerError("memsim: straggler_prob must be in [0, 1]")
        if self.window_increase not in ("per-rtt", "per-result"):
            raise InaplannerError("memsim: window_increase must be 'per-rtt' or 'per-result'")
        if self.max_window_bytes is not None and self.max_window_bytes < 1:
            raise InaplannerError("memsim: max_window_bytes must be >= 1 (or None: no cap)")
        if self.window_mode not in ("in-order", "outstanding"):
            raise InaplannerError("memsim: window_mode must be 'in-order' or 'outstanding'")
        if self.jitter_per not in ("partition", "iteration"):
            raise InaplannerError("memsim: jitter_per must be 'partition' or 'iteration'")
        if self.packet_bytes < self.payload_bytes:
            raise InaplannerError("memsim: packet_bytes must hold the payload (values x value bytes)")
        if self.aggregators is not None and self.aggregators < 1:
            raise InaplannerError("memsim: the switch needs at least one aggregator")
        if self.aggregators is None and self.memory_bytes < self.payload_bytes:
            raise InaplannerError(
                f"memsim: {self.memory_bytes} bytes of memory hold no aggregator of {self.payload_bytes} bytes"
            )
        if self.lanes is not None and not 1 <= self.lanes <= self.values_per_packet:
            raise InaplannerError(f"memsim: lanes must be in 1..{self.values_per_packet}")

    @property
    def payload_bytes(self) -> int:
        """Gradient bytes per packet (= bytes per aggregator)."""
        return self.values_per_packet * self.value_bytes

    @property
    def n_aggregators(self) -> int:
        return self.aggregators if self.aggregators is not None else self.memory_bytes // self.payload_bytes

    @property
    def packet_time_s(self) -> float:
        return self.packet_bytes * 8 / (self.link_gbps * 1e9)

    def packets_of(self, partition_bytes: int) -> int:
        return math.ceil(partition_bytes / self.payload_bytes)

    def with_(self, **changes: object) -> SimConfig:
        return replace(self, **changes)  # type: ignore[arg-type]


# ---- window models -----------------------------------------------------------------------------

#: named window models (``memsim --window``): the :class:`SimConfig` fields each one sets
WINDOWS: dict[str, dict[str, object]] = {
    "atp": {"max_window_bytes": None, "window_increase": "per-rtt", "loss_backoff": True},
    "cap60": {"max_window_bytes": 60_000, "window_increase": "per-result", "loss_backoff": False},
}
WINDOW_HELP = {
    "atp": "ESA §5.1: 60 KB initial window, ATP's AIMD (+1 MTU per RTT; halved on ECN or a "
           "timeout), no cap (default)",
    "cap60": "the window capped at 60 KB (+1500 B per result, halved on ECN only)",
}


def window_knobs(name: str) -> dict[str, object]:
    """The :class:`SimConfig` fields of window model ``name`` (one of :data:`WINDOWS`)."""
    if name not in WINDOWS:
        raise InaplannerError(f"unknown window model {name!r} (one of {', '.join(WINDOWS)})")
    return dict(WINDOWS[name])


# ---- presets -----------------------------------------------------------------------------------

PRESETS = {
    "dnn-a": "8 jobs x 8 workers, all DNN A (communication-heavy)",
    "dnn-b": "8 jobs x 8 workers, all DNN B (computation-heavy)",
    "dnn-ab": "8 jobs x 8 workers, DNN A and DNN B alternating (A:B = 1:1)",
}


def paper_jobs(kind: str, jobs: int, workers_per_job: int) -> tuple[JobSpec, ...]:
    """``jobs`` jobs of ``workers_per_job`` workers; kind 'a', 'b' or 'ab' (A, B, A, B, ...)."""
    if jobs < 1 or workers_per_job < 1:
        raise InaplannerError("memsim: --jobs and --workers-per-job must be >= 1")
    out = []
    for i in range(jobs):
        wl = DNN_A if kind == "a" or (kind == "ab" and i % 2 == 0) else DNN_B
        out.append(JobSpec(id=f"job{i}", workload=wl, workers=workers_per_job))
    return tuple(out)


def preset(name: str, jobs: int = 8, workers_per_job: int = 8, **knobs: object) -> SimConfig:
    """One of :data:`PRESETS` (the paper's §7.2 setting), optionally with other job counts or knobs."""
    kinds = {"dnn-a": "a", "dnn-b": "b", "dnn-ab": "ab"}
    if name not in kinds:
        raise InaplannerError(f"unknown memsim preset {name!r} (one of {', '.join(PRESETS)})")
    return SimConfig(jobs=paper_jobs(kinds[name], jobs, workers_per_job), **knobs)  # type: ignore[arg-type]
