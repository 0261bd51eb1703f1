"""Fixtures of the GUI planning tests: small real planners registered through the registry, small
scenarios, and the planning controller (standalone or on the main window)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import random  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402

import networkx as nx  # noqa: E402
import pulp  # noqa: E402
import pytest  # noqa: E402

from inaplanner.evaluate import max_min_rates, with_rates  # noqa: E402
from inaplanner.model import Plan, PlannerInfo, Route, Scenario, Switch, TaskPlan  # noqa: E402
from inaplanner.planners import CancelToken, Param, available, solve  # noqa: E402
from inaplanner.topologies import aro_fig1  # noqa: E402


def tree_plan(sc: Scenario, name: str, avoid: tuple[str, ...] = ()) -> Plan:
    """Every worker follows the shortest-path tree rooted at its task's PS (avoiding the switches
    in ``avoid``) and merges at every programmable switch on the way; one aggregate per switch
    continues along the same tree, so the merges are consistent (CONTRACTS.md rule 1). Rates:
    max-min fair on those routes. With one task, the smallest worker access link is a proven
    upper bound on its rate, reported as the plan's bound."""
    g = nx.Graph()
    g.add_nodes_from(n.id for n in sc.nodes if n.id not in avoid)
    for lk in sc.links:
        if lk.capacity > 0 and lk.a not in avoid and lk.b not in avoid:
            g.add_edge(lk.a, lk.b)
    tasks = []
    for job in sc.jobs:
        for ps in job.parameter_servers:
            # hosts never forward: search over switches plus this task's end points
            keep = {n.id for n in sc.switches()} | {ps, *job.workers}
            paths = nx.single_source_shortest_path(g.subgraph(keep), ps)
            routes = []
            for w in job.workers:
                path = list(reversed(paths[w]))
                merges = [n for n in path[1:-1] if isinstance(sc.node(n), Switch) and sc.node(n).programmable]
                routes.append(Route(w, path, merges))
            tasks.append(TaskPlan(job.id, ps, 1.0, routes))
    plan = Plan("", PlannerInfo(name, status="heuristic"), tasks)
    if len(tasks) == 1:
        job = sc.job(tasks[0].job)
        access = [max(lk.capacity for lk in sc.links if w in (lk.a, lk.b)) for w in job.workers]
        plan.bound = min(access)
    return with_rates(plan, max_min_rates(sc, plan))


class TreePlanner:
    """A small real planner: shortest-path tree routes, max-min rates. ``delay`` seconds of work
    (reported as progress, cancel checked) make queueing observable."""

    name = "test-tree"
    description = "test planner: shortest-path tree to the PS, merge at every programmable switch"
    params = (
        Param("delay", float, 0.0, "seconds of simulated work", min=0.0, max=60.0),
        Param("avoid", str, "", "switches not to route through (comma separated)"),
    )

    def plan(self, scenario: Scenario, params: dict[str, Any], progress: Any, cancel: CancelToken) -> Plan:
        steps = 20
        for i in range(steps):
            if params["delay"] <= 0:
                break
            cancel.check()
            time.sleep(params["delay"] / steps)
            progress((i + 1) / steps, f"step {i + 1}/{steps}")
        cancel.check()
        progress(1.0, "routes")
        avoid = tuple(x.strip() for x in params["avoid"].split(",") if x.strip())
        return tree_plan(scenario, self.name, avoid)


class LongMipPlanner:
    """A real planner whose HiGHS solve runs for its whole time limit (a 100-item,
    10-constraint multi-dimensional knapsack that HiGHS does not close in minutes): cancel has
    to interrupt the solver from its callback."""

    name = "test-long-mip"
    description = "test planner: a hard MIP before shortest-path tree routes"
    params = ()

    def plan(self, scenario: Scenario, params: dict[str, Any], progress: Any, cancel: CancelToken) -> Plan:
        progress(0.0, "building the MIP")
        prob = hard_mip()
        progress(0.1, "solving")
        res = solve(prob, time_limit=params["time_limit"], cancel=cancel)
        plan = tree_plan(scenario, self.name)
        plan.planner.status = res.status if res.status != "infeasible" else "heuristic"
        return plan


def hard_mip(n: int = 100, m: int = 10, seed: int = 3) -> pulp.LpProblem:
    rng = random.Random(seed)
    prob = pulp.LpProblem("mkp", pulp.LpMaximize)
    x = [prob.add_variable(f"x{i}", cat="Binary") for i in range(n)]
    w = [[rng.randint(1, 1000) for _ in range(n)] for _ in range(m)]
    prob += pulp.lpSum((sum(w[k][i] for k in range(m)) / m + rng.randint(1, 100)) * x[i] for i in range(n))
    for k in range(m):
        prob += pulp.lpSum(w[k][i] * x[i] for i in range(n)) <= sum(w[k]) // 2
    return prob


@pytest.fixture
def test_planners():
    """Register the test planners in the registry for one test (removed afterwards)."""
    planners = available()
    added = [TreePlanner(), LongMipPlanner()]
    for p in added:
        planners[p.name] = p
    yield {p.name: p for p in added}
    for p in added:
        planners.pop(p.name, None)


@pytest.fixture
def aro_scenario() -> Scenario:
    """ARO Fig. 1: 4 leaves, 2 spines, 5 workers, one PS; L1, L2 and S1 programmable."""
    return aro_fig1()


class Recorder:
    """Collects what the controller hands to its callbacks (standalone use)."""

    def __init__(self) -> None:
        self.overlays: list[Any] = []
        self.errors: list[tuple[str, str]] = []
        self.statuses: list[str] = []
        self.applied: list[tuple[Scenario, str]] = []


@pytest.fixture
def standalone(qtbot, test_planners, aro_scenario):
    """A PlanningController on its own (no main window): the scenario is a plain object and the
    overlays (built by the real ``overlay_from_evaluation``) are recorded."""
    from inaplanner.gui.planning.controller import PlanningController

    rec = Recorder()
    holder = {"sc": aro_scenario}

    def apply(sc: Scenario, text: str) -> None:
        rec.applied.append((sc, text))
        holder["sc"] = sc

    ctrl = PlanningController(
        scenario=lambda: holder["sc"],
        set_overlay=rec.overlays.append,
        show_error=lambda title, msg: rec.errors.append((title, msg)),
        apply_scenario=apply,
        status=rec.statuses.append,
    )
    for w in (ctrl.planner_panel, ctrl.results_panel, ctrl.compare_panel, ctrl.whatif_panel):
        qtbot.addWidget(w)
    ctrl.recorder = rec
    ctrl.holder = holder
    yield ctrl
    ctrl.shutdown()
