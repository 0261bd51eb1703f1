"""GRID's link tie-break inside the limit (issue 13): skipped when less time is left than the first
LP took, and cut by the limit without losing the first optimum."""

from __future__ import annotations

import pytest

from inaplanner.planners import get, run_planner
from inaplanner.planners import grid as G
from inaplanner.topologies import fat_tree, mark_programmable, place_jobs


def _ft8(seed: int = 1):
    sc = fat_tree(8)
    mark_programmable(sc, 0.2, pipelines=4, seed=seed)
    place_jobs(sc, 2, 2, 50, seed=seed)
    return sc


def test_tie_break_skipped_when_less_time_is_left_than_the_first_lp_took(monkeypatch):
    """The tie-break's rows and re-solves cost about what the first LP did (fat-tree k=32 with
    1,000 workers per job: 35 s and 0.8 GB for the rows, past a 60 s limit): with less time left it
    is skipped and the first optimum is rounded."""
    from inaplanner.evaluate import evaluate

    sc = _ft8()
    normal = run_planner(get("grid"), sc, {"seed": 1, "time_limit": 60})
    assert normal.planner.params["tie_break"] == "run"  # this instance does run it
    solve0 = G.solve

    def slow_first(prob, **kw):
        res = solve0(prob, **kw)
        res.seconds = 1e6  # as if the first LP had taken longer than the limit leaves
        return res

    monkeypatch.setattr(G, "solve", slow_first)
    plan = run_planner(get("grid"), sc, {"seed": 1, "time_limit": 60})
    assert plan.planner.params["tie_break"].startswith("skipped: less time left")
    assert evaluate(sc, plan).feasible


def test_tie_break_cut_by_the_limit_keeps_the_first_optimum(monkeypatch):
    """The limit running out while the overload rows are built stops the tie-break, not GRID: the
    rounding goes on from the first optimum."""
    from inaplanner.evaluate import evaluate
    from inaplanner.planners.deadline import Deadline, OutOfTime

    with pytest.raises(OutOfTime):  # the row building itself checks the limit
        G._overload({("a", "b"): {}}, {("a", "b"): 1.0}, set(), None, lambda: None, Deadline(0.0), None)
    sc = _ft8()

    def cut(terms, caps, hot, warm, var, deadline, cancel):
        raise OutOfTime("the cpu time limit ran out")

    monkeypatch.setattr(G, "_overload", cut)
    plan = run_planner(get("grid"), sc, {"seed": 1, "time_limit": 60})
    assert plan.planner.params["tie_break"] == "cut short by the time limit"
    assert plan.planner.params["plan_source"] != "ATP-style plan on default paths"  # GRID's own
    assert evaluate(sc, plan).feasible


def test_tie_break_skipped_when_its_link_rows_would_take_too_much_memory(monkeypatch):
    """The link rows are counted before they are built (fat-tree k=32 with 500 workers per job:
    1.74 million nonzeros took GRID from 453 MB to 1.1 GB): over ``TIE_MAX_NONZEROS`` the
    tie-break is skipped without building them, and the first optimum is rounded."""
    from inaplanner.evaluate import evaluate
    from inaplanner.planners.deadline import Deadline, OutOfTime

    sc = _ft8()
    built, rows = [], []
    real = G._link_terms

    def recorded(cands, r, y, mult):
        terms = real(cands, r, y, mult)
        rows.append((cands, r, y))
        built.append((sum(len(row) for row in terms.values()), G._link_nonzeros(cands, r, y, Deadline(None), None)))
        return terms

    monkeypatch.setattr(G, "_link_terms", recorded)
    normal = run_planner(get("grid"), sc, {"seed": 1, "time_limit": 60})
    assert normal.planner.params["tie_break"] == "run"
    (made, counted), = built
    assert made == counted > 0  # the count is what the rows hold
    monkeypatch.setattr(G, "TIE_MAX_NONZEROS", counted - 1)
    built.clear()
    plan = run_planner(get("grid"), sc, {"seed": 1, "time_limit": 60})
    assert plan.planner.params["tie_break"] == f"skipped: its link rows would have more than {counted - 1:,} nonzeros (memory)"
    assert built == []  # never built
    assert evaluate(sc, plan).feasible
    # the count stops once it passes the most asked for, and honours the limit
    assert counted - 1 < G._link_nonzeros(*rows[0], Deadline(None), None, counted - 1) <= counted
    with pytest.raises(OutOfTime):
        G._link_nonzeros(*rows[0], Deadline(0.0), None)
