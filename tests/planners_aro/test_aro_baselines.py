"""The ARO paper's baselines: ecmp (no INA), random (ATP-style), aggtree."""

from __future__ import annotations

import pytest

from inaplanner.evaluate import evaluate, is_up_down
from inaplanner.model import Host, Job, Link, Scenario, Switch
from inaplanner.planners import get, run_planner
from inaplanner.topologies import fat_tree, leaf_spine, mark_programmable, place_jobs


def _scenario(seed=0):
    sc = leaf_spine(6, 6, 4, host_capacity=10.0, fabric_capacity=10.0)
    mark_programmable(sc, 0.3, tiers=None, seed=seed, pipelines=2, include=["L1", "L2"])
    place_jobs(sc, 1, 2, 14, seed=seed)
    return sc


@pytest.mark.parametrize("name", ["ecmp", "random", "aggtree"])
@pytest.mark.parametrize("seed", [0, 1])
def test_plans_are_feasible_up_down_and_seeded(name, seed):
    sc = _scenario(seed)
    plan = run_planner(get(name), sc, {"seed": seed})
    again = run_planner(get(name), sc, {"seed": seed})
    ev = evaluate(sc, plan)
    assert ev.feasible and not ev.warnings
    assert plan.planner.status == "heuristic" and plan.bound is None
    assert all(is_up_down(sc, r.path) for tp in plan.tasks for r in tp.routes)
    assert [r.path for tp in plan.tasks for r in tp.routes] == [r.path for tp in again.tasks for r in tp.routes]
    assert ev.objective > 0


def test_ecmp_never_merges_and_spreads_with_the_seed():
    sc = _scenario(0)
    paths = set()
    for seed in range(4):
        plan = run_planner(get("ecmp"), sc, {"seed": seed})
        assert all(not r.merge_at for tp in plan.tasks for r in tp.routes)
        paths.add(tuple(tuple(r.path) for r in plan.tasks[0].routes))
    assert len(paths) > 1


def test_random_merges_at_every_programmable_switch_and_takes_one_programmable_spine():
    sc = _scenario(0)  # S3 and S6 are programmable
    prog = {s.id for s in sc.switches() if s.programmable}
    prog_spines = sorted(s for s in prog if s.startswith("S"))
    assert prog_spines, "the scenario needs a programmable spine"
    plan = run_planner(get("random"), sc, {"seed": 3})
    for tp in plan.tasks:
        spines = {r.path[2] for r in tp.routes if len(r.path) == 5}
        assert len(spines) == 1 and spines <= set(prog_spines)  # "a random programmable spine"
        for r in tp.routes:
            assert r.merge_at == [n for n in r.path[1:-1] if n in prog]


def test_aggtree_balances_flows_by_available_bandwidth():
    """Four workers under a common leaf, four common spines: AggTree's b / (w + 1) estimate puts
    one flow on each uplink (ECMP may stack them)."""
    sc = Scenario("balance")
    sc.nodes += [Switch("L1", tier="leaf"), Switch("L2", tier="leaf")]
    sc.nodes += [Switch(f"S{i}", tier="spine") for i in range(1, 5)]
    sc.nodes += [Host("PS")] + [Host(f"W{i}") for i in range(1, 5)]
    sc.links.append(Link("PS", "L1", 100.0, None, 1))
    sc.links += [Link(f"W{i}", "L2", 10.0, None, i) for i in range(1, 5)]
    for i in range(1, 5):
        sc.links.append(Link("L1", f"S{i}", 10.0, 1 + i, 1))
        sc.links.append(Link("L2", f"S{i}", 10.0, 4 + i, 2))
    sc.jobs.append(Job("j", [f"W{i}" for i in range(1, 5)], ["PS"]))
    sc.touch()
    sc.validate()
    plan = run_planner(get("aggtree"), sc)
    assert sorted(r.path[2] for r in plan.tasks[0].routes) == ["S1", "S2", "S3", "S4"]
    assert evaluate(sc, plan).objective == pytest.approx(10.0)


def test_aggtree_routes_aggregates_consistently_on_a_fat_tree():
    sc = fat_tree(4)
    mark_programmable(sc, 0.5, tiers=None, seed=4, pipelines=2)
    place_jobs(sc, 2, 1, 6, seed=4)
    ev = evaluate(sc, run_planner(get("aggtree"), sc))
    assert ev.valid and ev.feasible and ev.aggregates


def test_aro_makes_each_tasks_dag_once_and_the_baselines_plan_the_same_with_it(monkeypatch):
    """ARO's warm start used to make every task's DAG three times (the random baseline, its own
    graphs, AggTree): 0.13 s a task at fat-tree k=64. Given the DAGs, a baseline plans exactly
    as it does making them itself."""
    import inaplanner.planners.aro_baselines as baselines
    import inaplanner.planners.routing as routing
    from inaplanner.planners.routing import task_dags

    sc = fat_tree(4)
    mark_programmable(sc, 0.3, pipelines=2, seed=1)
    place_jobs(sc, 2, 2, 6, seed=1)
    made = []
    real = routing.shortest_dag

    def counted(sc_, workers, ps, **kw):
        made.append(ps)
        return real(sc_, workers, ps, **kw)

    monkeypatch.setattr(routing, "shortest_dag", counted)
    plan = run_planner(get("aro"), sc, {"time_limit": 20.0})
    assert evaluate(sc, plan).feasible
    assert sorted(made) == sorted(t.ps for t in sc.tasks()), made

    dags = task_dags(sc)
    for cls in (baselines.EcmpPlanner, baselines.RandomPlanner, baselines.AggTreePlanner):
        for seed in (0, 1):
            given = run_planner(cls(dags), sc, {"seed": seed})
            own = run_planner(cls(), sc, {"seed": seed})
            assert [(tp.rate, [(r.path, r.merge_at) for r in tp.routes]) for tp in given.tasks] == \
                [(tp.rate, [(r.path, r.merge_at) for r in tp.routes]) for tp in own.tasks]
