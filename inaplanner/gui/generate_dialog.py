"""The Generate dialog: leaf-spine and fat-tree networks (sizes, capacities, share of programmable
switches, pipelines, seed, jobs) and the papers' example networks and testbeds.

The dialog only collects values; :func:`build` makes the scenario with ``inaplanner.topologies``
(Qt-free), so a test can call it with the values a user would type.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QLineEdit,
    QSpinBox,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from inaplanner.errors import ValidationError
from inaplanner.model import Scenario
from inaplanner.topologies import (
    aro_fig1,
    fat_tree,
    grid_fig1,
    grid_testbed,
    inart_fig1,
    inart_testbed,
    leaf_spine,
    mark_programmable,
    place_jobs,
)

KINDS = ("leaf-spine", "fat-tree", "testbed")
TESTBEDS = {
    "ARO Fig. 1 (leaf-spine, 5 workers)": aro_fig1,
    "GRID Fig. 1 (3 switches, 8 workers)": grid_fig1,
    "GRID testbed (Tofino, 100 Gbps)": grid_testbed,
    "InArt Fig. 1 (2 switches, 2 PSs)": inart_fig1,
    "InArt testbed (Tofino, 100 Gbps)": inart_testbed,
}


@dataclass
class GenerateSpec:
    """What to generate (the dialog's fields)."""

    kind: str = "leaf-spine"
    leaves: int = 4
    spines: int = 2
    hosts_per_leaf: int = 4
    host_capacity: float = 100.0
    fabric_capacity: float = 100.0
    k: int = 4
    capacity: float = 100.0
    testbed: str = next(iter(TESTBEDS))
    share: float = 1.0  # share of programmable switches (of all switches); 0 = none
    pipelines: int = 1
    aggregation_capacity: float | None = None
    seed: int = 0
    jobs: int = 0
    workers_per_job: int = 4
    name: str = ""


def build(spec: GenerateSpec) -> Scenario:
    """The scenario a spec describes (validated)."""
    if spec.kind not in KINDS:
        raise ValidationError(f"unknown kind {spec.kind!r} (one of {', '.join(KINDS)})")
    if spec.kind == "testbed":
        if spec.testbed not in TESTBEDS:
            raise ValidationError(f"unknown testbed {spec.testbed!r}")
        return TESTBEDS[spec.testbed]()
    if spec.kind == "leaf-spine":
        sc = leaf_spine(spec.leaves, spec.spines, spec.hosts_per_leaf, spec.host_capacity, spec.fabric_capacity,
                        name=spec.name or None)
    else:
        sc = fat_tree(spec.k, spec.capacity, name=spec.name or None)
    if spec.share > 0:
        mark_programmable(sc, spec.share, tiers=None, seed=spec.seed, pipelines=spec.pipelines,
                          aggregation_capacity=spec.aggregation_capacity)
    if spec.jobs > 0:
        place_jobs(sc, jobs=spec.jobs, workers_per_job=spec.workers_per_job, seed=spec.seed,
                   programmable_ps_leaf=spec.share > 0)
    sc.touch()
    sc.validate()
    return sc


class GenerateDialog(QDialog):
    """Collects a :class:`GenerateSpec`."""

    def __init__(self, parent: QWidget | None = None, spec: GenerateSpec | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Generate a network")
        spec = spec or GenerateSpec()
        self.kind = QComboBox()
        self.kind.addItems(list(KINDS))
        self.kind.setToolTip("Which family of network to build")
        self.pages = QStackedWidget()

        ls = QWidget()
        f = QFormLayout(ls)
        self.leaves = self._int(1, 4096, spec.leaves, "Leaf switches")
        self.spines = self._int(1, 4096, spec.spines, "Spine switches (each joins every leaf)")
        self.hosts_per_leaf = self._int(0, 4096, spec.hosts_per_leaf, "Hosts under each leaf")
        self.host_capacity = self._float(spec.host_capacity, "Host link capacity (Gbps)")
        self.fabric_capacity = self._float(spec.fabric_capacity, "Leaf-spine link capacity (Gbps)")
        for label, w in (("Leaves", self.leaves), ("Spines", self.spines), ("Hosts per leaf", self.hosts_per_leaf),
                         ("Host links", self.host_capacity), ("Fabric links", self.fabric_capacity)):
            f.addRow(label, w)
        ft = QWidget()
        f = QFormLayout(ft)
        self.k = self._int(2, 64, spec.k, "k (even): k pods, k^3/4 hosts")
        self.k.setSingleStep(2)
        self.capacity = self._float(spec.capacity, "Link capacity (Gbps)")
        f.addRow("k", self.k)
        f.addRow("Links", self.capacity)
        tb = QWidget()
        f = QFormLayout(tb)
        self.testbed = QComboBox()
        self.testbed.addItems(list(TESTBEDS))
        self.testbed.setToolTip("A network from one of the papers")
        f.addRow("Network", self.testbed)
        for page in (ls, ft, tb):
            self.pages.addWidget(page)
        self.kind.currentIndexChanged.connect(self.pages.setCurrentIndex)

        common = QGroupBox("Programmable switches and jobs (leaf-spine, fat-tree)")
        f = QFormLayout(common)
        self.share = QDoubleSpinBox()
        self.share.setRange(0.0, 1.0)
        self.share.setSingleStep(0.1)
        self.share.setValue(spec.share)
        self.share.setToolTip("Share of all switches made programmable, drawn with the seed (0: none)")
        self.pipelines = self._int(1, 64, spec.pipelines, "Pipelines of each programmable switch")
        self.agg_capacity = QLineEdit("" if spec.aggregation_capacity is None else str(spec.aggregation_capacity))
        self.agg_capacity.setPlaceholderText("line rate")
        self.agg_capacity.setToolTip("Aggregation capacity of each programmable switch (Gbps; empty: line rate)")
        self.seed = self._int(0, 2**31 - 1, spec.seed, "Seed of the random choices")
        self.jobs = self._int(0, 1000, spec.jobs, "Jobs to place (ARO's placement: a PS under a leaf, random workers)")
        self.workers = self._int(1, 100000, spec.workers_per_job, "Workers per job")
        self.name = QLineEdit(spec.name)
        self.name.setPlaceholderText("automatic")
        self.name.setToolTip("Scenario name")
        for label, w in (("Programmable share", self.share), ("Pipelines", self.pipelines),
                         ("Aggregation capacity", self.agg_capacity), ("Seed", self.seed), ("Jobs", self.jobs),
                         ("Workers per job", self.workers), ("Name", self.name)):
            f.addRow(label, w)

        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        box = QVBoxLayout(self)
        top = QFormLayout()
        top.addRow("Kind", self.kind)
        box.addLayout(top)
        box.addWidget(self.pages)
        box.addWidget(common)
        box.addWidget(buttons)
        self.kind.setCurrentText(spec.kind)
        self.testbed.setCurrentText(spec.testbed)

    def _int(self, lo: int, hi: int, value: int, tip: str) -> QSpinBox:
        s = QSpinBox()
        s.setRange(lo, hi)
        s.setValue(value)
        s.setToolTip(tip)
        return s

    def _float(self, value: float, tip: str) -> QDoubleSpinBox:
        s = QDoubleSpinBox()
        s.setRange(0.001, 1e7)
        s.setDecimals(3)
        s.setValue(value)
        s.setToolTip(tip)
        return s

    def spec(self) -> GenerateSpec:
        text = self.agg_capacity.text().strip()
        try:
            agg = float(text) if text else None
        except ValueError:
            raise ValidationError(f"aggregation capacity {text!r} is not a number") from None
        return GenerateSpec(
            kind=self.kind.currentText(),
            leaves=self.leaves.value(),
            spines=self.spines.value(),
            hosts_per_leaf=self.hosts_per_leaf.value(),
            host_capacity=self.host_capacity.value(),
            fabric_capacity=self.fabric_capacity.value(),
            k=self.k.value(),
            capacity=self.capacity.value(),
            testbed=self.testbed.currentText(),
            share=self.share.value(),
            pipelines=self.pipelines.value(),
            aggregation_capacity=agg,
            seed=self.seed.value(),
            jobs=self.jobs.value(),
            workers_per_job=self.workers.value(),
            name=self.name.text().strip(),
        )

    def set_values(self, **values: Any) -> None:
        """Fill fields by GenerateSpec name (tests, scripting)."""
        widgets = {
            "kind": self.kind, "leaves": self.leaves, "spines": self.spines, "hosts_per_leaf": self.hosts_per_leaf,
            "host_capacity": self.host_capacity, "fabric_capacity": self.fabric_capacity, "k": self.k,
            "capacity": self.capacity, "testbed": self.testbed, "share": self.share, "pipelines": self.pipelines,
            "aggregation_capacity": self.agg_capacity, "seed": self.seed, "jobs": self.jobs,
            "workers_per_job": self.workers, "name": self.name,
        }
        for key, value in values.items():
            w = widgets[key]
            if isinstance(w, QComboBox):
                w.setCurrentText(str(value))
            elif isinstance(w, QLineEdit):
                w.setText("" if value is None else str(value))
            else:
                w.setValue(value)

    def build_scenario(self) -> Scenario:
        return build(self.spec())
