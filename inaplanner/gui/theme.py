"""Light and dark looks that follow the system colour scheme, and the canvas colours of each."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QIcon, QPainter, QPalette, QPixmap
from PySide6.QtSvg import QSvgRenderer
from PySide6.QtWidgets import QApplication

MODES = ("system", "light", "dark")


@dataclass(frozen=True)
class CanvasColours:
    """Colours the canvas paints with (hex strings)."""

    name: str
    background: str
    grid: str
    link: str
    link_selected: str
    host: str
    ps: str
    switch: str
    programmable: str
    outline: str
    label: str
    label_background: str
    highlight: str
    legend_background: str


LIGHT = CanvasColours(
    name="light",
    background="#fbfbfc",
    grid="#e6e8eb",
    link="#7d8791",
    link_selected="#1565c0",
    host="#d9e6f5",
    ps="#ffd8a8",
    switch="#c9ced6",
    programmable="#b9e3c6",
    outline="#3a4149",
    label="#1f2328",
    label_background="#fbfbfcd0",
    highlight="#8e44ad",
    legend_background="#ffffffe0",
)

DARK = CanvasColours(
    name="dark",
    background="#1e2126",
    grid="#2b3037",
    link="#8a949e",
    link_selected="#64b5f6",
    host="#3a4d66",
    ps="#7a5a2e",
    switch="#4a5058",
    programmable="#2f6b45",
    outline="#c9d1d9",
    label="#e6edf3",
    label_background="#1e2126d0",
    highlight="#c39bd3",
    legend_background="#262a30e8",
)


def qcolor(text: str) -> QColor:
    """A colour from ``#RRGGBB`` or CSS-style ``#RRGGBBAA`` (Qt itself reads 9 characters as
    ``#AARRGGBB``)."""
    if len(text) == 9 and text.startswith("#"):
        c = QColor(text[:7])
        c.setAlpha(int(text[7:], 16))
        return c
    return QColor(text)


def system_prefers_dark() -> bool:
    hints = QGuiApplication.styleHints()
    scheme = getattr(hints, "colorScheme", None)
    if scheme is None:
        return False
    return scheme() == Qt.ColorScheme.Dark


def resolve(mode: str) -> CanvasColours:
    if mode not in MODES:
        raise ValueError(f"unknown theme {mode!r} (one of {', '.join(MODES)})")
    if mode == "system":
        return DARK if system_prefers_dark() else LIGHT
    return DARK if mode == "dark" else LIGHT


def _dark_palette() -> QPalette:
    p = QPalette()
    base = QColor("#1e2126")
    window = QColor("#262a30")
    text = QColor("#e6edf3")
    p.setColor(QPalette.ColorRole.Window, window)
    p.setColor(QPalette.ColorRole.WindowText, text)
    p.setColor(QPalette.ColorRole.Base, base)
    p.setColor(QPalette.ColorRole.AlternateBase, window)
    p.setColor(QPalette.ColorRole.ToolTipBase, QColor("#30363d"))
    p.setColor(QPalette.ColorRole.ToolTipText, text)
    p.setColor(QPalette.ColorRole.Text, text)
    p.setColor(QPalette.ColorRole.Button, window)
    p.setColor(QPalette.ColorRole.ButtonText, text)
    p.setColor(QPalette.ColorRole.BrightText, QColor("#ff7b72"))
    p.setColor(QPalette.ColorRole.Highlight, QColor("#1f6feb"))
    p.setColor(QPalette.ColorRole.HighlightedText, QColor("#ffffff"))
    p.setColor(QPalette.ColorRole.Link, QColor("#58a6ff"))
    p.setColor(QPalette.ColorRole.PlaceholderText, QColor("#8b949e"))
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText, QPalette.ColorRole.WindowText):
        p.setColor(QPalette.ColorGroup.Disabled, role, QColor("#6e7681"))
    return p


def apply(app: QApplication, mode: str = "system") -> CanvasColours:
    """Set the Fusion style with a light or dark palette; return the canvas colours to use."""
    global _dark_icons
    colours = resolve(mode)
    _dark_icons = colours is DARK
    app.setStyle("Fusion")
    if colours is DARK:
        app.setPalette(_dark_palette())
    else:
        app.setPalette(app.style().standardPalette())
    return colours


# ---- icons -------------------------------------------------------------------------------------

_ICON_ALIASES = {"tool-host": "host", "tool-switch": "switch", "tool-programmable": "switch-programmable"}


def icon_path(name: str) -> str | None:
    """The SVG file of an icon in ``resources/`` (the application icon is ``inaplanner``)."""
    from inaplanner import RESOURCES

    if name == "inaplanner":
        p = RESOURCES / "inaplanner.svg"
        return str(p) if p.exists() else None
    for candidate in (name, _ICON_ALIASES.get(name, name)):
        p = RESOURCES / "icons" / f"{candidate}.svg"
        if p.exists():
            return str(p)
    return None


_ICON_INK = "#37474f"  # the outline colour of the icons in resources/icons
_DARK_INK = "#cfd8dc"
_dark_icons = False


def icon(name: str) -> QIcon:
    """An icon from ``resources/``; with the dark look its dark outlines are drawn light."""
    path = icon_path(name)
    if not path:
        return QIcon()
    if not _dark_icons or name == "inaplanner":
        return QIcon(path)
    with open(path, encoding="utf-8") as fh:
        data = fh.read().replace(_ICON_INK, _DARK_INK).encode("utf-8")
    out = QIcon()
    for size in (16, 24, 32, 48):
        pm = QPixmap(size, size)
        pm.fill(Qt.GlobalColor.transparent)
        renderer = QSvgRenderer(data)
        painter = QPainter(pm)
        renderer.render(painter)
        painter.end()
        out.addPixmap(pm)
    return out
