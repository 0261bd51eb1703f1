"""Planning in the desktop app (issue 6, items 6-9): planner panel, runs off the UI thread, results
list and canvas overlay, compare charts and diff, what-if.

The Qt-free models these widgets show (runs, execution, what-if, compare data, diffing) live in
:mod:`inaplanner.views`. The main window installs the plug-in with :func:`.wiring.install`.
"""
