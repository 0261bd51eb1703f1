"""Each linear formulation of ARO's model against exhaustive search on tiny instances."""

from __future__ import annotations

import pytest

from inaplanner.evaluate import evaluate
from inaplanner.model import Plan, PlannerInfo, TaskPlan
from inaplanner.planners.aro.formulation import (
    block_flows,
    exact_model,
    feasibility_columns,
    feasibility_model,
    objective_for,
    qsr_delta,
    ratio_model,
)
from inaplanner.planners.aro.graph import task_graphs
from inaplanner.planners.aro.planner import _level_slack, rate_candidates
from inaplanner.planners.aro.routes import generate_routes

SJST = dict(spines=3, hosts=3, workers=5, capacities=(1.0, 2.0))
SJMT = dict(spines=2, hosts=2, jobs=1, tasks=2, workers=3, capacities=(1.0, 2.0))
MJMT = dict(spines=2, hosts=3, jobs=2, tasks=1, workers=3, capacities=(1.0, 2.0), weights=[1.0, 2.0])


@pytest.mark.parametrize("seed", range(4))
def test_u_equals_one_over_r_model_is_exact_for_one_task(seed, make_leaf_spine, brute):
    sc = make_leaf_spine(seed, **SJST)
    m, _, _ = ratio_model(sc, task_graphs(sc), [1.0])
    res = m.solve()
    assert res.status == "optimal"
    assert 1.0 / res.objective == pytest.approx(brute(sc), rel=1e-6)


@pytest.mark.parametrize("kind", ["SJMT", "MJMT"])
@pytest.mark.parametrize("seed", range(3))
def test_the_feasibility_models_columns_are_known_before_it_is_built(kind, seed, make_leaf_spine):
    """ARO decides from the column count whether a check's LP relaxation goes first, and at
    fat-tree k=64 a build takes 3 s: the count comes without building, and equals the model's."""
    sc = make_leaf_spine(seed, **{"SJMT": SJMT, "MJMT": MJMT}[kind], agg_capacity=(1.0, 2.0))
    graphs = task_graphs(sc)
    for rate in (0.25, 0.5, 1.0):
        m, _ = feasibility_model(sc, graphs, [rate] * len(graphs))
        assert feasibility_columns(graphs) == m.n_cols


@pytest.mark.parametrize("seed", range(3))
def test_feasibility_model_accepts_exactly_the_rates_up_to_the_optimum(seed, make_leaf_spine, brute):
    sc = make_leaf_spine(seed, **SJST)
    best = brute(sc)
    graphs = task_graphs(sc)
    cands = rate_candidates(sc, graphs[0])
    assert any(c == pytest.approx(best) for c in cands)  # the optimum is a candidate b / k
    near = sorted(cands, key=lambda c: abs(c - best))[:6]
    for c in near:
        m, _ = feasibility_model(sc, graphs, [c])
        status = m.solve().status
        assert (status == "optimal") == (c <= best * (1 + 1e-9)), (c, best, status)


@pytest.mark.parametrize("kind,seed", [("SJMT", 0), ("SJMT", 2), ("MJMT", 0), ("MJMT", 1)])
def test_exact_model_with_continuous_rates_matches_brute_force(kind, seed, make_leaf_spine, brute):
    sc = make_leaf_spine(seed, **(SJMT if kind == "SJMT" else MJMT))
    graphs = task_graphs(sc)
    objective = objective_for(sc, sc.tasks())
    em = exact_model(sc, graphs, objective, [10.0] * len(graphs), qsr=False)
    res = em.milp.solve(gap=1e-9)
    assert res.status == "optimal"
    assert res.objective == pytest.approx(brute(sc), rel=1e-6)


@pytest.mark.parametrize("kind,seed", [("SJMT", 0), ("MJMT", 1)])
def test_qsr_model_is_exact_up_to_one_level_per_task(kind, seed, make_leaf_spine, brute):
    sc = make_leaf_spine(seed, **(SJMT if kind == "SJMT" else MJMT))
    graphs = task_graphs(sc)
    objective = objective_for(sc, sc.tasks())
    em = exact_model(sc, graphs, objective, [10.0] * len(graphs), qsr=True, levels=20)
    assert em.delta == pytest.approx(qsr_delta(sc, graphs, 20))
    res = em.milp.solve(gap=1e-9)
    best = brute(sc)
    slack = em.delta * _level_slack(objective)
    assert best - slack - 1e-9 <= res.objective <= best + 1e-9
    assert res.bound + slack >= best - 1e-9  # the bound the planner reports stays valid


@pytest.mark.parametrize("kind,seed", [("SJST", 1), ("SJMT", 1), ("MJMT", 2)])
def test_algorithm1_routes_carry_exactly_the_model_flows(kind, seed, make_leaf_spine):
    """Routes generated from y put, on every physical directed link, as many distinct flows (as
    the evaluator counts them) as the model's y says."""
    sc = make_leaf_spine(seed, **{"SJST": SJST, "SJMT": SJMT, "MJMT": MJMT}[kind])
    graphs = task_graphs(sc)
    m, blocks = feasibility_model(sc, graphs, [0.2] * len(graphs))
    res = m.solve()
    assert res.values is not None
    tasks = []
    flows = [block_flows(b, res.values) for b in blocks]
    for g, f in zip(graphs, flows, strict=True):
        tasks.append(TaskPlan(g.task.job, g.task.ps, 0.1, generate_routes(g, f)))
    ev = evaluate(sc, Plan("", PlannerInfo("t"), tasks))
    assert ev.valid, ev.errors
    for ti, (g, f) in enumerate(zip(graphs, flows, strict=True)):
        expect: dict[tuple[str, str], int] = {}
        for (tail, head), y in f.y.items():
            link = (tail[1], head[1])
            expect[link] = expect.get(link, 0) + y
        for li, lk in enumerate(sc.links):
            for d, (a, b) in enumerate(((lk.a, lk.b), (lk.b, lk.a))):
                assert ev.flows[ti, li, d] == expect.get((a, b), 0), (g.task, a, b)
        merged = {n[1] for n, x in f.x.items() if x and n[1] not in g.workers}
        assert {m for r in tasks[ti].routes for m in r.merge_at} == merged
