"""The Deploy dialog (issue 7, GUI part) over the Qt-free deployer in :mod:`inaplanner.deploy`.

* :mod:`.board` (Qt-free) — per-node progress rows, the dry run's per-switch changes, the final
  summary, log lines.
* :mod:`.sources` (Qt-free) — which scenario and plan to deploy (the selected result or a plan
  file) and the testbed file.
* :mod:`.worker` — a call run off the UI thread with progress signals and a cancel flag.
* :mod:`.dialog` — the dialog: plan and testbed choice, emulated testbed, dry-run diff tree,
  deploy with a per-node progress table, live log, cancel (the deployer rolls back) and summary.
* :mod:`.wiring` — the Deploy menu on the main window.

Qt is imported only by :func:`install`; the main window calls it at the end of its constructor.
"""

from __future__ import annotations

from typing import Any


def install(window: Any) -> Any:
    """Add the Deploy menu (Deploy…, Start emulated testbed) to ``window``; return the plug-in
    object (also kept as ``window.deploy``)."""
    from inaplanner.gui.deploy_dialog.wiring import install_on_window

    return install_on_window(window)


__all__ = ["install"]
