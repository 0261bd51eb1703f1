"""Suite-wide settings: Qt renders offscreen unless a test starts its own X server, and the
window's settings and recovery files go to one directory of the run's own, removed when the run
ends (the user's own are never touched, and no run leaves one behind in the temp folder)."""

import atexit
import gc
import os
import shutil
import tempfile

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
_STATE = tempfile.mkdtemp(prefix="inaplanner-tests-")
atexit.register(shutil.rmtree, _STATE, True)
os.environ.setdefault("XDG_CONFIG_HOME", os.path.join(_STATE, "config"))
os.environ.setdefault("XDG_STATE_HOME", os.path.join(_STATE, "state"))


#: With the automatic collector off, the whole heap is collected after every this many tests
#: that used no Qt.
FULL_COLLECT_EVERY = 25
_since_full = [0]


@pytest.fixture(autouse=True)
def _collect_on_the_main_thread(request):
    """The GUI turns Python's automatic collector off and collects from its UI-thread timer
    (``inaplanner.gui.gcguard``); between tests no event loop runs, so collect here instead.

    After a test that used Qt (``qtbot``), the whole heap: its windows must be gone before the
    next test's event loop runs, or that loop would spend its first turn deleting them. After
    any other test, the young generations: with the collector off, everything the test made and
    did not free is there, so its garbage cycles go now, in milliseconds; the whole heap every
    ``FULL_COLLECT_EVERY`` such tests. Once the suite's heap has grown, a full collection takes
    about 0.35 s; after every one of the 1,162 tests run with the collector off it took 408 of
    the suite's 960 s."""
    yield
    if not gc.isenabled():
        _since_full[0] += 1
        if "qtbot" in request.fixturenames or _since_full[0] >= FULL_COLLECT_EVERY:
            _since_full[0] = 0
            gc.collect()
        else:
            gc.collect(1)


@pytest.fixture
def make_window(qtbot, tmp_path, monkeypatch):
    """The main window with every plug-in (offscreen, errors recorded instead of dialogs)."""
    monkeypatch.setenv("INAPLANNER_RECOVERY_DIR", str(tmp_path / "recovery"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    from inaplanner.gui.main_window import MainWindow
    from inaplanner.model.document import ScenarioDocument

    made = []

    def make(scenario):
        w = MainWindow(ScenarioDocument(scenario), theme_mode="light")  # with every plug-in
        w.headless_errors = True
        qtbot.addWidget(w)
        made.append(w)
        return w

    yield make
    for w in made:
        monitor = getattr(w, "monitor", None)
        if monitor is not None:
            monitor.shutdown()
        planning = getattr(w, "planning", None)
        if planning is not None:
            planning.shutdown()
        w.autosave.finish()


@pytest.fixture(autouse=True)
def _delete_closed_widgets():
    """After each test (pytest-qt has closed its widgets and called ``deleteLater``), delete them
    now: Qt would otherwise delete them from the next event loop that runs, in a later test."""
    yield
    import sys

    core = sys.modules.get("PySide6.QtCore")  # tests that never loaded Qt have nothing to delete
    if core is not None and core.QCoreApplication.instance() is not None:
        core.QCoreApplication.sendPostedEvents(None, core.QEvent.Type.DeferredDelete)
