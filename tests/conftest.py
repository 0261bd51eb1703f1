"""Suite-wide settings: Qt renders offscreen unless a test starts its own X server."""

import gc
import os

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


@pytest.fixture(autouse=True)
def _collect_on_the_main_thread():
    """The GUI turns Python's automatic collector off and collects from its UI-thread timer
    (``inaplanner.gui.gcguard``); between tests no event loop runs, so collect here instead."""
    yield
    if not gc.isenabled():
        gc.collect()
