"""The overlay legend: a strip under the canvas (it covers no node): the load colour bar with ticks,
idle and over-capacity swatches, solid/dashed flow styles and the tasks (the focused one marked)."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFontMetricsF, QLinearGradient, QPainter, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from inaplanner.views.overlay import IDLE_COLOUR, OVER_COLOUR, TICKS, Overlay, colour_bar, fmt

BAR_W = 220


class LegendBar(QWidget):
    """Paints the legend of the canvas's overlay; hidden without one."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.overlay: Overlay | None = None
        self.focused: str | None = None
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setFixedHeight(self._height())
        self.setVisible(False)

    def _height(self) -> int:
        fm = QFontMetricsF(self.font())
        return int(fm.height() * 2 + 16)

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(800, self._height())

    def set_overlay(self, overlay: Overlay | None, enabled: bool = True) -> None:
        self.overlay = overlay
        self.focused = overlay.task_filter if overlay is not None else None
        self.setVisible(overlay is not None and enabled)
        self.update()

    def texts(self) -> list[str]:
        """Every text the legend shows (tests read it)."""
        ov = self.overlay
        if ov is None:
            return []
        out = ["load / capacity", *(f"{int(t * 100)} %" for t in TICKS), "idle", "over capacity"]
        if ov.task_filter is not None:
            out += ["aggregated", "raw"]
        elif ov.tasks:
            out.append("numbers on links: flows")
        out += [self._task_text(ov, ti) for ti in range(len(ov.tasks))][:12]
        return out

    @staticmethod
    def _task_text(ov: Overlay, ti: int) -> str:
        return f"{ov.tasks[ti]} {fmt(ov.task_rates[ti])} Gbps"

    def paintEvent(self, _event) -> None:  # noqa: N802
        ov = self.overlay
        if ov is None:
            return
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        fm = QFontMetricsF(self.font())
        pal = self.palette()
        text_colour = pal.windowText().color()
        h = fm.height()
        y_bar = 6.0
        x = 8.0
        p.setPen(text_colour)
        title = "load / capacity"
        p.drawText(QPointF(x, y_bar + h * 0.8), title)
        x += fm.horizontalAdvance(title) + 10
        # idle swatch
        p.fillRect(QRectF(x, y_bar + 2, 18, h - 4), QColor(IDLE_COLOUR))
        p.drawText(QPointF(x, y_bar + h + fm.ascent() + 2), "idle")
        x += max(18, fm.horizontalAdvance("idle")) + 12
        # the colour bar with ticks
        grad = QLinearGradient(x, 0, x + BAR_W, 0)
        for t, c in colour_bar(32):
            grad.setColorAt(t, QColor(c))
        p.fillRect(QRectF(x, y_bar + 2, BAR_W, h - 4), grad)
        p.setPen(QPen(text_colour, 1))
        for t in TICKS:
            tx = x + t * BAR_W
            p.drawLine(QPointF(tx, y_bar + h - 2), QPointF(tx, y_bar + h + 2))
            label = f"{int(t * 100)} %"
            w = fm.horizontalAdvance(label)
            lx = min(max(tx - w / 2, x - 4), x + BAR_W - w + 4)
            p.drawText(QPointF(lx, y_bar + h + fm.ascent() + 2), label)
        x += BAR_W + 14
        p.fillRect(QRectF(x, y_bar + 2, 18, h - 4), QColor(OVER_COLOUR))
        p.drawText(QPointF(x, y_bar + h + fm.ascent() + 2), "over capacity")
        x += fm.horizontalAdvance("over capacity") + 18
        # flow styles or the flow-count hint
        if ov.task_filter is not None:
            for style, text in ((Qt.PenStyle.SolidLine, "aggregated"), (Qt.PenStyle.DashLine, "raw")):
                p.setPen(QPen(text_colour, 2, style))
                p.drawLine(QPointF(x, y_bar + h / 2), QPointF(x + 22, y_bar + h / 2))
                p.setPen(text_colour)
                p.drawText(QPointF(x + 26, y_bar + h * 0.8), text)
                x += 26 + fm.horizontalAdvance(text) + 12
        elif ov.tasks:
            hint = "numbers on links: flows"
            p.drawText(QPointF(x, y_bar + h * 0.8), hint)
            x += fm.horizontalAdvance(hint) + 12
        # tasks (second row when they do not fit)
        tx, ty = x, y_bar + h * 0.8
        for ti in range(len(ov.tasks)):
            text = self._task_text(ov, ti)
            focused = ov.task_filter == ov.tasks[ti]
            bold = self.font()
            bold.setBold(focused)
            w = 16 + QFontMetricsF(bold).horizontalAdvance(text) + 14
            if tx + w > self.width() - 4:
                if ty > y_bar + h:
                    p.drawText(QPointF(tx, ty), "…")
                    break
                tx, ty = x, ty + h + 2
            p.setPen(QPen(QColor(ov.task_colours[ti]), 4 if focused else 3))
            p.drawLine(QPointF(tx, ty - fm.ascent() / 3), QPointF(tx + 12, ty - fm.ascent() / 3))
            f = self.font()
            f.setBold(focused)
            p.setFont(f)
            p.setPen(text_colour)
            p.drawText(QPointF(tx + 16, ty), text)
            p.setFont(self.font())
            tx += w
        p.end()
