"""Compare view: pyqtgraph charts of several results (objective per run with the planner's bound,
per-job throughput bars, link-utilisation CDF) and the diff of two results."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QPalette, QShowEvent
from PySide6.QtWidgets import QLabel, QStackedWidget, QTabWidget, QVBoxLayout, QWidget

from inaplanner.gui.planning.diffview import DiffView
from inaplanner.views.compare import load_cdf, objective_series, throughput_series
from inaplanner.views.overlay import TASK_COLOURS
from inaplanner.views.runs import PlanResult


def _colour(i: int, n: int) -> pg.QtGui.QColor:
    """Series colours: the overlay's qualitative (colour-blind friendly) task palette."""
    return pg.mkColor(TASK_COLOURS[i % len(TASK_COLOURS)])


def _ticks(labels: list[str]) -> list[list[tuple[float, str]]]:
    return [[(float(i), s) for i, s in enumerate(labels)]]


class ComparePanel(QWidget):
    """``set_results(results)`` redraws the three charts; the Diff tab compares two results."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.results: list[PlanResult] = []
        self._stale: set[int] = set()
        self.tabs = QTabWidget()
        self.objective_plot = pg.PlotWidget()
        self.objective_plot.setLabel("left", "objective")
        self.objective_plot.showGrid(y=True, alpha=0.3)
        self.objective_plot.addLegend(offset=(-10, 10))
        self.throughput_plot = pg.PlotWidget()
        self.throughput_plot.setLabel("left", "job throughput", units="Gbps")
        self.throughput_plot.showGrid(y=True, alpha=0.3)
        self.throughput_legend = self.throughput_plot.addLegend(offset=(-10, 10))
        self.cdf_plot = pg.PlotWidget()
        self.cdf_plot.setLabel("bottom", "link utilisation (load / capacity)")
        self.cdf_plot.setLabel("left", "fraction of directed links")
        self.cdf_plot.showGrid(x=True, y=True, alpha=0.3)
        self.cdf_plot.addLegend(offset=(-10, -10))
        self.diff_view = DiffView()
        self._follow_palette()
        self.tabs.addTab(self.objective_plot, "Objective")
        self.tabs.addTab(self.throughput_plot, "Throughput")
        self.tabs.addTab(self.cdf_plot, "Link load CDF")
        self.tabs.addTab(self.diff_view, "Diff")
        self.hint = QLabel("No results yet. Run a planner (Plan > Run planner, Ctrl+R): the objectives, job "
                           "throughputs and link loads of its results are compared here.")
        self.hint.setWordWrap(True)
        self.hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.hint)  # until the first result: a hint, not an empty 0-1 chart
        self.stack.addWidget(self.tabs)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.stack)
        self.tabs.currentChanged.connect(lambda i: self._draw_tab(i) if self.isVisible() else None)
        self.objective_bars: pg.BarGraphItem | None = None
        self.bound_points: pg.ScatterPlotItem | None = None
        self.throughput_bars: list[pg.BarGraphItem] = []
        self.cdf_curves: list[pg.PlotDataItem] = []

    def _follow_palette(self) -> None:
        """Charts in the window's colours (light or dark theme) instead of pyqtgraph's black."""
        pal = self.palette()
        bg = pal.color(QPalette.ColorRole.Base)
        fg = pal.color(QPalette.ColorRole.Text)
        for plot in (self.objective_plot, self.throughput_plot, self.cdf_plot):
            plot.setBackground(bg)
            for name in ("left", "bottom"):
                axis = plot.getAxis(name)
                axis.setPen(fg)
                axis.setTextPen(fg)
            legend = plot.getPlotItem().legend
            if legend is not None:
                legend.setLabelTextColor(fg)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.PaletteChange:
            self._follow_palette()
        super().changeEvent(event)

    def set_results(self, results: Sequence[PlanResult]) -> None:
        """Show ``results``. Only the tab on screen is drawn now; the others (and a hidden panel)
        when they are shown, so a result landing does not redraw what nobody looks at (the diff
        of two plans on a big network takes ~0.1 s)."""
        self.results = list(results)
        self.stack.setCurrentWidget(self.tabs if self.results else self.hint)
        self._stale = set(range(self.tabs.count()))
        if self.isVisible():
            self._draw_tab(self.tabs.currentIndex())

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt override
        self._draw_tab(self.tabs.currentIndex())
        super().showEvent(event)

    def _draw_tab(self, index: int) -> None:
        if index not in self._stale:
            return
        self._stale.discard(index)
        (self._draw_objectives, self._draw_throughput, self._draw_cdf,
         lambda: self.diff_view.set_results(self.results))[index]()

    def redraw(self) -> None:
        """Draw every tab now."""
        self._stale = set(range(self.tabs.count()))
        for i in range(self.tabs.count()):
            self._draw_tab(i)

    def _draw_objectives(self) -> None:
        plot = self.objective_plot
        plot.clear()
        s = objective_series(self.results)
        x = np.arange(len(s.labels), dtype=float)
        self.objective_bars = pg.BarGraphItem(
            x=x, height=np.asarray(s.objectives, dtype=float), width=0.6,
            brushes=[_colour(i, len(x)) for i in range(len(x))], name="objective",
        )
        plot.addItem(self.objective_bars)
        bx = [float(i) for i, b in enumerate(s.bounds) if b is not None]
        by = [float(b) for b in s.bounds if b is not None]
        self.bound_points = pg.ScatterPlotItem(
            x=bx, y=by, symbol="t1", size=14, pen=pg.mkPen(self.palette().color(QPalette.ColorRole.Text)),
            brush=pg.mkBrush("#d7263d"), name="bound",
        )
        plot.addItem(self.bound_points)
        plot.getAxis("bottom").setTicks(_ticks(s.labels))
        plot.setXRange(-0.7, max(len(x) - 0.3, 0.7), padding=0)
        top = max([*s.objectives, *by, 0.0])
        plot.setYRange(0, top * 1.1 if top > 0 else 1.0)

    def _draw_throughput(self) -> None:
        plot = self.throughput_plot
        plot.clear()
        t = throughput_series(self.results)
        n = len(t.labels)
        width = 0.8 / max(n, 1)
        self.throughput_bars = []
        for i, label in enumerate(t.labels):
            x = np.arange(len(t.jobs), dtype=float) + (i - (n - 1) / 2) * width
            bars = pg.BarGraphItem(x=x, height=t.values[i], width=width * 0.95,
                                   brush=_colour(i, n), name=label)
            plot.addItem(bars)
            self.throughput_bars.append(bars)
        plot.getAxis("bottom").setTicks(_ticks(t.jobs))
        plot.setXRange(-0.6, max(len(t.jobs) - 0.4, 0.6), padding=0)
        top = float(t.values.max()) if t.values.size else 0.0
        plot.setYRange(0, top * 1.1 if top > 0 else 1.0)

    def _draw_cdf(self) -> None:
        plot = self.cdf_plot
        plot.clear()
        self.cdf_curves = []
        n = len(self.results)
        for i, r in enumerate(self.results):
            x, y = load_cdf(r.evaluation)
            curve = plot.plot(x, y, stepMode="left", pen=pg.mkPen(_colour(i, n), width=2), name=r.title)
            self.cdf_curves.append(curve)
        plot.setYRange(0, 1.02, padding=0)
