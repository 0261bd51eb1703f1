"""The Deploy dialog (issue 7, GUI part) over the Qt-free deployer in :mod:`inaplanner.deploy`.

* :mod:`.worker` — a call run off the UI thread with progress signals and a cancel flag.
* :mod:`.dialog` — the dialog: plan and testbed choice, emulated testbed, dry-run diff tree,
  deploy with a per-node progress table, live log, cancel (the deployer rolls back) and summary.
* :mod:`.wiring` — the Deploy menu on the main window (:func:`.wiring.install`, the plug-in entry).

The Qt-free models the dialog shows (per-node board, deploy sources) live in
:mod:`inaplanner.views.deploy_board` and :mod:`inaplanner.views.deploy_sources`.
"""
