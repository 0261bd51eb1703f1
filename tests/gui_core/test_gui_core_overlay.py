"""Overlays: figures straight from the evaluator, the colour scale, and what the canvas paints."""

from __future__ import annotations

import numpy as np
import pytest

from inaplanner.errors import InaplannerError
from inaplanner.evaluate import evaluate
from inaplanner.views.overlay import (
    COLOURS,
    IDLE_COLOUR,
    OVER_COLOUR,
    RAMP,
    TASK_COLOURS,
    VIOLATED_COLOUR,
    colour_class,
    colour_of,
    fmt,
    legend_entries,
    overlay_from_evaluation,
    width_for,
)


def test_colour_scale_thresholds():
    util = np.array([0.0, 0.05, 0.15, 0.34, 0.79, 0.8, 1.0, 1.2, np.inf])
    violated = np.array([False] * 7 + [True, True])
    got = [COLOURS[c] for c in colour_class(util, violated)]
    # 5 % steps: (0, 5 %] is the first ramp class, (95, 100 %] the last
    assert got == [IDLE_COLOUR, RAMP[0], RAMP[2], RAMP[6], RAMP[15], RAMP[15], RAMP[19], VIOLATED_COLOUR,
                   VIOLATED_COLOUR]
    # over capacity is the distinct over-capacity colour even when the evaluator did not flag it
    assert COLOURS[colour_class(np.array([1.0 + 1e-6]), np.array([False]))[0]] == OVER_COLOUR
    # a 34 % link no longer looks like a 5 % one: the ramp darkens monotonically
    lum = [0.299 * int(c[1:3], 16) + 0.587 * int(c[3:5], 16) + 0.114 * int(c[5:7], 16) for c in RAMP]
    assert all(b < a for a, b in zip(lum, lum[1:], strict=False))
    assert colour_of(0.34) != colour_of(0.04) and len(set(RAMP)) == len(RAMP)
    assert list(width_for(np.array([10.0, 40.0, 100.0, 1e6, 0.0]))) == [1.0, 2.0, 2.5, 6.0, 1.0]
    assert (fmt(3.0), fmt(2.428571), fmt(0.2), fmt(float("inf"))) == ("3", "2.43", "0.2", "inf")


def test_task_colours_are_not_load_colours():
    def rgb(c: str) -> np.ndarray:
        return np.array([int(c[1:3], 16), int(c[3:5], 16), int(c[5:7], 16)], dtype=float)

    loads = [rgb(c) for c in COLOURS]
    for t in TASK_COLOURS:
        assert min(np.linalg.norm(rgb(t) - c) for c in loads) > 60, t
    texts = [t for _, t in legend_entries()]
    assert texts[0] == "no load" and "100 % of capacity" in texts and texts[-1].startswith("over capacity")


def test_overlay_figures_come_from_the_evaluator(small, hand_plan):
    ev = evaluate(small, hand_plan(small, 30.0))
    assert ev.valid
    ov = overlay_from_evaluation(ev)
    i = small.link_index("L2", "S1")
    # H3 (port 1) and H4 (port 2) enter L2 on pipeline 0 (ports 1,2 of 1..3 -> P0): one aggregate
    row = ov.link(i)
    assert row.load == pytest.approx((30.0, 0.0))
    assert row.flows == (1, 0)
    assert row.label == "30/100" and row.colour == RAMP[5] and not row.violated
    assert "L2 -> S1: 30 Gbps (30.0 %), 1 flow(s)" in row.tooltip
    sw = ov.switch("L1")
    # L1 merges H2 (port 2, P0) and the aggregate from S1 (port 3, P1): two aggregates
    assert sw is not None and sw.pipelines_used == (0, 1) and sw.pipelines_label == "P0,P1 of 2"
    assert sw.load == pytest.approx(float(ev.switch_load[ev.switch_ids.index("L1")]))
    assert sw.label == f"{fmt(sw.load)}/-"
    assert ov.switch("S1") is None  # not programmable
    # segments: raw before the first merge, aggregated after it
    s = ov.segments
    raw_h3 = [(int(li), int(d)) for li, d, agg in zip(s.link, s.direction, s.aggregated, strict=True) if not agg]
    assert (small.link_index("H3", "L2"), 0) in raw_h3
    agg = {(int(li), int(d)) for li, d, a in zip(s.link, s.direction, s.aggregated, strict=True) if a}
    assert (i, 0) in agg


def test_canvas_paints_a_loaded_and_a_violated_link(window, small, hand_plan, qtbot):
    window.set_document(small, None)
    window.show()
    qtbot.waitExposed(window)
    ev = evaluate(small, hand_plan(small, 60.0))
    # L1 -> H1 carries two aggregates (P0 and P1 at L1): 120 > 100, violated
    assert [str(v) for v in ev.violations] == ["link L1->H1: load 120 > limit 100"]
    window.canvas.set_overlay(overlay_from_evaluation(ev))
    loaded = window.canvas.link_item(small.link_index("L2", "S1"))
    assert loaded.label_text() == "60/100"
    assert loaded.colour() == RAMP[11]  # 60 %: (55, 60 %]
    assert loaded.pen().isCosmetic()
    bad = window.canvas.link_item(small.link_index("H1", "L1"))
    assert bad.colour() == VIOLATED_COLOUR and bad.label_text() == "120/100" and bad.is_violated()
    assert "VIOLATED" in bad.toolTip() and "L1 -> H1: 120 Gbps (120.0 %), 2 flow(s)" in bad.toolTip()
    idle = window.canvas.link_item(small.link_index("L2", "S1") + 0)
    assert idle.pen().widthF() == 1.0
    # programmable switch: outline in its scale colour, figures in tooltip and label
    item = window.canvas.node_item("L1")
    assert "pipelines aggregating: P0,P1 of 2" in item.toolTip()
    assert item.label_text().startswith("L1\n")
    assert "worker of task job0/H1 at 60 Gbps" in window.canvas.node_item("H3").toolTip()
    # the window's status bar sums it up
    assert "1 violation(s)" in window._overlay_label.text()
    # the overlay paints: labels are drawn when zoomed in
    window.canvas.resetTransform()
    window.canvas.centerOn(window.canvas.link_item(small.link_index("L2", "S1")).line().center())
    window.canvas.viewport().grab()
    scene = window.canvas.canvas_scene()
    assert scene.label_layer.drawn > 0
    # all tasks: no flow drawn, the links carry flow counts; a focused task: its flows drawn
    assert scene.flow_layer.segment_count() == 0
    assert loaded.label_text() == "60/100"
    window.canvas.set_task_filter("job0/H1")
    assert scene.flow_layer.segment_count() == len(window.canvas.overlay.segments.of_task(0)) > 0
    window.canvas.viewport().grab()
    # no label is drawn over another
    boxes = scene.label_layer.boxes
    assert boxes and not any(a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]
                             for i, a in enumerate(boxes) for b in boxes[i + 1:])
    assert "over capacity" in window.canvas.legend_bar.texts() and window.canvas.legend_bar.isVisible()


def test_task_filter_and_stale_overlays(window, small, hand_plan):
    window.set_document(small, None)
    ov = overlay_from_evaluation(evaluate(small, hand_plan(small, 10.0)))
    window.canvas.set_overlay(ov)
    window.canvas.set_task_filter("job0/H1")
    assert window.canvas.overlay.visible_tasks() == [0]
    with pytest.raises(KeyError):
        ov.with_filter("job9/H1")
    # any edit of the scenario makes the overlay stale: it is cleared
    window.editor.set_link(0, capacity=50.0)
    assert window.canvas.overlay is None
    assert window.canvas.link_item(0).colour() == window.colours.link
    # an overlay made for other links is refused
    with pytest.raises(InaplannerError, match="another version of the scenario"):
        window.editor.remove([], [0])
        window.canvas.set_overlay(ov)
