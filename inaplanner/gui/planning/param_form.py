"""A form generated from a planner's declared parameters (``inaplanner.planners.all_params``)."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QLineEdit,
    QSpinBox,
    QWidget,
)

from inaplanner.planners import Param

INT_LIMIT = 2**31 - 1
FLOAT_LIMIT = 1e12


class _FloatSpin(QDoubleSpinBox):
    """Six decimals of precision, shown without trailing zeros (``60``, not ``60.000000``)."""

    def textFromValue(self, value: float) -> str:  # noqa: N802 - Qt override
        text = super().textFromValue(value)
        point = self.locale().decimalPoint()
        if point in text:
            text = text.rstrip("0").rstrip(point)
        return text


def _editor(p: Param) -> QWidget:
    if p.choices is not None:
        w: QWidget = QComboBox()
        for c in p.choices:
            w.addItem(str(c), c)
    elif p.type is bool:
        w = QCheckBox()
    elif p.type is int:
        w = QSpinBox()
        w.setRange(int(p.min) if p.min is not None else -INT_LIMIT,
                   int(p.max) if p.max is not None else INT_LIMIT)
    elif p.type is float:
        w = _FloatSpin()
        w.setDecimals(6)
        w.setRange(float(p.min) if p.min is not None else -FLOAT_LIMIT,
                   float(p.max) if p.max is not None else FLOAT_LIMIT)
        span = (p.max - p.min) if p.min is not None and p.max is not None else None
        w.setSingleStep(span / 100 if span else 1.0)
    else:
        w = QLineEdit()
    w.setToolTip(p.help)
    w.setObjectName(f"param_{p.name}")
    return w


def set_value(w: QWidget, value: Any) -> None:
    if isinstance(w, QComboBox):
        i = w.findData(value)
        w.setCurrentIndex(max(i, 0))
    elif isinstance(w, QCheckBox):
        w.setChecked(bool(value))
    elif isinstance(w, QSpinBox):
        w.setValue(int(value))
    elif isinstance(w, QDoubleSpinBox):
        w.setValue(float(value))
    elif isinstance(w, QLineEdit):
        w.setText("" if value is None else str(value))


def get_value(w: QWidget) -> Any:
    if isinstance(w, QComboBox):
        return w.currentData()
    if isinstance(w, QCheckBox):
        return w.isChecked()
    if isinstance(w, (QSpinBox, QDoubleSpinBox)):
        return w.value()
    assert isinstance(w, QLineEdit)
    return w.text()


class ParamForm(QWidget):
    """Editors for ``params`` (tool tip = the parameter's help); ``values()`` returns name -> value."""

    def __init__(self, params: tuple[Param, ...], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.params = params
        self.editors: dict[str, QWidget] = {}
        layout = QFormLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for p in params:
            w = _editor(p)
            set_value(w, p.default)
            self.editors[p.name] = w
            layout.addRow(p.name.replace("_", " "), w)
            label = layout.labelForField(w)
            if label is not None:
                label.setToolTip(p.help)

    def values(self) -> dict[str, Any]:
        return {name: get_value(w) for name, w in self.editors.items()}

    def set_values(self, values: dict[str, Any]) -> None:
        for name, value in values.items():
            if name in self.editors:
                set_value(self.editors[name], value)

    def reset(self) -> None:
        for p in self.params:
            set_value(self.editors[p.name], p.default)
