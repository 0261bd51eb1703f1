"""The inspector: edits the properties of the canvas selection through undoable commands.

One node: its name, and for a switch the tier, programmable flag, pipelines, the port -> pipeline
map (a table with the default split shown beside), aggregation capacity and background, aggregator
slots, max fan-in and target. One link: capacity, background per direction, ports. Several items: the fields
they share, applied to all of them in one undo step (bulk edit).

Every field commits through :meth:`Inspector.edit` (what the widgets call on ``editingFinished``),
so tests drive exactly the code path a user does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QStackedWidget,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from inaplanner.errors import InaplannerError, ValidationError
from inaplanner.gui.editor import watch
from inaplanner.model import DEFAULT_MAX_FAN_IN, Switch, default_port_pipeline
from inaplanner.model.scenario import TARGETS, TIER_RANK
from inaplanner.views.overlay import fmt

if TYPE_CHECKING:
    from inaplanner.gui.protocols import PanelHost

TIERS = ("", *TIER_RANK)
TARGET_CHOICES = ("", *TARGETS)
MAX_PIPELINES = 64
FAN_IN_TIP = (f"Most distinct flows one aggregate may merge here: the data plane's contributor bitmap "
              f"(empty: {DEFAULT_MAX_FAN_IN}, the bundled programs' width)")


def _optional_float(text: str, what: str) -> float | None:
    text = text.strip()
    if not text or text.lower() in ("none", "line rate", "-"):
        return None
    try:
        return float(text)
    except ValueError:
        raise ValidationError(f"{what}: {text!r} is not a number") from None


def _optional_int(text: str, what: str) -> int | None:
    text = text.strip()
    if not text or text.lower() in ("none", "-"):
        return None
    try:
        return int(text)
    except ValueError:
        raise ValidationError(f"{what}: {text!r} is not a whole number") from None


def _spin(lo: float, hi: float, decimals: int = 3, suffix: str = "") -> QDoubleSpinBox:
    s = QDoubleSpinBox()
    s.setRange(lo, hi)
    s.setDecimals(decimals)
    s.setKeyboardTracking(False)
    if suffix:
        s.setSuffix(suffix)
    return s


class Inspector(QWidget):
    """Properties of the selection."""

    def __init__(self, window: PanelHost) -> None:
        super().__init__(window)
        self.window = window
        self.editor = window.editor
        self.nodes: list[str] = []
        self.links: list[int] = []
        self._loading = False
        self.fields: dict[str, QWidget] = {}
        self.stack = QStackedWidget()
        self.empty_page = QLabel("Select a node or a link to edit it.\nShift/Ctrl-click or drag a rubber band to select several.")
        self.empty_page.setWordWrap(True)
        self.empty_page.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.node_page = self._build_node_page()
        self.link_page = self._build_link_page()
        self.bulk_page = self._build_bulk_page()
        for page in (self.empty_page, self.node_page, self.link_page, self.bulk_page):
            self.stack.addWidget(page)
        box = QVBoxLayout(self)
        box.setContentsMargins(6, 6, 6, 6)
        box.addWidget(self.stack)
        self._refresh_timer = QTimer(self)
        self._refresh_timer.setSingleShot(True)
        self._refresh_timer.setInterval(0)
        self._refresh_timer.timeout.connect(self.refresh)
        window.canvas.selection_changed.connect(self._schedule)
        watch(self, window.document, self._schedule)
        self.refresh()

    # ---- building ----------------------------------------------------------------------------

    def _field(self, name: str, widget: QWidget, tip: str) -> QWidget:
        widget.setToolTip(tip)
        widget.setObjectName(f"inspector-{name}")
        self.fields[name] = widget
        if isinstance(widget, QLineEdit):
            widget.editingFinished.connect(lambda n=name, w=widget: self._commit(n, w.text()))
        elif isinstance(widget, (QSpinBox, QDoubleSpinBox)):
            widget.editingFinished.connect(lambda n=name, w=widget: self._commit(n, w.value()))
        elif isinstance(widget, QCheckBox):
            widget.clicked.connect(lambda checked, n=name: self._commit(n, bool(checked)))
        elif isinstance(widget, QComboBox):
            widget.activated.connect(lambda _i, n=name, w=widget: self._commit(n, w.currentText()))
        return widget

    def _build_node_page(self) -> QWidget:
        page = QWidget()
        form = QFormLayout(page)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.kind_label = QLabel()
        form.addRow("Kind", self.kind_label)
        form.addRow("Name", self._field("id", QLineEdit(), "The node's id; renaming updates links and jobs"))
        self.role_label = QLabel()
        self.role_label.setWordWrap(True)
        form.addRow("Jobs", self.role_label)
        self.switch_box = QGroupBox("Switch")
        sform = QFormLayout(self.switch_box)
        tier = QComboBox()
        tier.addItems(list(TIERS))
        sform.addRow("Tier", self._field("tier", tier, "Clos tier: with every switch tiered, routes go up then down"))
        sform.addRow("Programmable", self._field("programmable", QCheckBox("can aggregate"), "A programmable switch can aggregate flows"))
        pipes = QSpinBox()
        pipes.setRange(1, MAX_PIPELINES)
        pipes.setKeyboardTracking(False)
        sform.addRow("Pipelines", self._field("pipelines", pipes, "Hardware pipelines: flows aggregate only with flows entering on the same pipeline"))
        cap = QLineEdit()
        cap.setPlaceholderText("line rate")
        sform.addRow("Aggregation capacity", self._field("aggregation_capacity", cap, "Gbps of incoming flows the switch can aggregate (empty: line rate)"))
        sform.addRow("Aggregation background", self._field("aggregation_background", _spin(0, 1e9, 3, " Gbps"), "Aggregation capacity already used by other traffic"))
        slots = QLineEdit()
        slots.setPlaceholderText("not set")
        sform.addRow("Aggregator slots", self._field("aggregators", slots, "Aggregator slots per pipeline (ESA, deployment sizing)"))
        fan_in = QLineEdit()
        fan_in.setPlaceholderText(f"{DEFAULT_MAX_FAN_IN} (default)")
        sform.addRow("Max fan-in", self._field("max_fan_in", fan_in, FAN_IN_TIP))
        target = QComboBox()
        target.addItems(list(TARGET_CHOICES))
        sform.addRow("Target", self._field("target", target, "The data plane target: bmv2 or tofino"))
        self.port_table = QTableWidget(0, 4)
        self.port_table.setHorizontalHeaderLabels(["Port", "Neighbour", "Pipeline", "Default"])
        self.port_table.verticalHeader().setVisible(False)
        self.port_table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.port_table.setToolTip("Port -> pipeline map; 'Default' shows the contract's default split")
        self.port_table.setMinimumHeight(120)
        self.port_state = QLabel()
        reset = QPushButton("Use default split")
        reset.setToolTip("Forget the custom map: ports are split into contiguous groups, one per pipeline")
        reset.clicked.connect(self.reset_port_map)
        self.reset_ports_button = reset
        row = QHBoxLayout()
        row.addWidget(self.port_state, 1)
        row.addWidget(reset)
        sform.addRow(self.port_table)
        sform.addRow(row)
        form.addRow(self.switch_box)
        return page

    def _build_link_page(self) -> QWidget:
        page = QWidget()
        form = QFormLayout(page)
        self.link_label = QLabel()
        self.link_label.setWordWrap(True)
        form.addRow("Link", self.link_label)
        form.addRow("Capacity", self._field("capacity", _spin(0, 1e9, 3, " Gbps"), "Capacity in each direction"))
        self.bg_ab_label = QLabel("Background a->b")
        self.bg_ba_label = QLabel("Background b->a")
        form.addRow(self.bg_ab_label, self._field("background_ab", _spin(0, 1e9, 3, " Gbps"), "Load already on the link in the a->b direction"))
        form.addRow(self.bg_ba_label, self._field("background_ba", _spin(0, 1e9, 3, " Gbps"), "Load already on the link in the b->a direction"))
        a_port = QSpinBox()
        a_port.setRange(0, 100000)
        b_port = QSpinBox()
        b_port.setRange(0, 100000)
        self.a_port_label = QLabel("Port at a")
        self.b_port_label = QLabel("Port at b")
        form.addRow(self.a_port_label, self._field("a_port", a_port, "Port number on the a end (switches only)"))
        form.addRow(self.b_port_label, self._field("b_port", b_port, "Port number on the b end (switches only)"))
        return page

    def _build_bulk_page(self) -> QWidget:
        page = QWidget()
        form = QFormLayout(page)
        self.bulk_label = QLabel()
        self.bulk_label.setWordWrap(True)
        form.addRow(self.bulk_label)
        self.bulk_switch_box = QGroupBox("Selected switches")
        sform = QFormLayout(self.bulk_switch_box)
        prog = QCheckBox("can aggregate")
        prog.setTristate(False)
        sform.addRow("Programmable", self._field("bulk_programmable", prog, "Make every selected switch programmable (or not)"))
        pipes = QSpinBox()
        pipes.setRange(1, MAX_PIPELINES)
        pipes.setKeyboardTracking(False)
        sform.addRow("Pipelines", self._field("bulk_pipelines", pipes, "Pipelines of every selected switch (resets their port maps)"))
        cap = QLineEdit()
        cap.setPlaceholderText("line rate / mixed")
        sform.addRow("Aggregation capacity", self._field("bulk_aggregation_capacity", cap, "Aggregation capacity of every selected switch"))
        fan_in = QLineEdit()
        fan_in.setPlaceholderText(f"{DEFAULT_MAX_FAN_IN} (default) / mixed")
        sform.addRow("Max fan-in", self._field("bulk_max_fan_in", fan_in, "Max fan-in of every selected switch. " + FAN_IN_TIP))
        tier = QComboBox()
        tier.addItems(list(TIERS))
        sform.addRow("Tier", self._field("bulk_tier", tier, "Tier of every selected switch"))
        target = QComboBox()
        target.addItems(list(TARGET_CHOICES))
        sform.addRow("Target", self._field("bulk_target", target, "Target of every selected switch"))
        form.addRow(self.bulk_switch_box)
        self.bulk_link_box = QGroupBox("Selected links")
        lform = QFormLayout(self.bulk_link_box)
        lform.addRow("Capacity", self._field("bulk_capacity", _spin(0, 1e9, 3, " Gbps"), "Capacity of every selected link"))
        form.addRow(self.bulk_link_box)
        return page

    # ---- showing -----------------------------------------------------------------------------

    def _schedule(self, _event: object = None) -> None:
        self._refresh_timer.start()

    def refresh(self) -> None:
        """Show the current selection."""
        canvas = self.window.canvas
        sc = self.window.scenario()
        self.nodes = [n for n in canvas.selected_nodes() if sc.has_node(n)]
        self.links = [i for i in canvas.selected_links() if i < len(sc.links)]
        self._loading = True
        try:
            total = len(self.nodes) + len(self.links)
            if total == 0:
                self.stack.setCurrentWidget(self.empty_page)
            elif len(self.nodes) == 1 and not self.links:
                self._show_node(self.nodes[0])
                self.stack.setCurrentWidget(self.node_page)
            elif len(self.links) == 1 and not self.nodes:
                self._show_link(self.links[0])
                self.stack.setCurrentWidget(self.link_page)
            else:
                self._show_bulk()
                self.stack.setCurrentWidget(self.bulk_page)
        finally:
            self._loading = False

    def _set(self, name: str, value: Any) -> None:
        w = self.fields[name]
        w.blockSignals(True)
        if isinstance(w, QLineEdit):
            w.setText("" if value is None else str(value))
        elif isinstance(w, (QSpinBox, QDoubleSpinBox)):
            w.setValue(value if value is not None else 0)
        elif isinstance(w, QCheckBox):
            w.setChecked(bool(value))
        elif isinstance(w, QComboBox):
            w.setCurrentText("" if value is None else str(value))
        w.blockSignals(False)

    def _show_node(self, node_id: str) -> None:
        sc = self.window.scenario()
        node = sc.node(node_id)
        self._set("id", node.id)
        roles = []
        for j in sc.jobs:
            if node.id in j.workers:
                roles.append(f"worker of {j.id}")
            if node.id in j.parameter_servers:
                roles.append(f"PS of {j.id}")
        self.role_label.setText(", ".join(roles) or "-")
        if isinstance(node, Switch):
            self.kind_label.setText("programmable switch" if node.programmable else "switch")
            self.switch_box.setVisible(True)
            self._set("tier", node.tier)
            self._set("programmable", node.programmable)
            self._set("pipelines", node.pipelines)
            self._set("aggregation_capacity", None if node.aggregation_capacity is None else fmt(node.aggregation_capacity))
            self._set("aggregation_background", node.aggregation_background)
            self._set("aggregators", node.aggregators)
            self._set("max_fan_in", node.max_fan_in)
            self._set("target", node.target)
            for name in ("pipelines", "aggregation_capacity", "aggregation_background", "aggregators",
                         "max_fan_in", "target"):
                self.fields[name].setEnabled(node.programmable)
            self._fill_ports(node)
        else:
            self.kind_label.setText("host")
            self.switch_box.setVisible(False)

    def _fill_ports(self, sw: Switch) -> None:
        sc = self.window.scenario()
        ports = sc.switch_ports(sw.id)
        current = sc.port_pipeline_map(sw.id)
        default = default_port_pipeline(ports, sw.pipelines)
        neighbour: dict[int, str] = {}
        for lk in sc.links:
            if lk.a == sw.id and lk.a_port is not None:
                neighbour[lk.a_port] = lk.b
            elif lk.b == sw.id and lk.b_port is not None:
                neighbour[lk.b_port] = lk.a
        t = self.port_table
        t.setRowCount(len(ports))
        for r, port in enumerate(ports):
            for c, text in enumerate((str(port), neighbour.get(port, ""), None, f"P{default.get(port, 0)}")):
                if text is None:
                    continue
                item = QTableWidgetItem(text)
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEditable)
                t.setItem(r, c, item)
            spin = QSpinBox()
            spin.setRange(0, max(sw.pipelines - 1, 0))
            spin.setValue(current.get(port, 0))
            spin.setPrefix("P")
            spin.setKeyboardTracking(False)
            spin.setEnabled(sw.programmable or sw.pipelines > 1)
            spin.setToolTip(f"Pipeline of port {port}")
            spin.valueChanged.connect(lambda v, p=port: self.set_port_pipeline(p, v))
            t.setCellWidget(r, 2, spin)
        custom = sw.port_pipeline is not None
        self.port_state.setText("custom map" if custom else "default split")
        self.reset_ports_button.setEnabled(custom)

    def port_rows(self) -> list[tuple[int, str, int, int]]:
        """(port, neighbour, pipeline, default pipeline) as the table shows them."""
        rows = []
        t = self.port_table
        for r in range(t.rowCount()):
            spin = t.cellWidget(r, 2)
            rows.append((int(t.item(r, 0).text()), t.item(r, 1).text(), int(spin.value()), int(t.item(r, 3).text()[1:])))
        return rows

    def _show_link(self, index: int) -> None:
        sc = self.window.scenario()
        lk = sc.links[index]
        self.link_label.setText(f"{lk.a} - {lk.b}")
        self.bg_ab_label.setText(f"Background {lk.a}->{lk.b}")
        self.bg_ba_label.setText(f"Background {lk.b}->{lk.a}")
        self.a_port_label.setText(f"Port at {lk.a}")
        self.b_port_label.setText(f"Port at {lk.b}")
        self._set("capacity", lk.capacity)
        self._set("background_ab", lk.background[0])
        self._set("background_ba", lk.background[1])
        self._set("a_port", lk.a_port or 0)
        self._set("b_port", lk.b_port or 0)
        self.fields["a_port"].setEnabled(lk.a_port is not None)
        self.fields["b_port"].setEnabled(lk.b_port is not None)

    def _show_bulk(self) -> None:
        sc = self.window.scenario()
        switches = [sc.node(n) for n in self.nodes if sc.is_switch(n)]
        hosts = len(self.nodes) - len(switches)
        self.bulk_label.setText(
            f"{len(switches)} switch(es), {hosts} host(s), {len(self.links)} link(s) selected. "
            "A field changed here applies to all of them (one undo step)."
        )
        self.bulk_switch_box.setVisible(bool(switches))
        self.bulk_link_box.setVisible(bool(self.links))

        def same(values: list[Any]) -> Any:
            return values[0] if values and all(v == values[0] for v in values) else None

        if switches:
            self._set("bulk_programmable", same([s.programmable for s in switches]) or False)
            self._set("bulk_pipelines", same([s.pipelines for s in switches]) or 1)
            cap = same([s.aggregation_capacity for s in switches])
            self._set("bulk_aggregation_capacity", None if cap is None else fmt(cap))
            self._set("bulk_max_fan_in", same([s.max_fan_in for s in switches]))
            self._set("bulk_tier", same([s.tier for s in switches]))
            self._set("bulk_target", same([s.target for s in switches]))
        if self.links:
            self._set("bulk_capacity", same([sc.links[i].capacity for i in self.links]) or 0.0)

    # ---- editing -----------------------------------------------------------------------------

    def _commit(self, name: str, value: Any) -> None:
        if self._loading:
            return
        self.edit(name, value)

    def edit(self, name: str, value: Any) -> bool:
        """Apply one field to the selection (what the widgets call). False (and an error dialog)
        when the edit is refused; the document is then unchanged."""
        try:
            action = self._action(name, value)
            if action is None:
                return False
            action()
        except InaplannerError as exc:
            self.window.show_error("Cannot change " + name.replace("bulk_", "").replace("_", " "), str(exc))
            self.refresh()
            return False
        self.refresh()
        return True

    def _action(self, name: str, value: Any) -> Callable[[], None] | None:
        ed = self.editor
        sc = self.window.scenario()
        if name.startswith("bulk_"):
            key = name[5:]
            switches = [n for n in self.nodes if sc.is_switch(n)]
            if key == "capacity":
                return lambda: ed.set_links(self.links, capacity=float(value)) if self.links else None
            if not switches:
                return None
            converted = self._convert(key, value)
            if key == "pipelines":
                return lambda: ed.set_nodes(switches, pipelines=converted, port_pipeline=None)
            return lambda: ed.set_nodes(switches, **{key: converted})
        if len(self.links) == 1 and not self.nodes:
            i = self.links[0]
            lk = sc.links[i]
            if name == "capacity":
                return None if float(value) == lk.capacity else (lambda: ed.set_link(i, capacity=float(value)))
            if name in ("background_ab", "background_ba"):
                bg = list(lk.background)
                bg[0 if name == "background_ab" else 1] = float(value)
                return None if tuple(bg) == tuple(lk.background) else (lambda: ed.set_link(i, background=tuple(bg)))
            if name in ("a_port", "b_port"):
                return None if getattr(lk, name) == int(value) else (lambda: ed.set_link(i, **{name: int(value)}))
            return None
        if len(self.nodes) != 1:
            return None
        nid = self.nodes[0]
        node = sc.node(nid)
        if name == "id":
            new = str(value).strip()
            return None if new == nid else (lambda: ed.rename(nid, new))
        converted = self._convert(name, value)
        if getattr(node, name, object()) == converted:
            return None
        if name == "pipelines":
            return lambda: ed.set_node(nid, pipelines=converted, port_pipeline=None)
        return lambda: ed.set_node(nid, **{name: converted})

    def _convert(self, key: str, value: Any) -> Any:
        if key in ("tier", "target"):
            return str(value) or None
        if key == "aggregation_capacity":
            return value if isinstance(value, (int, float)) or value is None else _optional_float(str(value), "aggregation capacity")
        if key == "aggregators":
            return value if isinstance(value, int) or value is None else _optional_int(str(value), "aggregator slots")
        if key == "max_fan_in":
            return value if isinstance(value, int) or value is None else _optional_int(str(value), "max fan-in")
        if key == "pipelines":
            return int(value)
        if key == "programmable":
            return bool(value)
        if key == "aggregation_background":
            return float(value)
        return value

    def set_port_pipeline(self, port: int, pipeline: int) -> bool:
        """Put one port of the selected switch on a pipeline (one undo step)."""
        if self._loading or len(self.nodes) != 1:
            return False
        sid = self.nodes[0]
        sc = self.window.scenario()
        if sc.port_pipeline_map(sid).get(port) == pipeline:
            return False
        self.window.guard("Cannot change the port map", lambda: self.editor.set_port_pipeline(sid, port, pipeline))
        self._schedule()
        return self.window.scenario().port_pipeline_map(sid).get(port) == pipeline

    def reset_port_map(self) -> None:
        if len(self.nodes) == 1 and self.window.scenario().is_switch(self.nodes[0]):
            self.window.guard("Cannot change the port map", lambda: self.editor.set_node(self.nodes[0], port_pipeline=None))
