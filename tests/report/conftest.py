"""Fixtures of the report tests: the GRID Fig. 1 scenario with hand-built plans."""

from __future__ import annotations

import os

import pytest

from inaplanner.io.native import scenario_sha256
from inaplanner.model import Plan, PlannerInfo, Route, Scenario, TaskPlan
from inaplanner.topologies import grid_fig1, leaf_spine

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

#: An unusual rate so the figure is easy to find in the PDF's text.
GRID_RATE = 2.71828


def route(worker: str, path: str, merges: list[str]) -> Route:
    return Route(worker, path.split("-"), merges)


def grid_plan(sc: Scenario, rate: float = GRID_RATE) -> Plan:
    """GRID Fig. 1's routes (section 2.2): S1 merges W1-W3, S2 merges W4-W6, S3 merges S2's
    aggregate with W7, W8; S1's aggregate reaches the PS unmerged."""
    routes = [
        route("W1", "W1-S1-S3-PS", ["S1"]),
        route("W2", "W2-S1-S3-PS", ["S1"]),
        route("W3", "W3-S1-S3-PS", ["S1"]),
        route("W4", "W4-S1-S2-S3-PS", ["S2", "S3"]),
        route("W5", "W5-S2-S3-PS", ["S2", "S3"]),
        route("W6", "W6-S2-S3-PS", ["S2", "S3"]),
        route("W7", "W7-S3-PS", ["S3"]),
        route("W8", "W8-S3-PS", ["S3"]),
    ]
    info = PlannerInfo("hand", {"note": "GRID Fig. 1"}, 0, None, 0.25, "heuristic")
    return Plan(scenario_sha256(sc), info, [TaskPlan("job0", "PS", rate, routes)], bound=3.0)


def shortest_plan(sc: Scenario, rate: float = 0.375) -> Plan:
    """Shortest paths, no aggregation (what Fig. 1 calls the no-INA case)."""
    routes = [route(f"W{i}", f"W{i}-S1-S3-PS", []) for i in range(1, 5)]
    routes += [route(f"W{i}", f"W{i}-S2-S3-PS", []) for i in (5, 6)]
    routes += [route(f"W{i}", f"W{i}-S3-PS", []) for i in (7, 8)]
    info = PlannerInfo("shortest", {}, None, None, 0.0, "heuristic")
    return Plan(scenario_sha256(sc), info, [TaskPlan("job0", "PS", rate, routes)])


@pytest.fixture
def grid() -> Scenario:
    return grid_fig1()


@pytest.fixture
def two_job_scenario() -> tuple[Scenario, Plan]:
    """A leaf-spine with two jobs and its hand-made plan (routes via S1, merges at the leaves)."""
    from inaplanner.model import Job

    sc = leaf_spine(3, 2, 2, host_capacity=10.0, fabric_capacity=10.0)
    for s in sc.switches():
        s.programmable = True
    sc.jobs = [Job("a", ["H3", "H4"], ["H1"]), Job("b", ["H5", "H6"], ["H2"], weight=2.0)]
    sc.touch()
    sc.validate()
    tasks = [
        TaskPlan("a", "H1", 4.0, [route("H3", "H3-L2-S1-L1-H1", ["L2"]),
                                  route("H4", "H4-L2-S1-L1-H1", ["L2"])]),
        TaskPlan("b", "H2", 3.0, [route("H5", "H5-L3-S2-L1-H2", ["L3"]),
                                  route("H6", "H6-L3-S2-L1-H2", ["L3"])]),
    ]
    plan = Plan(scenario_sha256(sc), PlannerInfo("hand2", {}, None, "none", 0.5, "feasible"), tasks)
    return sc, plan


@pytest.fixture
def grid_rate() -> float:
    return GRID_RATE


@pytest.fixture
def gplan(grid: Scenario) -> Plan:
    return grid_plan(grid)


@pytest.fixture
def splan(grid: Scenario) -> Plan:
    return shortest_plan(grid)
