"""Speed of the canvas on big networks (issue 6): open + lay out fat-tree k=16 (< 1 s) and k=32
(< 3 s), repaint an overlay on k=32 (< 100 ms), and how long a frame of panning takes.

For each k the script writes the fat-tree (half the switches programmable with 2 pipelines, 4 jobs
x 2 PSs placed) to a native file without positions, then times in one window:

- ``load``: reading the file (``inaplanner.io``: JSON parse, JSON-Schema check, model checks),
- ``layout``: the tiered layout (``inaplanner.topologies.layout``),
- ``scene``: building the scene (node items, link arrays),
- ``first paint``: fit to view and paint the viewport once (link paths are built here).

"open + layout" is their sum. The overlay uses a plan whose routes follow each PS's shortest-path
tree with merges at every programmable switch (rates max-min fair): ``evaluate`` (not GUI code),
``overlay data`` (``overlay_from_evaluation``) and ``set + repaint`` (put it on the canvas and
zoomed out to the whole network,
let the event loop paint it once). Panning: one frame = scroll 40 px and let Qt paint (it scrolls the pixels and
paints the uncovered strip, as when the user drags); ``full frame`` = repaint the whole viewport
(what a zoom step costs). Median of 15 frames, worst in brackets; zoomed out, mid and near zoom.

A second scenario times the flow overlay of a big realistic plan (``--plan-k``, default 16 and
32): ``bench_evaluate.build`` (1,000 workers x 4 PSs on one fat-tree, up-down paths, merges at
programmable edge switches). For each zoom (zoomed out, mid 0.5, near 1.2 centred on a PS):
``set + paint`` = put the overlay on the canvas and paint the viewport once, ``links + flows`` =
the part of that paint spent in the link and flow layers (rebuild included; target < 100 ms on
k=32), ``repaint`` = paint the whole viewport again with the overlay up (a zoom step). Best of 3.

Every figure is CPU time of this process (``time.process_time``), so a busy shared machine does not
inflate it; wall-clock time is printed beside the totals. Prints figures; asserts nothing.
Run: ``python benchmarks/bench_gui.py [--k 16 32] [--plan-k 16 32]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def timed(fn: Callable[[], object]) -> tuple[object, float, float]:
    """(result, cpu ms, wall ms)."""
    c, w = time.process_time(), time.perf_counter()
    out = fn()
    return out, (time.process_time() - c) * 1000, (time.perf_counter() - w) * 1000


def build_file(k: int, path: str) -> int:
    from inaplanner.io.native import save_scenario
    from inaplanner.topologies import fat_tree, mark_programmable, place_jobs

    sc = fat_tree(k)
    mark_programmable(sc, 0.5, seed=1, pipelines=2)
    place_jobs(sc, jobs=4, tasks_per_job=2, workers_per_job=min(64, len(sc.hosts()) // 8), seed=1)
    for n in sc.nodes:
        n.pos = None  # the timed open lays it out
    save_scenario(sc, path)
    return len(sc.links)


def tree_plan(sc):
    """Each worker follows the shortest-path tree of its task's PS, merging at every programmable
    switch on the way (one aggregate per switch continues along the tree: a valid plan)."""
    import networkx as nx

    from inaplanner.evaluate import max_min_rates, with_rates
    from inaplanner.io.native import scenario_sha256
    from inaplanner.model import Plan, PlannerInfo, Route, TaskPlan

    g = sc.graph()
    switches = {s.id for s in sc.switches()}
    prog = {s.id for s in sc.switches() if s.programmable}
    tasks = []
    for job in sc.jobs:
        for ps in job.parameter_servers:
            paths = nx.single_source_shortest_path(g.subgraph(switches | {ps, *job.workers}), ps)
            routes = []
            for w in job.workers:
                path = list(reversed(paths[w]))
                routes.append(Route(w, path, [n for n in path[1:-1] if n in prog]))
            tasks.append(TaskPlan(job.id, ps, 1.0, routes))
    plan = Plan(scenario_sha256(sc), PlannerInfo("shortest-path tree"), tasks)
    return with_rates(plan, max_min_rates(sc, plan))


def frames(app, canvas, full: bool, n: int = 15) -> tuple[float, float]:
    """CPU ms per frame: (median, worst)."""
    bar = canvas.horizontalScrollBar()
    times = []
    for i in range(n):
        step = 40 if (i // 5) % 2 == 0 else -40

        def frame(step: int = step) -> None:
            bar.setValue(bar.value() + step)
            if full:
                canvas.viewport().repaint()
            app.processEvents()

        times.append(timed(frame)[1])
    return statistics.median(times), max(times)


def run(k: int) -> None:
    from inaplanner.evaluate import evaluate
    from inaplanner.gui.app import application
    from inaplanner.gui.files import read_scenario
    from inaplanner.gui.main_window import MainWindow
    from inaplanner.io.native import check_schema, read_json
    from inaplanner.topologies.layout import auto_layout
    from inaplanner.views.overlay import overlay_from_evaluation

    app = application(theme_mode="light")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, f"fat_tree_k{k}.json")
        links = build_file(k, path)
        os.environ["INAPLANNER_RECOVERY_DIR"] = os.path.join(tmp, "recovery")
        window = MainWindow(plugins=False, theme_mode="light")
        window.resize(1280, 800)
        window.show()
        app.processEvents()
        canvas = window.canvas

        doc = read_json(path)
        _, t_schema, _ = timed(lambda: check_schema(doc, "scenario"))
        (sc, _notes, _native), t_read, w_read = timed(lambda: read_scenario(path))  # lays out too
        _, t_layout, w_layout = timed(lambda: auto_layout(sc))
        t_load, w_load = t_read - t_layout, w_read - w_layout
        _, t_scene, w_scene = timed(lambda: window.set_document(sc, path, validated=True))

        def first_paint() -> None:
            canvas.fit()
            canvas.viewport().repaint()
            app.processEvents()

        _, t_paint, w_paint = timed(first_paint)
        total = t_load + t_layout + t_scene + t_paint
        wall = w_load + w_layout + w_scene + w_paint
        print(f"fat-tree k={k}: {len(sc.hosts())} hosts, {len(sc.switches())} switches, {links} links")
        print(f"  open + layout        {total:7.0f} ms cpu ({wall:.0f} ms wall)   target {'1 s' if k <= 16 else '3 s'}")
        print(f"    load file          {t_load:7.0f} ms   (JSON-Schema check alone: {t_schema:.0f} ms)")
        print(f"    tiered layout      {t_layout:7.0f} ms")
        print(f"    scene              {t_scene:7.0f} ms")
        print(f"    first paint (fit)  {t_paint:7.0f} ms")
        print(f"  open + layout without the schema check: {total - t_schema:.0f} ms cpu")

        plan, t_plan, _ = timed(lambda: tree_plan(sc))
        ev, t_eval, _ = timed(lambda: evaluate(sc, plan))
        assert ev.valid, ev.errors[:3]
        ov, t_ov, _ = timed(lambda: overlay_from_evaluation(ev))

        def put(overlay) -> Callable[[], int]:
            def go() -> int:
                before = canvas.paints
                canvas.set_overlay(overlay)
                for _ in range(3):  # the scene's queued update, then the viewport's paint
                    app.processEvents()
                return canvas.paints - before
            return go

        paints, t_set, w_set = timed(put(ov))
        assert paints >= 1, "the overlay was not painted"
        ov2 = overlay_from_evaluation(ev, task_filter=ov.tasks[0])
        _, t_set2, w_set2 = timed(put(ov2))
        _, t_set3, w_set3 = timed(put(ov))
        print(f"  overlay: {len(ov.tasks)} tasks, {len(ov.segments)} flow segments "
              f"(plan built in {t_plan:.0f} ms, evaluate {t_eval:.0f} ms)")
        print(f"    overlay data       {t_ov:7.0f} ms")
        print(f"    set + repaint      {t_set:7.0f} ms cpu ({w_set:.0f} ms wall, {paints} paint)   target 100 ms")
        print(f"    next overlays      {t_set2:7.0f} ms, {t_set3:.0f} ms cpu ({w_set2:.0f}, {w_set3:.0f} ms wall)")
        print(f"    data + set + repaint {t_ov + t_set:5.0f} ms cpu")

        ps = sc.jobs[0].parameter_servers[0]
        for name, scale in (("zoomed out", None), ("mid zoom", 0.5), ("near zoom", 1.2)):
            if scale is None:
                canvas.fit()
            else:
                canvas.resetTransform()
                canvas.scale(scale, scale)
                canvas.centerOn(canvas.node_item(ps))
            canvas.viewport().repaint()
            app.processEvents()
            med, worst = frames(app, canvas, full=False)
            fmed, fworst = frames(app, canvas, full=True)
            print(f"  pan, {name:<10} ({canvas.lod():>4} detail, scale {canvas.scale_factor():.4f}): "
                  f"{med:5.1f} ms per frame (worst {worst:.1f}); full frame {fmed:5.1f} ms (worst {fworst:.1f})")
        window.autosave.finish()
        window.close()
        window.deleteLater()
        app.processEvents()


class LayerClock:
    """CPU ms spent in the link and flow layers' ``paint`` (a class-level wrapper, installed
    before the items are made)."""

    def __init__(self) -> None:
        from inaplanner.gui.canvas.items import FlowLayer, LinkLayer

        self.ms = 0.0
        self._patched = []
        for cls in (LinkLayer, FlowLayer):
            orig = cls.paint

            def paint(item, *args, _orig=orig, **kwargs):
                c = time.process_time()
                try:
                    return _orig(item, *args, **kwargs)
                finally:
                    self.ms += (time.process_time() - c) * 1000

            cls.paint = paint
            self._patched.append((cls, orig))

    def close(self) -> None:
        for cls, orig in self._patched:
            cls.paint = orig


def run_plan(k: int, workers: int = 1000, tasks: int = 4) -> None:
    """The flow overlay of ``bench_evaluate.build`` (see the module docstring)."""
    from bench_evaluate import build

    from inaplanner.evaluate import evaluate
    from inaplanner.gui.app import application
    from inaplanner.gui.main_window import MainWindow
    from inaplanner.topologies.layout import auto_layout
    from inaplanner.views.overlay import overlay_from_evaluation

    app = application(theme_mode="light")
    clock = LayerClock()  # before the window: PySide looks an item's overrides up when it is made
    sc, plan = build(k, workers, tasks)
    auto_layout(sc)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["INAPLANNER_RECOVERY_DIR"] = os.path.join(tmp, "recovery")
        window = MainWindow(plugins=False, theme_mode="light")
        window.resize(1280, 800)
        window.show()
        app.processEvents()
        window.set_document(sc, None, validated=True)
        canvas = window.canvas
        canvas.fit()
        canvas.viewport().repaint()
        app.processEvents()
        ev = evaluate(sc, plan)
        data = []
        for _ in range(3):
            ov, t_ov, _ = timed(lambda: overlay_from_evaluation(ev))
            data.append(t_ov)
        print(f"fat-tree k={k} plan: {len(plan.tasks)} tasks, {sum(len(t.routes) for t in plan.tasks)} routes, "
              f"{len(sc.links)} links, {len(ov.segments)} flow segments; overlay data {min(data):.0f} ms")
        ps = sc.jobs[0].parameter_servers[0]
        try:
            for name, scale in (("zoomed out", None), ("mid zoom", 0.5), ("near zoom", 1.2)):
                if scale is None:
                    canvas.fit()
                else:
                    canvas.resetTransform()
                    canvas.scale(scale, scale)
                    canvas.centerOn(canvas.node_item(ps))
                sets, layers, repaints = [], [], []
                for _ in range(3):
                    canvas.set_overlay(None)
                    canvas.viewport().repaint()
                    app.processEvents()
                    clock.ms = 0.0

                    def put() -> None:
                        canvas.set_overlay(ov)
                        canvas.viewport().repaint()

                    _, t_set, _ = timed(put)
                    sets.append(t_set)
                    layers.append(clock.ms)
                    _, t_re, _ = timed(canvas.viewport().repaint)
                    repaints.append(t_re)
                    app.processEvents()
                print(f"  {name:<10} (scale {canvas.scale_factor():.3f}): set + paint {min(sets):6.0f} ms, "
                      f"links + flows {min(layers):6.0f} ms, repaint {min(repaints):6.0f} ms cpu")
        finally:
            clock.close()
        window.autosave.finish()
        window.close()
        window.deleteLater()
        app.processEvents()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--k", type=int, nargs="*", default=[16, 32])
    ap.add_argument("--plan-k", type=int, nargs="*", default=[16, 32],
                    help="fat-trees for the flow-overlay figures (bench_evaluate's plan)")
    args = ap.parse_args(argv)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"python {sys.version.split()[0]}, Qt platform {os.environ.get('QT_QPA_PLATFORM')}, "
          f"{os.cpu_count()} CPU(s), load average {load:.1f}")
    for k in args.k:
        run(k)
    for k in args.plan_k:
        run_plan(k)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
