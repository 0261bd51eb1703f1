"""Farkas certificates and warm bases carried from one LP relaxation to the next (issue 13): a
kept certificate refutes a model only when its inequality holds on that model's own numbers, so
the relaxation path with memory gives the verdict interior point gives from scratch, at every
point of a grid, while most refuted points need no LP of their own."""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest

from inaplanner.planners import CancelToken
from inaplanner.planners.aro.certificates import Relaxations, farkas_refutes
from inaplanner.planners.aro.formulation import (
    FeasibilityShape,
    add_task_block,
    feasibility_model,
    feasibility_shape,
    resource_usage,
    tight_bounds,
)
from inaplanner.planners.aro.graph import resource_capacity, task_graphs
from inaplanner.planners.aro.milp import INF, LpWarm, Milp
from inaplanner.planners.aro.planner import _Clock, _relaxation, rate_candidates

from .conftest import small_leaf_spine
from .test_aro_probing import split_leaf


def box(target: float) -> Milp:
    """x, y in [0, 1] with x + y >= target: empty exactly when target > 2."""
    m = Milp()
    x = m.var(0.0, 1.0)
    y = m.var(0.0, 1.0)
    m.row([x, y], [1.0, 1.0], target)
    return m


def test_a_certificate_refutes_exactly_the_models_it_proves_empty():
    lam = np.array([-1.0])  # -(x + y) <= -target, while -(x + y) >= -2 on the box
    assert farkas_refutes(box(2.5), lam)
    assert not farkas_refutes(box(1.9), lam)
    assert not farkas_refutes(box(2.0), lam)  # touching is a solution
    assert not farkas_refutes(box(2.5), -lam)  # the wrong sign proves nothing
    assert not farkas_refutes(box(2.5), np.array([-1.0, 0.0]))  # another model's shape
    # within HiGHS' tolerance of a solution: not refuted either
    assert not farkas_refutes(box(2.0 + 1e-9), lam)


def test_a_simplex_solve_leaves_its_basis_and_the_ray_of_an_infeasible_model():
    warm = LpWarm()
    assert box(2.5).solve(relax=True, presolve=False, warm=warm).status == "infeasible"
    assert warm.basis is not None and warm.ray is not None
    assert farkas_refutes(box(2.5), warm.ray) or farkas_refutes(box(2.5), -warm.ray)
    assert box(1.5).solve(relax=True, presolve=False, warm=warm).status == "optimal"
    assert warm.ray is None


def test_the_relaxation_with_memory_gives_interior_points_verdict_on_every_point_of_a_grid():
    """Two tasks on the split-leaf leaf-spine, every pair of the rates at which one of their
    resources is exactly full: the verdict of the relaxation with certificates and warm bases
    is the one interior point gives from scratch, and most refuted points reuse a
    certificate (the grid is walked in order, so neighbours follow each other)."""
    sc = split_leaf("two tasks")
    graphs = task_graphs(sc)
    grids = [rate_candidates(sc, g)[:12] for g in graphs]
    memory = Relaxations()
    clock, cancel = _Clock(120), CancelToken()
    verdicts = {"infeasible": 0, "other": 0}
    for rates in itertools.product(*grids):
        m, _ = feasibility_model(sc, graphs, list(rates))
        cold = m.solve(relax=True, presolve=False, ipm=True).status
        got = _relaxation(m, clock, cancel, memory).status
        assert (got == "infeasible") == (cold == "infeasible"), rates
        verdicts["infeasible" if cold == "infeasible" else "other"] += 1
    assert verdicts["infeasible"] >= 20 and verdicts["other"] >= 20
    assert memory.reused > verdicts["infeasible"] / 2
    assert memory.solved == len(list(itertools.product(*grids))) - memory.reused


def from_scratch(sc, graphs, rates, left=None):
    """The joint feasibility model built directly, column by column and row by row (the
    definition :class:`FeasibilityShape` must reproduce number for number)."""
    left = left or {}

    def cap_of(res):
        return max(left[res], 0.0) if res in left else resource_capacity(sc, res)

    m = Milp()
    blocks = []
    for g, r in zip(graphs, rates, strict=True):
        limit = [math.inf] * len(g.edges)
        for k, e in enumerate(g.edges):
            for res in e.resources:
                limit[k] = min(limit[k], math.floor(cap_of(res) / r + 1e-9) if r > 0 else math.inf)
        blocks.append(add_task_block(m, g, ub=tight_bounds(g, limit)))
    for res, per_task in resource_usage(blocks).items():
        cap = cap_of(res)
        idx, val = [], []
        for i, ks in per_task.items():
            idx.extend(blocks[i].y[k] for k in ks)
            val.extend([float(rates[i])] * len(ks))
        if len(per_task) == 1:
            (i,) = per_task
            m.row(idx, [1.0] * len(idx), -INF, float(math.floor(cap / rates[i] + 1e-9)) if rates[i] > 0 else INF)
        else:
            m.row(idx, val, -INF, cap * (1 + 1e-12))
    return m


@pytest.mark.parametrize("seed", range(4))
def test_the_kept_shape_gives_the_model_built_from_scratch_number_for_number(seed):
    """Random small leaf-spines with capacity-limited switches and a fan-in limit of 2 (so
    bypass copies and big-M rows bounded by the fan-in), two jobs of two tasks: at random rates
    (one at 0), with and without capacities overridden, the model from the kept shape is the
    one built from scratch, and so is the model a shape used once gives away; the shape is
    built once per list of graphs."""
    sc = small_leaf_spine(seed, leaves=4, spines=2, hosts=3, jobs=2, tasks=2, workers=4, agg_capacity=(2.0, 4.0))
    for sw in sc.switches():
        sw.max_fan_in = 2
    sc.touch()
    graphs = task_graphs(sc)
    rng = random.Random(seed)
    resources = sorted({res for g in graphs for e in g.edges for res in e.resources})
    for trial in range(6):
        rates = [rng.choice([0.0, 0.25, 1 / 3, 0.5, 0.7, 1.0, 2.0]) for _ in graphs]
        left = {res: rng.uniform(-0.5, 2.0) for res in rng.sample(resources, 5)} if trial % 2 else None
        got, blocks = feasibility_model(sc, graphs, rates, left)
        given, _ = FeasibilityShape(sc, graphs).model(rates, left, give=True)  # a shape used once
        want = from_scratch(sc, graphs, rates, left)
        for name in ("lb", "ub", "cost", "integer", "row_lo", "row_hi", "row_start", "row_idx", "row_val"):
            assert getattr(got, name) == getattr(want, name) == getattr(given, name), (name, rates, left)
        assert [b.graph for b in blocks] == graphs
    assert feasibility_shape(sc, graphs) is feasibility_shape(sc, graphs)
    assert feasibility_shape(sc, graphs[:2]) is not feasibility_shape(sc, graphs)
