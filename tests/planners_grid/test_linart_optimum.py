"""L-InArt (InArt Alg. 1) reaches the optimum of Eq. (2).

Independent check: for a fixed split x, Eq. (2) becomes linear after a different substitution,
h = 1 / f (every constraint reads f * (linear in y, z) <= capacity, i.e. (linear in y, z) <=
capacity * h), so f(x) = 1 / min h is exact. A fine grid of splits then gives Eq. (2)'s optimum
up to the grid's resolution, and f(x) at L-InArt's own split must equal L-InArt's f*.
"""

from __future__ import annotations

import itertools
import random

import pulp
import pytest

from inaplanner.model import Host, Job, Link, Scenario, Switch
from inaplanner.planners.inart import l_inart_split
from inaplanner.planners.solver import new_variable  # PuLP's variable, per its version


def small_case(seed: int, n_ps: int) -> Scenario:
    rng = random.Random(seed)
    sc = Scenario(f"eq2-{seed}")
    n_sw = rng.randint(1, 3)
    switches = [f"V{i}" for i in range(n_sw)]
    for i, v in enumerate(switches):
        cap = rng.uniform(2.0, 12.0)
        sc.nodes.append(Switch(v, programmable=True, aggregation_capacity=cap,
                               aggregation_background=rng.uniform(0.0, 0.3) * cap))
        if i:
            sc.links.append(Link(switches[i - 1], v, 100.0, 90 + i, 90 + i))
    workers = [f"W{i}" for i in range(rng.randint(2, 5))]
    pss = [f"P{i}" for i in range(n_ps)]
    port = 0
    for h in workers + pss:
        port += 1
        sc.nodes.append(Host(h))
        cap = rng.uniform(2.0, 8.0) if h in pss else 100.0
        bg = rng.uniform(0.0, 0.4) * cap if h in pss else 0.0
        sc.links.append(Link(h, switches[0], cap, None, port, background=(0.0, bg)))
    sc.jobs.append(Job("job0", workers, pss))
    sc.touch()
    sc.validate()
    return sc


def f_of_split(sc: Scenario, x: dict[str, float]) -> float:
    """Eq. (2) for a fixed split, solved as min h (h = 1 / f) - no use of the planner's code."""
    job = sc.jobs[0]
    switches = [s for s in sc.switches() if s.programmable]
    prob = pulp.LpProblem("fixed", pulp.LpMinimize)
    h = new_variable(prob, "h", 0)
    prob += h
    load = {v.id: [] for v in switches}
    for si, s in enumerate(job.parameter_servers):
        z = {v.id: new_variable(prob, f"z_{si}_{v.id}", 0, 1) for v in switches}
        direct = []
        for wi in range(len(job.workers)):
            yd = new_variable(prob, f"yd_{si}_{wi}", 0, 1)
            yv = {v.id: new_variable(prob, f"yv_{si}_{wi}_{v.id}", 0, 1) for v in switches}
            prob += yd + pulp.lpSum(yv.values()) == 1
            for vid, y in yv.items():
                prob += y <= z[vid]
                load[vid].append(x[s] * y)
            direct.append(yd)
        lk = next(lk for lk in sc.links if s in (lk.a, lk.b))
        room = lk.capacity - lk.background_from(lk.other(s))
        prob += x[s] * (pulp.lpSum(direct) + pulp.lpSum(z.values())) <= room * h
    for v in switches:
        prob += pulp.lpSum(load[v.id]) <= (v.aggregation_capacity - v.aggregation_background) * h
    prob.solve(pulp.HiGHS(msg=False))
    return 1.0 / pulp.value(h)


def grid_of_splits(n: int, steps: int):
    for parts in itertools.product(range(steps + 1), repeat=n - 1):
        if sum(parts) <= steps:
            yield [p / steps for p in parts] + [(steps - sum(parts)) / steps]


@pytest.mark.parametrize("seed,n_ps,steps", [(1, 2, 100), (2, 2, 100), (3, 2, 100), (4, 3, 20), (5, 3, 20)])
def test_split_reaches_eq2_optimum(seed, n_ps, steps):
    sc = small_case(seed, n_ps)
    pss = sc.jobs[0].parameter_servers
    split, f_star = l_inart_split(sc, sc.jobs[0])
    assert sum(split.values()) == pytest.approx(1.0)
    assert f_of_split(sc, split) == pytest.approx(f_star, rel=1e-5)
    best_grid = max(f_of_split(sc, dict(zip(pss, xs, strict=True))) for xs in grid_of_splits(n_ps, steps))
    assert f_star >= best_grid * (1 - 1e-7)
    assert f_star == pytest.approx(best_grid, rel=1e-2)  # the grid is fine enough to come close
