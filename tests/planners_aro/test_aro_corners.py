"""The corner points of the tasks' own optima and the repair move (issue 13): the points are every
job's choice, the repair is the joint question for the tasks it frees, and the plans the corner
step returns hold, never lose the best plan and never beat the exhaustive optimum. Also HiGHS'
wall-clock backstop under a CPU limit."""

from __future__ import annotations

import itertools
import math

import pytest

from inaplanner.evaluate import evaluate
from inaplanner.planners import CancelToken, get
from inaplanner.planners.aro.formulation import objective_for
from inaplanner.planners.aro.graph import task_graphs
from inaplanner.planners.aro.planner import (
    CORNER_MIN_GAIN,
    CORNER_SHARE,
    CORNER_TOP_SECONDS,
    SINGLE,
    Outcome,
    _Clock,
    _Record,
    _take,
    corner_points,
    rates_below,
)
from inaplanner.planners.base import Progress

MJMT2 = dict(leaves=4, spines=2, hosts=3, jobs=2, tasks=2, workers=2, capacities=(1.0, 2.0))
SJMT2 = dict(leaves=4, spines=2, hosts=3, jobs=1, tasks=2, workers=4, capacities=(1.0, 2.0))


def _expected_corners(reached, below, job_of):
    """Straight from the definition: per job, all at ``reached`` or one lead at ``reached`` and
    the rest at ``below``; every combination over the jobs."""
    jobs = sorted(set(job_of))
    options = []
    for s in jobs:
        tasks = [i for i, j in enumerate(job_of) if j == s]
        mine = [tuple(reached[i] for i in tasks)]
        for lead in tasks if len(tasks) > 1 else []:
            if all(below[k] is not None for k in tasks if k != lead):
                mine.append(tuple(reached[i] if i == lead else below[i] for i in tasks))
        options.append((tasks, mine))
    out = set()
    for combo in itertools.product(*(m for _, m in options)):
        point = [0.0] * len(reached)
        for (tasks, _), values in zip(options, combo, strict=True):
            for i, v in zip(tasks, values, strict=True):
                point[i] = v
        out.add(tuple(point))
    return out


@pytest.mark.parametrize("job_of", [[0, 0, 1, 1], [0, 1, 0, 1], [0, 0, 0], [0, 1], [0, 0, 1]])
def test_corner_points_are_every_jobs_choice(job_of):
    reached = [33.3 + i for i in range(len(job_of))]
    below = [25.0 - i for i in range(len(job_of))]
    got = corner_points(reached, below, job_of)
    assert len(got) == len({tuple(p) for p in got})  # no point twice
    assert {tuple(p) for p in got} == _expected_corners(reached, below, job_of)
    # a task with no rate below: no choice where it is not the lead
    below[0] = None
    got = {tuple(p) for p in corner_points(reached, below, job_of)}
    assert got == _expected_corners(reached, below, job_of)
    assert all(p[0] == reached[0] for p in got)


def test_corner_points_of_fat_tree_k16_shape():
    """Two jobs of two tasks, each task 33.3 alone, 25 the rate below: (33.3, 25, 33.3, 25) is
    among the nine points (the plan found on fat-tree k=16 with 200 workers per job)."""
    got = corner_points([100 / 3] * 4, [25.0] * 4, [0, 0, 1, 1])
    assert len(got) == 9 and [100 / 3, 25.0, 100 / 3, 25.0] in got


@pytest.mark.parametrize("seed", range(4))
def test_repair_is_the_joint_question_for_the_freed_tasks(seed, make_leaf_spine):
    """With two tasks the repair that frees the placed one is the joint feasibility question: at
    rates a joint plan reaches it succeeds, whatever the placed task's routes, and its placement
    holds; at rates far above every plan it fails."""
    sc = make_leaf_spine(seed, **SJMT2)
    graphs = task_graphs(sc)
    aro = get("aro")
    params = {"sro": False, "app": False, "qsr": False, "alpha": 0.6, "qsr_levels": 100,
              "gap": 1e-6, "exact": "always", "time_limit": 30}
    ev = evaluate(sc, aro.plan(sc, params, lambda f, m: None, CancelToken()))
    rates = [0.999 * r for r in ev.rates]
    solo = aro._single(sc, graphs[0], SINGLE, _Clock(10), CancelToken(), None)
    placed = {0: solo.flows[0]}  # task 0 on its own best routes, blind to task 1
    left: dict = {}
    _take(sc, graphs[0], placed[0], rates[0], left, force=True)
    got = aro._repair(sc, graphs, rates, placed, 1, _Clock(20), CancelToken())
    assert got is not None
    out, rest = got
    flows = [out[0], out[1]]
    assert aro._holds(sc, graphs, flows, rates)
    assert all(v >= -1e-9 for v in rest.values())  # what it says is left is not overdrawn
    assert aro._repair(sc, graphs, [4 * r + 1 for r in rates], placed, 1, _Clock(20), CancelToken()) is None


def _from_solo(sc):
    """ARO's corner step from the tasks' own plans: (aro, graphs, objective, incumbent, a call
    running the step with ``bound``, returning its best plan)."""
    graphs = task_graphs(sc)
    objective = objective_for(sc, sc.tasks())
    aro = get("aro")
    solo = [aro._single(sc, g, SINGLE, _Clock(10), CancelToken(), None) for g in graphs]
    reached = [o.objective for o in solo]
    flows = [o.flows[0] for o in solo]
    rates = aro._route_rates(sc, graphs, flows, objective)
    start = Outcome(flows, rates, objective.value(rates), None)
    hints = {g.task: o.flows[0] for g, o in zip(graphs, solo, strict=True)}

    def corners(bound=float("inf")):
        return aro._corners(sc, graphs, objective, reached, start, _Clock(30), CancelToken(),
                            _Record(Progress()), hints, bound)

    corners.reached = reached  # what each task reached alone
    return aro, graphs, objective, start, corners


@pytest.mark.parametrize("seed", range(4))
def test_corner_plans_hold_and_never_lose(seed, make_leaf_spine, brute):
    """From a poor incumbent the corner step returns a plan at least as good, which the
    evaluator accepts and which never beats the exhaustive optimum."""
    sc = make_leaf_spine(seed, **MJMT2)
    aro, graphs, objective, start, corners = _from_solo(sc)
    got = corners()
    assert got.objective >= start.objective
    plan = aro._plan_from(sc, graphs, got.flows, objective)
    ev = evaluate(sc, plan)
    assert ev.valid and ev.feasible
    assert ev.objective == pytest.approx(got.objective, rel=1e-6)
    assert got.objective <= brute(sc) * (1 + 1e-6)


def test_corners_find_the_uneven_optimum(make_leaf_spine, brute):
    """Seed 1: three tasks reach 1.0 alone and one 0.5. The tasks' own plans together reach 1.0,
    the corner step the exhaustive optimum, 1.5."""
    sc = make_leaf_spine(1, **MJMT2)
    _, _, _, start, corners = _from_solo(sc)
    got = corners()
    best = brute(sc)
    assert start.objective < 0.9 * best
    assert got.objective == pytest.approx(best, rel=1e-6)


def test_no_corner_above_the_bound_is_tried(make_leaf_spine, monkeypatch):
    """The same case with an upper bound just above the incumbent: no corner point is worth a
    check (every one would beat the bound), so the incumbent comes back as it was."""
    sc = make_leaf_spine(1, **MJMT2)
    aro, _, _, start, corners = _from_solo(sc)
    tried = []
    monkeypatch.setattr(aro, "_one_by_one", lambda *a, **k: tried.append(a))  # a spy: nothing to route
    got = corners(bound=start.objective * 1.01)
    assert got is start and not tried


def test_no_corner_within_the_least_gain_is_tried(make_leaf_spine, monkeypatch):
    """A corner is checked only when it would beat the best plan by ``CORNER_MIN_GAIN``: with an
    incumbent a little below the best corner's value (by more than that share) the best corner
    is checked; a little below it by less, none is."""
    sc = make_leaf_spine(1, **MJMT2)
    aro, graphs, objective, start, corners = _from_solo(sc)
    solo = corners.reached
    monkeypatch.setattr("inaplanner.planners.aro.planner._relaxation_infeasible", lambda *a, **k: False)
    tried: list = []
    monkeypatch.setattr(aro, "_one_by_one", lambda *a, **k: tried.append(a[2]))  # a spy: nothing to route
    top = max(objective.value(p) for p in corner_points(solo, rates_below(sc, graphs, solo), objective.job_of))

    def run(incumbent):
        tried.clear()
        aro._corners(sc, graphs, objective, solo, Outcome(start.flows, start.rates, incumbent, None), _Clock(30),
                     CancelToken(), _Record(Progress()), {}, float("inf"))
        return [objective.value(p) for p in tried]

    assert top in run(top / (1 + 2 * CORNER_MIN_GAIN))
    assert run(top / (1 + CORNER_MIN_GAIN / 2)) == []


@pytest.mark.parametrize(("placed", "seconds"), [
    ([3, 3, 3], ["first", "twice", "half"]),  # as many again: a longer slot, until one is capped at half the budget
    ([2, 3, 3], ["first", "twice", "half"]),
    ([3, 2], ["first", "twice"]),  # fewer placed: the end
    ([1], ["first"]),  # fewer than half of the tasks placed
    ([0], ["first"]),  # nothing placed that way (a task did not fit)
])
def test_the_top_corner_gets_longer_slots_while_it_places_tasks(make_leaf_spine, monkeypatch, placed, seconds):
    """The top corner (a plan there closes the gap) whose slot ran out with half of its tasks
    placed or more, all having fitted, is routed again in a slot twice as long (the first of
    ``CORNER_TOP_SECONDS``, each at most half of what the corners' budget has left), the tasks it
    placed given as hints so that only the rest take time, until a slot places fewer tasks than
    the one before, or as many in a slot that could not be longer. With fewer than half placed,
    or a slot that placed nothing that way (a task did not fit), the next corner comes at once.
    The corners' budget here: ``CORNER_SHARE`` of 30 s, 18 s."""
    sc = make_leaf_spine(1, **MJMT2)
    aro, graphs, objective, start, corners = _from_solo(sc)
    monkeypatch.setattr("inaplanner.planners.aro.planner._relaxation_infeasible", lambda *a, **k: False)
    calls: list = []
    slot = iter(placed)

    def one_by_one(sc, graphs, point, clock, cancel, hints, repair=False, partial=None, **kw):
        calls.append((list(point), dict(hints), clock.left()))
        if partial is not None:  # the top corner's slots: this many tasks placed as time ran out
            partial.update({i: start.flows[i] for i in range(next(slot))})
            clock.end = -math.inf
        return None

    monkeypatch.setattr(aro, "_one_by_one", one_by_one)
    corners()
    top = calls[0][0]
    assert objective.value(top) == max(objective.value(c[0]) for c in calls)
    slots = len(seconds)
    assert [c[0] == top for c in calls[:slots + 1]] == [True] * slots + [False] * (len(calls) > slots)
    half = CORNER_SHARE * 30 / 2  # the third slot's cap: 4 x CORNER_TOP_SECONDS would be more
    assert 2 * CORNER_TOP_SECONDS < half < 4 * CORNER_TOP_SECONDS
    length = {"first": CORNER_TOP_SECONDS, "twice": 2 * CORNER_TOP_SECONDS, "half": half}
    assert [c[2] for c in calls[:slots]] == pytest.approx([length[x] for x in seconds], abs=0.1)
    for k in range(1, slots):  # each slot starts from what the one before placed
        assert all(calls[k][1][graphs[i].task] is start.flows[i] for i in range(placed[k - 1]))


def test_one_by_one_reports_the_tasks_it_placed_as_time_ran_out(make_leaf_spine, monkeypatch):
    """``partial``: the tasks placed before the time ran out, which hold together at their
    rates; nothing when a task did not fit in what the earlier ones left (there a repair
    follows, not another slot)."""
    sc = make_leaf_spine(1, **MJMT2)
    aro, graphs, objective, start, _ = _from_solo(sc)
    partial: dict = {}
    rates = list(start.rates[:-1]) + [100.0 * max(start.rates)]  # the last cannot be routed at all
    assert aro._one_by_one(sc, graphs, rates, _Clock(20), CancelToken(), {}, repair=True, partial=partial) is None
    assert partial == {}
    real = aro._place
    placed: list = []

    def place(sc, g, r, left, budget, cancel, *a, **k):
        if len(placed) == 3:
            budget.end = -math.inf  # the time runs out while the fourth is being placed
            return None
        placed.append(g)
        return real(sc, g, r, left, budget, cancel, *a, **k)

    monkeypatch.setattr(aro, "_place", place)
    assert aro._one_by_one(sc, graphs, start.rates, _Clock(20), CancelToken(), {}, repair=True,
                           partial=partial) is None
    assert sorted(partial) == [0, 1, 2]
    left: dict = {}
    assert all(_take(sc, graphs[i], f, start.rates[i], left) for i, f in partial.items())


def test_highs_gets_a_wall_backstop_under_a_cpu_limit():
    """Under a CPU limit HiGHS is stopped from its callback, and also gets its own (wall-clock)
    limit: never below the CPU seconds left (a steady load must not cut it short), finite when
    the run has a limit, none without one."""
    from inaplanner.planners.aro.planner import _milp_kw

    kw = _milp_kw(_Clock(5.0, "cpu"), CancelToken())
    assert kw["stop"]() is False
    assert 4.9 <= kw["time_limit"] <= 5.5 / 0.05
    assert _milp_kw(_Clock(float("inf"), "cpu"), CancelToken())["time_limit"] is None
    assert _milp_kw(_Clock(5.0, "wall"), CancelToken())["time_limit"] == pytest.approx(5.0, abs=0.1)
    assert 0.05 <= _Clock(5.0, "cpu").sub(1.0).cpu_share() <= 1.0
