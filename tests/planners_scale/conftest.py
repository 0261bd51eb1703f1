"""Helpers of the scale and rules tests of GRID, InArt and the heuristic baselines."""

from __future__ import annotations

import random

import pytest

from inaplanner.evaluate import evaluate, is_up_down
from inaplanner.model import Plan, Scenario
from inaplanner.topologies import fat_tree, leaf_spine, mark_programmable, place_jobs


def rule_breaks(sc: Scenario, plan: Plan) -> list[str]:
    """Our own walk of a plan for rules 5 (fan-in) and 6 (up-down), besides the evaluator's."""
    ev = evaluate(sc, plan)
    out = list(ev.errors) + [str(v) for v in ev.violations]
    for agg in ev.aggregates:
        limit = getattr(sc.node(agg.switch), "max_fan_in", None) or 32
        if agg.inputs > limit:
            out.append(f"{agg.task}: {agg.inputs} flows merged at {agg.switch}/{agg.pipeline} > {limit}")
    if sc.is_tiered():
        for tp in plan.tasks:
            for r in tp.routes:
                if not is_up_down(sc, r.path):
                    out.append(f"valley path {'-'.join(r.path)}")
    return out


def random_clos(seed: int, fan_in: int) -> Scenario:
    """A small random leaf-spine or fat-tree k=4 with one or two jobs and a small max_fan_in."""
    rng = random.Random(seed)
    if rng.random() < 0.5:
        sc = leaf_spine(rng.randint(2, 4), rng.randint(1, 3), rng.randint(3, 5),
                        host_capacity=10.0, fabric_capacity=float(rng.choice([10, 20])))
    else:
        sc = fat_tree(4, capacity=10.0)
    mark_programmable(sc, rng.choice([0.3, 0.6, 1.0]), tiers=None, seed=seed,
                      pipelines=rng.choice([1, 2]),
                      aggregation_capacity=rng.choice([None, 15.0, 40.0]))
    jobs = rng.choice([1, 1, 2])
    hosts = len(sc.hosts())
    per_job = max(2, min(8, (hosts - 2 * jobs) // jobs))
    place_jobs(sc, jobs=jobs, tasks_per_job=rng.choice([1, 2]) if jobs == 1 else 1,
               workers_per_job=per_job, seed=seed)
    for s in sc.switches():
        if s.programmable:
            s.max_fan_in = fan_in
    sc.touch()
    return sc


@pytest.fixture
def breaks():
    return rule_breaks


@pytest.fixture
def clos():
    return random_clos
