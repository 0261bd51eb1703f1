"""Monitor mode of the desktop app (issue 8): observed load on the canvas with the planner
overlay's colour scale, planned vs observed per link, pyqtgraph time series of selected links,
alerts, recording and replay.

The data side (:mod:`inaplanner.views.monitor`) is Qt-free; the main window installs the panel with
:func:`.panel.install`.
"""
