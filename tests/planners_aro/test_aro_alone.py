"""Each task alone, the first step of ARO's multi-task search (issue 13): a task whose next rate is
left undecided is searched again only where its bound counts, and the search along the balanced
direction aims at what each task reached alone, not at a bound nobody proved."""

from __future__ import annotations

import pytest

from inaplanner.planners import CancelToken, get
from inaplanner.planners.aro.formulation import objective_for
from inaplanner.planners.aro.graph import task_graphs
from inaplanner.planners.aro.planner import CORNER_MIN_GAIN, SINGLE, Outcome, _Clock
from inaplanner.planners.aro.rates import rate_bound
from inaplanner.progress import Progress

MJMT2 = dict(leaves=4, spines=2, hosts=3, jobs=2, tasks=2, workers=2, capacities=(1.0, 2.0))
PARAMS = {"sro": False, "app": False, "qsr": False, "alpha": 0.6, "qsr_levels": 100, "gap": 1e-6,
          "exact": "never", "time_limit": 20, "limit_kind": "wall", "seed": 0}


def _alone(make_leaf_spine, seed, capacities=(1.0, 2.0)):
    sc = make_leaf_spine(seed, **{**MJMT2, "capacities": capacities})
    graphs = task_graphs(sc)
    aro = get("aro")
    solo = [aro._single(sc, g, SINGLE, _Clock(10), CancelToken(), None) for g in graphs]
    assert all(o.bound == pytest.approx(o.objective) for o in solo)  # each proven alone
    return aro, sc, graphs, objective_for(sc, sc.tasks()), solo


def _unproven(o: Outcome, factor: float) -> Outcome:
    """What a task alone looks like when the rate above its plan was left undecided."""
    return Outcome(o.flows, o.rates, o.objective, o.objective * factor, True)


def _spy(monkeypatch, aro):
    calls = []
    single = type(aro)._single

    def spying(self, sc, g, *args, **kwargs):
        calls.append(g.task)
        return single(self, sc, g, *args, **kwargs)

    monkeypatch.setattr(type(aro), "_single", spying)
    return calls


@pytest.mark.parametrize(("seed", "capacities", "binding", "free"), [(1, (1.0, 2.0), 2, 0), (10, (1.0, 2.0, 3.0), 0, 2)])
def test_an_undecided_task_is_searched_again_only_where_its_bound_counts(make_leaf_spine, monkeypatch, seed,
                                                                         capacities, binding, free):
    """Two jobs of two tasks. A task of the job that binds the max-min term, left unproven, is
    searched again with the time left and comes back proven at its optimum. A task of the other
    job is not: whatever its bound, that job's limit stays above the binding one's, so neither
    its bound nor a better plan of it moves the objective's bound."""
    aro, sc, graphs, objective, solo = _alone(make_leaf_spine, seed, capacities)
    assert objective.job_of[binding] != objective.job_of[free]

    def bound_with(i):
        limits = [o.bound for o in solo]
        limits[i] *= 3.0
        return rate_bound(sc, graphs, objective, limits)[0]

    proven = rate_bound(sc, graphs, objective, [o.bound for o in solo])[0]
    assert bound_with(binding) > proven * (1 + CORNER_MIN_GAIN)  # the premises
    assert bound_with(free) < proven * (1 + CORNER_MIN_GAIN)
    calls = _spy(monkeypatch, aro)

    asked = list(solo)
    asked[binding] = _unproven(solo[binding], 3.0)
    got = aro._settle_alone(sc, graphs, objective, asked, _Clock(20), CancelToken())
    assert calls == [graphs[binding].task]
    assert got[binding].bound == pytest.approx(solo[binding].bound)
    assert got[binding].objective == pytest.approx(solo[binding].objective) and not got[binding].timed_out
    assert got[:binding] + got[binding + 1:] == asked[:binding] + asked[binding + 1:]

    calls.clear()
    asked = list(solo)
    asked[free] = _unproven(solo[free], 3.0)
    got = aro._settle_alone(sc, graphs, objective, asked, _Clock(20), CancelToken())
    assert calls == [] and got == asked


class _Stop(Exception):
    pass


@pytest.mark.parametrize(("seed", "capacities", "inflated"), [
    (1, (1.0, 2.0), 1), (1, (1.0, 2.0), 3), (2, (1.0, 2.0), 2), (11, (1.0, 2.0), 2), (2, (1.0, 2.0, 3.0), 1)])
def test_the_search_aims_at_what_each_task_reached_alone(make_leaf_spine, monkeypatch, seed, capacities, inflated):
    """One task's bound alone left at three times its plan (the check above it undecided): the
    search's first joint check asks no task for more than it reached alone. Aimed at the bounds
    (the code before), that task was asked for more than any plan of it had reached."""
    aro, sc, graphs, objective, solo = _alone(make_leaf_spine, seed, capacities)
    reached = {g.task: o.objective for g, o in zip(graphs, solo, strict=True)}
    inflated = graphs[inflated].task
    single = type(aro)._single

    def unproven(self, sc_, g, *args, **kwargs):
        o = single(self, sc_, g, *args, **kwargs)
        return _unproven(o, 3.0) if g.task == inflated else o

    asked = []
    progress = Progress()
    feasible = type(aro)._feasible

    def first_joint(self, sc_, gs, rates, *args, **kwargs):
        if len(gs) > 1:
            asked.append((progress.last.phase, dict(zip([g.task for g in gs], rates, strict=True))))
            raise _Stop
        return feasible(self, sc_, gs, rates, *args, **kwargs)

    monkeypatch.setattr(type(aro), "_single", unproven)
    monkeypatch.setattr(type(aro), "_corners", lambda self, *a, **k: a[4])  # best, unchanged
    monkeypatch.setattr(type(aro), "_feasible", first_joint)
    with pytest.raises(_Stop):
        aro.plan(sc, PARAMS, progress, CancelToken())
    phase, rates = asked[0]
    assert phase == "search"  # the case is one where the search checks something
    assert all(r <= reached[t] * (1 + 1e-6) for t, r in rates.items()), (rates, reached)
