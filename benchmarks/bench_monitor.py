"""Monitoring and report speed (prints figures; asserts nothing).

1. Reports of two plans (planners ``atp`` and ``geryon``) on a k=8 fat-tree (80 switches, 128
   hosts, 2 jobs): evaluation + HTML, PDF (pages), PNG, CSV.
2. Polling: every switch of a k=4 and a k=8 fat-tree emulated on 127.0.0.1 (in a child process),
   the ``atp`` plan deployed with the real deployer and the counters driven from the evaluator's
   loads; the time of one poll of all switches (median of 10) and the deviation of the observed
   rates from the plan.

3. ``--memory SECONDS``: what ``inaplanner monitor`` does for that long on the k=8 fat-tree (80
   emulated switches in a child process): the background poller at ``--interval``, the alert
   tracker and the table rendered for every snapshot; the resident set size (RSS) of this process
   sampled every 10 s after a 30 s warm-up, with the least-squares slope in MB/min
   (``--history`` sets the poller's snapshot history, to compare with the old 3,600).

4. ``--record K``: the SQLite recording of polls of a fat-tree k=K (3 K^3/4 links, every
   directed link measured; synthetic polls, as the poller makes them): ``SqliteRecorder`` made,
   ``write`` of a poll (median of ``--polls``) and the file's growth a poll, ``load_recording`` of
   a 3-poll recording (median of 3).

5. ``--replay K``: a recording of ``--polls`` polls of a fat-tree k=K (every directed link of
   the builder's fat-tree measured, synthetic rates) opened as a replay: ``load_recording`` in a
   fresh process (seconds and its peak RSS growth), then the Monitor dock of the main window
   (offscreen) opening it: the seconds until it replays and the longest pause of the window's
   event loop meanwhile (a 5 ms timer); then the same with ``wait=True``, as ``inaplanner gui
   --replay`` opens it.

Run: ``.venv/bin/python benchmarks/bench_monitor.py [--k 8] [--polls 10] [--memory 180]
[--record 64] [--replay 64]``.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from inaplanner.deploy.deployer import deploy  # noqa: E402
from inaplanner.deploy.emulated import start_emulated_testbed  # noqa: E402
from inaplanner.monitor.drive import drive_plan  # noqa: E402
from inaplanner.monitor.poller import Poller  # noqa: E402
from inaplanner.planners import get, run_planner  # noqa: E402
from inaplanner.report import build_report, export_report  # noqa: E402
from inaplanner.report.html import report_html  # noqa: E402
from inaplanner.report.pdf import write_pdf  # noqa: E402
from inaplanner.topologies import fat_tree, mark_programmable, place_jobs  # noqa: E402


def scenario(k: int, jobs: int = 2, workers: int = 8):
    sc = fat_tree(k, capacity=100.0)
    mark_programmable(sc, aggregation_capacity=800.0)
    workers = min(workers, (len(sc.hosts()) - jobs) // jobs)
    place_jobs(sc, jobs=jobs, workers_per_job=workers, seed=1)
    sc.touch()
    sc.validate()
    return sc


def timed(fn, *args, **kwargs):
    t = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t


def bench_report(k: int, tmp: Path) -> None:
    sc = scenario(k)
    plans = []
    for name in ("atp", "geryon"):
        plan, secs = timed(run_planner, get(name), sc)
        plans.append((name, plan))
        print(f"  planner {name}: {secs:.2f} s")
    print(f"== report of 2 plans on a k={k} fat-tree ({len(sc.switches())} switches, "
          f"{len(sc.hosts())} hosts, {len(sc.links)} links) ==")
    report, t_build = timed(build_report, sc, plans)
    html, t_html = timed(report_html, report)
    pdf, t_pdf = timed(write_pdf, report, tmp / "r.pdf")
    _, t_png = timed(export_report, report, "png", tmp / "png")
    _, t_csv = timed(export_report, report, "csv", tmp / "csv")
    print(f"  evaluate + diff: {t_build * 1000:.0f} ms")
    print(f"  HTML: {t_html * 1000:.0f} ms, {len(html) / 1024:.0f} KiB")
    print(f"  PDF: {t_pdf * 1000:.0f} ms, {pdf.pages} pages, {pdf.size_bytes / 1024:.0f} KiB")
    print(f"  PNG (2 drawings): {t_png * 1000:.0f} ms; CSV tables: {t_csv * 1000:.0f} ms")


def _serve(k: int, directory: str, conn) -> None:
    """Child process: emulate every switch, deploy the atp plan, drive counters, then wait."""
    sc = scenario(k)
    plan = run_planner(get("atp"), sc)
    tb = start_emulated_testbed(sc, Path(directory) / f"tb{k}.toml",
                                switch_ids=[s.id for s in sc.switches()])
    try:
        rep, t_deploy = timed(deploy, sc, plan, tb.inventory)
        if not rep.ok:
            conn.send(("failed", rep.text()))
            return
        drive_plan(tb.handles, sc, tb.inventory, plan, noise=0.0)
        conn.send(("ready", t_deploy))
        conn.recv()  # stop
    finally:
        tb.stop()


def bench_poll(k: int, polls: int, tmp: Path, interval: float) -> None:
    """The emulated switches run in a child process, so they do not share the poller's GIL."""
    from inaplanner.monitor.series import planned_loads
    from inaplanner.testbed.inventory import load_inventory

    sc = scenario(k)
    plan = run_planner(get("atp"), sc)
    planned = planned_loads(sc, plan)
    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=_serve, args=(k, str(tmp), child), daemon=True)
    proc.start()
    try:
        state, info = parent.recv()
        if state != "ready":
            print(info)
            return
        inventory = load_inventory(tmp / f"tb{k}.toml")
        poller = Poller(sc, inventory, interval=interval)
        try:
            poller.poll_once()
            times, worst, errors = [], 0.0, []
            for _ in range(polls):
                time.sleep(interval)
                snap, dt = timed(poller.poll_once)
                times.append(dt)
                for key, v in snap.rates.items():
                    want = float(planned[key])
                    if want > 0:
                        errors.append(abs(v - want) / want)
                        worst = max(worst, errors[-1])
            probes = sum(len(p) for p in poller.map.probes.values())
            print(f"== polling a k={k} fat-tree every {interval:g} s: {len(inventory.switches)} "
                  f"emulated switches (another process), {2 * len(sc.links)} directed links, "
                  f"{probes} counter cells ==")
            print(f"  deploy (real deployer): {info:.2f} s")
            print(f"  one poll of every switch: median {statistics.median(times) * 1000:.1f} ms, "
                  f"max {max(times) * 1000:.1f} ms")
            print(f"  links measured: {len(snap.rates)}; deviation from plan: median "
                  f"{statistics.median(errors) * 100:.2f} %, max {worst * 100:.2f} %")
        finally:
            poller.stop()
    finally:
        parent.send("stop")
        proc.join(20)


def _rss_mb(pid: int | str = "self") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024.0
    return float("nan")


def _slope(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of (seconds, MB) points, in MB per minute."""
    n = len(points)
    if n < 2:
        return float("nan")
    mt = sum(t for t, _ in points) / n
    mv = sum(v for _, v in points) / n
    var = sum((t - mt) ** 2 for t, _ in points)
    return 60.0 * sum((t - mt) * (v - mv) for t, v in points) / var if var else float("nan")


def bench_memory(k: int, seconds: float, tmp: Path, interval: float, history: int) -> None:
    """The CLI monitor's work in this process, against emulators in a child process."""
    import queue

    import numpy as np

    from inaplanner.monitor.alerts import AlertRule, AlertTracker
    from inaplanner.monitor.series import planned_loads
    from inaplanner.monitor.table import render_table
    from inaplanner.testbed.inventory import load_inventory

    sc = scenario(k)
    plan = run_planner(get("atp"), sc)
    planned = planned_loads(sc, plan)
    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=_serve, args=(k, str(tmp), child), daemon=True)
    proc.start()
    try:
        state, info = parent.recv()
        if state != "ready":
            print(info)
            return
        inventory = load_inventory(tmp / f"tb{k}.toml")
        poller = Poller(sc, inventory, interval=interval, history=history)
        links = poller.link_infos()
        tracker = AlertTracker(AlertRule(), np.array([lk.capacity for lk in sc.links]), planned,
                               {key: v.name for key, v in links.items()})
        snaps: queue.Queue = queue.Queue()
        poller.add_listener(snaps.put)
        t0 = time.monotonic()
        samples: list[tuple[float, float]] = []
        polls = 0
        next_sample = t0 + 30.0
        poller.start()
        try:
            while time.monotonic() - t0 < seconds:
                try:
                    snap = snaps.get(timeout=0.25)
                except queue.Empty:
                    snap = None
                if snap is not None:
                    polls += 1
                    tracker.update(snap)
                    render_table(snap, links, planned, 10, list(tracker.active.values()))
                if time.monotonic() >= next_sample:
                    samples.append((time.monotonic() - t0, _rss_mb()))
                    next_sample += 10.0
        finally:
            poller.stop()
        child_rss = _rss_mb(proc.pid)
        print(f"== monitor memory: k={k} fat-tree, {len(inventory.switches)} emulated switches, "
              f"poll every {interval:g} s for {seconds:.0f} s, history {history} ==")
        print(f"  polls: {polls}; RSS of the monitor: {samples[0][1]:.1f} MB at "
              f"{samples[0][0]:.0f} s, {samples[-1][1]:.1f} MB at {samples[-1][0]:.0f} s; "
              f"slope {_slope(samples):+.2f} MB/min over {len(samples)} samples")
        print("  RSS samples (s, MB): " + ", ".join(f"{t:.0f}:{v:.1f}" for t, v in samples))
        print(f"  RSS of the emulator process at the end: {child_rss:.1f} MB")
    finally:
        parent.send("stop")
        proc.join(20)


def bench_record(k: int, polls: int, tmp: Path) -> None:
    import numpy as np

    from inaplanner.monitor.recording import LinkInfo, SqliteRecorder, load_recording
    from inaplanner.monitor.series import Snapshot

    n = 3 * k**3 // 4
    names = [f"{kind}{i}" for kind in ("E", "A", "C") for i in range(k * k)]
    rng = np.random.default_rng(1)
    ends = rng.integers(0, len(names), (n, 2))
    links = {}
    for li, (a, b) in enumerate(ends.tolist()):
        links[li, 0] = LinkInfo(names[a], names[b], 100.0)
        links[li, 1] = LinkInfo(names[b], names[a], 100.0)
    li = np.repeat(np.arange(n, dtype=np.intp), 2)
    d = np.tile(np.array([0, 1], dtype=np.intp), n)

    def poll(i: int) -> Snapshot:
        v = rng.random(li.size) * 100.0
        rates = dict(zip(zip(li.tolist(), d.tolist(), strict=True), v.tolist(), strict=True))
        return Snapshot(float(i), time.time(), rates, (), (), (li, d, v))

    snaps = [poll(i) for i in range(max(3, polls))]
    path = tmp / "run.sqlite"
    rec, made = timed(SqliteRecorder, path, {"scenario": f"k{k}"}, links)
    size = path.stat().st_size
    times = []
    for snap in snaps:
        _, t = timed(rec.write, snap)
        times.append(t)
    rec.close()
    grown = (path.stat().st_size - size) / len(snaps)
    three = tmp / "run3.sqlite"
    rec = SqliteRecorder(three, {"scenario": f"k{k}"}, links)
    for snap in snaps[:3]:
        rec.write(snap)
    rec.close()
    loads = [timed(load_recording, three)[1] for _ in range(3)]
    print(f"record k={k} ({2 * n:,} directed links a poll): recorder made {made:.2f} s "
          f"({size / 1e6:.1f} MB); write {statistics.median(times):.3f} s a poll (median of "
          f"{len(times)}), {grown / 1e6:.1f} MB a poll; load_recording of 3 polls "
          f"{statistics.median(loads):.2f} s")


def _peak_mb() -> float:
    """This process's peak resident set (VmHWM: ru_maxrss would carry the parent's over exec)."""
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM")) / 1024


def _load_in_child(path: str, conn) -> None:
    from inaplanner.monitor.recording import load_recording

    base = _peak_mb()
    t = time.perf_counter()
    rec = load_recording(path)
    took = time.perf_counter() - t
    conn.send((len(rec.snapshots), took, _peak_mb() - base))


def bench_replay(k: int, polls: int, tmp: Path) -> None:
    import numpy as np

    from inaplanner.monitor.recording import LinkInfo, SqliteRecorder
    from inaplanner.monitor.series import Snapshot

    sc = fat_tree(k)
    infos = {}
    for li, lk in enumerate(sc.links):
        infos[li, 0] = LinkInfo(lk.a, lk.b, lk.capacity)
        infos[li, 1] = LinkInfo(lk.b, lk.a, lk.capacity)
    li = np.repeat(np.arange(len(sc.links), dtype=np.intp), 2)
    d = np.tile(np.array([0, 1], dtype=np.intp), len(sc.links))
    keys = list(zip(li.tolist(), d.tolist(), strict=True))
    rng = np.random.default_rng(1)
    path = tmp / "replay.sqlite"
    rec = SqliteRecorder(path, {"scenario": sc.name}, infos)
    for i in range(polls):
        v = rng.random(li.size) * 100.0
        rec.write(Snapshot(float(i), time.time(), dict(zip(keys, v.tolist(), strict=True)), (), (), (li, d, v)))
    rec.close()
    size = path.stat().st_size / 1e6
    parent, child = mp.Pipe()
    proc = mp.get_context("spawn").Process(target=_load_in_child, args=(str(path), child))
    proc.start()
    n, took, grown = parent.recv()
    proc.join()
    print(f"replay k={k} ({li.size:,} directed links, {n} polls, {size:.0f} MB): load_recording "
          f"{took:.1f} s, peak RSS +{grown:.0f} MB")

    import gc

    from PySide6.QtCore import QEvent, QEventLoop, Qt, QTimer
    from PySide6.QtWidgets import QApplication

    from inaplanner.gui.main_window import MainWindow
    from inaplanner.model.document import ScenarioDocument

    app = QApplication.instance() or QApplication([])
    w = MainWindow(ScenarioDocument(sc), theme_mode="light")
    w.headless_errors = True
    w.show()
    app.processEvents()
    ticks: list[float] = []
    timer = QTimer()
    timer.setTimerType(Qt.TimerType.PreciseTimer)
    timer.setInterval(5)
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    timer.start()
    loop = QEventLoop()
    ended: list[float] = []

    def changed(state: str) -> None:
        if state in ("replay", "idle") and not ended:
            ended.append(time.perf_counter())
            QTimer.singleShot(500, loop.quit)  # the ticks go on: what the window does then counts

    w.monitor.state_changed.connect(changed)
    took_over: list[float] = []
    take = getattr(w.monitor, "_take_replay", None)
    if take is not None:  # what the window's thread does with the result
        def timed_take(*args):
            t0 = time.perf_counter()
            take(*args)
            took_over.append(time.perf_counter() - t0)
        w.monitor._take_replay = timed_take
    t = time.perf_counter()
    w.monitor.open_recording(str(path))
    called = time.perf_counter() - t
    if not ended:  # (else done on this thread)
        loop.exec()
    took = ended[0] - t
    timer.stop()
    gaps = [b - a for a, b in zip(ticks, ticks[1:], strict=False)]
    print(f"  the window: open_recording returned in {called * 1000:.0f} ms, replaying after "
          f"{took:.1f} s ({w.monitor.state}); longest pause of its event loop "
          f"{max(gaps, default=float('nan')) * 1000:.0f} ms ({len(ticks)} ticks); taking the "
          f"replay into the dock {sum(took_over) * 1000:.0f} ms of it")
    w.monitor.shutdown()
    w.autosave.finish()
    w.close()
    # the command line's `gui --replay`: open_recording(wait=True) in a new window, returning
    # once it has ended. The first window is deleted before (freeing its replay inside the wait
    # paused the new window's loop 0.9-1.0 s, which the command line never meets)
    w.deleteLater()
    app.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    del w
    gc.collect()
    w = MainWindow(ScenarioDocument(sc), theme_mode="light")
    w.headless_errors = True
    w.show()
    app.processEvents()
    ticks.clear()
    timer.start()
    t = time.perf_counter()
    opened = w.monitor.open_recording(str(path), wait=True)
    took = time.perf_counter() - t
    timer.stop()
    gaps = [b - a for a, b in zip([t, *ticks], [*ticks, t + took], strict=False)]
    print(f"  `gui --replay` (wait=True): {'opened' if opened else 'not opened'} after {took:.1f} s; "
          f"longest pause of the window's event loop meanwhile {max(gaps) * 1000:.0f} ms "
          f"({len(ticks)} ticks)")
    w.monitor.shutdown()
    w.autosave.finish()
    w.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--k", type=int, default=8)
    ap.add_argument("--polls", type=int, default=10)
    ap.add_argument("--interval", type=float, default=1.0)
    ap.add_argument("--memory", type=float, metavar="SECONDS",
                    help="only the memory run of the monitor, this long")
    ap.add_argument("--history", type=int, default=30, help="with --memory: poller history")
    ap.add_argument("--record", type=int, metavar="K",
                    help="only the SQLite recording of polls of a fat-tree k=K")
    ap.add_argument("--replay", type=int, metavar="K",
                    help="only a recording of --polls polls of a fat-tree k=K opened as a replay")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        if args.record:
            bench_record(args.record, args.polls, tmp)
            return
        if args.replay:
            bench_replay(args.replay, args.polls, tmp)
            return
        if args.memory:
            bench_memory(args.k, args.memory, tmp, args.interval, args.history)
            return
        bench_report(args.k, tmp)
        for k in sorted({4, args.k}):
            bench_poll(k, args.polls, tmp, args.interval)


if __name__ == "__main__":
    main()
