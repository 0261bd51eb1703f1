"""The poller: reads every switch's per-port counters over P4Runtime at a fixed interval in a
background thread and turns them into per-direction link rates.

* One read-only P4Runtime channel per switch (Read needs no arbitration, so monitoring never
  disturbs the controller that is primary). The counters are found by alias in the P4Info the
  switch itself reports (``rx_port_counter`` / ``tx_port_counter``); only the cells of mapped ports
  are read.
* All switches are read in parallel, each with its own deadline, so a switch that hangs delays no
  other. The deadline follows the switch's observed Read latency (five times its moving average,
  at least ``rpc_timeout``, at most three intervals), and one late answer is tolerated (that poll
  has no figures for it) before the switch is marked stale, so a loaded machine does not make
  healthy switches flicker. A switch that fails is marked stale, its counter baselines are
  dropped (it may come back reset), and it is retried with exponential backoff (``backoff_base``
  doubling up to ``backoff_max``); on success it is fresh again after one baseline reading.
* A switch that answers but runs no pipeline (restarted blank, or never deployed) is marked
  ``reset`` at once and polled every interval (no backoff), so it is fresh again at the first
  poll after it is redeployed.
* Rates come from :class:`inaplanner.monitor.rates.RateTracker` (wrap and reset safe); each
  directed link takes the sender's tx counter, or the receiver's rx counter when the sender has
  no rate this poll (:mod:`inaplanner.monitor.mapping`).
* A poll's work is done on arrays: each switch's answer is decoded into arrays
  (:func:`~inaplanner.dataplane.wire.counter_arrays`), the cells of every switch that answered go
  through the tracker in one call, and the links pick their probe's rate by array indexing. At
  fat-tree k=64 (655,360 cells, 393,216 directed links) a tuple, a reading object and a dict
  look-up per cell and a loop over every link's probes took about 9 s of a 12 s poll.

Listeners are called from the poller thread with each :class:`Snapshot`; a GUI hands them to its
own thread.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import compress

import grpc
import numpy as np

from inaplanner import aioloop
from inaplanner.dataplane.p4info import P4InfoIndex
from inaplanner.dataplane.wire import CounterCells
from inaplanner.errors import InaplannerError
from inaplanner.fdlimit import ensure_open_files
from inaplanner.model import Scenario
from inaplanner.monitor.mapping import COUNTER_ALIASES, LinkMap, link_map
from inaplanner.monitor.rates import COUNTER_BITS, RateTracker
from inaplanner.monitor.recording import LinkInfo, Recorder
from inaplanner.monitor.series import Snapshot, polls_kept
from inaplanner.testbed.inventory import Inventory, SwitchInventory, check_transport

Listener = Callable[[Snapshot], None]


@dataclass
class SwitchHealth:
    """What the poller knows about one switch's reachability."""

    switch: str
    address: str
    state: str = "new"  # new, ok, stale, reset (answers, but no pipeline: redeploy)
    failures: int = 0
    next_try: float = 0.0
    last_error: str = ""
    last_ok: float | None = None


RESET_HINT = ("no pipeline: the switch was restarted or reset (blank); redeploy the plan: "
              "inaplanner deploy PLAN --testbed TESTBED")


class SwitchReset(InaplannerError):
    """The switch answers but runs no pipeline."""


class SwitchReader:
    """One switch: its read channel, counter ids and health."""

    def __init__(self, inv: SwitchInventory, ports: dict[str, set[int]], rpc_timeout: float,
                 connect_timeout: float, max_timeout: float | None = None,
                 p4infos: dict[int, P4InfoIndex] | None = None) -> None:
        self.inv = inv
        #: P4Infos by pipeline cookie, shared by the poller's switches: a testbed's switches
        #: mostly run one program, so only the first of them sends its P4Info
        self.p4infos = p4infos if p4infos is not None else {}
        self.ports = {kind: sorted(p) for kind, p in ports.items() if p}
        #: the cells read, in the order of the request: (kind, port)
        self.layout = [(kind, port) for kind, ports_ in self.ports.items() for port in ports_]
        #: their numbers in the poller's :class:`RateTracker`, in the same order
        self.cells = np.arange(len(self.layout), dtype=np.intp)
        self.rpc_timeout = rpc_timeout
        self.max_timeout = max(rpc_timeout, max_timeout or rpc_timeout)
        self.connect_timeout = connect_timeout
        self.session = None
        self.counter_ids: dict[str, int] = {}
        self._request: bytes | None = None  # the serialized Read of this switch's cells
        self._asked: tuple[np.ndarray, np.ndarray] | None = None  # its (counter ids, indexes)
        self._place: dict[tuple[int, int], int] | None = None  # cell -> place in layout
        self.health = SwitchHealth(inv.id, inv.p4runtime)
        self.latency: float | None = None  # moving average of Read round trips, seconds
        self.late = 0  # consecutive late answers

    def deadline(self) -> float:
        """How long the next Read may take: five times the observed latency, within
        [rpc_timeout, max_timeout]."""
        if self.latency is None:
            return self.rpc_timeout
        return min(self.max_timeout, max(self.rpc_timeout, 5.0 * self.latency))

    def _open(self) -> None:
        from inaplanner.deploy.p4rt import P4RTSession

        session = P4RTSession(self.inv.p4runtime, self.inv.device_id, self.inv.election_id,
                              label=f"switch {self.inv.id}", primary=False,
                              timeout=self.rpc_timeout, connect_timeout=self.connect_timeout,
                              tls=self.inv.tls)
        try:
            cookie = session.get_cookie()
            index = self.p4infos.get(cookie) if cookie else None
            if index is None:
                config = session.get_pipeline(with_device_config=False)
                if config is None:
                    raise SwitchReset(f"switch {self.inv.id}: {RESET_HINT}")
                index = P4InfoIndex(config.p4info)
                if cookie:
                    self.p4infos[cookie] = index
            ids = {}
            for kind in self.ports:
                try:
                    ids[kind] = index.id_of("counter", COUNTER_ALIASES[kind])
                except InaplannerError:
                    raise InaplannerError(
                        f"switch {self.inv.id}: its P4Info has no counter "
                        f"{COUNTER_ALIASES[kind]!r} (is the INA program deployed?)") from None
                size = index.counters[ids[kind]].size
                beyond = [p for p in self.ports[kind] if p >= size]
                if beyond:
                    raise InaplannerError(f"switch {self.inv.id}: port {beyond[0]} is outside "
                                          f"counter {COUNTER_ALIASES[kind]} (size {size})")
        except BaseException:
            session.close()
            raise
        self.session, self.counter_ids = session, ids

    def close(self) -> None:
        if self.session is not None:
            self.session.close()
            self.session = None
        self._request = None
        self._asked = self._place = None

    def read(self, clock: Callable[[], float]) -> Readings:
        """Every mapped counter cell, timed at the middle of the Read round trip. Raises on any
        failure."""
        self.prepare()
        sent, started = clock(), time.monotonic()
        try:
            answer = self.session.read_counters(self._request)
        except Exception as exc:  # noqa: BLE001 - named by failed()
            raise self.failed(exc) from None
        return self.finish(answer, sent, clock(), time.monotonic() - started)

    async def read_async(self, clock: Callable[[], float]) -> Readings:
        """:meth:`read` on the event loop, for a switch already open (:attr:`ready`)."""
        sent, started = clock(), time.monotonic()
        try:
            answer = await self.session.read_counters_async(self._request)
        except Exception as exc:  # noqa: BLE001 - named by failed()
            raise self.failed(exc) from None
        return self.finish(answer, sent, clock(), time.monotonic() - started)

    @property
    def ready(self) -> bool:
        """Open, with its request made: a poll may read it on the event loop."""
        return self.session is not None and self._request is not None

    def prepare(self) -> None:
        """Open the switch's session if needed, make its request, set the Read's deadline."""
        if self.session is None:
            self._open()
        if self._request is None:
            asked = [(self.counter_ids[kind], port) for kind, port in self.layout]
            self._request = self.session.counter_request(asked)
            self._asked = (np.array([c for c, _ in asked], dtype=np.uint64),
                           np.array([i for _, i in asked], dtype=np.uint64))
            self._place = None
        self.session.timeout = self.deadline()

    def failed(self, exc: BaseException) -> BaseException:
        """The error a failed Read stands for: a switch restarted blank under the open channel
        is a reset; a late answer allows more time next poll."""
        from inaplanner.deploy.p4rt import ReadFailed

        if isinstance(exc, ReadFailed):
            if exc.code == "FAILED_PRECONDITION":  # restarted under our open channel
                return SwitchReset(f"switch {self.inv.id}: {RESET_HINT}")
            if exc.code == "DEADLINE_EXCEEDED" and self.session is not None:
                # slower than thought: allow more next time
                self.latency = max(self.latency or 0.0, self.session.timeout)
        return exc

    def finish(self, answer: CounterCells, sent: float, received: float,
               took: float) -> Readings:
        """The readings of an answer: timed at the middle of the round trip (the switch read
        its counters somewhere in between). An answer with the cells asked for, in the order
        asked (what switches do), is taken as it is; any other is matched cell by cell, and
        cells not asked for are left out (no link is measured by them)."""
        t = (sent + received) / 2
        self.latency = took if self.latency is None else 0.8 * self.latency + 0.2 * took
        asked = self._asked
        if asked is not None and np.array_equal(answer.counter_id, asked[0]) \
                and np.array_equal(answer.index, asked[1]):
            return Readings(t, self.cells, answer.nbytes, answer.packets)
        return self._matched(t, answer)

    def _matched(self, t: float, answer: CounterCells) -> Readings:
        """:meth:`finish` of an answer in another order, with cells missing, repeated (the
        last counts) or not asked for."""
        if self._place is None:
            self._place = {(self.counter_ids[kind], port): k
                           for k, (kind, port) in enumerate(self.layout)
                           if kind in self.counter_ids}
        place = self._place
        found = {}  # place in layout -> row of the answer, the last one for a repeated cell
        for row, cell in enumerate(zip(answer.counter_id.tolist(), answer.index.tolist(),
                                       strict=True)):
            k = place.get(cell)
            if k is not None:
                found[k] = row
        at = np.array(list(found), dtype=np.intp)
        rows = np.array(list(found.values()), dtype=np.intp)
        return Readings(t, self.cells[at], answer.nbytes[rows], answer.packets[rows])


@dataclass(frozen=True)
class Readings:
    """One switch's answer: its cells (numbers in the poller's tracker) read at time ``t``
    (one Read: one time for all), with their byte and packet counts (``uint64``)."""

    t: float
    cells: np.ndarray
    nbytes: np.ndarray
    packets: np.ndarray


#: Reads in flight at once in a poll (as many as the pool's threads before)
READS_AT_ONCE = 32


def _outcome(exc: BaseException) -> tuple[None, str, str]:
    """(None, why, kind) of a failed read: kind "reset", "late" or ""; anything else raises."""
    if isinstance(exc, SwitchReset):
        return None, str(exc), "reset"
    if isinstance(exc, (InaplannerError, grpc.RpcError, OSError, ValueError)):
        why = str(exc) or type(exc).__name__
        return None, why, "late" if "DEADLINE_EXCEEDED" in why else ""
    raise exc


class Poller:
    """Polls every switch of ``inventory`` that measures a link of ``scenario``.

    Use :meth:`poll_once` for a single synchronous poll, or :meth:`start` / :meth:`stop` for the
    background thread. ``history`` keeps the last snapshots (a few: every snapshot also goes to
    the listeners and the recorder; at 80 switches one snapshot is about 70 kB, so the 3,600 kept
    before grew memory by about 4 MB a minute for an hour; at fat-tree k=64 one is 40 MB, and
    :func:`~inaplanner.monitor.series.polls_kept` keeps fewer). ``window`` (seconds) averages each
    rate over about that long (0: the last interval). A switch must answer within
    ``rpc_timeout`` (default 0.8 interval, between 1 and 5 s)."""

    def __init__(self, scenario: Scenario, inventory: Inventory, interval: float = 1.0, *,
                 counter_bits: int = COUNTER_BITS, window: float = 0.0,
                 rpc_timeout: float | None = None,
                 connect_timeout: float | None = None, backoff_base: float = 0.5,
                 backoff_max: float = 8.0, recorder: Recorder | None = None,
                 history: int = 30, clock: Callable[[], float] = time.monotonic,
                 wall: Callable[[], float] = time.time) -> None:
        if not interval > 0:
            raise InaplannerError(f"monitoring interval must be > 0 s, got {interval}")
        self.scenario = scenario
        self.interval = float(interval)
        self.map: LinkMap = link_map(scenario, inventory)
        rpc = rpc_timeout if rpc_timeout is not None else min(5.0, max(1.0, 0.8 * self.interval))
        conn = connect_timeout if connect_timeout is not None else min(rpc, 2.0)
        p4infos: dict[int, P4InfoIndex] = {}
        self.readers = {sid: SwitchReader(inventory.switch(sid), ports, rpc, conn,
                                          max_timeout=max(rpc, 3.0 * self.interval),
                                          p4infos=p4infos)
                        for sid, ports in sorted(self.map.switch_ports().items())}
        ensure_open_files(len(self.readers), f"monitoring {len(self.readers)} switches")
        #: one line per switch polled in plaintext on a non-loopback address
        self.warnings = check_transport(inventory, set(self.readers))
        self.tracker = RateTracker(counter_bits, window)
        numbers = self.tracker.cells((sid, kind, port) for sid, reader in self.readers.items()
                                     for kind, port in reader.layout)
        start = 0
        for reader in self.readers.values():
            reader.cells = numbers[start:start + len(reader.layout)]
            start += len(reader.layout)
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.recorder = recorder
        self.history: deque[Snapshot] = deque(maxlen=polls_kept(history, len(self.map.links)))
        self.clock = clock
        self.wall = wall
        self.t0 = clock()
        # the links measured, and per link its probes' cells in order of preference (padded
        # with the number one past the cells: a rate that is never there)
        self._probed = [k for k, probes in self.map.probes.items() if probes]
        self._probed_arrays = (np.array([li for li, _ in self._probed], dtype=np.intp),
                               np.array([d for _, d in self._probed], dtype=np.intp))
        counts = np.array([len(self.map.probes[k]) for k in self._probed], dtype=np.intp)
        probe_cells = self.tracker.cells((p.switch, p.kind, p.port) for k in self._probed
                                         for p in self.map.probes[k])
        cells = numbers.size
        self._probes = np.full((len(self._probed), int(counts.max(initial=0))), cells,
                               dtype=np.intp)
        self._probes[np.arange(len(self._probed)).repeat(counts),
                     np.arange(counts.sum()) - (np.cumsum(counts) - counts).repeat(counts)] = \
            probe_cells
        # per cell the capacity of the link it measures (the last such link, if it measures
        # two: parallel links on one port)
        link_capacity = np.array([self.map.links[k].capacity for k in self._probed]).repeat(counts)
        cells_last, last = np.unique(probe_cells[::-1], return_index=True)
        self._capacity = np.zeros(cells)
        self._capacity[cells_last] = link_capacity[::-1][last]
        self._listeners: list[Listener] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()  # one poll at a time
        self._pool = ThreadPoolExecutor(max_workers=max(1, min(32, len(self.readers))),
                                        thread_name_prefix="inaplanner-monitor")
        self.errors: list[str] = []  # listener / recorder failures, newest last

    # ---- metadata ------------------------------------------------------------------------------
    def link_infos(self) -> dict[tuple[int, int], LinkInfo]:
        return {k: LinkInfo(dl.src, dl.dst, dl.capacity) for k, dl in self.map.links.items()}

    def health(self) -> dict[str, SwitchHealth]:
        return {sid: r.health for sid, r in self.readers.items()}

    def add_listener(self, fn: Listener) -> None:
        self._listeners.append(fn)

    def remove_listener(self, fn: Listener) -> None:
        if fn in self._listeners:
            self._listeners.remove(fn)

    # ---- polling -------------------------------------------------------------------------------
    def _read_one(self, reader: SwitchReader):
        """(readings, error, kind): kind is "" (ok or failed), "reset" or "late"."""
        try:
            return reader.read(self.clock), None, ""
        except Exception as exc:  # noqa: BLE001 - sorted by _outcome
            return _outcome(exc)

    async def _read_open(self, readers: list[SwitchReader]) -> list:
        """Read the switches already open on the event loop, :data:`READS_AT_ONCE` at a time: a
        thread and two hand-overs per switch cost the monitor more than the reads at fat-tree
        k=64. Not all at once: a reading is timed at the middle of its round trip, and 1,280
        reads sent together are answered over seconds, which skewed rates by 20 % and more."""
        at_once = asyncio.Semaphore(READS_AT_ONCE)

        async def one(reader: SwitchReader):
            async with at_once:
                try:
                    return await reader.read_async(self.clock), None, ""
                except Exception as exc:  # noqa: BLE001 - sorted by _outcome
                    return _outcome(exc)

        return list(await asyncio.gather(*(one(r) for r in readers)))

    def _read_all(self, due: list[SwitchReader]) -> list:
        """(readings, error, kind) of every due switch, in order: those not open yet on the
        thread pool (they open their session first), the others on the event loop."""
        for r in due:
            if r.ready:
                r.session.timeout = r.deadline()
        ready = [r for r in due if r.ready]
        fresh = [r for r in due if not r.ready]
        pending = self._pool.map(self._read_one, fresh) if fresh else iter(())
        looped = aioloop.submit(self._read_open(ready)).result() if ready else []
        by_reader = dict(zip(map(id, fresh), pending, strict=True))
        by_reader.update(zip(map(id, ready), looped, strict=True))
        return [by_reader[id(r)] for r in due]

    def _reset(self, reader: SwitchReader, why: str) -> None:
        h = reader.health
        h.state, h.failures, h.last_error, h.next_try = "reset", 0, why, 0.0
        reader.late = 0
        reader.close()
        self.tracker.forget(reader.inv.id)

    def _failed(self, reader: SwitchReader, now: float, why: str) -> None:
        h = reader.health
        h.failures += 1
        h.state = "stale"
        h.last_error = why
        h.next_try = now + min(self.backoff_max, self.backoff_base * 2 ** (h.failures - 1))
        reader.close()
        self.tracker.forget(reader.inv.id)  # it may come back with counters reset

    def poll_once(self) -> Snapshot:
        """Read every due switch once and return the snapshot (also recorded and broadcast)."""
        with self._lock:
            now = self.clock()
            due = [r for r in self.readers.values() if r.health.next_try <= now]
            results = self._read_all(due)
            answered: list[Readings] = []
            for reader, (readings, error, kind) in zip(due, results, strict=True):
                if kind == "reset":
                    self._reset(reader, error)
                    continue
                if error is not None:
                    if kind == "late" and reader.health.state == "ok" and reader.late == 0:
                        reader.late = 1  # tolerated once: no figures from it this poll
                        reader.health.last_error = error
                        continue
                    self._failed(reader, self.clock(), error)
                    continue
                reader.late = 0
                h = reader.health
                h.state, h.failures, h.last_error, h.last_ok = "ok", 0, "", now
                answered.append(readings)
            observed, measured = self._observed(answered)
            stale = tuple(sid for sid, r in self.readers.items() if r.health.state == "stale")
            reset = tuple(sid for sid, r in self.readers.items() if r.health.state == "reset")
            snap = Snapshot(now - self.t0, self.wall(), observed, stale, reset, measured)
            self.history.append(snap)
        if self.recorder is not None:
            try:
                self.recorder.write(snap)
            except Exception as exc:  # noqa: BLE001 - a full disk must not stop monitoring
                self.errors.append(f"recording failed: {exc}")
        for fn in list(self._listeners):
            try:
                fn(snap)
            except Exception as exc:  # noqa: BLE001 - a bad listener must not stop the poller
                self.errors.append(f"listener failed: {exc}")
        return snap

    def _observed(self, answered: list[Readings]) -> tuple[dict[tuple[int, int], float],
                                                           tuple[np.ndarray, np.ndarray,
                                                                 np.ndarray]]:
        """The Gbps of every directed link that one of its probes gives a rate for this poll
        (the first such probe), from the readings of the switches that answered: as a dict and
        as arrays (:attr:`Snapshot.measured`)."""
        rate = np.full(self._capacity.size + 1, np.nan)  # per cell; the last: never a rate
        if answered:
            cells = np.concatenate([r.cells for r in answered])
            sizes = [r.cells.size for r in answered]
            rates = self.tracker.update_cells(
                cells, np.repeat([r.t for r in answered], sizes),
                np.concatenate([r.nbytes for r in answered]),
                np.concatenate([r.packets for r in answered]), self._capacity[cells])
            rate[cells] = rates.gbps
        picked = rate[self._probes[:, 0]] if self._probed else np.zeros(0)
        for k in range(1, self._probes.shape[1]):
            missing = np.flatnonzero(np.isnan(picked))
            picked[missing] = rate[self._probes[missing, k]]
        measured = ~np.isnan(picked)
        links, directions = self._probed_arrays
        if not measured.all():  # (else the same link arrays at every poll)
            links, directions, picked = links[measured], directions[measured], picked[measured]
        observed = dict(zip(compress(self._probed, measured.tolist()), picked.tolist(),
                            strict=True))
        return observed, (links, directions, picked)

    def _run(self) -> None:
        next_at = self.clock()
        while not self._stop.is_set():
            self.poll_once()
            next_at += self.interval
            now = self.clock()
            if next_at < now:  # a slow poll: skip the missed ticks instead of bursting
                next_at = now + self.interval
            self._stop.wait(max(0.0, next_at - now))

    def start(self) -> None:
        """Poll in a background thread until :meth:`stop`."""
        if self._thread is not None and self._thread.is_alive():
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="inaplanner-poller", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the thread (if any) and close every channel. Safe to call twice."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
        with self._lock:
            for r in self.readers.values():
                r.close()
        self._pool.shutdown(wait=True)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def __enter__(self) -> Poller:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
