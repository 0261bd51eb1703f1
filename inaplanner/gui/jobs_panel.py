"""The jobs panel: create, edit and remove training jobs; pick workers and PSs on the canvas or from
lists; the selected job is highlighted on the canvas (workers in one colour, PSs in another)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSpinBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from inaplanner.errors import InaplannerError, ValidationError
from inaplanner.gui.editor import watch
from inaplanner.model import Job

if TYPE_CHECKING:
    from inaplanner.gui.protocols import PanelHost

WORKER_COLOUR = "#1e88e5"
PS_COLOUR = "#e65100"
MAX_LISTED_HOSTS = 400  # the member lists show at most this many hosts (filter to find others)


def _natural(name: str) -> tuple[str, int]:
    head = name.rstrip("0123456789")
    tail = name[len(head):]
    return head, int(tail) if tail else -1


def _optional(value: float) -> float | None:
    return None if value <= 0 else float(value)


class JobsPanel(QWidget):
    """Jobs of the scenario."""

    def __init__(self, window: PanelHost) -> None:
        super().__init__(window)
        self.window = window
        self.editor = window.editor
        self._loading = False
        self.job_list = QListWidget()
        self.job_list.setToolTip("Jobs; the selected one is highlighted on the canvas")
        self.job_list.currentItemChanged.connect(lambda *_: self._show_current())
        new = QPushButton("New")
        new.setToolTip("New job: the selected hosts become its workers, the last of them its PS")
        new.clicked.connect(self.new_from_selection)
        remove = QPushButton("Remove")
        remove.setToolTip("Remove the selected job")
        remove.clicked.connect(self.remove_current)
        buttons = QHBoxLayout()
        buttons.addWidget(new)
        buttons.addWidget(remove)
        top = QWidget()
        tl = QVBoxLayout(top)
        tl.setContentsMargins(0, 0, 0, 0)
        tl.addWidget(self.job_list)
        tl.addLayout(buttons)

        form_w = QWidget()
        form = QFormLayout(form_w)
        self.id_edit = QLineEdit()
        self.id_edit.setToolTip("The job's id")
        self.id_edit.editingFinished.connect(lambda: self.edit("id", self.id_edit.text().strip()))
        form.addRow("Id", self.id_edit)
        self.model_mb = self._dspin(0.001, 1e7, " MB", "Model size", "model_mb")
        form.addRow("Model size", self.model_mb)
        self.weight = self._dspin(0.001, 1e6, "", "Weight (ARO's beta): importance in the MJMT objective", "weight")
        form.addRow("Weight", self.weight)
        self.layers = QSpinBox()
        self.layers.setRange(0, 100000)
        self.layers.setSpecialValueText("not set")
        self.layers.setToolTip("Layers (ESA priority, Eq. 1); 0 = not set")
        self.layers.setKeyboardTracking(False)
        self.layers.editingFinished.connect(lambda: self.edit("layers", self.layers.value() or None))
        form.addRow("Layers", self.layers)
        self.ratio = self._dspin(0.0, 1e6, "", "Communication / computation ratio (ESA); 0 = not set", "comm_comp_ratio", optional=True)
        form.addRow("Comm/comp ratio", self.ratio)
        self.remaining = self._dspin(0.0, 1e9, " s", "Remaining training time (ESA); 0 = not set", "remaining_s", optional=True)
        form.addRow("Remaining", self.remaining)
        self.filter_edit = QLineEdit()
        self.filter_edit.setPlaceholderText("filter hosts")
        self.filter_edit.setToolTip("Show only hosts whose name contains this text")
        self.filter_edit.textChanged.connect(lambda _t: self._fill_members())
        form.addRow("Hosts", self.filter_edit)
        self.workers_list = QListWidget()
        self.workers_list.setToolTip("Tick the job's workers")
        self.ps_list = QListWidget()
        self.ps_list.setToolTip("Tick the job's parameter servers (one task per PS)")
        self.workers_list.itemChanged.connect(lambda _i: self._members_changed())
        self.ps_list.itemChanged.connect(lambda _i: self._members_changed())
        lists = QHBoxLayout()
        for title, lst in (("Workers", self.workers_list), ("Parameter servers", self.ps_list)):
            col = QVBoxLayout()
            col.addWidget(QLabel(title))
            col.addWidget(lst)
            lists.addLayout(col)
        form.addRow(lists)
        pick = QHBoxLayout()
        pw = QPushButton("Workers = selection")
        pw.setToolTip("Make the hosts selected on the canvas the job's workers")
        pw.clicked.connect(lambda: self.pick_from_canvas("workers"))
        pp = QPushButton("PSs = selection")
        pp.setToolTip("Make the hosts selected on the canvas the job's parameter servers")
        pp.clicked.connect(lambda: self.pick_from_canvas("parameter_servers"))
        pick.addWidget(pw)
        pick.addWidget(pp)
        form.addRow(pick)
        self.form = form_w

        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(top)
        split.addWidget(form_w)
        split.setStretchFactor(1, 3)
        box = QVBoxLayout(self)
        box.setContentsMargins(4, 4, 4, 4)
        box.addWidget(split)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self.refresh)
        watch(self, window.document, self._on_document)
        self.refresh()

    def _on_document(self, _event: object) -> None:
        self._timer.start()

    def _dspin(self, lo: float, hi: float, suffix: str, tip: str, field: str, optional: bool = False) -> QDoubleSpinBox:
        s = QDoubleSpinBox()
        s.setRange(lo, hi)
        s.setDecimals(3)
        s.setSuffix(suffix)
        s.setToolTip(tip)
        s.setKeyboardTracking(False)
        if optional:
            s.setSpecialValueText("not set")
        s.editingFinished.connect(lambda: self.edit(field, _optional(s.value()) if optional else s.value()))
        return s

    # ---- showing -----------------------------------------------------------------------------

    def current_job(self) -> str | None:
        item = self.job_list.currentItem()
        return item.data(Qt.ItemDataRole.UserRole) if item is not None else None

    def refresh(self) -> None:
        sc = self.window.scenario()
        keep = self.current_job()
        self._loading = True
        try:
            self.job_list.clear()
            for j in sc.jobs:
                item = QListWidgetItem(f"{j.id}: {len(j.workers)} worker(s) -> {', '.join(j.parameter_servers)}")
                item.setData(Qt.ItemDataRole.UserRole, j.id)
                item.setToolTip(f"workers: {', '.join(j.workers)}\nPSs: {', '.join(j.parameter_servers)}")
                self.job_list.addItem(item)
                if j.id == keep:
                    self.job_list.setCurrentItem(item)
        finally:
            self._loading = False
        self._show_current()

    def select_job(self, job_id: str | None) -> None:
        for r in range(self.job_list.count()):
            if self.job_list.item(r).data(Qt.ItemDataRole.UserRole) == job_id:
                self.job_list.setCurrentRow(r)
                return
        self.job_list.setCurrentRow(-1)

    def _show_current(self) -> None:
        if self._loading:
            return
        jid = self.current_job()
        sc = self.window.scenario()
        job = next((j for j in sc.jobs if j.id == jid), None)
        self.form.setEnabled(job is not None)
        self._loading = True
        try:
            if job is not None:
                self.id_edit.setText(job.id)
                self.model_mb.setValue(job.model_mb)
                self.weight.setValue(job.weight)
                self.layers.setValue(job.layers or 0)
                self.ratio.setValue(job.comm_comp_ratio or 0.0)
                self.remaining.setValue(job.remaining_s or 0.0)
            self._fill_members(job)
        finally:
            self._loading = False
        self.highlight(job)

    def _fill_members(self, job: Job | None = None) -> None:
        if job is None:
            jid = self.current_job()
            job = next((j for j in self.window.scenario().jobs if j.id == jid), None)
        was = self._loading
        self._loading = True
        try:
            if job is None:  # nothing to edit: do not list thousands of hosts for nothing
                self.workers_list.clear()
                self.ps_list.clear()
                return
            text = self.filter_edit.text().strip().lower()
            hosts = [h.id for h in self.window.scenario().hosts()]
            if text:
                hosts = [h for h in hosts if text in h.lower()]
            for lst, members in ((self.workers_list, job.workers if job else []), (self.ps_list, job.parameter_servers if job else [])):
                lst.clear()
                chosen = set(members)
                shown = sorted(set(hosts[:MAX_LISTED_HOSTS]) | (chosen & set(hosts)), key=_natural)
                for h in shown:
                    item = QListWidgetItem(h)
                    item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                    item.setCheckState(Qt.CheckState.Checked if h in chosen else Qt.CheckState.Unchecked)
                    lst.addItem(item)
        finally:
            self._loading = was

    def highlight(self, job: Job | None) -> None:
        colours: dict[str, str] = {}
        if job is not None:
            colours.update({w: WORKER_COLOUR for w in job.workers})
            colours.update({p: PS_COLOUR for p in job.parameter_servers})
        self.window.canvas.canvas_scene().highlight(colours)

    # ---- editing -----------------------------------------------------------------------------

    def _guard(self, title: str, fn: Any) -> Any:
        try:
            return fn()
        except InaplannerError as exc:
            self.window.show_error(title, str(exc))
            self._timer.start()
            return None

    def new_job(self, workers: list[str], parameter_servers: list[str], **attrs: Any) -> str | None:
        jid = self._guard("Cannot add the job", lambda: self.editor.new_job(workers, parameter_servers, **attrs))
        if jid is not None:
            self.refresh()
            self.select_job(jid)
        return jid

    def new_from_selection(self) -> str | None:
        sc = self.window.scenario()
        hosts = sorted((n for n in self.window.canvas.selected_nodes() if not sc.is_switch(n)), key=_natural)
        if len(hosts) < 2:
            busy = {m for j in sc.jobs for m in (*j.workers, *j.parameter_servers)}
            hosts = [h.id for h in sc.hosts() if h.id not in busy][:2]
        if len(hosts) < 2:
            self.window.show_error("Cannot add the job", "a job needs at least two hosts: select some workers and a PS")
            return None
        return self.new_job(hosts[:-1], hosts[-1:])

    def remove_current(self) -> None:
        jid = self.current_job()
        if jid is not None:
            self._guard("Cannot remove the job", lambda: self.editor.remove_job(jid))

    def edit(self, field: str, value: Any) -> bool:
        """Change one field of the current job (one undo step); False when refused."""
        if self._loading:
            return False
        jid = self.current_job()
        if jid is None:
            return False
        job = self.window.scenario().job(jid)
        if getattr(job, field) == value:
            return False
        ok = self._guard(f"Cannot change {field}", lambda: self.editor.set_job(jid, **{field: value}) or True)
        if ok and field == "id":
            self.refresh()
            self.select_job(value)
        return bool(ok)

    def _members_changed(self) -> None:
        if self._loading:
            return
        jid = self.current_job()
        if jid is None:
            return
        job = self.window.scenario().job(jid)

        def ticked(lst: QListWidget) -> list[str]:
            return [lst.item(r).text() for r in range(lst.count()) if lst.item(r).checkState() == Qt.CheckState.Checked]

        def merged(current: list[str], lst: QListWidget) -> list[str]:
            listed = {lst.item(r).text() for r in range(lst.count())}
            keep = [m for m in current if m not in listed]  # members hidden by the filter stay
            return keep + ticked(lst)

        workers = merged(job.workers, self.workers_list)
        pss = merged(job.parameter_servers, self.ps_list)
        if workers != job.workers or pss != job.parameter_servers:
            self._guard("Cannot change the job", lambda: self.editor.set_job(jid, workers=workers, parameter_servers=pss))

    def pick_from_canvas(self, role: str) -> bool:
        """Make the hosts selected on the canvas the current job's workers or PSs."""
        jid = self.current_job()
        if jid is None:
            return False
        sc = self.window.scenario()
        hosts = sorted((n for n in self.window.canvas.selected_nodes() if not sc.is_switch(n)), key=_natural)
        if not hosts:
            self.window.show_error("Nothing selected", "select hosts on the canvas first")
            return False
        if role not in ("workers", "parameter_servers"):
            raise ValidationError(f"unknown role {role!r}")
        return bool(self._guard("Cannot change the job", lambda: self.editor.set_job(jid, **{role: hosts}) or True))
