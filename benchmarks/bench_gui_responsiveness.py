"""Does the UI thread stay responsive while a planner runs? (issue 6: never blocked > 50 ms).

A 5 ms QTimer ticks on the UI thread while the planner panel runs a real planner through the
planning controller (the same code path as the Run button); the longest gap between two ticks is
how long the UI thread could not handle events. The default run is ``grid-exact`` on a 576-server
leaf-spine (24 leaves x 24 hosts, 12 spines, half the switches programmable, 6 jobs x 2 PSs x 40
workers) with a 20 s solver limit: ~12 s of pure-Python candidate building, then up to 20 s in
HiGHS, then evaluation; both phases compete with the UI for the GIL in the thread back end.

The machine may be shared: a gap also grows when the OS gives the UI thread no CPU. So the script
also prints (a) the same figure with no run going (idle baseline, same load), (b) the CPU time this
process (all threads: ``time.process_time``) and its UI thread (``time.thread_time``) used during
the longest gap and at most between two ticks - a gap in which the process hardly ran was the OS
serving other programs, one in which another thread ran was the GIL -, (c) the longest garbage
collection in the GUI process, and (d) the load average.

Prints figures; asserts nothing. Run: ``python benchmarks/bench_gui_responsiveness.py [--backend
thread|process|both] [--planner NAME] [--time-limit S]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

TICK_MS = 5


def build_scenario(jobs: int):
    from inaplanner.topologies import leaf_spine, mark_programmable, place_jobs

    sc = leaf_spine(24, 12, 24)
    mark_programmable(sc, 0.5, seed=1)
    place_jobs(sc, jobs=jobs, tasks_per_job=2, workers_per_job=40, seed=1)
    return sc


def make_controller(sc):
    """The main window when GUI-core's is importable (canvas, docks and all), else the planning
    controller on its own with its panels shown."""
    try:
        from inaplanner.gui.main_window import MainWindow
        from inaplanner.model.document import ScenarioDocument
    except ImportError:
        MainWindow = None  # noqa: N806
    if MainWindow is not None:
        window = MainWindow(ScenarioDocument(sc))
        window.headless_errors = True
        window.resize(1400, 900)
        window.show()
        return window.planning, window, "main window"
    from inaplanner.gui.planning.controller import PlanningController

    errors: list[str] = []
    ctrl = PlanningController(lambda: sc, lambda overlay: None, lambda t, m: errors.append(m))
    for w in (ctrl.planner_panel, ctrl.results_panel, ctrl.compare_panel, ctrl.whatif_panel):
        w.show()
    return ctrl, None, "planning panels (standalone)"


class Ticker:
    """A 5 ms precise timer on the UI thread recording (wall time, UI-thread CPU time) per tick."""

    def __init__(self) -> None:
        from PySide6.QtCore import Qt, QTimer

        self.ticks: list[tuple[float, float]] = []
        self.timer = QTimer()
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.setInterval(TICK_MS)
        self.timer.timeout.connect(
            lambda: self.ticks.append((time.perf_counter(), time.thread_time(), time.process_time()))
        )

    def stats(self, start: float, end: float) -> dict:
        during = [t for t in self.ticks if start <= t[0] <= end]
        gaps = [(b[0] - a[0], b[1] - a[1], b[2] - a[2]) for a, b in zip(during, during[1:], strict=False)]
        walls = [g[0] for g in gaps]
        worst = max(gaps, default=(float("nan"), float("nan"), float("nan")))
        return {
            "ticks": len(during),
            "max_gap_ms": worst[0] * 1000,
            "max_gap_cpu_ms": worst[1] * 1000,
            "max_gap_proc_ms": worst[2] * 1000,
            "max_cpu_ms": max((g[1] for g in gaps), default=float("nan")) * 1000,
            "max_proc_ms": max((g[2] for g in gaps), default=float("nan")) * 1000,
            "p99_gap_ms": statistics.quantiles(walls, n=100)[98] * 1000 if len(walls) > 100 else float("nan"),
            "over_50ms": sum(1 for w in walls if w > 0.050),
        }


def idle_baseline(seconds: float) -> dict:
    from PySide6.QtCore import QEventLoop, QTimer

    ticker = Ticker()
    loop = QEventLoop()
    ticker.timer.start()
    start = time.perf_counter()
    QTimer.singleShot(int(seconds * 1000), loop.quit)
    loop.exec()
    ticker.timer.stop()
    return ticker.stats(start, time.perf_counter())


def measure(app, ctrl, planner: str, time_limit: float, backend: str) -> dict:
    from PySide6.QtCore import QEventLoop, QTimer

    panel = ctrl.planner_panel
    panel.select_planner(planner)
    panel.form().editors["time_limit"].setValue(time_limit)
    panel.backend_combo.setCurrentText(backend)
    ticker = Ticker()
    loop = QEventLoop()
    outcome: dict = {}

    def ended(run) -> None:
        outcome["run"] = run
        outcome["end"] = time.perf_counter()
        loop.quit()

    ticker.timer.start()
    app.processEvents()
    start = time.perf_counter()
    run = ctrl.run()
    run.ended.connect(ended)
    loop.exec()
    # the result lands in the list and the compare charts redraw: keep ticking a moment after
    settle = QEventLoop()
    QTimer.singleShot(300, settle.quit)
    settle.exec()
    ticker.timer.stop()
    r = outcome["run"]
    window = (start, outcome["end"] + 0.3)
    return {
        "window": window,
        "backend": backend,
        "state": r.state,
        "status": r.result.status if r.result else r.error,
        "objective": r.result.objective if r.result else None,
        "seconds": outcome["end"] - start,
        **ticker.stats(start, outcome["end"] + 0.3),
    }


def _line(m: dict) -> str:
    return (f"longest UI-thread gap {m['max_gap_ms']:.1f} ms (during it: UI thread on CPU "
            f"{m['max_gap_cpu_ms']:.1f} ms, this whole process {m['max_gap_proc_ms']:.1f} ms), "
            f"p99 {m['p99_gap_ms']:.1f} ms, gaps > 50 ms: {m['over_50ms']}; between two ticks at most "
            f"{m['max_cpu_ms']:.1f} ms UI-thread CPU and {m['max_proc_ms']:.1f} ms CPU of this process "
            f"(all its threads)")


class GcWatch:
    """Garbage collections in this process (each stops every thread): (start, seconds)."""

    def __init__(self) -> None:
        import gc

        self.pauses: list[tuple[float, float]] = []
        self._t = 0.0
        gc.callbacks.append(self._cb)

    def _cb(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._t = time.perf_counter()
        else:
            self.pauses.append((self._t, time.perf_counter() - self._t))

    def longest(self, start: float, end: float) -> float:
        return max((d for t, d in self.pauses if start <= t <= end), default=0.0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--planner", default="grid-exact")
    ap.add_argument("--time-limit", type=float, default=20.0)
    ap.add_argument("--jobs", type=int, default=6)
    ap.add_argument("--backend", choices=("thread", "process", "both"), default="both")
    args = ap.parse_args()

    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv)
    sc = build_scenario(args.jobs)
    ctrl, window, what = make_controller(sc)
    print(f"{what}; {len(sc.hosts())} hosts, {len(sc.switches())} switches, {len(sc.links)} links, "
          f"{len(sc.jobs)} jobs, {len(sc.tasks())} tasks; planner {args.planner}, time_limit {args.time_limit:g} s; "
          f"tick every {TICK_MS} ms")
    idle_baseline(1.0)  # the window's first paints and layout settle
    print(f"load average before: {', '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    print(f"   idle: no run, 5 s; {_line(idle_baseline(5.0))}")
    backends = ("thread", "process") if args.backend == "both" else (args.backend,)
    for backend in backends:
        gc_watch = GcWatch()
        m = measure(app, ctrl, args.planner, args.time_limit, backend)
        obj = "-" if m["objective"] is None else f"{m['objective']:.4g}"
        print(f"{backend:>7}: run {m['seconds']:.1f} s ({m['state']}, {m['status']}, objective {obj}); "
              f"{m['ticks']} ticks; {_line(m)}; longest GC pause in the GUI process during the run "
              f"{gc_watch.longest(*m['window']) * 1000:.1f} ms")
        import gc

        gc.callbacks.remove(gc_watch._cb)
    print(f"load average after: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    ctrl.shutdown()
    if window is not None:
        window.close()


if __name__ == "__main__":
    main()
