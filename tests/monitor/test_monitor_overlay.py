"""The Monitor mode's overlay data (Qt-free): the planner overlay's colour scale on observed loads."""

from __future__ import annotations

import numpy as np

from inaplanner.evaluate import evaluate
from inaplanner.monitor.series import Snapshot, planned_loads
from inaplanner.views.monitor import MonitorModel, observed_overlay
from inaplanner.views.overlay import COLOURS, IDLE_COLOUR, overlay_from_evaluation


def test_observed_plan_loads_paint_like_the_planner_overlay(leafspine):
    sc, plan = leafspine
    ev = evaluate(sc, plan)
    planned = overlay_from_evaluation(ev)
    observed = observed_overlay(sc, ev.link_load, ev.link_load)
    assert np.array_equal(observed.link_class, planned.link_class)
    for li in range(len(sc.links)):
        assert observed.link_colour(li) == planned.link_colour(li)
        assert observed.link_label(li) == planned.link_label(li)
        assert "planned" in observed.link(li).tooltip


def test_unmeasured_and_overloaded_links(leafspine):
    sc, plan = leafspine
    model = MonitorModel(sc, planned_loads(sc, plan))
    li = sc.link_index("L1", "H1")
    d = 0 if sc.links[li].a == "L1" else 1
    model.add(Snapshot(0.0, 0.0, {(li, d): 12.5}))  # 125 % of 10 Gbps
    ov = model.overlay()
    assert ov.link_colour(li) == COLOURS[-1] and bool(ov.link_violated[li])
    other = sc.link_index("H4", "L2")
    assert ov.link_colour(other) == IDLE_COLOUR and ov.link_label(other) == "-/10"
    assert "not measured" in ov.link(other).tooltip
    assert ov.with_filter("j/H1").task_filter is None  # no tasks in observed loads
    rows = model.rows()
    assert rows[0].name == "L1->H1" and rows[0].utilisation == 1.25
    assert rows[0].deviation == (12.5 - 6.0) / 6.0
    assert rows[-1].observed is None


def test_the_polls_kept_fit_the_network(monkeypatch):
    """The Monitor mode kept 3,600 polls of every directed link whatever the network: 5.4 MB
    more a poll at fat-tree k=32 (6.5 GB in an hour of polls every 3 s). The polls kept now fit
    a budget of rates; a small network keeps its hour."""
    from inaplanner.monitor import series
    from inaplanner.monitor.series import polls_kept
    from inaplanner.topologies import fat_tree

    assert polls_kept(3600, 768) == 3600  # fat-tree k=8: the hour
    assert polls_kept(3600, 49_152) == 61  # k=32
    assert polls_kept(3600, 393_216) == 7  # k=64
    assert polls_kept(3600, 10**9) == 2 and polls_kept(1, 10) == 2  # a rate needs two polls
    sc = fat_tree(8)
    monkeypatch.setattr(series, "KEPT_RATES", 5 * 2 * len(sc.links))
    model = MonitorModel(sc)
    keys = [(li, d) for li in range(len(sc.links)) for d in (0, 1)]
    for n in range(12):
        model.add(Snapshot(float(n), 1e9 + n, {k: float(n) for k in keys}))
    assert model.kept == 5 and len(model.snapshots) == 5 and model.latest.t == 11.0
    ts, vs = model.series_of(keys[-1])
    assert list(ts) == [7.0, 8.0, 9.0, 10.0, 11.0] and list(vs) == list(ts)


def test_the_first_rows_are_the_first_of_all_rows_sorted():
    """The Monitor table makes only its first rows (most loaded first, ties by name, the
    unmeasured by name at the end); on random polls with ties, links of capacity 0 and links
    not measured they are the first rows of sorting every link, as before."""
    import random

    from inaplanner.model import Link
    from inaplanner.monitor.table import most_loaded
    from inaplanner.topologies import fat_tree

    sc = fat_tree(4)
    sc.links[3] = Link(sc.links[3].a, sc.links[3].b, capacity=0.0)
    sc.touch()
    model = MonitorModel(sc)
    keys = list(model.names)
    rng = random.Random(3)

    def every_row_sorted(snap):
        rows = model.rows(snap, limit=None)
        # what rows() was: all links, sorted by (unmeasured, -utilisation, name)
        want = sorted(rows, key=lambda r: (r.utilisation is None, -(r.utilisation or 0.0),
                                           r.name))
        assert [r.key for r in rows] == [r.key for r in want]
        return rows

    for trial in range(40):
        measured = rng.sample(keys, rng.randrange(0, len(keys) + 1))
        rates = {k: float(rng.choice([0, 10, 25, 50, 100, 150])) for k in measured}
        snap = Snapshot(float(trial), 1e9, rates)
        every = every_row_sorted(snap)
        for limit in (0, 1, 5, 20, len(measured), len(keys) + 3):
            assert [r.key for r in model.rows(snap, limit)] == [r.key for r in every[:limit]]
        li, d, load = snap.arrays()
        top = most_loaded(li, d, load, model.capacity[li], model.names.__getitem__, 7)
        assert top == [r.key for r in every if r.observed is not None][:7]
