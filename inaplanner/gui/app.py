"""Starting the desktop planner: the application object, the window on a scenario (and a plan's
overlay), the offer to restore a crashed session, and one-shot screenshots."""

from __future__ import annotations

import logging
import logging.handlers
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QSize, QStandardPaths, Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication

from inaplanner.errors import InaplannerError, ValidationError
from inaplanner.gui import theme
from inaplanner.gui.filejobs import FileJob
from inaplanner.gui.files import read_scenario
from inaplanner.gui.gcguard import ensure_main_thread_gc
from inaplanner.gui.main_window import MainWindow
from inaplanner.io.atomic import atomic_write_bytes
from inaplanner.model import Scenario
from inaplanner.views.overlay import overlay_from_evaluation

SAMPLE_NAME = "leaf_spine_small.json"


def application(argv: list[str] | None = None, theme_mode: str = "system") -> QApplication:
    """The QApplication (created once), named, with the icon and the light/dark look."""
    app = QApplication.instance()
    if app is None:
        QApplication.setHighDpiScaleFactorRoundingPolicy(Qt.HighDpiScaleFactorRoundingPolicy.PassThrough)
        app = QApplication(argv if argv is not None else sys.argv[:1])
    assert isinstance(app, QApplication)
    app.setApplicationName("inaplanner")
    app.setOrganizationName("inaplanner")
    app.setApplicationDisplayName("inaplanner")
    app.setDesktopFileName("inaplanner")
    app.setWindowIcon(theme.icon("inaplanner"))
    theme.apply(app, theme_mode)
    ensure_main_thread_gc()
    return app


LOG_NAME = "inaplanner.log"
_log_handler: logging.Handler | None = None


def log_folder() -> Path | None:
    """The platform's folder for the program's state (Qt's StateLocation where Qt has it, e.g.
    ``$XDG_STATE_HOME/inaplanner/inaplanner`` on Linux; else AppLocalDataLocation)."""
    locations = QStandardPaths.StandardLocation
    where = getattr(locations, "StateLocation", locations.AppLocalDataLocation)
    folder = QStandardPaths.writableLocation(where)
    return Path(folder) if folder else None


def install_log_file() -> Path | None:
    """Send the program's log (at the level the command line set: ``-v``, ``--log-level``) to
    ``inaplanner.log`` in :func:`log_folder` as well, rotated at 1 MB; None when no folder can be
    written (the GUI runs without a log file then)."""
    global _log_handler
    folder = log_folder()
    if folder is None:
        return None
    path = folder / LOG_NAME
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handler = logging.handlers.RotatingFileHandler(path, maxBytes=1_000_000, backupCount=3,
                                                       encoding="utf-8")
    except OSError:
        return None
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    if _log_handler is not None:
        root.removeHandler(_log_handler)
        _log_handler.close()
    _log_handler = handler
    root.addHandler(handler)
    from inaplanner import __version__

    logging.getLogger("inaplanner.gui").info("inaplanner %s started; log file %s", __version__, path)
    return path


def sample_scenario() -> tuple[Scenario, str | None]:
    """The bundled sample (``sample_topologies/leaf_spine_small.json``), or a small leaf-spine
    built on the spot when the file is not there."""
    from inaplanner import SAMPLES

    path = Path(SAMPLES) / SAMPLE_NAME
    if path.exists():
        sc, _notes, _native = read_scenario(str(path))
        return sc, str(path)
    from inaplanner.topologies import leaf_spine

    return leaf_spine(4, 2, 4, name="leaf-spine sample"), None


def load_into(window: MainWindow, scenario: str | None, plan: str | None, task: str | None = None) -> None:
    """Open the scenario (``None`` or ``"sample"``: the sample) and paint the plan's overlay.

    Reading, checking and evaluating run in a file job (7 s at fat-tree k=64, 1.4 s of it the
    plan's evaluation), so a window already shown goes on meanwhile. Raises what the reading
    raised (the command line says it in one line); a Stop leaves the window as it was."""
    from inaplanner.evaluate import evaluate
    from inaplanner.io.native import load_plan

    sample = scenario in (None, "sample")

    def work(job: FileJob) -> tuple:
        if sample:
            sc, path = sample_scenario()
            notes: list[str] = []
            native = True
        else:
            path = str(scenario)
            sc, notes, native = read_scenario(path, job.check, ahead=True)
        p = ev = overlay = None
        if plan:
            job.check()
            p = load_plan(plan)
            job.check()
            ev = evaluate(sc, p, check_hash=True)
            overlay = overlay_from_evaluation(ev, task_filter=task)
        return sc, path, notes, native, p, ev, overlay

    what = "opening " + ("the sample" if sample else os.path.basename(str(scenario)))
    job = window.files.jobs.run(what, work)
    if job.error is not None:
        raise job.error
    if job.result is None:
        window.status(f"{what} stopped")
        return
    sc, path, notes, native, p, ev, overlay = job.result
    window.set_document(sc, path if native else None, validated=True)
    if not sample:
        window.files.add_recent(str(scenario))
        if notes:
            window.status("; ".join(notes))
    if p is not None:
        window.opened_plan = p  # monitor mode compares observed load with it
        window.canvas.set_overlay(overlay)
        for w in ev.warnings[:1]:
            window.status(f"plan: {w}")
        if ev.errors:
            window.status(f"plan has {len(ev.errors)} error(s): {ev.errors[0]}")


def encode_png(image: QImage) -> bytes:
    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buf, "PNG"):
        raise InaplannerError("could not encode the screenshot as PNG")
    buf.close()
    return bytes(data.data())


def zoom_to_groups(window: MainWindow, groups: Sequence[str]) -> None:
    """Open these pods (racks, planes) and zoom the canvas to them."""
    from PySide6.QtCore import QRectF, Qt

    from inaplanner.views.semantic import network_grouping

    grouping = network_grouping(window.scenario())
    known = {g.id: g for g in grouping.groups}
    rect = QRectF()
    for gid in groups:
        if gid not in known:
            raise ValidationError(f"--open {gid!r}: no such group (e.g. {', '.join(list(known)[:4])})")
        if gid not in window.canvas.open_groups():
            window.canvas.toggle_group(gid)
        for node in known[gid].members:
            rect = rect.united(window.canvas.node_item(node).sceneBoundingRect())
    if not rect.isNull():
        pad = 0.08 * max(rect.width(), rect.height())
        window.canvas.fitInView(rect.adjusted(-pad, -pad, pad, pad), Qt.AspectRatioMode.KeepAspectRatio)


def screenshot(window: MainWindow, out: str, size: QSize | None = None,
               open_groups: Sequence[str] = ()) -> QImage:
    """Show the window, let it paint, fit the network (or zoom to ``open_groups``, opened), and
    write it to ``out`` (PNG, atomic)."""
    app = QApplication.instance()
    if size is not None:
        window.resize(size)
    window.show()
    for _ in range(3):
        app.processEvents()
    for dock in getattr(window, "raise_after_show", []):
        dock.raise_()
        app.processEvents()
    window.canvas.fit()
    for _ in range(3):
        app.processEvents()
    if open_groups:
        zoom_to_groups(window, open_groups)
        for _ in range(3):
            app.processEvents()
    image = window.grab().toImage()
    if image.isNull() or image.width() == 0:
        raise InaplannerError("the window rendered an empty image")
    atomic_write_bytes(out, encode_png(image))
    return image


def parse_size(text: str) -> QSize:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise ValidationError(f"size {text!r} is not WIDTHxHEIGHT (e.g. 1280x800)") from None
    if w < 200 or h < 150:
        raise ValidationError(f"size {text!r} is too small (at least 200x150)")
    return QSize(w, h)


def load_sweep(window: MainWindow, path: str, planner: str | None = None) -> None:
    """Open a sweep result file in Tools > Resilience Sweep and paint its criticality overlay."""
    from inaplanner.io.native import scenario_sha256
    from inaplanner.sweeps.store import load_results

    meta, rows = load_results(path)
    if meta["identity"].get("scenario_sha256") != scenario_sha256(window.scenario()):
        window.status(f"{path}: the sweep was run on another version of the scenario")
    dialog = window.sweep.open()
    dialog.output.setText(path)
    dialog.set_rows(rows)
    if planner:
        dialog.overlay_planner.setCurrentText(planner)


def run(scenario: str | None = None, plan: str | None = None, screenshot_path: str | None = None,
        size: str = "1280x800", theme_mode: str = "system", task: str | None = None,
        sweep: str | None = None, open_groups: Sequence[str] = (), replay: str | None = None) -> int:
    """``inaplanner gui``: the window, or with ``screenshot_path`` one PNG and exit."""
    if screenshot_path and not os.environ.get("QT_QPA_PLATFORM") and not (
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    ):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"  # a screenshot needs no screen
    qsize = parse_size(size)
    app = application(theme_mode=theme_mode)
    install_log_file()
    window = MainWindow(theme_mode=theme_mode)
    if screenshot_path:
        window.headless_errors = True
    window.resize(qsize)
    if not screenshot_path:
        window.show()  # at once: a large file is read while the window says so
    try:
        load_into(window, scenario, plan, task)
        if sweep:
            load_sweep(window, sweep)
        if replay:
            if plan:
                window.monitor.use_current_plan()  # the --plan: alerts are departures from it
            # read on a helper thread, the window going on and the dock saying how far it got
            window.monitor.dock.show()
            compare = getattr(getattr(window, "planning", None), "compare_dock", None)
            if compare is not None:
                compare.hide()  # the monitor dock shares its place: show the alerts instead
            window.raise_after_show = [window.monitor.dock]
            if window.monitor.open_recording(replay, wait=True):
                window.monitor.set_mode(True)
            elif getattr(window, "_shut_down", False):
                return 0  # the window was closed while it read
            elif window.monitor.open_outcome == "stopped":
                window.status(f"reading {os.path.basename(replay)} stopped")  # Stop: the window stays
            else:
                why = window.monitor.open_error or "the recording could not be opened on this scenario"
                raise InaplannerError(why if replay in why or os.path.basename(replay) in why else f"{replay}: {why}")
    except InaplannerError:
        window.autosave.finish()
        window.hide()
        window.deleteLater()
        raise
    if screenshot_path:
        screenshot(window, screenshot_path, qsize, open_groups)
        window.autosave.finish()
        window.close()
        return 0
    window.show()
    window.canvas.fit()
    if open_groups:
        zoom_to_groups(window, open_groups)
    window.autosave.offer_restore()
    return int(app.exec())
