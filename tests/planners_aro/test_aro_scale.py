"""ARO at datacenter scale (issue 13 item 1, issue 17 rule 5): a plan within the limit, honest
status and bounds, the heuristic warm start as a floor, cancel in every phase, fan-in in the model.

Behaviour, not timers: the margins below are generous (the machine may be loaded)."""

from __future__ import annotations

import threading
import time

import pytest

from inaplanner.errors import Cancelled
from inaplanner.evaluate import evaluate
from inaplanner.model import Job, Plan, PlannerInfo, TaskPlan
from inaplanner.planners import CancelToken, get, run_planner
from inaplanner.planners.aro import planner as aro_planner
from inaplanner.planners.aro.formulation import block_flows, feasibility_model
from inaplanner.planners.aro.graph import build_task_graph, task_graphs
from inaplanner.planners.aro.greedy import (
    _route_task,
    greedy_flows,
    last_hop_options,
    plan_links,
    raw_into_last,
    route_one,
)
from inaplanner.planners.aro.planner import _Clock, _decide, _take
from inaplanner.planners.aro.routes import flows_from_routes, generate_routes
from inaplanner.planners.routing import shortest_dag
from inaplanner.progress import Progress
from inaplanner.topologies import fat_tree, leaf_spine, mark_programmable, place_jobs


def _fat_tree(k: int, workers: int, seed: int = 1):
    sc = fat_tree(k, 100.0)
    mark_programmable(sc, 0.2, pipelines=4, seed=seed)
    place_jobs(sc, 2, 2, workers, seed=seed)
    return sc


def _fan_in_counts(sc, plan) -> dict[tuple, int]:
    """Distinct incoming flows per aggregate (task, switch, pipeline), counted from the routes
    (CONTRACTS.md rules 1 and 5), independently of the planner's model."""
    incoming: dict[tuple, set] = {}
    for tp in plan.tasks:
        for r in tp.routes:
            flow: object = r.worker
            merges = set(r.merge_at)
            for u, v in zip(r.path, r.path[1:], strict=False):
                if v in merges:
                    key = (tp.job, tp.ps, v, sc.ingress_pipeline(u, v))
                    incoming.setdefault(key, set()).add(flow)
                    flow = key
    return {k: len(v) for k, v in incoming.items()}


def test_two_seconds_on_k24_gives_a_valid_plan_with_status_timeout():
    sc = _fat_tree(24, 500)
    t0 = time.perf_counter()
    plan = run_planner(get("aro"), sc, {"time_limit": 2.0, "limit_kind": "wall"})
    took = time.perf_counter() - t0
    ev = evaluate(sc, plan)
    assert ev.feasible, ev.violations[:3]
    assert plan.planner.status == "timeout"
    assert plan.bound is not None and plan.bound >= ev.objective
    assert took < 60.0, f"{took:.1f} s for a 2 s limit"


@pytest.mark.parametrize("phase", ["graphs", "warm start", "single"])
def test_cancel_during_model_building_on_k16_stops_within_seconds(phase):
    sc = _fat_tree(16, 200)
    token = CancelToken()
    progress = Progress(token)
    fired: dict[str, float] = {}

    def on(ev) -> None:  # noqa: ANN001
        if ev.phase == phase and "t" not in fired:
            fired["t"] = time.perf_counter()
            token.cancel()

    progress.subscribe(on)
    outcome: dict[str, object] = {}

    def work() -> None:
        try:
            outcome["plan"] = run_planner(get("aro"), sc, {"time_limit": 120}, progress=progress)
        except Cancelled:
            outcome["cancelled"] = time.perf_counter()

    th = threading.Thread(target=work)
    th.start()
    th.join(120)
    assert not th.is_alive()
    assert "t" in fired, f"phase {phase!r} never reported"
    assert "cancelled" in outcome and "plan" not in outcome
    assert outcome["cancelled"] - fired["t"] < 5.0


def test_cancel_while_the_deadline_is_cpu_time_still_stops():
    sc = _fat_tree(16, 200)
    token = CancelToken()
    threading.Timer(1.0, token.cancel).start()
    t0 = time.perf_counter()
    with pytest.raises(Cancelled):
        run_planner(get("aro"), sc, {"time_limit": 120, "limit_kind": "cpu"}, cancel=token)
    assert time.perf_counter() - t0 < 30.0


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("limit", [0.2, 5.0])
def test_incumbent_never_worse_than_the_warm_start(seed, limit, make_leaf_spine):
    sc = make_leaf_spine(seed, leaves=5, spines=3, hosts=4, jobs=2, tasks=2, workers=6, pipelines=2)
    aro = evaluate(sc, run_planner(get("aro"), sc, {"time_limit": limit, "seed": seed}))
    assert aro.feasible
    for name in ("random", "aggtree"):
        ev = evaluate(sc, run_planner(get(name), sc, {"seed": seed}))
        if ev.feasible:
            assert aro.objective >= ev.objective - 1e-9, name


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("limit", [0.1, 30.0])
def test_bound_never_below_the_brute_force_optimum(seed, limit, make_leaf_spine, brute):
    kwargs = [
        {},
        {"tasks": 2, "workers": 3},
        {"leaves": 4, "jobs": 2, "tasks": 2, "workers": 2},
    ][seed % 3]
    sc = make_leaf_spine(seed, **kwargs)
    best = brute(sc)
    plan = run_planner(get("aro"), sc, {"time_limit": limit})
    ev = evaluate(sc, plan)
    assert ev.feasible and ev.objective <= best + 1e-9
    if plan.bound is not None:
        assert plan.bound >= best * (1 - 1e-9) - 1e-9
    if plan.planner.status == "optimal":
        assert ev.objective == pytest.approx(best, rel=1e-6, abs=1e-9)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("fan_in", [2, 3, 4])
@pytest.mark.parametrize("name", ["aro", "aro-acc", "aro-raw"])
def test_fan_in_is_a_constraint_of_the_model(seed, fan_in, name):
    sc = leaf_spine(4, 2, 6, 100.0, 100.0)
    mark_programmable(sc, None, tiers=None, pipelines=2, seed=seed)
    place_jobs(sc, 1 + seed % 2, 1 + (seed // 2) % 2, 9, seed=seed)
    for sw in sc.switches():
        sw.max_fan_in = fan_in
    sc.touch()
    plan = run_planner(get(name), sc, {"time_limit": 20})
    ev = evaluate(sc, plan)
    assert ev.feasible, (ev.errors, ev.violations[:3])
    counts = _fan_in_counts(sc, plan)
    assert counts and max(counts.values()) <= fan_in
    # without the limit the same scenario merges more flows somewhere (the limit binds)
    for sw in sc.switches():
        sw.max_fan_in = None
    sc.touch()
    free = run_planner(get(name), sc, {"time_limit": 20})
    assert max(_fan_in_counts(sc, free).values()) > fan_in or evaluate(sc, free).objective >= ev.objective


@pytest.mark.parametrize("seed", range(4))
def test_greedy_respects_fan_in(seed, make_leaf_spine):
    sc = make_leaf_spine(seed, leaves=3, spines=2, hosts=4, workers=9, share=1.0, capacities=(100.0,),
                         background=False)
    for sw in sc.switches():
        sw.max_fan_in = 2
    sc.touch()
    (t,) = sc.tasks()
    workers = tuple(w for w in sc.job(t.job).workers if w != t.ps)
    g = build_task_graph(sc, t, workers, shortest_dag(sc, workers, t.ps))
    flows = greedy_flows(sc, [g], [1.0])
    assert flows is not None
    for n in g.inps:
        assert sum(flows[0].y.get(g.edge_key(k), 0) for k in g.in_edges.get(n, [])) <= 2


def _fan_in_leaf(hosts: int, workers: list[str]):
    """A 6 x 4 leaf-spine whose PS leaf L1 (PS H1) takes the spines S1-S2 on pipeline 1 and
    S3-S4 on pipeline 2, its link to the PS one flow, and merges at most two flows; S1 is the one
    aggregating spine, and its links (two flows at 1 Gbps) are tighter than the others' (four)."""
    sc = leaf_spine(6, 4, hosts)
    for lk in sc.links:
        lk.capacity = 1.0 if "H1" in (lk.a, lk.b) else 2.0 if "S1" in (lk.a, lk.b) else 4.0
    l1 = sc.node("L1")
    l1.programmable, l1.pipelines, l1.max_fan_in = True, 3, 2
    l1.port_pipeline = {p: 0 if p <= hosts else 1 if p <= hosts + 2 else 2 for p in range(1, hosts + 5)}
    s1 = sc.node("S1")
    s1.programmable, s1.pipelines = True, 1
    sc.jobs.append(Job("job0", workers, ["H1"]))
    sc.touch()
    sc.validate()
    assert [sc.ingress_pipeline(s, "L1") for s in ("S1", "S2", "S3", "S4")] == [1, 1, 2, 2]
    return sc


def _holds_alone(sc, g, flows) -> dict:
    """The evaluator's verdict on the task's plan at 1 Gbps, and L1's merges (rule 5)."""
    plan = Plan("", PlannerInfo("t"), [TaskPlan(g.task.job, g.task.ps, 1.0, generate_routes(g, flows))])
    ev = evaluate(sc, plan)
    assert ev.valid and ev.feasible, (ev.errors[:2], [str(v) for v in ev.violations[:2]])
    return {key: n for key, n in _fan_in_counts(sc, plan).items() if "L1" in key}


def test_greedy_keeps_raw_flows_off_a_fan_in_the_last_switch_needs():
    """Ten workers, two under each of the other leaves, reach L1 only if S1 merges nearly all of
    them. The hop-by-hop greedy sends the first ones raw through S2 (S1's links are the tighter)
    and fills L1's two places, under every choice of L1's pipeline; blocking the edges into L1
    from the spines that do not aggregate finds the plan (the lambda = 5 setting with the 32-flow
    fan-in, in small)."""
    sc = _fan_in_leaf(2, [f"H{i}" for i in range(3, 13)])
    (g,) = task_graphs(sc)
    assert raw_into_last(g) == {("S2", "L1"), ("S3", "L1"), ("S4", "L1")}
    choices = list(last_hop_options(sc, g, 1.0, {}))
    assert len(choices) == 3
    assert all(_route_task(sc, g, 1.0, {}, blocked) is None for blocked in choices)  # plain: stuck
    flows = route_one(sc, g, 1.0, {})
    assert flows is not None
    assert list(_holds_alone(sc, g, flows).values()) == [1]  # S1's aggregate only
    sc.node("L1").max_fan_in = 10  # a fan-in the ten workers cannot exceed: nothing to block
    sc.touch()
    assert raw_into_last(task_graphs(sc)[0]) == set()


def test_a_worker_with_no_other_way_goes_raw_into_the_last_switch():
    """Three workers under L2 and two under each of L3-L6: S1's link from L2 takes two of L2's,
    so with the raw edges into L1 blocked its third is stuck. It alone may go raw through S2 (the
    fallback); the workers after it go through S1 again, so L1 merges S1's aggregate and that one
    raw flow, within its fan-in of two. Only a task routed first gets the fallback: in what other
    tasks left, the raw flows it lets in take links a later task needs (leaf-spine lambda = 4 seed
    0 with the 32-flow fan-in lost its optimum that way)."""
    sc = _fan_in_leaf(3, ["H4", "H5", "H6"] + [f"H{i}" for i in range(7, 19) if i % 3 != 0])
    (g,) = task_graphs(sc)
    choices = list(last_hop_options(sc, g, 1.0, {}))
    raw = raw_into_last(g)
    assert raw and all(_route_task(sc, g, 1.0, {}, b) is None and _route_task(sc, g, 1.0, {}, b | raw) is None
                       for b in choices)
    flows = route_one(sc, g, 1.0, {})
    assert flows is not None
    assert sorted(_holds_alone(sc, g, flows).values()) == [2]  # S1's aggregate and L2's third worker
    # the same task after another placed nothing it uses: no fallback in what others left
    assert route_one(sc, g, 1.0, {("link", "H1", "L1"): 1.0}) is None


def test_the_greedy_near_a_known_plan_places_a_task_the_plain_greedy_cannot(monkeypatch):
    """Fat-tree k=4 (30 % programmable, two pipelines), a task of six workers at 50 Gbps: the
    hop-by-hop greedy is stuck, and the single-task MILP finds a plan. Where a link of that plan
    is taken (by another task, say), the plan no longer fits and the plain greedy is still stuck,
    but the greedy kept near the plan's links routes the task around it: ``_place`` places it
    without a MILP, in what was left, and the evaluator accepts the result (fat-tree k=16 with
    200 workers per job, task after task: 11-65 of 121 rate vectors instead of 0-5)."""
    sc = fat_tree(4, 100.0)
    mark_programmable(sc, 0.3, pipelines=2, seed=0)
    place_jobs(sc, 2, 2, 6, seed=0)
    g = task_graphs(sc)[0]
    assert route_one(sc, g, 50.0, {}) is None
    m, blocks = feasibility_model(sc, [g], [50.0])
    status, values = _decide(m, _Clock(30), CancelToken())
    assert status == "feasible"
    plan = block_flows(blocks[0], values)
    # a link of the plan to a core that the plain greedy cannot do without either (which one
    # depends on the plan HiGHS finds)
    uplinks = sorted(lk for lk in plan_links(plan) if lk[1].startswith("C"))
    stuck = [("link", *lk) for lk in uplinks
             if not _take(sc, g, plan, 50.0, {("link", *lk): 0.0})
             and route_one(sc, g, 50.0, {("link", *lk): 0.0}) is None]
    assert stuck
    taken = stuck[0]
    assert route_one(sc, g, 50.0, {}, prefer=plan_links(plan)) is not None  # and alone too

    def no_milp(*args, **kwargs):
        raise AssertionError("a MILP was built")

    monkeypatch.setattr(aro_planner, "feasibility_model", no_milp)
    left = {taken: 0.0}
    placed = get("aro")._place(sc, g, 50.0, left, _Clock(30), CancelToken(), plan)
    assert placed is not None and placed is not plan
    assert left[taken] == 0.0 and all(v >= -1e-9 for v in left.values())
    assert taken[1:] not in plan_links(placed)
    tasks = [TaskPlan(t.job, t.ps, 50.0, generate_routes(g, placed)) if t == g.task else TaskPlan(t.job, t.ps, 0.0, [])
             for t in sc.tasks()]  # the others send nothing
    ev = evaluate(sc, Plan("", PlannerInfo("t"), tasks))
    assert ev.valid and ev.feasible, (ev.errors[:2], [str(v) for v in ev.violations[:2]])


@pytest.mark.parametrize("seed", range(3))
def test_flows_from_routes_inverts_algorithm_1(seed, make_leaf_spine):
    sc = make_leaf_spine(seed, leaves=4, spines=3, hosts=3, workers=8)
    (t,) = sc.tasks()
    workers = tuple(w for w in sc.job(t.job).workers if w != t.ps)
    g = build_task_graph(sc, t, workers, shortest_dag(sc, workers, t.ps))
    plan = run_planner(get("random"), sc, {"seed": seed})
    flows = flows_from_routes(sc, g, plan.tasks[0].routes)
    assert flows is not None
    again = flows_from_routes(sc, g, generate_routes(g, flows))
    assert again is not None and again.y == flows.y and again.x == flows.x


def test_routes_on_fat_trees_are_up_down():
    """CONTRACTS.md rule 6: ARO's unfolded graphs come from the shortest up-down DAG."""
    sc = _fat_tree(8, 50)
    plan = run_planner(get("aro"), sc, {"time_limit": 3})
    tier = {s.id: sc.rank(s.id) for s in sc.switches()}
    for tp in plan.tasks:
        for r in tp.routes:
            ranks = [tier[n] for n in r.path[1:-1]]
            peak = ranks.index(max(ranks))
            assert ranks[:peak + 1] == sorted(ranks[:peak + 1])
            assert ranks[peak:] == sorted(ranks[peak:], reverse=True)
    assert not [v for v in evaluate(sc, plan).violations if getattr(v, "kind", "") == "valley"]
