"""ARO's default preset (QSR in the multi-task model) proves the optimum on small multi-task cases.

Before, 5 of these 18 cases ended without the proof: the level refutation took the whole limit
near an optimum where one task of a job is best left at 0 (its boxes double with every halving of
the gap: SJMT2 seed 1, 0.5 against 0.5078 after 10 s), and the QSR model run after it keeps one
rate level per task of slack in its bound. The exact model with continuous rates, run briefly
before the refutation on small models, proves them in a fraction of a second."""

from __future__ import annotations

import pytest

from inaplanner.evaluate import evaluate
from inaplanner.planners import CancelToken, get, run_planner
from inaplanner.progress import Progress

SHAPES = {
    "SJMT2": dict(leaves=4, spines=2, hosts=3, jobs=1, tasks=2, workers=4, capacities=(1.0, 2.0)),
    "MJMT2": dict(leaves=4, spines=2, hosts=3, jobs=2, tasks=2, workers=2, capacities=(1.0, 2.0)),
    "SJMT3": dict(spines=3, hosts=2, jobs=1, tasks=2, workers=3, capacities=(1.0, 2.0)),
}
CASES = [(name, seed) for name in SHAPES for seed in range(6)]


@pytest.mark.parametrize("name,seed", CASES, ids=[f"{n}-{s}" for n, s in CASES])
def test_aro_proves_the_optimum_of_small_multi_task_cases(name, seed, make_leaf_spine, brute):
    sc = make_leaf_spine(seed, **SHAPES[name])
    best = brute(sc)
    plan = run_planner(get("aro"), sc, {"time_limit": 30})
    ev = evaluate(sc, plan)
    assert ev.feasible
    assert ev.objective == pytest.approx(best, rel=1e-6, abs=1e-9)
    assert plan.bound is not None and plan.bound >= best * (1 - 1e-6)  # a true bound
    assert plan.planner.status == "optimal", (plan.bound, ev.objective)


def test_progress_names_only_the_stages_that_ran(make_leaf_spine):
    """SJMT2 seed 1 is proven by the brief exact run: the refutation does not run, so the
    progress must not say it does (it used to print "refuting levels" at 60 % all the same)."""
    sc = make_leaf_spine(1, **SHAPES["SJMT2"])
    progress = Progress(CancelToken())
    seen: list[tuple[str | None, str | None]] = []
    progress.subscribe(lambda ev: seen.append((ev.phase, ev.message)))
    plan = run_planner(get("aro"), sc, {"time_limit": 30}, progress=progress)
    assert plan.planner.status == "optimal"
    phases = [p for p, _ in seen if p]
    assert "exact" in phases
    assert "refute" not in phases, seen
    assert not any(m and "refuting" in m for _, m in seen), seen
