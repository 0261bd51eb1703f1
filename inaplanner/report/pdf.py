"""PDF and PNG output through Qt (QTextDocument + QPdfWriter, QSvgRenderer), no extra dependency.

Qt is imported inside the functions only, so the rest of :mod:`inaplanner.report` imports without
it. Without a running Qt application an offscreen one is created (fonts and text layout need
one); inside the GUI the existing application is used.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from inaplanner.errors import InaplannerError
from inaplanner.io.atomic import atomic_write_bytes
from inaplanner.report.data import Report
from inaplanner.report.html import render_html

DPI = 96  # layout resolution of the PDF (CSS pixels)
IMAGE_SCALE = 2.5  # drawings are rasterised this much finer than they are shown


@dataclass
class PdfResult:
    pages: int
    size_bytes: int


def _app():
    """The running Qt application, or an offscreen one kept for the process lifetime. It is a
    QApplication (not just a QGuiApplication) so that widgets can still be made later in the same
    process (the GUI, tests)."""
    try:
        from PySide6.QtCore import QCoreApplication
        from PySide6.QtWidgets import QApplication
    except ImportError as exc:  # pragma: no cover - PySide6 is a dependency
        raise InaplannerError(f"PDF and PNG output need PySide6 (Qt): {exc}") from None
    app = QCoreApplication.instance()
    if app is None:
        app = QApplication(["inaplanner", "-platform", os.environ.get("QT_QPA_PLATFORM", "offscreen")])
        globals()["_APP"] = app  # keep it alive
    return app


def svg_to_image(svg: str, scale: float = 1.0, background: str = "#ffffff"):
    """Rasterise an SVG document to a QImage (``scale`` times its own size)."""
    _app()
    from PySide6.QtCore import QByteArray, QRectF
    from PySide6.QtGui import QColor, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    renderer = QSvgRenderer(QByteArray(svg.encode("utf-8")))
    if not renderer.isValid():
        raise InaplannerError("internal error: the drawing is not valid SVG")
    size = renderer.defaultSize()
    w, h = max(1, round(size.width() * scale)), max(1, round(size.height() * scale))
    image = QImage(w, h, QImage.Format.Format_ARGB32)
    image.fill(QColor(background))
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
    renderer.render(painter, QRectF(0, 0, w, h))
    painter.end()
    return image


def image_bytes(image, fmt: str = "PNG") -> bytes:
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice

    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buf, fmt):
        raise InaplannerError(f"could not encode the image as {fmt}")
    buf.close()
    return bytes(data.data())


def svg_to_png(svg: str, scale: float = 2.0) -> bytes:
    """PNG bytes of an SVG document."""
    return image_bytes(svg_to_image(svg, scale))


def pdf_bytes(report: Report) -> tuple[bytes, int]:
    """The report as PDF bytes (A4, one section per page as the HTML variant marks) and its
    page count."""
    _app()
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QMarginsF, QSizeF, QUrl
    from PySide6.QtGui import QPageLayout, QPageSize, QPdfWriter, QTextDocument

    rendered = render_html(report, target="qt")
    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    writer = QPdfWriter(buf)
    writer.setTitle(report.title)
    writer.setCreator(f"inaplanner {report.version}")
    writer.setResolution(DPI)
    writer.setPageLayout(QPageLayout(QPageSize(QPageSize.PageSizeId.A4), QPageLayout.Orientation.Portrait,
                                     QMarginsF(15, 15, 15, 15), QPageLayout.Unit.Millimeter))
    doc = QTextDocument()
    doc.setDocumentMargin(0)
    doc.documentLayout().setPaintDevice(writer)
    doc.setPageSize(QSizeF(writer.width(), writer.height()))
    doc.setDefaultStyleSheet("body{font-size:9pt} h1{font-size:16pt} h2{font-size:13pt;"
                             "color:#1f5fa8} h3{font-size:10.5pt} th{background-color:#eef3f8}"
                             " .meta{color:#5f6b76} .good{color:#2e7d32;font-weight:bold}"
                             " .bad{color:#c62828;font-weight:bold} .m{color:#1f5fa8}")
    for name, (svg, _width) in rendered.images.items():
        doc.addResource(QTextDocument.ResourceType.ImageResource, QUrl(name),
                        svg_to_image(svg, IMAGE_SCALE))
    doc.setHtml(rendered.html)
    pages = doc.pageCount()
    doc.print_(writer)
    del doc
    del writer  # finishes the PDF
    buf.close()
    out = bytes(data.data())
    if not out.startswith(b"%PDF"):
        raise InaplannerError("Qt produced no PDF")
    return out, pages


def write_pdf(report: Report, path: str | os.PathLike[str]) -> PdfResult:
    """Write the report as a PDF file (atomically); returns the page count."""
    data, pages = pdf_bytes(report)
    atomic_write_bytes(path, data)
    return PdfResult(pages, len(data))
