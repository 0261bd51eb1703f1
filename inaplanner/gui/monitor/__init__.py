"""Monitor mode of the desktop app (issue 8): observed load on the canvas with the planner
overlay's colour scale, planned vs observed per link, pyqtgraph time series of selected links,
alerts, recording and replay.

Qt is imported only by :func:`install` (the data side, :mod:`inaplanner.views.monitor`, is
Qt-free). The main window calls ``install(window)`` at the end of its constructor.
"""

from __future__ import annotations

from typing import Any


def install(window: Any) -> Any:
    """Add the Monitor dock and the View > Monitor mode action; return the panel (also kept as
    ``window.monitor``)."""
    from inaplanner.gui.monitor.panel import install_on_window

    return install_on_window(window)


__all__ = ["install"]
