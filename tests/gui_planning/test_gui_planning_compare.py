"""Compare charts get the evaluator's numbers; the diff of two results lists the links whose load
changed and the routes that moved, and a plan diffed with itself is empty."""

from __future__ import annotations

import numpy as np
import pytest

from inaplanner.views.compare import load_cdf
from inaplanner.views.diffing import diff_results
from inaplanner.views.fmt import delta, num


def _two_results(qtbot, ctrl):
    """ARO Fig. 1 planned twice: the tree through spine S0 (rate 1/3, no merge at the spines) and
    through S1, which is programmable and merges everything (rate 1, ARO's optimum)."""
    ctrl.compare_panel.show()  # the charts draw while they are on screen
    panel = ctrl.planner_panel
    panel.select_planner("test-tree")
    out = []
    for avoid in ("", "S0"):
        panel.form().editors["avoid"].setText(avoid)
        with qtbot.waitSignal(ctrl.finished, timeout=10_000) as blocker:
            ctrl.run()
        out.append(blocker.args[0])
    return out


def test_charts_hold_the_right_numbers(qtbot, standalone):
    ctrl = standalone
    via_s0, via_s1 = _two_results(qtbot, ctrl)
    assert (via_s0.objective, via_s1.objective) == (pytest.approx(1 / 3), pytest.approx(1.0))
    cmp = ctrl.compare_panel
    assert cmp.results == [via_s0, via_s1]
    np.testing.assert_allclose(cmp.objective_bars.opts["height"], [1 / 3, 1.0])
    bx, by = cmp.bound_points.getData()
    np.testing.assert_allclose(bx, [0, 1])
    np.testing.assert_allclose(by, [1.0, 1.0])  # both bounded by the 1 Gbps access links
    labels = [t[1] for t in cmp.objective_plot.getAxis("bottom")._tickLevels[0]]
    assert labels == [via_s0.title, via_s1.title]
    assert cmp.throughput_bars == []  # a tab is drawn when it is shown
    cmp.tabs.setCurrentIndex(1)
    assert [list(b.opts["height"]) for b in cmp.throughput_bars] == [
        pytest.approx([1 / 3]), pytest.approx([1.0])
    ]
    cmp.tabs.setCurrentIndex(2)
    # 14 links, 28 directions. Via S0: W0-W4 access + L1/L2/L3 -> S0 at 1/3, S0 -> L0 and
    # L0 -> PS at 3 x 1/3 = 1, the other 18 idle.
    # (one point per distinct utilisation: the steps of one point per link)
    x, y = cmp.cdf_curves[0].getData()
    np.testing.assert_allclose(x, [0.0, 1 / 3, 1.0])
    np.testing.assert_allclose(y, np.array([18, 26, 28]) / 28)
    x1, y1 = cmp.cdf_curves[1].getData()
    ref = load_cdf(via_s1.evaluation)
    np.testing.assert_allclose(x1, ref[0])
    np.testing.assert_allclose(y1, ref[1])
    assert x1[-1] == pytest.approx(1.0) and y1[0] == pytest.approx((28 - 10) / 28)


def test_selected_results_narrow_the_charts(qtbot, standalone):
    ctrl = standalone
    first, second = _two_results(qtbot, ctrl)
    with qtbot.waitSignal(ctrl.finished, timeout=10_000) as blocker:
        ctrl.run()
    third = blocker.args[0]
    assert len(ctrl.compare_panel.results) == 3
    ctrl.compare_panel.hide()
    view = ctrl.results_panel.view
    view.selectRow(0)
    view.selectionModel().select(
        ctrl.results_panel.model.index(2, 0),
        view.selectionModel().SelectionFlag.Select | view.selectionModel().SelectionFlag.Rows,
    )
    assert ctrl.results_panel.selected() == [first, third]
    assert ctrl.compare_panel.results == [first, third]
    # hidden, the charts wait: drawn when shown again
    ctrl.compare_panel.tabs.setCurrentIndex(1)
    assert [list(b.opts["height"]) for b in ctrl.compare_panel.throughput_bars] != [
        [first.objective], [third.objective]
    ]
    ctrl.compare_panel.show()
    assert [list(b.opts["height"]) for b in ctrl.compare_panel.throughput_bars] == [
        [first.objective], [third.objective]
    ]


def test_diff_with_itself_is_empty(qtbot, standalone):
    ctrl = standalone
    result = _two_results(qtbot, ctrl)[0]
    assert diff_results(result, result).is_empty()
    diff_view = ctrl.compare_panel.diff_view
    d = diff_view.set_pair(result, result)
    assert d is not None and d.is_empty()
    assert diff_view.links_table.rowCount() == 0 and diff_view.routes_table.rowCount() == 0
    assert "same routes" in diff_view.summary.text()


def test_diff_lists_moved_routes_and_changed_links(qtbot, standalone):
    ctrl = standalone
    via_s0, via_s1 = _two_results(qtbot, ctrl)
    d = diff_results(via_s0, via_s1)
    assert not d.is_empty()
    assert sorted(c.worker for c in d.routes_moved) == ["W0", "W1", "W2", "W3", "W4"]
    assert all(c.kind == "moved" for c in d.routes_moved)
    deltas = {c.link: (c.load_a, c.load_b) for c in d.link_deltas}
    assert deltas["L1->S0"] == (pytest.approx(1 / 3), 0.0)
    assert deltas["S1->L0"] == (0.0, pytest.approx(1.0))
    assert deltas["W0->L1"] == (pytest.approx(1 / 3), pytest.approx(1.0))
    assert "L0->PS" not in deltas  # 3 flows x 1/3 before, 1 aggregate x 1 after
    assert d.rate_changes[0].rate_b == pytest.approx(1.0)
    # the compare panel's Diff tab defaults to first vs last result
    ctrl.compare_panel.tabs.setCurrentIndex(3)
    view = ctrl.compare_panel.diff_view
    assert view.diff is not None and view.links_table.rowCount() == len(d.link_deltas)
    assert view.routes_table.rowCount() == 5
    assert view.routes_table.text(0, 3) == "W0 - [L1] - S0 - L0 - PS"
    # each row's text is made when first read (13,000 rows at fat-tree k=64), and is the diff's
    rows = view.links_table.rows_model
    by_link = {c.link: c for c in d.link_deltas}
    for i in range(view.links_table.rowCount()):
        c = by_link[view.links_table.text(i, 0)]
        assert [view.links_table.text(i, j) for j in range(1, 5)] == [
            num(c.load_a), num(c.load_b), delta(c.load_a, c.load_b), num(c.capacity)]
    index = rows.index(1, 2)
    assert rows.data(index) == view.links_table.text(1, 2)


def test_the_load_cdf_has_one_point_per_distinct_value_and_the_per_link_steps():
    from types import SimpleNamespace

    rng = np.random.default_rng(5)
    util = rng.choice([0.0, 0.25, 0.5, 1.0, 1.5], size=(500, 2)) * rng.choice([1.0, 1.0, 0.9], size=(500, 2))
    cap = np.where(rng.random((500, 2)) < 0.1, 0.0, 10.0)
    x, y = load_cdf(SimpleNamespace(link_capacity=cap, link_utilisation=util))
    kept = util[cap > 0]
    assert list(x) == sorted(set(kept.tolist())) and y[-1] == 1.0
    for t in np.linspace(-0.1, 1.6, 60):
        below = np.searchsorted(x, t, side="right")
        assert (y[below - 1] if below else 0.0) == pytest.approx(np.mean(kept <= t))
