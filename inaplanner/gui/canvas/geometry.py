"""Vectorised geometry for the canvas: segment hit tests, parallel offsets, level of detail.

Plain numpy functions tests can call with tiny inputs; only :func:`segments_path` builds a Qt object.
"""

from __future__ import annotations

import numpy as np
from pyqtgraph.functions import arrayToQPath
from PySide6.QtGui import QPainterPath

#: View scales (pixels per scene unit) where the canvas changes its level of detail.
FAR = 0.3  # below: nodes are dots; no labels, no ports, no arrows
NEAR = 0.9  # above: every label, port numbers, flow arrows
SIMPLE = 0.15  # below: nodes are drawn as plain boxes
#: At most this many text labels per repaint (the rest are dropped, nearest to the centre kept).
MAX_LABELS = 1500


def lod_level(scale: float) -> str:
    """"far", "mid" or "near" for a view scale."""
    if scale < FAR:
        return "far"
    if scale < NEAR:
        return "mid"
    return "near"


def point_segment_distance(px: float, py: float, seg: np.ndarray) -> np.ndarray:
    """Distance from (px, py) to each segment of ``seg`` (rows x1, y1, x2, y2)."""
    if seg.size == 0:
        return np.zeros(0)
    x1, y1, x2, y2 = seg[:, 0], seg[:, 1], seg[:, 2], seg[:, 3]
    dx, dy = x2 - x1, y2 - y1
    length2 = dx * dx + dy * dy
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.where(length2 > 0, ((px - x1) * dx + (py - y1) * dy) / np.where(length2 > 0, length2, 1), 0.0)
    t = np.clip(t, 0.0, 1.0)
    cx, cy = x1 + t * dx, y1 + t * dy
    return np.hypot(px - cx, py - cy)


def nearest_segment(px: float, py: float, seg: np.ndarray, tolerance: float) -> int | None:
    """Index of the segment nearest to the point if within ``tolerance``, else None."""
    d = point_segment_distance(px, py, seg)
    if d.size == 0:
        return None
    i = int(np.argmin(d))
    return i if d[i] <= tolerance else None


def offset_segments(seg: np.ndarray, offset: np.ndarray) -> np.ndarray:
    """Shift each segment sideways by ``offset`` (scene units; positive = left of its direction)."""
    if seg.size == 0:
        return seg.copy()
    dx = seg[:, 2] - seg[:, 0]
    dy = seg[:, 3] - seg[:, 1]
    length = np.hypot(dx, dy)
    length = np.where(length > 0, length, 1.0)
    nx, ny = -dy / length * offset, dx / length * offset
    return np.column_stack([seg[:, 0] + nx, seg[:, 1] + ny, seg[:, 2] + nx, seg[:, 3] + ny])


def in_rect(x: np.ndarray, y: np.ndarray, rect: tuple[float, float, float, float], margin: float = 0.0) -> np.ndarray:
    """Mask of points inside (left, top, width, height) grown by ``margin``."""
    left, top, w, h = rect
    return (x >= left - margin) & (x <= left + w + margin) & (y >= top - margin) & (y <= top + h + margin)


def pick_labels(x: np.ndarray, y: np.ndarray, rect: tuple[float, float, float, float], limit: int = MAX_LABELS) -> np.ndarray:
    """Indices of points inside ``rect``, at most ``limit``, the ones nearest the centre first."""
    idx = np.flatnonzero(in_rect(x, y, rect))
    if idx.size <= limit:
        return idx
    cx, cy = rect[0] + rect[2] / 2, rect[1] + rect[3] / 2
    d = (x[idx] - cx) ** 2 + (y[idx] - cy) ** 2
    return idx[np.argsort(d, kind="stable")[:limit]]


def clip_segments(
    seg: np.ndarray, rect: tuple[float, float, float, float], period: float = 0.0
) -> np.ndarray:
    """The parts of segments (rows x1, y1, x2, y2) inside ``rect`` (left, top, width, height);
    segments missing it are dropped (Liang-Barsky, vectorised).

    ``period`` > 0 (scene units): a clipped start is moved back to the last whole multiple of
    ``period`` from the segment's own start, so a dash pattern of that period starts in the same
    phase as on the whole segment (dashes do not crawl while the view pans); the end is kept
    where it was clipped. Parts of a point-like segment are kept when the point is inside."""
    if seg.size == 0:
        return seg.reshape(-1, 4).copy()
    left, top, w, h = rect
    x0, y0 = seg[:, 0], seg[:, 1]
    dx, dy = seg[:, 2] - x0, seg[:, 3] - y0
    t0 = np.zeros(seg.shape[0])
    t1 = np.ones(seg.shape[0])
    keep = np.ones(seg.shape[0], dtype=bool)
    with np.errstate(divide="ignore", invalid="ignore"):
        for p, q in ((-dx, x0 - left), (dx, left + w - x0), (-dy, y0 - top), (dy, top + h - y0)):
            r = q / np.where(p != 0, p, 1.0)
            keep &= ~((p == 0) & (q < 0))
            t0 = np.where(p < 0, np.maximum(t0, r), t0)
            t1 = np.where(p > 0, np.minimum(t1, r), t1)
    keep &= t0 <= t1
    t0, t1, x0, y0, dx, dy = t0[keep], t1[keep], x0[keep], y0[keep], dx[keep], dy[keep]
    if period > 0:
        length = np.hypot(dx, dy)
        with np.errstate(divide="ignore", invalid="ignore"):
            back = np.where(length > 0, np.floor(t0 * length / period) * period / np.where(length > 0, length, 1.0), t0)
        t0 = np.clip(back, 0.0, t0)
    return np.column_stack([x0 + t0 * dx, y0 + t0 * dy, x0 + t1 * dx, y0 + t1 * dy])


def segments_path(seg: np.ndarray) -> QPainterPath:
    """One QPainterPath holding every segment (rows x1, y1, x2, y2), built without a Python loop
    (pyqtgraph's ``arrayToQPath`` streams the coordinates into the path)."""
    if seg.size == 0:
        return QPainterPath()
    xs = np.ascontiguousarray(seg[:, [0, 2]], dtype=np.float64).ravel()
    ys = np.ascontiguousarray(seg[:, [1, 3]], dtype=np.float64).ravel()
    return arrayToQPath(xs, ys, connect="pairs", finiteCheck=False)
