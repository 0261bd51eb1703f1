"""Speed and memory of the canvas at datacenter scale (issue 14, item 8): a fat-tree k=48 and k=64
(65,536 hosts, 5,120 switches) opened in the main window with pods collapsed (semantic zoom), the
overlay repainted, the view panned.

For each k the script writes the fat-tree (half the switches programmable with 2 pipelines, 4 jobs
x 2 PSs placed) to a native file without positions, then times in one window:

- ``load file``: reading it (JSON parse, JSON-Schema check, model checks: not canvas code),
- ``layout``: the tiered layout (shaped like the window),
- ``scene``: the node items, link arrays, the pod grouping and the boxes/bundles of the closed pods,
- ``first paint``: fit to view (pods collapse) and paint the viewport once.

"open" is layout + scene + first paint (the canvas's part), "open from file" adds the load. Then
with a shortest-path-tree plan (``bench_gui.tree_plan``): ``overlay repaint`` = put the evaluated
overlay on the canvas and paint the viewport (pods collapsed at fit, then with every pod open zoomed
in); the hot-list tables, filled after that paint (timed apart); a task focus; panning at twice the
fit zoom (pods still boxes) and zoomed in: one frame = scroll 40 px and let Qt paint, a full frame =
repaint the whole viewport (median of 15, worst in brackets). Memory: the process's resident set
(``/proc/self/status`` VmRSS) before the window, after the open and after the overlay, and its peak
(VmHWM).

Every figure is CPU time of this process (``time.process_time``) so a busy shared machine does not
inflate it; wall-clock beside the totals. Prints figures; asserts nothing.
Run: ``python benchmarks/bench_canvas_scale.py [--k 48 64]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_gui import build_file, frames, timed, tree_plan  # noqa: E402


def rss_mb(field: str = "VmRSS") -> float:
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return float("nan")


def run(k: int) -> None:
    from inaplanner.evaluate import evaluate
    from inaplanner.gui.app import application
    from inaplanner.gui.files import read_scenario
    from inaplanner.gui.main_window import MainWindow
    from inaplanner.topologies.layout import auto_layout
    from inaplanner.views.overlay import overlay_from_evaluation

    app = application(theme_mode="light")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, f"fat_tree_k{k}.json")
        links = build_file(k, path)
        os.environ["INAPLANNER_RECOVERY_DIR"] = os.path.join(tmp, "recovery")
        mem0 = rss_mb()
        window = MainWindow(plugins=False, theme_mode="light")
        window.resize(1600, 1000)
        window.show()
        app.processEvents()
        canvas = window.canvas
        vp = canvas.viewport()
        (sc, _notes, _native), t_read, w_read = timed(lambda: read_scenario(path, ahead=True))  # lays out and groups too
        aspect = vp.width() / max(vp.height(), 1)
        _, t_layout, w_layout = timed(lambda: auto_layout(sc, aspect))
        t_load, w_load = t_read - t_layout, w_read - w_layout
        _, t_scene, w_scene = timed(lambda: window.set_document(sc, path, validated=True))

        def first_paint() -> None:
            canvas.fit()
            vp.repaint()
            app.processEvents()

        _, t_paint, w_paint = timed(first_paint)
        scene = canvas.canvas_scene()
        mem_open = rss_mb()
        t_open, w_open = t_layout + t_scene + t_paint, w_layout + w_scene + w_paint
        closed = len(canvas.closed_groups())
        print(f"fat-tree k={k}: {len(sc.hosts())} hosts, {len(sc.switches())} switches, {links} links; "
              f"window 1600x1000")
        print(f"  open (layout + scene + first paint) {t_open:7.0f} ms cpu ({w_open:.0f} ms wall)   target 5 s")
        print(f"    tiered layout      {t_layout:7.0f} ms")
        print(f"    scene              {t_scene:7.0f} ms   (the grouping is made while the file is read)")
        print(f"    first paint (fit)  {t_paint:7.0f} ms   ({closed} pods/planes collapsed, "
              f"{scene.zstate.bundle_count if scene.zstate else 0} bundles drawn)")
        print(f"  open from file       {t_open + t_load:7.0f} ms cpu ({w_open + w_load:.0f} ms wall; "
              f"loading the file alone {t_load:.0f} ms)")
        print(f"    on the window's thread {t_scene + t_paint:5.0f} ms   (the rest runs in a file job: "
              f"the window goes on meanwhile)")

        plan, t_plan, _ = timed(lambda: tree_plan(sc))
        ev, t_eval, _ = timed(lambda: evaluate(sc, plan))
        ov, t_ov, _ = timed(lambda: overlay_from_evaluation(ev))

        def put(overlay) -> None:
            canvas.set_overlay(overlay)
            vp.repaint()

        def settle() -> None:
            for _ in range(3):
                app.processEvents()

        _, t_set, w_set = timed(lambda: put(ov))
        _, t_lists, _ = timed(settle)  # the Links and Switches tables (deferred, shown or not)
        _, t_set2, _ = timed(lambda: put(overlay_from_evaluation(ev)))
        settle()
        mem_ov = rss_mb()
        print(f"  overlay ({len(ov.tasks)} tasks; plan {t_plan:.0f} ms, evaluate {t_eval:.0f} ms, "
              f"overlay data {t_ov:.0f} ms)")
        print(f"    repaint at fit, pods collapsed  {t_set:6.0f} ms cpu ({w_set:.0f} ms wall); again {t_set2:.0f} ms"
              f"   target 100 ms")
        _, t_focus, _ = timed(lambda: (canvas.step_task(1), vp.repaint()))
        settle()
        print(f"    task focus (T)                  {t_focus:6.0f} ms cpu")
        print(f"    hot lists (Links + Switches tables, after the paint) {t_lists:.0f} ms cpu")
        canvas.step_task(-1)
        canvas.zoom_by(2.0)  # at fit there is nothing to pan: twice as close, pods still boxes
        vp.repaint()
        med, worst = frames(app, canvas, full=False)
        fmed, fworst = frames(app, canvas, full=True)
        print(f"  pan at 2x fit ({len(canvas.closed_groups())} groups closed): {med:5.1f} ms per frame "
              f"(worst {worst:.1f}), full frame {fmed:.1f} ms (worst {fworst:.1f})")
        # zoomed in: every pod opens by itself; the repaint then draws links one by one
        ps = sc.jobs[0].parameter_servers[0]
        canvas.resetTransform()
        canvas.zoom_by(0.6)
        canvas.centerOn(canvas.node_item(ps))
        vp.repaint()
        app.processEvents()
        opened = len(canvas.open_groups())
        _, t_set3, _ = timed(lambda: put(overlay_from_evaluation(ev)))
        settle()
        med, worst = frames(app, canvas, full=False)
        fmed, fworst = frames(app, canvas, full=True)
        print(f"  zoomed in (scale {canvas.scale_factor():.2f}, {opened} groups open): overlay repaint "
              f"{t_set3:.0f} ms cpu; pan {med:.1f} ms per frame (worst {worst:.1f}), full frame {fmed:.1f} ms "
              f"(worst {fworst:.1f})")
        print(f"  memory: {mem0:.0f} MB before the window, {mem_open:.0f} MB open, {mem_ov:.0f} MB with the "
              f"overlay, peak {rss_mb('VmHWM'):.0f} MB")
        window.autosave.finish()
        window.close()
        window.deleteLater()
        app.processEvents()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--k", type=int, nargs="*", default=[48, 64])
    args = ap.parse_args(argv)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"python {sys.version.split()[0]}, Qt platform {os.environ.get('QT_QPA_PLATFORM')}, "
          f"{os.cpu_count()} CPU(s), load average {load:.1f}")
    for k in args.k:
        run(k)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
