"""GRID's repair weighs each candidate move once per state it depends on and all of a step's moves
at once (issue 13): the vectorised weights must equal the scalar ones bit for bit, and the table's
entries must be re-weighed whenever their state changes, so the repair makes exactly the moves it
makes when it weighs every move afresh at every step."""

from __future__ import annotations

import random

import numpy as np
import pytest

from inaplanner.planners import get, run_planner
from inaplanner.planners import grid as G
from inaplanner.topologies import fat_tree, mark_programmable, place_jobs


def _scenario(seed: int):
    sc = fat_tree(8)
    mark_programmable(sc, 0.2, pipelines=4, seed=seed)
    place_jobs(sc, 2, 2, 50, seed=seed)
    return sc


def _scalar_delta(loads, changes, sw_changes) -> float:
    """The change of the total overload, one term at a time (the repair's weighing before the
    batch: links, then switches with an aggregation limit)."""
    d = 0.0
    for e, c in changes.items():
        old = loads.load.get(e, 0.0)
        room = loads.cap[e]
        d += max(old + c - room, 0.0) - max(old - room, 0.0)
    for s, c in sw_changes.items():
        if s in loads.sw_cap:
            old = loads.sw.get(s, 0.0)
            d += max(old + c - loads.sw_cap[s], 0.0) - max(old - loads.sw_cap[s], 0.0)
    return d


def test_batch_deltas_equal_the_scalar_delta_bit_for_bit():
    sc = _scenario(1)
    for i, s in enumerate(sc.switches()):
        if s.programmable and i % 2:
            s.aggregation_capacity = 400.0
    loads = G._Loads(sc, {}, {})
    rng = random.Random(0)
    links = list(loads.cap)
    switches = list(loads.sw_cap)
    assert switches, "the instance must have switches with an aggregation limit"
    # loads around the capacities, so terms fall on both sides of the kink
    for e in links:
        loads.apply({e: rng.uniform(0.0, 2.0) * loads.cap[e]}, {})
    for s in switches:
        loads.apply({}, {s: rng.uniform(0.0, 2.0) * loads.sw_cap[s]})
    vectors = []
    for _ in range(300):
        ch = {e: rng.choice([-1.0, 1.0]) * rng.uniform(0.0, 80.0) / 3 for e in rng.sample(links, rng.randint(1, 20))}
        sw = {s: rng.uniform(-50.0, 50.0) for s in rng.sample(switches, rng.randint(0, 2))}
        sw["not-a-limited-switch"] = 7.0  # skipped by both
        vectors.append((ch, sw))
    width = max(len(loads.vector(ch, sw)[0]) for ch, sw in vectors) + 3  # padding at the end
    idx = np.zeros((len(vectors), width), dtype=np.intp)
    coef = np.zeros((len(vectors), width))
    for i, (ch, sw) in enumerate(vectors):
        ix, cf = loads.vector(ch, sw)
        idx[i, : len(ix)] = ix
        coef[i, : len(cf)] = cf
    got = loads.deltas(idx, coef)
    want = [_scalar_delta(loads, ch, sw) for ch, sw in vectors]
    assert [float(x).hex() for x in got] == [float(x).hex() for x in want]


class _Forget(dict):
    """A table that never remembers: every move is weighed afresh at every step."""

    def get(self, key, default=None):
        return default


class _Count(dict):
    hits = 0

    def get(self, key, default=None):
        got = super().get(key, default)
        if got is not None:
            type(self).hits += 1
        return got


def _run(monkeypatch, sc, seed: int, book: type[dict]) -> tuple[list, list]:
    init0 = G._MoveTable.__init__
    repair0 = G.repair_layouts
    results: list = []

    def init(self, loads):
        init0(self, loads)
        self.entry = {t: book() for t in self.entry}

    def repair(*a, **k):
        layouts, moves, fits = repair0(*a, **k)
        results.append((moves, fits, {t: (dict(lay.node), dict(lay.wpath), dict(lay.apath)) for t, lay in layouts.items()}))
        return layouts, moves, fits

    monkeypatch.setattr(G._MoveTable, "__init__", init)
    monkeypatch.setattr(G, "repair_layouts", repair)
    plan = run_planner(get("grid"), sc, {"seed": seed, "time_limit": 120, "limit_kind": "cpu"})
    monkeypatch.undo()
    routes = [(tp.job, tp.ps, tp.rate, [(r.worker, r.path, r.merge_at) for r in tp.routes]) for tp in plan.tasks]
    return results, routes


class _Check(dict):
    """Weighs every move afresh at every step and insists that a move weighed again in a state
    it was weighed in before comes out the same (paths and load changes): the state the table
    keys on is all a move depends on."""

    compared = 0

    def get(self, key, default=None):
        return default

    def __setitem__(self, key, value):
        old = super().get(key)
        if old is not None and old[0] == value[0]:
            assert old[2] == value[2], (key, value[0])
            type(self).compared += 1
        super().__setitem__(key, value)


@pytest.mark.parametrize("seed", [1, 2])
def test_a_move_weighed_again_in_the_same_state_is_the_same_move(monkeypatch, seed):
    sc = _scenario(seed)
    _Check.compared = 0
    _run(monkeypatch, sc, seed, _Check)
    assert _Check.compared > 1000


@pytest.mark.parametrize("seed", [1, 2])
def test_the_table_makes_the_moves_of_weighing_everything_afresh(monkeypatch, seed):
    sc = _scenario(seed)
    _Count.hits = 0
    kept, kept_routes = _run(monkeypatch, sc, seed, _Count)
    fresh, fresh_routes = _run(monkeypatch, sc, seed, _Forget)
    assert sum(moves for moves, _, _ in kept) > 50  # the repair did work
    assert _Count.hits > 1000  # ... mostly from the table
    assert kept == fresh
    assert kept_routes == fresh_routes
