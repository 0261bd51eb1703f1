"""File > Export report…: write the chosen plans as a review report (html, pdf, csv, json, png,
svg) through :mod:`inaplanner.report`.

The plans offered are the planning results (those selected in the Results list come checked)
and any plan file added in the dialog. They must all belong to one scenario: the one the first
checked result was planned on, or the open scenario when only files are chosen.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from inaplanner.errors import InaplannerError
from inaplanner.gui.filejobs import FileJob, describe, snapshot
from inaplanner.io.native import document_sha256, load_plan, scenario_from_dict, scenario_sha256
from inaplanner.model import Plan, Scenario
from inaplanner.report import FORMATS, build_report, export_report

FILTERS = {
    "html": "HTML report (*.html)",
    "pdf": "PDF report (*.pdf)",
    "json": "Plan JSON (*.json)",
    "png": "PNG image (*.png)",
    "svg": "SVG drawing (*.svg)",
}


Entry = tuple[str, Any]  # ("result", PlanResult) or ("file", (label, Plan))


def checked_pairs(source: Scenario | dict[str, Any], entries: list[Entry],
                  notes: list[str]) -> tuple[Scenario, list[tuple[str, Plan]]]:
    """The scenario of the report and its (label, plan) pairs, in ``entries``' order. ``source``
    is the scenario of the first checked result, or the open document's file form when only plan
    files are checked (a private copy is built from it: the document may be edited meanwhile).
    A result planned on another scenario is refused; a plan file made for another version of
    it is judged on this one, said in ``notes``. Hashing a scenario takes 0.6 s at fat-tree k=64,
    so this runs in the export's job."""
    if isinstance(source, dict):
        scenario, sha = scenario_from_dict(source), document_sha256(source)
    else:
        scenario, sha = source, scenario_sha256(source)
    pairs: list[tuple[str, Plan]] = []
    for kind, payload in entries:
        if kind == "result":
            if payload.scenario is not scenario and scenario_sha256(payload.scenario) != sha:
                raise InaplannerError(f"{payload.title} was planned on another scenario (a "
                                      "what-if or an older version); export it separately")
            pairs.append((payload.title, payload.plan))
        else:
            label, plan = payload
            if plan.scenario_sha256 and plan.scenario_sha256 != sha:
                notes.append(f"note: {label} was made for another version of the scenario; "
                             "it is judged on this one")
            pairs.append((label, plan))
    return scenario, pairs


def export_work(source: Scenario | dict[str, Any], entries: list[Entry], title: str | None,
                fmt: str, out: str, notes: list[str]) -> Callable[[FileJob], list[Path]]:
    """A file job's work that checks the plans (:func:`checked_pairs`), builds and writes one
    report off the UI thread (a PDF of two plans at fat-tree k=64 takes 9 s: 3 s evaluating and
    laying out the plans, 6 s for the pages). A Stop ends it after the building, before
    anything is written: the files are written atomically at the very end. The job's ``what``
    names the step under way."""

    def work(job: FileJob) -> list[Path]:
        scenario, pairs = checked_pairs(source, entries, notes)
        job.check()
        report = build_report(scenario, pairs, title=title)
        job.check()
        job.what = f"writing the {fmt}"
        return export_report(report, fmt, out)

    return work


class ExportDialog(QDialog):
    def __init__(self, window: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent or window)
        self.window = window
        self.setWindowTitle("Export report")
        self.plans = QListWidget()
        self.plans.setMinimumHeight(140)
        add = QPushButton("Add plan file…")
        add.clicked.connect(self._browse_plan)
        self.format_combo = QComboBox()
        self.format_combo.addItems(list(FORMATS))
        self.output_edit = QLineEdit()
        self.output_edit.setPlaceholderText("output file (a directory for csv or several plans)")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse_output)
        self.title_edit = QLineEdit()
        self.title_edit.setPlaceholderText("(default: inaplanner report: <scenario>)")
        self.note = QLabel("")
        self.note.setWordWrap(True)

        form = QFormLayout()
        out = QHBoxLayout()
        out.addWidget(self.output_edit, 1)
        out.addWidget(browse)
        form.addRow("Format", self.format_combo)
        form.addRow("Output", out)
        form.addRow("Title", self.title_edit)
        self.busy = QProgressBar()
        self.busy.setRange(0, 0)  # busy: the steps have no count worth showing
        self.busy.setVisible(False)
        self.job: FileJob | None = None
        self._exporting = ""  # what the running export does, for its note
        self._notes: list[str] = []  # what the running export found to say (a plan file's version)
        buttons = QDialogButtonBox()
        self.export_button = buttons.addButton("Export", QDialogButtonBox.ButtonRole.AcceptRole)
        self.stop_button = buttons.addButton("Stop", QDialogButtonBox.ButtonRole.ActionRole)
        self.stop_button.setEnabled(False)
        buttons.addButton(QDialogButtonBox.StandardButton.Close)
        self.export_button.clicked.connect(self._export_clicked)
        self.stop_button.clicked.connect(self.stop)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Plans (the first is the reference of the comparison and diffs):"))
        layout.addWidget(self.plans, 1)
        layout.addWidget(add, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addLayout(form)
        layout.addWidget(self.note)
        layout.addWidget(self.busy)
        layout.addWidget(buttons)
        self.format_combo.currentTextChanged.connect(self._format_changed)
        self.refresh()

    # ---- the plan list -------------------------------------------------------------------------
    def refresh(self) -> None:
        """List the planning results (selected ones checked) and keep the added files."""
        files = [self.plans.item(i) for i in range(self.plans.count())
                 if self.plans.item(i).data(Qt.ItemDataRole.UserRole)[0] == "file"]
        kept = [(it.text(), it.data(Qt.ItemDataRole.UserRole), it.checkState()) for it in files]
        self.plans.clear()
        planning = getattr(self.window, "planning", None)
        if planning is not None:
            selected = {id(r) for r in planning.results_panel.selected()}
            current = planning.results_panel.current()
            if current is not None:
                selected.add(id(current))
            for r in planning.results():
                item = QListWidgetItem(f"{r.title}: objective {r.objective:.6g}, {r.status}")
                item.setData(Qt.ItemDataRole.UserRole, ("result", r))
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                item.setCheckState(Qt.CheckState.Checked if id(r) in selected else Qt.CheckState.Unchecked)
                self.plans.addItem(item)
        for text, data, state in kept:
            self._add_item(text, data, state)

    def _add_item(self, text: str, data: tuple, state: Qt.CheckState = Qt.CheckState.Checked) -> None:
        item = QListWidgetItem(text)
        item.setData(Qt.ItemDataRole.UserRole, data)
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
        item.setCheckState(state)
        self.plans.addItem(item)

    def add_plan_file(self, path: str) -> bool:
        try:
            plan = load_plan(path)
        except InaplannerError as exc:
            self.window.show_error("Export report", str(exc))
            return False
        self._add_item(f"{Path(path).name} ({plan.planner.name}, {plan.planner.status})",
                       ("file", (Path(path).stem, plan)))
        return True

    def _browse_plan(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(self, "Plan files", "", "Plans (*.json)")
        for p in paths:
            self.add_plan_file(p)

    def _format_changed(self, fmt: str) -> None:
        text = self.output_edit.text().strip()
        if text and fmt in FILTERS and fmt != "csv":
            self.output_edit.setText(str(Path(text).with_suffix("." + fmt)))

    def _browse_output(self) -> None:
        fmt = self.format_combo.currentText()
        if fmt == "csv":
            path = QFileDialog.getExistingDirectory(self, "Directory for the CSV tables")
        else:
            path, _ = QFileDialog.getSaveFileName(self, "Export report", f"report.{fmt}", FILTERS[fmt])
        if path:
            self.output_edit.setText(path)

    # ---- export --------------------------------------------------------------------------------
    def chosen(self) -> tuple[Scenario | dict[str, Any], list[Entry]]:
        """The report's source (the first checked result's scenario, else the open document's
        file form) and the checked entries, in list order; :func:`checked_pairs` checks them."""
        entries: list[Entry] = []
        for i in range(self.plans.count()):
            item = self.plans.item(i)
            if item.checkState() == Qt.CheckState.Checked:
                entries.append(item.data(Qt.ItemDataRole.UserRole))
        if not entries:
            raise InaplannerError("check at least one plan to export")
        results = [payload for kind, payload in entries if kind == "result"]
        source = results[0].scenario if results else snapshot(self.window.document)
        return source, entries

    def export_job(self) -> FileJob:
        """The job that checks the plans and writes the report as the dialog is set (raises
        InaplannerError on bad input: no plan checked, no output; plans of different scenarios
        fail the job)."""
        fmt = self.format_combo.currentText()
        out = self.output_edit.text().strip()
        if not out:
            raise InaplannerError("choose where to write the report")
        source, entries = self.chosen()
        self._notes = []
        self._exporting = f"exporting {len(entries)} plan(s) as {fmt}"
        return FileJob("building the report", export_work(
            source, entries, self.title_edit.text().strip() or None, fmt, out, self._notes))

    def _export_clicked(self) -> None:
        if self.job is not None:
            return
        try:
            job = self.export_job()
        except InaplannerError as exc:
            self.window.show_error("Export report", str(exc))
            return
        self.job = job
        job.finished.connect(self._export_done)
        QCoreApplication.instance().aboutToQuit.connect(self._quit)
        self.export_button.setEnabled(False)
        self.stop_button.setEnabled(True)
        self.busy.setVisible(True)
        self.note.setText(f"{self._exporting}: {job.what}… (Stop ends it before anything is written)")
        job.start()

    def stop(self) -> None:
        """Stop the running export at its next step; nothing is written."""
        if self.job is not None:
            self.job.stop()
            self.note.setText(f"stopping after {self.job.what}…")

    def _quit(self) -> None:
        if self.job is not None:
            self.job.stop()
            self.job.wait()

    def _export_done(self) -> None:
        job, self.job = self.job, None
        if job is None:
            return
        job.wait()
        QCoreApplication.instance().aboutToQuit.disconnect(self._quit)
        self.export_button.setEnabled(True)
        self.stop_button.setEnabled(False)
        self.busy.setVisible(False)
        if job.error is not None:
            self.note.setText("")
            error = job.error
            self.window.show_error("Export report", str(error) if isinstance(error, InaplannerError)
                                   else f"the export failed: {describe(error)}")
            return
        written = job.result
        if written is None:
            self.note.setText("export stopped: nothing written")
            return
        where = written[0] if len(written) == 1 else written[0].parent
        self.note.setText("\n".join([*self._notes, f"wrote {len(written)} file(s): {where}"]))
        self.window.status(f"report exported to {where}")
        self.last_written = written


def open_export_dialog(window: Any) -> ExportDialog:
    """Show (creating once) the export dialog, refreshed with the current results."""
    dialog = getattr(window, "export_dialog", None)
    if dialog is None:
        dialog = ExportDialog(window)
        window.export_dialog = dialog
    else:
        dialog.refresh()
    dialog.show()
    dialog.raise_()
    return dialog


def install(window: Any) -> QAction:
    """Add File > Export report…; return the action (also ``window.export_action``)."""
    action = QAction("Export &report…", window)
    action.setShortcut(QKeySequence("Ctrl+Shift+E"))
    action.setStatusTip("Write the chosen plans as an HTML, PDF, CSV, JSON, PNG or SVG report")
    action.triggered.connect(lambda: open_export_dialog(window))
    menu = window.menu("File")
    actions = menu.actions()
    quit_at = next((i for i, a in enumerate(actions) if "quit" in a.text().lower()), None)
    if quit_at is None:
        menu.addAction(action)
    else:  # above the separator before Quit
        before = actions[quit_at - 1] if quit_at > 0 and actions[quit_at - 1].isSeparator() \
            else actions[quit_at]
        menu.insertAction(before, action)
    window.export_action = action
    return action
