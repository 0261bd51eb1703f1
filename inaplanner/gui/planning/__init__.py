"""Planning in the desktop app (issue 6, items 6-9): planner panel, runs off the UI thread, results
list and canvas overlay, compare charts and diff, what-if.

This module imports no Qt at load time, and neither do ``runs``, ``execution``, ``whatif_model``,
``compare_data`` and ``diffing``: they work without a display (a planner child process imports
only those). ``install(window)`` is called by the main window at the end of its constructor.
"""

from __future__ import annotations

from typing import Any


def install(window: Any) -> Any:
    """Add the Planner, Results, Compare and What-if docks and the Plan menu to ``window``; return
    the controller (also kept as ``window.planning``)."""
    from inaplanner.gui.planning.wiring import install_on_window

    return install_on_window(window)


__all__ = ["install"]
