"""Task after task, guided by the joint relaxation (issue 13): each task's placement MILP takes
the bandwidth the later tasks need least (``_guided_costs``), so that the first task does not
fill a link the second cannot do without. Before negotiating a rate vector, the planner tries
that placement once (``_guided``)."""

from __future__ import annotations

import pytest

from inaplanner.model import Scenario
from inaplanner.planners import CancelToken, get
from inaplanner.planners.aro import planner as planner_module
from inaplanner.planners.aro.formulation import feasibility_model, objective_for
from inaplanner.planners.aro.graph import resource_capacity, task_graphs
from inaplanner.planners.aro.negotiate import usage
from inaplanner.planners.aro.planner import (
    GUIDE_WEIGHT,
    Outcome,
    _Clock,
    _guided_costs,
    _Record,
    _relaxed_use,
)
from inaplanner.planners.base import Progress
from inaplanner.topologies import leaf_spine, place_jobs


def _two_jobs_one_uplink() -> Scenario:
    """Two jobs of one task each, both workers under leaf L3, the PSs under L1 and L2. Job 1
    cannot come down to L2 through S1 (its link is full of background), so it needs L3 -> S2;
    job 0 can take either spine. At 0.6 each, job 0 must leave L3 -> S2 to job 1 (unguided,
    HiGHS routes job 0 through S2 here)."""
    sc = leaf_spine(3, 2, 2, host_capacity=1.0, fabric_capacity=1.0)
    place_jobs(sc, 2, 1, 1, seed=0)
    sc.jobs[0].workers = ["H5"]
    sc.jobs[1].workers = ["H6"]
    lk = sc.link_between("L2", "S1")
    lk.background = (0.0, 1.0) if lk.a == "L2" else (1.0, 0.0)  # S1 -> L2 full
    sc.touch()
    sc.validate()
    return sc


def test_guided_costs_weigh_what_later_tasks_need_against_what_is_left():
    sc = _two_jobs_one_uplink()
    graphs = task_graphs(sc)
    m, blocks = feasibility_model(sc, graphs[:1], [0.6])
    up2 = ("link", "L3", "S2")
    later = {up2: 0.6}
    left = {up2: 0.8}
    _guided_costs(sc, m, blocks[0], 0.6, left, later)
    g = graphs[0]
    for k, c in enumerate(blocks[0].y):
        want = 0.0
        for res in g.edges[k].resources:
            room = left.get(res, resource_capacity(sc, res))
            want += 1.0 + GUIDE_WEIGHT * later.get(res, 0.0) / room
        assert m.cost[c] == pytest.approx(0.6 * want)
    via = [m.cost[c] for k, c in enumerate(blocks[0].y) if up2 in g.edges[k].resources]
    other = [m.cost[c] for k, c in enumerate(blocks[0].y) if ("link", "L3", "S1") in g.edges[k].resources]
    assert via and other and min(via) > max(other)


def test_relaxed_use_is_each_tasks_bandwidth_per_resource():
    sc = _two_jobs_one_uplink()
    graphs = task_graphs(sc)
    rates = [0.6, 0.6]
    m, blocks = feasibility_model(sc, graphs, rates)
    lp = m.solve(relax=True)
    assert lp.values is not None
    use = _relaxed_use(blocks, rates, lp.values)
    # job 1 has one way down to its PS: all of its 0.6 crosses L3 -> S2 and S2 -> L2
    assert use[1][("link", "L3", "S2")] == pytest.approx(0.6)
    assert use[1][("link", "S2", "L2")] == pytest.approx(0.6)
    assert ("link", "S1", "L2") not in use[1]
    # every task sends its rate out of its worker's host link
    assert use[0][("link", "H5", "L3")] == pytest.approx(0.6)
    assert use[1][("link", "H6", "L3")] == pytest.approx(0.6)


def test_a_guided_first_task_leaves_the_link_the_second_needs():
    sc = _two_jobs_one_uplink()
    graphs = task_graphs(sc)
    rates = [0.6, 0.6]
    aro = get("aro")
    flows = aro._guided(sc, graphs, rates, _Clock(30), CancelToken())
    assert flows is not None  # a plan, and the evaluator accepts it (``_guided`` asks it)
    first = usage(graphs[0], flows[0], rates[0])
    assert ("link", "L3", "S2") not in first
    assert first[("link", "L3", "S1")] == pytest.approx(0.6)
    assert aro._holds(sc, graphs, flows, rates)


def test_guided_placement_finds_nothing_above_what_the_links_carry():
    sc = _two_jobs_one_uplink()
    graphs = task_graphs(sc)
    assert get("aro")._guided(sc, graphs, [0.6, 1.2], _Clock(30), CancelToken()) is None


def test_negotiation_starts_with_the_guided_placement(monkeypatch):
    """A rate vector the guided placement routes is not negotiated; one it does not route is."""
    sc = _two_jobs_one_uplink()
    graphs = task_graphs(sc)
    objective = objective_for(sc, sc.tasks())
    aro = get("aro")
    negotiated = []
    real = planner_module.negotiate

    def recorded(sc, graphs, rates, *args, **kw):
        negotiated.append(list(rates))
        return real(sc, graphs, rates, *args, **kw)

    monkeypatch.setattr(planner_module, "negotiate", recorded)
    best = Outcome(None, [0.1, 0.1], objective.value([0.1, 0.1]), None)
    out = aro._negotiate(sc, graphs, objective, [[0.6, 0.6]], best, _Clock(30), CancelToken(), _Record(Progress()))
    # its routes, at the best rates they carry (each job alone on its spine: 1.0)
    assert out.objective >= objective.value([0.6, 0.6])
    assert aro._holds(sc, graphs, out.flows, out.rates)
    assert negotiated == []
    # above what a host link carries the guided placement fails and negotiation gets the point
    aro._negotiate(sc, graphs, objective, [[0.6, 1.2]], best, _Clock(30), CancelToken(), _Record(Progress()))
    assert negotiated == [[0.6, 1.2]]


def _three_tasks() -> tuple[Scenario, list]:
    """One job of three tasks on a small leaf-spine, for the repair's moves."""
    sc = leaf_spine(4, 2, 3, host_capacity=1.0, fabric_capacity=1.0)
    place_jobs(sc, 1, 3, 3, seed=1)
    sc.touch()
    return sc, task_graphs(sc)


@pytest.mark.parametrize("frees", [1, 2])
def test_a_repair_frees_at_most_frees_placed_tasks(monkeypatch, frees):
    """The guided placement's repair frees one placed task at a time (``frees=1``): where no
    such move fits (fat-tree k=16 with 200 workers per job, seed 2, every task at 25) it gives
    up in seconds instead of trying pairs, whose MILPs ran out of 13-26 s each there."""
    sc, graphs = _three_tasks()
    aro = get("aro")
    built = []
    real = planner_module.feasibility_model

    def recorded(sc, graphs, *args, **kw):
        built.append(len(graphs))
        return real(sc, graphs, *args, **kw)

    monkeypatch.setattr(planner_module, "feasibility_model", recorded)
    rates = [0.5, 0.5, 5.0]  # the third above what its host links carry: no move fits
    placed = {}
    for i in (0, 1):
        placed[i] = aro._place(sc, graphs[i], rates[i], {}, _Clock(10), CancelToken())
        assert placed[i] is not None
    assert aro._repair(sc, graphs, rates, placed, 2, _Clock(20), CancelToken(), frees) is None
    assert built and max(built) == 1 + frees  # the task and the ones it freed
    assert built.count(2) == 2  # each placed task freed alone once


def test_the_guided_placement_goes_least_point_first_and_raises_the_bar(monkeypatch):
    """Least point first (the easiest): its plan, at the best rates its routes carry (1.0 each
    here), beats the other points, so they are neither placed nor negotiated."""
    sc = _two_jobs_one_uplink()
    graphs = task_graphs(sc)
    objective = objective_for(sc, sc.tasks())
    aro = get("aro")
    placed, negotiated = [], []
    real = type(aro)._guided

    def guided(self, sc, graphs, rates, *args, **kw):
        placed.append(list(rates))
        return real(self, sc, graphs, rates, *args, **kw)

    monkeypatch.setattr(type(aro), "_guided", guided)
    monkeypatch.setattr(planner_module, "negotiate", lambda *a, **k: negotiated.append(a[2]))
    best = Outcome(None, [0.1, 0.1], objective.value([0.1, 0.1]), None)
    out = aro._negotiate(sc, graphs, objective, [[0.6, 0.9], [0.3, 0.3], [0.6, 0.6]], best, _Clock(30),
                         CancelToken(), _Record(Progress()))
    assert placed == [[0.3, 0.3]]
    assert negotiated == []
    assert out.objective >= objective.value([1.0, 1.0]) - 1e-9


def _negotiate_above(monkeypatch, points, above):
    """``_negotiate`` on the two-job case from a best plan of 0.1 each, the guided placements
    it makes recorded as (rates, frees): (placed, outcome, best, the case's graphs)."""
    sc = _two_jobs_one_uplink()
    graphs = task_graphs(sc)
    objective = objective_for(sc, sc.tasks())
    aro = get("aro")
    placed = []
    real = type(aro)._guided

    def guided(self, sc, graphs, rates, clock, cancel, frees=1):
        placed.append((list(rates), frees))
        return real(self, sc, graphs, rates, clock, cancel, frees)

    monkeypatch.setattr(type(aro), "_guided", guided)
    best = Outcome(None, [0.1, 0.1], objective.value([0.1, 0.1]), None)
    out = aro._negotiate(sc, graphs, objective, points, best, _Clock(30), CancelToken(), _Record(Progress()),
                         above=above)
    return placed, out, best, (sc, graphs, objective)


def test_once_every_point_is_a_plan_the_guided_placement_climbs_the_levels_above(monkeypatch):
    """The levels the search skipped above its undecided points (``above``), least first, each
    with two placed tasks freed at most, while each is a plan: the first is (routes carrying 1.0
    each), the next cannot be (above the host links), and the one after it is not tried."""
    placed, out, _, (sc, graphs, objective) = _negotiate_above(
        monkeypatch, [[0.05, 0.05]], [[0.6, 0.6], [1.2, 1.2], [1.5, 1.5]])
    assert placed == [([0.6, 0.6], 2), ([1.2, 1.2], 2)]
    assert out.objective >= objective.value([1.0, 1.0]) - 1e-9
    assert get("aro")._holds(sc, graphs, out.flows, out.rates)


def test_no_climb_while_a_given_point_is_no_plan(monkeypatch):
    """A point given that neither the guided placement nor negotiation routes stays the next
    thing to settle: the levels above it are not climbed."""
    placed, out, best, _ = _negotiate_above(monkeypatch, [[0.6, 1.2]], [[0.6, 0.6]])
    assert placed == [([0.6, 1.2], 1)]
    assert out is best


@pytest.mark.parametrize("patient", [False, True])
def test_a_patient_repair_gives_each_move_all_the_time_left(monkeypatch, patient):
    """Unless ``patient`` (the corner points' and the guided placement's repairs), a repair move
    gets half of the time left and the last all of it; patient, every move gets all of it
    (fat-tree k=16 with 200 workers per job, seed 1: the corner worth 58.45 needs 7.5 s where
    half gave 7.2 s; with 500 workers per job, seed 2, every task at 10: the first pair's MILP
    needs 19 s of the 32 left)."""
    sc, graphs = _three_tasks()
    aro = get("aro")
    given = []

    def decide(m, clock, cancel, lp_first=True, gap=None):
        given.append((clock.left(), outer.left()))
        return "timeout", None  # as if each move's MILP ran out of its time

    monkeypatch.setattr(planner_module, "_decide", decide)
    placed = {i: aro._place(sc, graphs[i], 0.5, {}, _Clock(10), CancelToken()) for i in (0, 1)}
    outer = _Clock(100)
    assert aro._repair(sc, graphs, [0.5, 0.5, 0.5], placed, 2, outer, CancelToken(), 2, patient) is None
    assert len(given) == 3  # each placed task alone, then both
    for n, (mine, left) in enumerate(given):
        share = 1.0 if patient or n == len(given) - 1 else 0.5
        assert mine == pytest.approx(share * left, rel=0.05)


@pytest.mark.parametrize("guided", [False, True])
def test_the_corners_and_the_guided_placement_repair_patiently(monkeypatch, guided):
    """Task after task with ``repair`` (the corner points, and the guided placement with its
    guide) asks for patient repairs, guided or not: unguided, the corner worth 58.45 on
    fat-tree k=16 with 200 workers per job, seed 1, needs its move's 7.5 s."""
    sc, graphs = _three_tasks()
    aro = get("aro")
    asked = []
    real_place = aro._place

    def place(sc, g, r, left, budget, cancel, hint=None, later=None):
        if g is graphs[1]:
            return None  # the second task does not fit: a repair follows
        return real_place(sc, g, r, left, budget, cancel, hint, later)

    def repair(sc, graphs, rates, placed, i, clock, cancel, frees=2, patient=False):
        asked.append(patient)
        return None

    monkeypatch.setattr(aro, "_place", place)
    monkeypatch.setattr(aro, "_repair", repair)
    guide = [{} for _ in graphs] if guided else None
    assert aro._one_by_one(sc, graphs, [0.5] * 3, _Clock(10), CancelToken(), {}, repair=True, guide=guide,
                           passes=1) is None
    assert asked == [True]
