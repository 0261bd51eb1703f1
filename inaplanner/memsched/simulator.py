"""Discrete-event simulator of one switch's aggregator pool shared by several jobs (ESA §7.2).

Model (one switch; every server on its own full-duplex link of ``link_gbps``; one hop = RTT / 4, so
worker -> switch -> worker is the INA sub-RTT and worker -> switch -> PS -> switch -> worker the RTT):

* **Sending.** A worker splits each tensor partition into packets of ``values_per_packet`` values and
  sends them in sequence order on its uplink. It may send sequence q while q lies in its window, and
  the window slides when the result of its first sequence arrives (ESA §5.1; ATP's window manager).
  SwitchML's window is its memory slice (pool-based streaming: slot ``base + q mod size``). ATP and
  ESA start from 60 KB, the *initial* window of §5.1, and follow ATP's congestion control (AIMD):
  +1500 bytes per window of results (per RTT), halved at most once per RTT on a result that
  crossed a switch egress queue longer than ``ecn_bytes`` (ECN) or on a timeout of the job (the
  PS's reminder timer: ATP treats a timeout as a loss); no cap but the pool unless
  ``max_window_bytes`` is set. (ESA's dupACK reminders recover split aggregations, not losses, and
  do not touch the window.)
  The ``cap60`` window model (:data:`~inaplanner.memsched.workload.WINDOWS`) keeps the earlier
  model: capped at 60 KB, +1500 bytes per result, ECN only.
* **Stragglers.** Before each tensor partition a worker waits a jitter U(0, ``jitter_s``) (§7.2.1,
  "computation speed variance"); jobs start at U(0, ``start_spread_s``); optional extra straggler
  delays per iteration.
* **Allocation** (per packet). ``switchml``: the job's own slot, never shared. ``atp``/``esa`` and the
  straw men: aggregator hash(job, seq) (:func:`~inaplanner.memsched.hashing.agg_index`). An empty
  aggregator is allocated; one holding the same (job, seq) aggregates. On a collision ATP forwards the
  packet to its PS (first come, first served). ESA (Fig. 5) preempts when the packet's 8-bit priority is
  higher (packet swapping: the evicted partial result travels to *its* PS in the packet) and otherwise
  forwards the packet to the PS and halves the aggregator's priority (§5.4); each aggregation renews
  the priority. The straw men of §7.3 preempt always / with probability 1/2.
* **Completion.** When every worker's packet is in, SwitchML and ESA multicast the result at once and
  free the aggregator; ATP sends it to the PS, which sends it back through the switch; the aggregator
  is freed when that result (the ACK) passes (§2.1).
* **PS assistance** (§5.1). A PS keeps per sequence the bitmap and sum of the partial results it got
  (fall-backs, evicted partials) and multicasts the result once every worker is in. A partial result
  stuck in the switch is fetched by a *reminder* (Fig. 4): a worker that got ``dupacks`` results beyond
  its missing window head reminds the PS, which reminds the switch; the PS also reminds when it got
  ``dupacks`` fragments with larger sequence numbers, and on a timeout (``rto_min_s``, §6). ATP's own
  recovery of such split aggregations is modelled with the same reminders, so the policies differ
  only in allocation.
* **Computation** overlaps communication (§7.2.1): layer l computes once its results are all in and
  layer l - 1 has computed; when the last layer has computed, the next iteration starts sending.

**Granularity.** Allocation, aggregation, fall-back, preemption, reminders and PS merging are done
per packet, each packet hashed on its own. With ``batch`` > 1 only *time* is coarse: ``batch``
consecutive packets of a worker are one event, take ``batch`` packet times on every link and are
processed at the arrival time of the first (a batch two of whose packets hash to one aggregator is
cut there, each part at its own time); the window admits a batch by its middle packet, paced by the
result one window earlier; the PS's and the workers' dupACKs count packets. While all packets of a
batch hold their aggregators together with one bitmap ("intact"), their state is kept once per
batch and spelt out per aggregator only when another packet needs one (a speed-up, not a model
change). ``batch=1`` is a plain packet-level simulation; ``tests/memsched`` checks that batch 8 gives
the packet-level mean JCT within 2 %.

**Real values.** Every packet carries ``lanes`` fixed-point gradient values packed into one Python
integer with guard bits (sums are exact). Each result is compared with the sum of what the workers
sent, and every merge at a PS checks that the bitmaps are disjoint.

Not modelled: packet loss and its recovery (§5.3), switch recirculation limits, two-level aggregation.
"""

from __future__ import annotations

import heapq
import itertools
import random
import struct
import time
import zlib
from array import array
from bisect import bisect_right
from functools import lru_cache
from math import floor
from typing import Any

from inaplanner.errors import InaplannerError
from inaplanner.memsched.hashing import seed_for
from inaplanner.memsched.priority import choose_frac_bits, priority, quantise
from inaplanner.memsched.results import JobStats, SimResult
from inaplanner.memsched.workload import POLICIES, SimConfig

# event kinds
_ARR, _PS, _PARAM, _RES, _REMSW, _RTO, _COMP, _START, _WREM, _PSDUP = range(10)
# what reaches a PS
_PARTIAL, _FULL, _REMIND = range(3)
_REMINDER_BYTES = 64
_VALUE_BITS = 24


def simulate(config: SimConfig, policy: str, *, trace: bool = False) -> SimResult:
    """Run one policy (one of :data:`~inaplanner.memsched.workload.POLICIES`) on ``config``.

    With ``trace`` the result holds the list of per-packet events
    ``(time_s, what, job, chunk_seq, packet_offset, detail)``; keep it for small cases.
    """
    if policy not in POLICIES:
        raise InaplannerError(f"unknown memory policy {policy!r} (one of {', '.join(POLICIES)})")
    return _Sim(config, policy, trace).run()


def simulate_all(config: SimConfig, policies: tuple[str, ...] | list[str]) -> dict[str, SimResult]:
    """Several policies on the same configuration and seed (same jobs, start times and jitters)."""
    return {p: simulate(config, p) for p in policies}


def priority_table(config: SimConfig) -> tuple[list[list[list[int]]], int]:
    """8-bit priority of every (job, iteration, partition) and the fractional bits used.

    Eq. (1) with L_j the workload's layers, l the partition's layer and Comm/Comp the workload's ratio;
    T_j is estimated as in ESA §7.2.1 by the job's remaining communication (at line rate) plus its
    remaining computation, from the start of that partition on. One ``frac_bits`` for all jobs (they
    meet at the same aggregators). A job's fixed ``priority`` replaces the formula.
    """
    tp = config.packet_time_s
    raw: list[list[list[float]]] = []
    for spec in config.jobs:
        wl = spec.workload
        pk = [config.packets_of(b) for b in wl.partition_bytes]
        per_iter = sum(pk)
        comp = wl.layers * wl.compute_per_layer_s
        rows = []
        for k in range(config.iterations):
            row = []
            for p in range(len(pk)):
                left_pk = sum(pk[p:]) + (config.iterations - k - 1) * per_iter
                remaining = left_pk * tp + (config.iterations - k) * comp
                row.append(priority(wl.partition_layer[p], wl.layers, wl.comm_comp_ratio, remaining))
            rows.append(row)
        raw.append(rows)
    frac = choose_frac_bits(v for rows in raw for row in rows for v in row)
    table = [
        [[spec.priority if spec.priority is not None else quantise(v, frac) for v in row] for row in rows]
        for spec, rows in zip(config.jobs, raw, strict=True)
    ]
    return table, frac


@lru_cache(maxsize=512)
def _hashed(job_num: int, first_seq: int, count: int, size: int, seed: int) -> array:
    """agg_index(job_num, q, size, seed=seed) for q in first_seq .. first_seq + count - 1."""
    pack = struct.Struct(">IHI").pack
    crc = zlib.crc32
    s = seed & 0xFFFFFFFF
    return array("l", [crc(pack(s, job_num, (first_seq + q) & 0xFFFFFFFF)) % size for q in range(count)])


class _Sim:
    """One run. Plain lists, arrays and ints for speed; see the module docstring for the model."""

    def __init__(self, cfg: SimConfig, policy: str, trace: bool) -> None:
        self.cfg = cfg
        self.policy = policy
        self.trace = trace
        self.n_agg = cfg.n_aggregators
        nj = len(cfg.jobs)
        if policy == "switchml":
            self.share = self.n_agg // nj
            if self.share < cfg.batch:
                raise InaplannerError(
                    f"memsim: switchml gives each of {nj} jobs {self.share} aggregators, fewer than "
                    f"one batch of {cfg.batch} packets (lower --batch or add memory)"
                )
        else:
            self.share = 0
        self.hseed = seed_for("memsim", cfg.seed)
        self.prio_table, self.frac_bits = priority_table(cfg)

        # per job: chunks of `batch` packets in sending order
        b = cfg.batch
        self.n_chunks: list[int] = []
        self.c_pkts: list[list[int]] = []
        self.c_layer: list[list[int]] = []
        self.c_part: list[list[int]] = []
        self.c_last: list[list[bool]] = []
        self.cum: list[list[int]] = []
        self.layer_chunks: list[dict[int, int]] = []
        for spec in cfg.jobs:
            pk: list[int] = []
            part: list[int] = []
            last: list[bool] = []
            for p, nbytes in enumerate(spec.workload.partition_bytes):
                npk = cfg.packets_of(nbytes)
                sizes = [b] * (npk // b) + ([npk % b] if npk % b else [])
                pk += sizes
                part += [p] * len(sizes)
                last += [False] * (len(sizes) - 1) + [True]
            cum = [0]
            for x in pk:
                cum.append(cum[-1] + x)
            layers = [spec.workload.partition_layer[p] for p in part]
            lay: dict[int, int] = {}
            for layer in layers:
                lay[layer] = lay.get(layer, 0) + 1
            self.n_chunks.append(len(pk))
            self.c_pkts.append(pk)
            self.c_layer.append(layers)
            self.c_part.append(part)
            self.c_last.append(last)
            self.cum.append(cum)
            self.layer_chunks.append(lay)
        self.fanin = [s.workers for s in cfg.jobs]
        self.full = [(1 << s.workers) - 1 for s in cfg.jobs]

        # gradient values: `lanes` values of 24 bits per packet, guard bits above each
        lanes = cfg.lanes or cfg.values_per_packet
        lane_bits = _VALUE_BITS + max(8, max(self.fanin).bit_length() + 1)
        self.value_nbits = lanes * lane_bits  # bits per packet in a packed value
        self.value_mask = sum(((1 << _VALUE_BITS) - 1) << (i * lane_bits) for i in range(lanes))
        self.value_masks = [0] * (cfg.batch + 1)  # mask of a batch of k packets
        for k in range(1, cfg.batch + 1):
            self.value_masks[k] = self.value_masks[k - 1] | (self.value_mask << ((k - 1) * self.value_nbits))

        # workers
        self.w_job: list[int] = []
        self.w_bit: list[int] = []
        self.w_local: list[int] = []
        self.j_workers: list[list[int]] = []
        for j, spec in enumerate(cfg.jobs):
            ws = []
            for k in range(spec.workers):
                ws.append(len(self.w_job))
                self.w_job.append(j)
                self.w_bit.append(1 << k)
                self.w_local.append(k)
            self.j_workers.append(ws)
        seed = cfg.seed
        ids = [cfg.jobs[j].id for j in self.w_job]
        self.w_jit = [random.Random(f"{seed}/jitter/{ids[w]}/{self.w_local[w]}")
                      for w in range(len(ids))]
        self.w_val = [random.Random(f"{seed}/values/{ids[w]}/{self.w_local[w]}")
                      for w in range(len(ids))]
        self.coin = random.Random(f"{seed}/coin")
        rs = random.Random(f"{seed}/start")
        self.j_start = []
        for spec in cfg.jobs:
            draw = rs.uniform(0.0, cfg.start_spread_s)
            self.j_start.append(spec.start_s if spec.start_s is not None else draw)

    def jitter(self, w: int, first: bool) -> float:
        """Sending delay before a partition: U(0, jitter) before every partition (or only the first
        of an iteration), a traced job's fixed per-worker delay, plus an optional straggler delay."""
        cfg = self.cfg
        spec = cfg.jobs[self.w_job[w]]
        if spec.worker_delays_s is not None:
            return spec.worker_delays_s[self.w_local[w]] if first else 0.0
        rng = self.w_jit[w]
        d = 0.0
        if cfg.jitter_s > 0 and (first or cfg.jitter_per == "partition"):
            d = rng.uniform(0.0, cfg.jitter_s)
        if first and cfg.straggler_prob > 0 and rng.random() < cfg.straggler_prob:
            d += cfg.straggler_delay_s
        return d

    # ------------------------------------------------------------------------------------------

    def run(self) -> SimResult:
        """The event loop: one handler per event kind (:data:`_HANDLERS`), each a closure over the
        run's state (:class:`_Run`) so that the hot paths read plain local cells."""
        wall0 = time.perf_counter()
        r = _Run(self)
        _bind_aggregators(r)
        _bind_queues(r)
        _bind_window(r)
        handlers = [_HANDLERS[kind](r) for kind in range(len(_HANDLERS))]
        heap, push, pop, ctr = r.heap, r.push, r.pop, r.ctr
        for j in range(r.nj):
            push(heap, (self.j_start[j], next(ctr), _START, j, 0, 0))
        left = r.left
        events = 0
        t = 0.0
        while heap and left[0]:
            ev = pop(heap)
            events += 1
            t = ev[0]
            handlers[ev[2]](ev, t)
        return _result(r, t, events, wall0)


class _Run:
    """The state of one run: constants, aggregators, batches, packets, jobs, queues, counters.

    Plain lists, arrays and ints for speed. A batch is *intact* while all its packets hold
    aggregators with the same bitmap: then its aggregation state is kept once (``t_bits``,
    ``t_cnt``, ``t_val`` packed per packet, ``t_aprio``, ``t_since``) and spelt out per aggregator
    ("materialised") only when another packet needs one. Batch and packet ids are global and never
    reused. The functions that act on it (``free``, ``to_ps``, ``pump``, ...) are attached by
    :func:`_bind_aggregators`, :func:`_bind_queues` and :func:`_bind_window`.
    """

    def __init__(self, sim: _Sim) -> None:
        cfg = sim.cfg
        policy = sim.policy
        self.sim = sim
        self.cfg = cfg
        self.policy = policy
        self.nj = nj = len(cfg.jobs)
        self.N = N = sim.n_agg
        self.tx = cfg.packet_time_s
        rate_B = cfg.link_gbps * 1e9 / 8
        self.rem_tx = _REMINDER_BYTES / rate_B
        self.hop = cfg.rtt_s / 4
        self.ecn_s = cfg.ecn_bytes / rate_B  # queueing delay above which a packet is marked
        self.rto = cfg.rto_min_s
        self.stall_limit = 50 * cfg.rto_min_s + 1.0  # no result for this long: a bug
        self.dupacks = cfg.dupacks
        self.heap: list[tuple[Any, ...]] = []
        self.push = heapq.heappush
        self.pop = heapq.heappop
        self.ctr = itertools.count()
        self.tr: list[tuple[Any, ...]] | None = [] if sim.trace else None
        self.job_ids = [s.id for s in cfg.jobs]
        self.is_switchml = policy == "switchml"
        self.is_atp = policy == "atp"
        self.is_esa = policy == "esa"
        self.is_always = policy == "always-preempt"
        self.coin_salt = sim.coin.getrandbits(32)
        self.share = sim.share

        # aggregators
        self.a_pid = [-1] * N
        self.a_bits = [0] * N
        self.a_cnt = [0] * N
        self.a_val = [0] * N
        self.a_prio = [0] * N
        self.a_held = bytearray(N)
        self.a_since = [0.0] * N
        self.busy = [0.0]

        # batches (one per job, iteration and `batch` packets)
        self.t_job = array("l")
        self.t_seq = array("l")
        self.t_pkts = array("l")
        self.t_pid0 = array("l")
        self.t_left = array("l")
        self.t_ack: list[float] = []
        self.t_prio = array("l")
        self.t_mark = bytearray()
        self.t_done = bytearray()
        self.t_psopen = array("l")  # packets with an open PS entry
        self.t_inswitch = array("l")  # packets holding an aggregator
        self.t_intact = bytearray()
        self.t_uniq = bytearray()  # 1 when the batch's packets hash to distinct aggregators
        # otherwise the offsets where a packet hits an aggregator already hit since the last cut:
        # the batch is processed in segments, each at its packets' real arrival time
        self.cuts: dict[int, list[int]] = {}
        self.t_bits = array("l")
        self.t_cnt = array("l")
        self.t_val: list[int] = []
        self.t_aprio = array("l")
        self.t_since: list[float] = []
        self.t_exp: list[int] = []  # sum of the workers' values, packed per packet
        self.t_got: list[int] = []  # delivered results, packed per packet
        # packets
        self.p_tid = array("l")
        self.p_agg = array("l")
        self.p_done = bytearray()
        self.p_psdone = bytearray()
        self.ps_bits: dict[int, int] = {}
        self.ps_val: dict[int, int] = {}
        self.dups: list[dict[int, int]] = [{} for _ in range(nj)]  # PS: open entry -> dupACKs

        # jobs
        self.j_iter = [0] * nj
        self.j_tid0 = [0] * nj
        self.j_base = [0] * nj
        self.j_recv = [bytearray() for _ in range(nj)]
        self.j_nrecv = [0] * nj
        self.j_rpk = [0] * nj  # packets whose results went out to the workers (this iteration)
        self.in_order = cfg.window_mode == "in-order"
        self.j_layer_left: list[dict[int, int]] = [{} for _ in range(nj)]
        self.j_next_layer = [1] * nj
        self.j_computing = [False] * nj
        self.j_comm_start = [0.0] * nj
        self.j_last_res = [0.0] * nj
        self.j_reminded = [-1] * nj
        self.j_done = [False] * nj
        self.left = [nj]  # jobs still running
        self.cc = cfg.congestion_control and not self.is_switchml
        self.init_w = max(1.0, cfg.window_bytes / cfg.packet_bytes)
        max_w = float(cfg.max_window_bytes / cfg.packet_bytes) if cfg.max_window_bytes else float(N)
        self.max_w = max_w if self.cc else self.init_w
        self.inc_w = cfg.window_increase_bytes / cfg.packet_bytes
        self.per_rtt = cfg.window_increase == "per-rtt"  # else per result
        self.loss_md = self.cc and cfg.loss_backoff
        self.rtt = cfg.rtt_s
        self.j_cwnd = [self.init_w] * nj
        self.j_last_md = [-1.0] * nj
        self.stats = [JobStats(id=s.id, workload=s.workload.name, workers=s.workers,
                               start_s=sim.j_start[j]) for j, s in enumerate(cfg.jobs)]
        self.util: list[list[float]] = [[] for _ in range(nj)]

        # queues: switch -> PS, PS -> switch, switch -> the job's workers (one multicast stream)
        self.ps_free = [0.0] * nj
        self.psup_free = [0.0] * nj
        self.down_free = [0.0] * nj

        self.c = {"sent": 0, "coll_pk": 0, "evict_pk": 0, "remind_pk": 0, "preempt": 0, "down": 0,
                  "coll": 0, "remind": 0, "wremind": 0, "rto": 0, "checked": 0, "verr": 0,
                  "dbl": 0, "dup": 0}

        self.w_job, self.w_bit, self.w_val = sim.w_job, sim.w_bit, sim.w_val
        nw = len(sim.w_job)
        self.w_next = [0] * nw
        self.w_up = [0.0] * nw
        self.w_resume = [0.0] * nw
        self.n_chunks, self.c_pkts, self.c_layer, self.c_last, self.cum = (
            sim.n_chunks, sim.c_pkts, sim.c_layer, sim.c_last, sim.cum)
        self.fanin, self.full = sim.fanin, sim.full
        self.pbits, self.masks = sim.value_nbits, sim.value_masks
        self.pfull = (1 << sim.value_nbits) - 1  # one packet's slot in a packed value
        self.jitter = sim.jitter
        self.ones = b"\x01" * cfg.batch

    def get(self, names: str) -> tuple[Any, ...]:
        """The attributes named in ``names`` (space separated), to bind as closure locals."""
        return tuple(getattr(self, n) for n in names.split())


# ---- functions on a run's state --------------------------------------------------------------

def _bind_aggregators(r: _Run) -> None:
    """``log``, ``free`` and ``materialise``: the aggregator bookkeeping."""
    (tr, job_ids, t_job, t_seq, t_pid0, p_tid, busy, a_since, t_inswitch, a_pid, a_held, t_bits,
     t_cnt, t_val, t_aprio, t_since, t_pkts, p_agg, a_bits, a_cnt, a_val, a_prio, t_intact,
     pbits, pfull) = r.get(
        "tr job_ids t_job t_seq t_pid0 p_tid busy a_since t_inswitch a_pid a_held t_bits t_cnt "
        "t_val t_aprio t_since t_pkts p_agg a_bits a_cnt a_val a_prio t_intact pbits pfull")

    def log(t: float, what: str, pid: int, detail: Any = None) -> None:
        tid = p_tid[pid]
        assert tr is not None
        tr.append((t, what, job_ids[t_job[tid]], t_seq[tid], pid - t_pid0[tid], detail))

    def free(t: float, i: int) -> None:
        busy[0] += t - a_since[i]
        t_inswitch[p_tid[a_pid[i]]] -= 1
        a_pid[i] = -1
        a_held[i] = 0

    def materialise(tid: int) -> None:
        """Spell an intact batch's shared state out into its aggregators."""
        pid = t_pid0[tid]
        bits, cnt, val, pr, since = t_bits[tid], t_cnt[tid], t_val[tid], t_aprio[tid], t_since[tid]
        for k in range(t_pkts[tid]):
            i = p_agg[pid + k]
            a_bits[i] = bits
            a_cnt[i] = cnt
            a_val[i] = (val >> (k * pbits)) & pfull
            a_prio[i] = pr
            a_since[i] = since
        t_intact[tid] = 0
        t_val[tid] = 0

    r.log, r.free, r.materialise = log, free, materialise


def _bind_queues(r: _Run) -> None:
    """The links: switch -> PS (``to_ps``), PS -> switch (``ps_send``), switch -> workers
    (``deliver``), and the reminders and PS entries that ride on them."""
    (heap, push, ctr, ps_free, psup_free, down_free, rem_tx, hop, ecn_s, tx, t_mark, p_tid, full,
     c, p_done, t_pid0, t_got, pbits, t_ack, t_left, j_rpk, t_exp, t_done, ones, tr, log, j_base,
     n_chunks, j_tid0, t_pkts, j_reminded, dupacks, ps_bits, ps_val, t_psopen, rto, j_cwnd,
     j_last_md, rtt) = r.get(
        "heap push ctr ps_free psup_free down_free rem_tx hop ecn_s tx t_mark p_tid full c p_done "
        "t_pid0 t_got pbits t_ack t_left j_rpk t_exp t_done ones tr log j_base n_chunks j_tid0 "
        "t_pkts j_reminded dupacks ps_bits ps_val t_psopen rto j_cwnd j_last_md rtt")

    def backoff(j: int, t: float) -> None:
        """ATP's multiplicative decrease on a loss signal of job j: halve its window, at most
        once per RTT (the ECN decrease is in the result handler)."""
        if t - j_last_md[j] > rtt:
            cw = j_cwnd[j] / 2
            j_cwnd[j] = cw if cw > 1.0 else 1.0
            j_last_md[j] = t

    def to_ps(t: float, j: int, items: Any, kind: int) -> None:
        """Queue packets (items: pid, bits, value, offset, count) or a worker's reminder (items:
        a batch id) on the switch port towards job j's PS."""
        f = ps_free[j]
        st = f if f > t else t
        if kind == _REMIND:
            ps_free[j] = st + rem_tx
            push(heap, (st + rem_tx + hop, next(ctr), _PS, j, items, kind))
            return
        if f - t > ecn_s:
            for it in items:
                t_mark[p_tid[it[0]]] = 1
        n = 0
        for it in items:
            n += it[4]
        ps_free[j] = st + n * tx
        push(heap, (st + tx + hop, next(ctr), _PS, j, items, kind))

    def ps_send(t: float, j: int, items: Any, kind: int) -> None:
        """Queue results (kind _PARAM, a list of items) or a reminder for the switch (_REMSW,
        items = (batch id, flush all undelivered packets?)) on job j's PS uplink."""
        f = psup_free[j]
        st = f if f > t else t
        if kind == _REMSW:
            psup_free[j] = st + rem_tx
            push(heap, (st + rem_tx + hop, next(ctr), _REMSW, j, items, 0))
        else:
            n = 0
            for it in items:
                n += it[4]
            psup_free[j] = st + n * tx
            push(heap, (st + tx + hop, next(ctr), _PARAM, j, items, 0))

    def deliver(t: float, j: int, items: Any) -> None:
        """Multicast results to the job's workers. Item: first pid, bitmap, value (packed per
        packet), offset in packets from ``t``, number of packets (all of one batch)."""
        df = down_free[j]
        fj = full[j]
        for pid, bits, val, off, cnt in items:
            c["checked"] += cnt
            if bits != fj:
                c["verr"] += 1
            if p_done[pid:pid + cnt].count(1):
                c["dup"] += 1
                continue
            p_done[pid:pid + cnt] = ones[:cnt]
            tid = p_tid[pid]
            k0 = pid - t_pid0[tid]
            t_got[tid] += val << (k0 * pbits)
            st = t + off * tx
            if df > st:
                if df - st > ecn_s:
                    t_mark[tid] = 1
                st = df
            df = st + cnt * tx
            if tr is not None:
                log(t, "multicast", pid, val)
            ack = st + tx + hop - k0 * tx
            if ack > t_ack[tid]:
                t_ack[tid] = ack
            left = t_left[tid] - cnt
            t_left[tid] = left
            j_rpk[j] += cnt
            if left == 0:
                if t_got[tid] != t_exp[tid]:
                    c["verr"] += 1
                t_got[tid] = t_exp[tid] = 0
                t_done[tid] = 1
                a = t_ack[tid]
                push(heap, (a if a > t else t, next(ctr), _RES, tid, 0, 0))
        down_free[j] = df
        check_dupack(j, df + hop)

    def remind_switch(t: float, j: int, pid: int) -> None:
        """The PS sends a reminder packet for ``pid``: it fetches the partial result left in
        the switch (Fig. 4)."""
        c["remind"] += 1
        ps_send(t, j, pid, _REMSW)

    def check_dupack(j: int, t: float) -> None:
        """ESA §5.1 worker dupACK: when ``dupacks`` results beyond the window's first missing
        packet are in, the workers remind the PS of that packet (once per packet)."""
        base = j_base[j]
        if base >= n_chunks[j]:
            return
        tid = j_tid0[j] + base
        p0 = t_pid0[tid]
        head = p_done.find(0, p0, p0 + t_pkts[tid])
        if head < 0 or j_reminded[j] == head:
            return
        if j_rpk[j] - (head - t_pid0[j_tid0[j]]) >= dupacks:
            j_reminded[j] = head
            push(heap, (t + hop, next(ctr), _WREM, head, 0, 0))

    def open_entry(t: float, pid: int, tid: int) -> None:
        """The PS opens an entry for packet ``pid`` and starts its reminder timer (§6)."""
        ps_bits[pid] = 0
        ps_val[pid] = 0
        t_psopen[tid] += 1
        push(heap, (t + rto, next(ctr), _RTO, pid, 0, 0))

    r.to_ps, r.ps_send, r.deliver = to_ps, ps_send, deliver
    r.remind_switch, r.check_dupack, r.open_entry = remind_switch, check_dupack, open_entry
    r.backoff = backoff


def _bind_window(r: _Run) -> None:
    """The workers' side: the window (``window_room``, ``pump``), iterations and computation,
    and the completion of an intact batch (``complete_intact``)."""
    (sim, cfg, heap, push, ctr, n_chunks, cum, is_switchml, share, in_order, j_tid0, t_pid0,
     p_done, t_pkts, j_cwnd, j_rpk, w_job, w_next, j_base, w_up, w_resume, c_pkts, c_last, tx,
     hop, t_ack, jitter, c, t_job, p_tid, N, p_agg, p_psdone, t_uniq, cuts, t_seq, t_left,
     t_prio, t_mark, t_done, t_intact, t_psopen, t_inswitch, t_bits, t_cnt, t_aprio, t_val,
     t_since, t_exp, t_got, j_recv, j_nrecv, j_layer_left, j_next_layer, j_computing,
     j_comm_start, j_reminded, is_atp, a_held, a_since, to_ps, busy, a_pid, deliver, j_iter) = r.get(
        "sim cfg heap push ctr n_chunks cum is_switchml share in_order j_tid0 t_pid0 p_done "
        "t_pkts j_cwnd j_rpk w_job w_next j_base w_up w_resume c_pkts c_last tx hop t_ack jitter "
        "c t_job p_tid N p_agg p_psdone t_uniq cuts t_seq t_left t_prio t_mark t_done t_intact "
        "t_psopen t_inswitch t_bits t_cnt t_aprio t_val t_since t_exp t_got j_recv j_nrecv "
        "j_layer_left j_next_layer j_computing j_comm_start j_reminded is_atp a_held a_since "
        "to_ps busy a_pid deliver j_iter")

    def window_room(j: int) -> float:
        """Packets of the iteration job j's workers may have sent (see :func:`pump`)."""
        base = j_base[j]
        if base >= n_chunks[j]:
            return float("inf")
        cj = cum[j]
        if is_switchml:
            return share + cj[base]
        if in_order:  # the window starts at the first packet whose result is missing
            tb = j_tid0[j] + base
            p0 = t_pid0[tb]
            h = p_done.find(0, p0, p0 + t_pkts[tb])
            return j_cwnd[j] + cj[base] + ((h - p0) if h >= 0 else t_pkts[tb])
        return j_cwnd[j] + j_rpk[j]

    def pump(w: int, t: float) -> None:
        """Send what the worker's window allows, serialised on its uplink.

        SwitchML sends a batch once its slots are all free (the results of the batch ``size``
        packets earlier are in). ATP/ESA send a batch once its middle packet is inside the
        window; in-order, it also waits until the middle packet would have been released by
        the result of the packet one window before it (results of a batch taken to arrive one
        packet time apart), so that batches follow the window as packets would, on average."""
        j = w_job[w]
        s = w_next[w]
        n = n_chunks[j]
        if s >= n:
            return
        cj = cum[j]
        base = j_base[j]
        win = 0.0
        if is_switchml:
            room = share + cj[base]
            if s > base and cj[s + 1] > room:
                return
        else:
            win = j_cwnd[j]
            if in_order:  # the window starts at the first packet whose result is missing
                tb = j_tid0[j] + base
                p0 = t_pid0[tb]
                h = p_done.find(0, p0, p0 + t_pkts[tb])
                room = win + cj[base] + ((h - p0) if h >= 0 else t_pkts[tb])
            else:
                room = win + j_rpk[j]
            if s > base and cj[s] + (c_pkts[j][s] >> 1) >= room:
                return
        up = w_up[w]
        resume = w_resume[w]
        pk = c_pkts[j]
        last = c_last[j]
        tid0 = j_tid0[j]
        s0 = s
        while s < n and (s == base or (cj[s + 1] <= room if is_switchml
                                       else cj[s] + (pk[s] >> 1) < room)):
            st = t
            if up > st:
                st = up
            if resume > st:
                st = resume
            if in_order and not is_switchml:
                half = pk[s] >> 1
                q = floor(cj[s] + half - win)
                if q >= 0:
                    c2 = bisect_right(cj, q) - 1
                    rel = t_ack[tid0 + c2] + (q - cj[c2] - half) * tx
                    if rel > st:
                        st = rel
            up = st + pk[s] * tx
            push(heap, (st + tx + hop, next(ctr), _ARR, tid0 + s, w, 0))
            if last[s] and s + 1 < n:
                resume = up + jitter(w, False)
            s += 1
        c["sent"] += cj[s] - cj[s0]
        w_next[w] = s
        w_up[w] = up
        w_resume[w] = resume

    def start_iteration(j: int, t: float) -> None:
        k = j_iter[j]
        n = n_chunks[j]
        pk = c_pkts[j]
        cj = cum[j]
        npk = cj[-1]
        tid0 = len(t_job)
        pid0 = len(p_tid)
        j_tid0[j] = tid0
        prios = sim.prio_table[j][k]
        g0 = k * npk
        for s in range(n):
            p_tid.extend(array("l", [tid0 + s]) * pk[s])
        if is_switchml:
            lo = j * share
            p_agg.extend(array("l", [lo + (g0 + q) % share for q in range(npk)]))
        else:
            p_agg.extend(_hashed(j, g0, npk, N, sim.hseed))
        p_done.extend(bytes(npk))
        p_psdone.extend(bytes(npk))
        for s in range(n):
            aggs = p_agg[pid0 + cj[s]:pid0 + cj[s + 1]]
            if len(set(aggs)) == pk[s]:
                t_uniq.append(1)
                continue
            t_uniq.append(0)
            seen: set[int] = set()
            cut = []
            for k, a in enumerate(aggs):
                if a in seen:
                    cut.append(k)
                    seen = set()
                seen.add(a)
            cuts[tid0 + s] = cut
        zeros = array("l", bytes(8 * n)) if array("l").itemsize == 8 else array("l", [0] * n)
        t_job.extend(array("l", [j]) * n)
        t_seq.extend(array("l", range(n)))
        t_pkts.extend(array("l", pk))
        t_pid0.extend(array("l", [pid0 + cj[s] for s in range(n)]))
        t_left.extend(array("l", pk))
        t_ack.extend([0.0] * n)
        t_prio.extend(array("l", [prios[p] for p in sim.c_part[j]]))
        t_mark.extend(bytes(n))
        t_done.extend(bytes(n))
        t_intact.extend(bytes(n))
        t_psopen.extend(zeros)
        t_inswitch.extend(zeros)
        t_bits.extend(zeros)
        t_cnt.extend(zeros)
        t_aprio.extend(zeros)
        t_val.extend([0] * n)
        t_since.extend([0.0] * n)
        t_exp.extend([0] * n)
        t_got.extend([0] * n)
        j_base[j] = 0
        j_recv[j] = bytearray(n)
        j_nrecv[j] = 0
        j_rpk[j] = 0
        j_layer_left[j] = dict(sim.layer_chunks[j])
        j_next_layer[j] = 1
        j_computing[j] = False
        j_comm_start[j] = t
        j_reminded[j] = -1
        for w in sim.j_workers[j]:
            w_next[w] = 0
            w_resume[w] = t + jitter(w, True)
            pump(w, t)

    def try_compute(j: int, t: float) -> None:
        if not j_computing[j] and j_layer_left[j].get(j_next_layer[j], 0) == 0:
            j_computing[j] = True
            push(heap, (t + cfg.jobs[j].workload.compute_per_layer_s, next(ctr), _COMP, j, 0, 0))

    def complete_intact(t: float, j: int, tid: int) -> None:
        """Every worker's packets of an intact batch are in: free (or, ATP, hold) its
        aggregators and send the results on."""
        pid = t_pid0[tid]
        pk = t_pkts[tid]
        item = [(pid, t_bits[tid], t_val[tid], 0, pk)]
        t_intact[tid] = 0
        t_val[tid] = 0
        if is_atp:
            since = t_since[tid]
            for q in range(pid, pid + pk):
                i = p_agg[q]
                a_held[i] = 1
                a_since[i] = since
            to_ps(t, j, item, _FULL)
        else:
            busy[0] += pk * (t - t_since[tid])
            for q in range(pid, pid + pk):
                a_pid[p_agg[q]] = -1
            t_inswitch[tid] = 0
            deliver(t, j, item)

    r.window_room, r.pump, r.start_iteration = window_room, pump, start_iteration
    r.try_compute, r.complete_intact = try_compute, complete_intact


# ---- one handler per event kind -----------------------------------------------------------------

def _on_arrival(r: _Run) -> Any:
    """``_ARR``: a batch of one worker's packets reaches the switch (ESA Fig. 5, per packet)."""
    (t_job, t_pid0, t_pkts, w_bit, t_prio, fanin, w_val, pbits, masks, t_exp, t_intact, t_bits,
     c, t_val, t_cnt, t_aprio, tr, log, complete_intact, t_inswitch, t_uniq, t_done, a_pid,
     p_agg, t_since, cuts, push, heap, ctr, tx, pfull, a_bits, a_val, a_cnt, a_prio, a_since,
     is_switchml, p_tid, materialise, is_atp, a_held, is_esa, is_always, coin_salt, to_ps, busy,
     free, deliver) = r.get(
        "t_job t_pid0 t_pkts w_bit t_prio fanin w_val pbits masks t_exp t_intact t_bits c t_val "
        "t_cnt t_aprio tr log complete_intact t_inswitch t_uniq t_done a_pid p_agg t_since cuts "
        "push heap ctr tx pfull a_bits a_val a_cnt a_prio a_since is_switchml p_tid materialise "
        "is_atp a_held is_esa is_always coin_salt to_ps busy free deliver")

    def on_arrival(  # free variables as defaults: fast locals
            ev: tuple[Any, ...], t: float,
            t_job=t_job, t_pid0=t_pid0, t_pkts=t_pkts, w_bit=w_bit, t_prio=t_prio, fanin=fanin,
            w_val=w_val, pbits=pbits, masks=masks, t_exp=t_exp, t_intact=t_intact, t_bits=t_bits,
            c=c, t_val=t_val, t_cnt=t_cnt, t_aprio=t_aprio, tr=tr, log=log,
            complete_intact=complete_intact, t_inswitch=t_inswitch, t_uniq=t_uniq, t_done=t_done,
            a_pid=a_pid, p_agg=p_agg, t_since=t_since, cuts=cuts, push=push, heap=heap, ctr=ctr,
            tx=tx, pfull=pfull, a_bits=a_bits, a_val=a_val, a_cnt=a_cnt, a_prio=a_prio,
            a_since=a_since, is_switchml=is_switchml, p_tid=p_tid, materialise=materialise,
            is_atp=is_atp, a_held=a_held, is_esa=is_esa, is_always=is_always, coin_salt=coin_salt,
            to_ps=to_ps, busy=busy, free=free, deliver=deliver,
    ) -> None:
        tid = ev[3]
        w = ev[4]
        j = t_job[tid]
        pid = t_pid0[tid]
        pk = t_pkts[tid]
        bit = w_bit[w]
        prio = t_prio[tid]
        fan = fanin[j]
        cont = ev[5]
        if cont:  # the next segment of a batch that hits one aggregator twice
            k0, vb = cont
            pid += k0
        else:
            k0 = 0
            vb = w_val[w].getrandbits(pk * pbits) & masks[pk]
            t_exp[tid] += vb
        if t_intact[tid]:  # fast path: the batch holds all its aggregators together
            if t_bits[tid] & bit:
                c["dbl"] += 1
            t_bits[tid] |= bit
            t_val[tid] += vb
            n_in = t_cnt[tid] + 1
            t_cnt[tid] = n_in
            t_aprio[tid] = prio
            if tr is not None:
                log(t, "aggregate", pid, (bit, vb))
            if n_in == fan:
                complete_intact(t, j, tid)
            return
        if not cont and not t_inswitch[tid] and t_uniq[tid] and not t_done[tid]:
            for q in range(pid, pid + pk):
                if a_pid[p_agg[q]] >= 0:
                    break
            else:  # every aggregator free: allocate them together, intact
                for q in range(pid, pid + pk):
                    a_pid[p_agg[q]] = q
                t_inswitch[tid] = pk
                t_intact[tid] = 1
                t_bits[tid] = bit
                t_cnt[tid] = 1
                t_val[tid] = vb
                t_aprio[tid] = prio
                t_since[tid] = t
                if tr is not None:
                    log(t, "allocate", pid, (bit, vb))
                if fan == 1:
                    complete_intact(t, j, tid)
                return
        # slow path: packet by packet
        fb: list[Any] | None = None
        done: list[Any] | None = None
        k_end = pk
        if not t_uniq[tid]:
            for k in cuts[tid]:
                if k > k0:
                    k_end = k
                    break
            if k_end < pk:
                push(heap, (t + (k_end - k0) * tx, next(ctr), _ARR, tid, w, (k_end, vb)))
        for k in range(k0, k_end):
            v = (vb >> (k * pbits)) & pfull
            i = p_agg[pid]
            own = a_pid[i]
            if own == pid:
                if a_bits[i] & bit:
                    c["dbl"] += 1
                a_bits[i] |= bit
                a_val[i] += v
                n_in = a_cnt[i] + 1
                a_cnt[i] = n_in
                a_prio[i] = prio
                if tr is not None:
                    log(t, "aggregate", pid, (bit, v))
            elif own < 0:
                a_pid[i] = pid
                a_bits[i] = bit
                a_val[i] = v
                a_cnt[i] = n_in = 1
                a_prio[i] = prio
                a_since[i] = t
                t_inswitch[tid] += 1
                if tr is not None:
                    log(t, "allocate", pid, (bit, v))
            else:
                # collision with another aggregation
                if is_switchml:
                    raise InaplannerError("internal: switchml slot still busy")
                otid = p_tid[own]
                if t_intact[otid]:
                    materialise(otid)
                c["coll"] += 1
                if is_atp or a_held[i]:
                    preempt = False
                elif is_esa:
                    preempt = prio > a_prio[i]
                    if not preempt:
                        a_prio[i] >>= 1
                        c["down"] += 1
                elif is_always:
                    preempt = True
                else:  # a fair coin per (packet, worker), independent of event order
                    preempt = ((pid * 0x9E3779B1 + bit * 0x85EBCA77 + coin_salt) >> 20) & 1 == 1
                if not preempt:
                    c["coll_pk"] += 1
                    if tr is not None:
                        log(t, "fallback", pid, (bit, v))
                    if fb is None:
                        fb = []
                    fb.append((pid, bit, v, k - k0, 1))
                    pid += 1
                    continue
                c["preempt"] += 1
                c["evict_pk"] += 1
                if tr is not None:
                    log(t, "preempt", own, (a_bits[i], a_val[i]))
                    log(t, "allocate", pid, (bit, v))
                to_ps(t, t_job[otid], [(own, a_bits[i], a_val[i], 0, 1)], _PARTIAL)
                busy[0] += t - a_since[i]
                t_inswitch[otid] -= 1
                t_inswitch[tid] += 1
                a_since[i] = t
                a_pid[i] = pid
                a_bits[i] = bit
                a_val[i] = v
                a_cnt[i] = n_in = 1
                a_prio[i] = prio
            if n_in == fan:
                if done is None:
                    done = []
                done.append((pid, a_bits[i], a_val[i], k - k0, 1))
                if is_atp:
                    a_held[i] = 1
                else:
                    free(t, i)
            pid += 1
        if fb is not None:
            to_ps(t, j, fb, _PARTIAL)
        if done is not None:
            if is_atp:
                to_ps(t, j, done, _FULL)
            else:
                deliver(t, j, done)

    return on_arrival


def _on_result(r: _Run) -> Any:
    """``_RES``: a batch's results are all at the workers: window, congestion control (ATP's
    AIMD, :func:`_window_after_result`), computation, and the workers' next packets."""
    (t_job, t_seq, j_recv, c, j_nrecv, j_last_res, c_layer, j_layer_left, try_compute, cc,
     j_cwnd, t_mark, j_last_md, cfg, t_pkts, inc_w, max_w, j_base, n_chunks, check_dupack,
     window_room, cum, c_pkts, sim, is_switchml, w_next, pump, per_rtt, rtt) = r.get(
        "t_job t_seq j_recv c j_nrecv j_last_res c_layer j_layer_left try_compute cc j_cwnd "
        "t_mark j_last_md cfg t_pkts inc_w max_w j_base n_chunks check_dupack window_room cum "
        "c_pkts sim is_switchml w_next pump per_rtt rtt")
    j_workers = sim.j_workers

    def on_result(  # free variables as defaults: fast locals
            ev: tuple[Any, ...], t: float,
            t_job=t_job, t_seq=t_seq, j_recv=j_recv, c=c, j_nrecv=j_nrecv, j_last_res=j_last_res,
            c_layer=c_layer, j_layer_left=j_layer_left, try_compute=try_compute, cc=cc,
            j_cwnd=j_cwnd, t_mark=t_mark, j_last_md=j_last_md, t_pkts=t_pkts, inc_w=inc_w,
            max_w=max_w, j_base=j_base, n_chunks=n_chunks, check_dupack=check_dupack,
            window_room=window_room, cum=cum, c_pkts=c_pkts, is_switchml=is_switchml,
            w_next=w_next, pump=pump, per_rtt=per_rtt, rtt=rtt, j_workers=j_workers,
    ) -> None:
        tid = ev[3]
        j = t_job[tid]
        s = t_seq[tid]
        recv = j_recv[j]
        if recv[s]:
            c["dup"] += 1
            return
        recv[s] = 1
        j_nrecv[j] += 1
        j_last_res[j] = t
        layer = c_layer[j][s]
        ll = j_layer_left[j]
        ll[layer] -= 1
        if ll[layer] == 0:
            try_compute(j, t)
        if cc:
            cw = j_cwnd[j]
            if t_mark[tid]:
                if t - j_last_md[j] > rtt:
                    cw = max(cw / 2, 1.0)
                    j_last_md[j] = t
            else:  # additive increase: one MTU per window of results, or per result
                cw += t_pkts[tid] * inc_w / cw if per_rtt else t_pkts[tid] * inc_w
                if cw > max_w:
                    cw = max_w
            j_cwnd[j] = cw
        base = j_base[j]
        n = n_chunks[j]
        while base < n and recv[base]:
            base += 1
        j_base[j] = base
        check_dupack(j, t)
        room = window_room(j)
        cj = cum[j]
        pkj = c_pkts[j]
        for w in j_workers[j]:
            s = w_next[w]
            if s < n and (s == base or (cj[s + 1] <= room if is_switchml
                                        else cj[s] + (pkj[s] >> 1) < room)):
                pump(w, t)

    return on_result


def _on_ps(r: _Run) -> Any:
    """``_PS``: packets (full results for ATP, partial results, a worker's reminder) reach a PS."""
    (ps_send, p_done, p_psdone, c, tr, log, ps_bits, open_entry, p_tid, remind_switch, full,
     dups, ps_val, t_psopen, dupacks, push, heap, ctr, tx) = r.get(
        "ps_send p_done p_psdone c tr log ps_bits open_entry p_tid remind_switch full dups ps_val "
        "t_psopen dupacks push heap ctr tx")

    def on_ps(  # free variables as defaults: fast locals
            ev: tuple[Any, ...], t: float,
            ps_send=ps_send, p_done=p_done, p_psdone=p_psdone, c=c, tr=tr, log=log,
            ps_bits=ps_bits, open_entry=open_entry, p_tid=p_tid, remind_switch=remind_switch,
            full=full, dups=dups, ps_val=ps_val, t_psopen=t_psopen, dupacks=dupacks, push=push,
            heap=heap, ctr=ctr, tx=tx,
    ) -> None:
        j = ev[3]
        items = ev[4]
        what = ev[5]
        if what == _FULL:  # ATP: the PS sends the results back through the switch
            out = []
            m = 0
            for it in items:
                out.append((it[0], it[1], it[2], m, it[4]))
                m += it[4]
            ps_send(t, j, out, _PARAM)
            return
        if what == _REMIND:  # a worker misses packet `items`
            pid = items
            if p_done[pid] or p_psdone[pid]:
                return
            c["wremind"] += 1
            if tr is not None:
                log(t, "worker-reminder", pid)
            if pid not in ps_bits:
                open_entry(t, pid, p_tid[pid])
            remind_switch(t, j, pid)
            return
        fj = full[j]
        completed: list[Any] = []
        seqs = []  # (packet id, offset) of the fragments, for the PS-side dupACK
        for pid, bits, val, off, _n in items:
            if p_done[pid] or p_psdone[pid]:
                c["dbl"] += 1
                continue
            tid = p_tid[pid]
            eb = ps_bits.get(pid)
            if eb is None:
                open_entry(t, pid, tid)
                dups[j][pid] = 0
                eb = 0
            if eb & bits:
                c["dbl"] += 1
            eb |= bits
            ps_val[pid] += val
            seqs.append((pid, off))
            if tr is not None:
                log(t, "ps-partial", pid, (bits, val))
            if eb == fj:
                ps_bits.pop(pid, None)
                total = ps_val.pop(pid)
                p_psdone[pid] = 1
                t_psopen[tid] -= 1
                if tr is not None:
                    log(t, "ps-complete", pid, total)
                completed.append((pid, eb, total, len(completed), 1))
                dups[j].pop(pid, None)
            else:
                ps_bits[pid] = eb
        dj = dups[j]
        if seqs and dj:  # PS-side dupACK: per open entry, fragments with larger seq
            seqs.sort()
            keys = [q for q, _ in seqs]
            nq = len(seqs)
            for q in list(dj):
                first_larger = bisect_right(keys, q)
                before = dj[q]
                n_dup = before + nq - first_larger
                if n_dup >= dupacks:
                    del dj[q]
                    # the fragment that makes it `dupacks` arrives that many packet
                    # times into the batch; look again then whether q is still open
                    k = first_larger + max(0, dupacks - 1 - before)
                    off = seqs[min(k, nq - 1)][1]
                    push(heap, (t + off * tx, next(ctr), _PSDUP, j, q, 0))
                else:
                    dj[q] = n_dup
        if completed:
            ps_send(t, j, completed, _PARAM)

    return on_ps


def _on_param(r: _Run) -> Any:
    """``_PARAM``: results from the PS pass the switch: ATP frees its aggregators; multicast."""
    is_atp, p_agg, a_pid, a_held, free, deliver = r.get("is_atp p_agg a_pid a_held free deliver")

    def on_param(  # free variables as defaults: fast locals
            ev: tuple[Any, ...], t: float,
            is_atp=is_atp, p_agg=p_agg, a_pid=a_pid, a_held=a_held, free=free, deliver=deliver,
    ) -> None:
        j = ev[3]
        items = ev[4]
        if is_atp:
            for it in items:
                for q in range(it[0], it[0] + it[4]):
                    i = p_agg[q]
                    if a_pid[i] == q and a_held[i]:
                        free(t, i)
        deliver(t, j, items)

    return on_param


def _on_switch_reminder(r: _Run) -> Any:
    """``_REMSW``: a reminder fetches a packet's partial result left in the switch (Fig. 4)."""
    (p_agg, a_pid, a_held, p_tid, t_intact, materialise, tr, log, a_bits, a_val, c, to_ps,
     free) = r.get("p_agg a_pid a_held p_tid t_intact materialise tr log a_bits a_val c to_ps "
                   "free")

    def on_switch_reminder(ev: tuple[Any, ...], t: float) -> None:
        j = ev[3]
        pid = ev[4]
        i = p_agg[pid]
        if a_pid[i] != pid or a_held[i]:
            return
        tid = p_tid[pid]
        if t_intact[tid]:
            materialise(tid)
        if tr is not None:
            log(t, "reminder-flush", pid, (a_bits[i], a_val[i]))
        c["remind_pk"] += 1
        to_ps(t, j, [(pid, a_bits[i], a_val[i], 0, 1)], _PARTIAL)
        free(t, i)

    return on_switch_reminder


def _on_ps_dupack(r: _Run) -> Any:
    """``_PSDUP``: the PS-side dupACK for an entry still open: remind the switch."""
    ps_bits, remind_switch = r.get("ps_bits remind_switch")

    def on_ps_dupack(ev: tuple[Any, ...], t: float) -> None:
        pid = ev[4]
        if pid in ps_bits:
            remind_switch(t, ev[3], pid)

    return on_ps_dupack


def _on_worker_reminder(r: _Run) -> Any:
    """``_WREM``: a worker's reminder reaches the switch, on to the PS."""
    p_done, to_ps, t_job, p_tid = r.get("p_done to_ps t_job p_tid")

    def on_worker_reminder(ev: tuple[Any, ...], t: float) -> None:
        pid = ev[3]
        if not p_done[pid]:
            to_ps(t, t_job[p_tid[pid]], pid, _REMIND)

    return on_worker_reminder


def _on_timeout(r: _Run) -> Any:
    """``_RTO``: the PS's timer for an open entry (§6): remind the switch and re-arm."""
    (ps_bits, p_tid, t_job, p_done, ps_val, t_psopen, dups, j_last_res, j_comm_start,
     stall_limit, job_ids, t_seq, j_iter, policy, c, remind_switch, push, heap, ctr, rto, loss_md,
     backoff) = r.get(
        "ps_bits p_tid t_job p_done ps_val t_psopen dups j_last_res j_comm_start stall_limit "
        "job_ids t_seq j_iter policy c remind_switch push heap ctr rto loss_md backoff")

    def on_timeout(ev: tuple[Any, ...], t: float) -> None:
        pid = ev[3]
        if pid not in ps_bits:
            return
        tid = p_tid[pid]
        j = t_job[tid]
        if p_done[pid]:  # a worker's reminder was spurious: the switch completed it
            del ps_bits[pid]
            del ps_val[pid]
            t_psopen[tid] -= 1
            dups[j].pop(pid, None)
            return
        if t - j_last_res[j] > stall_limit and t - j_comm_start[j] > stall_limit:
            raise InaplannerError(
                f"internal: memsim made no progress for job {job_ids[j]} "
                f"(batch {t_seq[tid]} of iteration {j_iter[j]}, {policy}, t={t:.6f}s)"
            )
        c["rto"] += 1
        if loss_md:  # a timeout: a loss to ATP's congestion control
            backoff(j, t)
        remind_switch(t, j, pid)
        push(heap, (t + rto, next(ctr), _RTO, pid, 0, 0))

    return on_timeout


def _on_computed(r: _Run) -> Any:
    """``_COMP``: a layer has computed; after the last one the iteration ends."""
    (j_computing, j_next_layer, cfg, try_compute, stats, j_comm_start, j_last_res, util, cum, tx,
     j_iter, start_iteration, j_done, left) = r.get(
        "j_computing j_next_layer cfg try_compute stats j_comm_start j_last_res util cum tx "
        "j_iter start_iteration j_done left")

    def on_computed(ev: tuple[Any, ...], t: float) -> None:
        j = ev[3]
        j_computing[j] = False
        j_next_layer[j] += 1
        if j_next_layer[j] <= cfg.jobs[j].workload.layers:
            try_compute(j, t)
            return
        st_j = stats[j]
        st_j.iteration_s.append(t - j_comm_start[j])
        comm = j_last_res[j] - j_comm_start[j]
        st_j.comm_s.append(comm)
        util[j].append(cum[j][-1] * tx / comm if comm > 0 else 1.0)
        j_iter[j] += 1
        if j_iter[j] < cfg.iterations:
            start_iteration(j, t)
        else:
            j_done[j] = True
            st_j.finish_s = t
            left[0] -= 1

    return on_computed


def _on_start(r: _Run) -> Any:
    """``_START``: a job starts its first iteration."""
    start_iteration = r.start_iteration

    def on_start(ev: tuple[Any, ...], t: float) -> None:
        start_iteration(ev[3], t)

    return on_start


#: the handler factory of each event kind
_HANDLERS: dict[int, Any] = {
    _ARR: _on_arrival, _PS: _on_ps, _PARAM: _on_param, _RES: _on_result,
    _REMSW: _on_switch_reminder, _RTO: _on_timeout, _COMP: _on_computed, _START: _on_start,
    _WREM: _on_worker_reminder, _PSDUP: _on_ps_dupack,
}


def _result(r: _Run, end: float, events: int, wall0: float) -> SimResult:
    """The run's :class:`SimResult` once the loop has stopped at time ``end``."""
    cfg, nj, N, stats, util, c, busy = r.cfg, r.nj, r.N, r.stats, r.util, r.c, r.busy
    p_done, j_iter, j_done, cum = r.p_done, r.j_iter, r.j_done, r.cum
    unfinished = len(p_done) - p_done.count(1) + sum(
        (cfg.iterations - j_iter[j] - 1) * cum[j][-1] for j in range(nj) if not j_done[j])
    if unfinished:  # (when every packet completed, no aggregator is still held)
        for i in range(N):
            if r.a_pid[i] >= 0:
                busy[0] += end - r.a_since[i]
    for j in range(nj):
        if util[j]:
            stats[j].utilisation = sum(util[j]) / len(util[j])
    span = max(end - min(r.sim.j_start), 1e-12)
    ran = [s for s in stats if s.iteration_s]
    fallback = c["coll_pk"] + c["evict_pk"] + c["remind_pk"]
    return SimResult(
        policy=r.policy,
        jobs=stats,
        avg_jct_s=_mean([s.jct_s for s in ran]),
        avg_job_time_s=_mean([s.finish_s - s.start_s for s in stats]),
        utilisation=_mean([s.utilisation for s in ran]),
        occupancy=busy[0] / (N * span),
        aggregators=N,
        batch=cfg.batch,
        packets_sent=c["sent"],
        ps_fallback_packets=fallback,
        collision_packets=c["coll_pk"],
        evicted_packets=c["evict_pk"],
        reminded_packets=c["remind_pk"],
        preemptions=c["preempt"],
        downgrades=c["down"],
        collisions=c["coll"],
        reminders=c["remind"],
        worker_reminders=c["wremind"],
        timeout_reminders=c["rto"],
        results_checked=c["checked"],
        value_errors=c["verr"],
        double_counts=c["dbl"],
        duplicate_results=c["dup"],
        unfinished_tasks=unfinished,
        packet_bytes=cfg.packet_bytes,
        events=events,
        wall_s=time.perf_counter() - wall0,
        trace=r.tr,
    )


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else float("nan")
