"""Clipping of link and flow segments to the painted rectangle (canvas/geometry.py, items.py) and
the window's teardown on close."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QImage, QPainter, QTransform

from inaplanner.gui.canvas import geometry as geo
from inaplanner.gui.canvas.items import _cosmetic, dash_period, draw_tiles, tiled_paths
from inaplanner.model import Host


def test_clip_segments_matches_sampling():
    rng = np.random.default_rng(7)
    seg = rng.uniform(-50, 150, size=(400, 4))
    rect = (0.0, 10.0, 100.0, 60.0)
    out = geo.clip_segments(seg, rect)
    # brute force: which segments have a sample point inside the rectangle
    t = np.linspace(0, 1, 2001)[:, None]
    xs = seg[:, 0] + t * (seg[:, 2] - seg[:, 0])
    ys = seg[:, 1] + t * (seg[:, 3] - seg[:, 1])
    hit = ((xs >= 0) & (xs <= 100) & (ys >= 10) & (ys <= 70)).any(axis=0)
    assert out.shape[0] == int(hit.sum())
    eps = 1e-9
    assert (out[:, [0, 2]] >= -eps).all() and (out[:, [0, 2]] <= 100 + eps).all()
    assert (out[:, [1, 3]] >= 10 - eps).all() and (out[:, [1, 3]] <= 70 + eps).all()
    kept = seg[hit]
    for (x0, y0, x1, y1), (a, b, c, d) in zip(kept, out, strict=True):  # on the original line
        cross = lambda px, py, x0=x0, y0=y0, x1=x1, y1=y1: (x1 - x0) * (py - y0) - (y1 - y0) * (px - x0)  # noqa: E731
        assert abs(cross(a, b)) < 1e-6 * max(1.0, np.hypot(x1 - x0, y1 - y0)) ** 2
        assert abs(cross(c, d)) < 1e-6 * max(1.0, np.hypot(x1 - x0, y1 - y0)) ** 2


def test_clipped_start_keeps_the_dash_phase():
    seg = np.array([[-100.0, 5.0, 200.0, 5.0], [3.0, 5.0, 8.0, 5.0]])
    out = geo.clip_segments(seg, (0.0, 0.0, 10.0, 10.0), period=7.0)
    assert np.allclose(out[0], [-2.0, 5.0, 10.0, 5.0])  # 98 = 14 x 7 from its start, just outside
    assert np.allclose(out[1], [3.0, 5.0, 8.0, 5.0])  # inside: untouched


def _paint(tiles_from: np.ndarray, exposed: QRectF, scale: float, pen) -> QImage:
    img = QImage(400, 200, QImage.Format.Format_ARGB32_Premultiplied)
    img.fill(QColor("white"))
    p = QPainter(img)
    p.setTransform(QTransform.fromScale(scale, scale))
    draw_tiles(p, [(pen, tiled_paths(tiles_from))], exposed, 0.0, scale)
    p.end()
    return img


def test_a_clipped_dashed_flow_paints_the_same_pixels():
    """A dashed flow thousands of pixels long, painted where only part of it is on screen, looks
    exactly as when Qt strokes all of it."""
    scale = 2.0
    seg = np.array([[-3000.0, 20.3, 3000.0, 80.7], [10.0, 10.0, 150.0, 10.0]])
    pen = _cosmetic("#d55e00", 1.6, Qt.PenStyle.DashLine)
    assert dash_period(pen, scale) > 0
    clipped = _paint(seg, QRectF(0, 0, 200, 100), scale, pen)  # the long one crosses the edge
    whole = _paint(seg, QRectF(-5000, -5000, 10000, 10000), scale, pen)  # drawn as it is
    assert clipped == whole
    painted = sum(clipped.pixelColor(x, y) != QColor("white") for x in range(0, 400, 2) for y in range(0, 200, 2))
    assert painted > 50  # both flows are there


def test_closing_the_window_stops_following_the_document(make_window, small):
    from inaplanner.model.document import ScenarioDocument

    w = make_window(ScenarioDocument(small), plugins=True)
    scene = w.canvas.canvas_scene()
    planning = w.planning
    assert w.close()
    assert scene.signalsBlocked()
    assert not planning.on_shutdown  # its timer stopped, its subscription dropped
    w.document.add_node(Host("late", pos=(0.0, 0.0)))
    assert "late" not in scene.items_by_id  # the closed window's scene no longer follows edits
