"""Tools > Memory sharing at a switch: SwitchML / ATP / ESA on the jobs that meet at one switch.

The dialog builds the simulation with :func:`~inaplanner.memsched.from_scenario.config_from_scenario`
(the same as ``inaplanner memsim SCENARIO --switch S``) and runs every policy, and the
unlimited-memory floor, in spawned child processes: the simulator is pure Python and would hold the
UI thread's GIL. Results arrive one policy at a time; Cancel terminates the children. The table
shows what :func:`~inaplanner.cli.memsim.format_table` prints.
"""

from __future__ import annotations

import multiprocessing
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
)

from inaplanner.errors import InaplannerError
from inaplanner.gui.tool_dialog import ToolDialogPlugin
from inaplanner.memsched.bound import speedup_ceiling
from inaplanner.memsched.from_scenario import config_from_scenario, pick_switch
from inaplanner.memsched.results import SimResult
from inaplanner.memsched.runs import BOUND, run_one
from inaplanner.memsched.workload import MB, POLICIES, POLICY_HELP, SimConfig
from inaplanner.model import Switch

COLUMNS = ("policy", "JCT ms", "vs floor", "utilisation", "PS fallback MB", "preemptions",
           "timeouts", "check")
DEFAULT_POLICIES = ("switchml", "atp", "esa")


class MemsimDialog(QDialog):
    """Pick a switch, memory and policies; Run simulates them off the UI thread."""

    _arrived = Signal(str, object)  # (policy, SimResult) from the pool's result thread
    _broke = Signal(str, str)  # (policy, message)

    def __init__(self, window: Any) -> None:
        super().__init__(window)
        self.window = window
        self.setWindowTitle("Memory sharing at a switch")
        self._pool: Any = None
        self._pending: set[str] = set()
        self.results: dict[str, SimResult] = {}
        self.config: SimConfig | None = None

        self.switch_box = QComboBox()
        self.memory = QDoubleSpinBox()
        self.memory.setRange(0.0, 1000.0)
        self.memory.setDecimals(2)
        self.memory.setSuffix(" MB")
        self.memory.setSpecialValueText("the switch's aggregators")
        self.iterations = QSpinBox()
        self.iterations.setRange(1, 50)
        self.iterations.setValue(3)
        self.checks: dict[str, QCheckBox] = {}
        pol_row = QHBoxLayout()
        for name in POLICIES:
            box = QCheckBox(name)
            box.setToolTip(POLICY_HELP[name])
            box.setChecked(name in DEFAULT_POLICIES)
            self.checks[name] = box
            pol_row.addWidget(box)
        form = QFormLayout()
        form.addRow("Switch", self.switch_box)
        form.addRow("INA memory", self.memory)
        form.addRow("Iterations", self.iterations)
        form.addRow("Policies", pol_row)

        self.run_button = QPushButton("Run")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.run_button.clicked.connect(self.run)
        self.cancel_button.clicked.connect(self.cancel)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.run_button)
        buttons.addWidget(self.cancel_button)
        self.status = QLabel("Choose a switch and press Run.")
        self.status.setWordWrap(True)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)

        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addLayout(buttons)
        layout.addWidget(self.status)
        layout.addWidget(self.table, 1)
        self.resize(760, 420)

        self._arrived.connect(self._on_result, Qt.ConnectionType.QueuedConnection)
        self._broke.connect(self._on_error, Qt.ConnectionType.QueuedConnection)
        self.refresh_switches()

    # ---- inputs -------------------------------------------------------------------------------

    def refresh(self) -> None:
        self.refresh_switches()

    def refresh_switches(self) -> None:
        """List the programmable switches; preselect the one with the most job workers."""
        sc = self.window.scenario()
        current = self.switch_box.currentText()
        self.switch_box.clear()
        names = [n.id for n in sc.nodes if isinstance(n, Switch) and n.programmable]
        self.switch_box.addItems(names)
        try:
            best = pick_switch(sc).id
        except InaplannerError:
            best = None
        pick = current if current in names else best
        if pick is not None:
            self.switch_box.setCurrentText(pick)

    def build_config(self) -> SimConfig:
        sc = self.window.scenario()
        switch = self.switch_box.currentText() or None
        mem = self.memory.value()
        return config_from_scenario(sc, switch, memory_bytes=int(mem * MB) if mem > 0 else None,
                                    iterations=self.iterations.value(), batch=8)

    # ---- running ------------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return bool(self._pending)

    def run(self) -> bool:
        """Start the simulations; False (and the cause in the status line) if the input is bad."""
        if self.running:
            return False
        policies = [p for p, box in self.checks.items() if box.isChecked()]
        if not policies:
            self.status.setText("Tick at least one policy.")
            return False
        try:
            config = self.build_config()
        except InaplannerError as exc:
            self.status.setText(f"Cannot simulate: {exc}")
            return False
        self.config = config
        self.results = {}
        self.table.setRowCount(0)
        runs = [*policies, BOUND]
        self._pending = set(runs)
        ctx = multiprocessing.get_context("spawn")
        self._pool = ctx.Pool(processes=min(len(runs), max(1, (multiprocessing.cpu_count() or 1))))
        for name in runs:
            self._pool.apply_async(
                run_one, ((config, name),),
                callback=lambda r, n=name: self._arrived.emit(n, r),
                error_callback=lambda e, n=name: self._broke.emit(n, f"{type(e).__name__}: {e}"))
        self._pool.close()
        self.run_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self._show_progress()
        return True

    def cancel(self) -> None:
        """Stop every simulation still running (the children are terminated)."""
        if not self.running:
            return
        self._pending = set()
        self._stop_pool()
        self.status.setText("Cancelled.")
        self._idle()

    def _stop_pool(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.terminate()
            pool.join()

    def _idle(self) -> None:
        self.run_button.setEnabled(True)
        self.cancel_button.setEnabled(False)

    def _show_progress(self) -> None:
        total = len(self.results) + len(self._pending)
        self.status.setText(f"Simulating on {self.config.extra.get('switch') if self.config else '?'}: "
                            f"{len(self.results)} of {total} done…")

    def _on_result(self, name: str, result: SimResult) -> None:
        if name not in self._pending:  # cancelled meanwhile
            return
        self._pending.discard(name)
        self.results[name] = result
        self._fill_table()
        if self._pending:
            self._show_progress()
            return
        self._stop_pool()
        self._idle()
        cfg = self.config
        assert cfg is not None
        self.status.setText(
            f"{len(cfg.jobs)} jobs, {sum(j.workers for j in cfg.jobs)} workers at "
            f"{cfg.extra.get('switch')}, {cfg.n_aggregators} aggregators "
            f"({cfg.n_aggregators * cfg.payload_bytes / MB:.2f} MB), {cfg.iterations} iterations. "
            f"'vs floor' is the JCT over the unlimited-memory run, which no policy can beat.")

    def _on_error(self, name: str, message: str) -> None:
        if name not in self._pending:
            return
        self._pending = set()
        self._stop_pool()
        self._idle()
        self.status.setText(f"{name} failed: {message}")

    def _fill_table(self) -> None:
        floor = self.results.get(BOUND)
        rows = [(n, self.results[n]) for n in POLICIES if n in self.results]  # in a fixed order
        if floor is not None:
            rows.append((BOUND, floor))
        self.table.setRowCount(len(rows))
        for i, (name, r) in enumerate(rows):
            vs = f"{speedup_ceiling(r, floor):.2f}x" if floor is not None else "…"
            cells = (name, f"{r.avg_jct_s * 1e3:.3f}", vs, f"{r.utilisation:.3f}",
                     f"{r.ps_fallback_bytes / MB:.2f}", str(r.preemptions), str(r.timeout_reminders),
                     "ok" if r.ok else "FAILED")
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if c:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(i, c, item)
        self.table.resizeColumnsToContents()

    def done(self, code: int) -> None:  # closing the dialog stops its work
        self.cancel()
        super().done(code)


def install(window: Any) -> ToolDialogPlugin:
    """Tools > Memory Sharing at a Switch (``window.memsim``)."""
    return ToolDialogPlugin(
        window, "memsim", MemsimDialog, name="memsim", text="&Memory Sharing at a Switch…",
        shortcut="Ctrl+Shift+M",
        tip="Simulate SwitchML, ATP and ESA sharing the aggregator memory of one switch (ESA paper)")
