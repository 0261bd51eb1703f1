"""The GRID/InArt baselines at scale: LBMM's min-min scores only the flows a step changed and
stops at the limit; the target search never starts a step it cannot finish."""

from __future__ import annotations

import numpy as np
import pytest

from inaplanner.planners import get, run_planner
from inaplanner.planners.deadline import Deadline
from inaplanner.planners.ina_baselines import min_min
from inaplanner.progress import CancelToken, Progress
from inaplanner.topologies import fat_tree, mark_programmable, place_jobs


def _brute_min_min(idx, valid, size, room, dummy):
    """Every remaining flow scored afresh at every step, as LBMM is defined."""
    F = idx.shape[0]
    load = np.zeros(room.shape[0])
    chosen = np.full(F, -1)
    for _ in range(F):
        util = ((load[idx] + size[:, None, None]) / room[idx]).max(axis=2)
        util[~valid] = np.inf
        best = util.argmin(axis=1)
        val = util[np.arange(F), best]
        val[chosen >= 0] = np.inf
        fi = int(val.argmin())
        chosen[fi] = best[fi]
        load[idx[fi, best[fi]]] += size[fi]
        load[dummy] = 0.0
    return chosen


@pytest.mark.parametrize("seed", range(25))
def test_min_min_places_the_flows_of_the_full_rescoring(seed):
    rng = np.random.default_rng(seed)
    links = int(rng.integers(3, 12))
    F, P, L = int(rng.integers(1, 30)), int(rng.integers(1, 5)), int(rng.integers(1, 4))
    dummy = links
    idx = np.where(rng.random((F, P, L)) < 0.25, dummy, rng.integers(0, links, (F, P, L)))
    valid = rng.random((F, P)) < 0.8
    valid[:, 0] = True
    size = rng.choice([0.5, 1.0, 2.0], F)  # few distinct sizes and rooms: many ties
    room = np.append(rng.choice([1.0, 2.0, 4.0], links), np.inf)
    got, cut = min_min(idx, valid, size, room, dummy, CancelToken(), Progress())
    assert cut == "" and got.tolist() == _brute_min_min(idx, valid, size, room, dummy).tolist()


def test_min_min_at_its_limit_places_every_flow_and_says_where_it_stopped():
    rng = np.random.default_rng(7)
    F = 300
    idx = rng.integers(0, 20, (F, 3, 3))
    valid = np.ones((F, 3), dtype=bool)
    got, cut = min_min(idx, valid, np.ones(F), np.append(np.full(20, 50.0), np.inf), 20,
                       CancelToken(), Progress(), Deadline(0.0))
    assert (got >= 0).all() and cut.startswith("the time limit stopped the min-min order after 0 of 300")


@pytest.mark.parametrize("name", ["lbmm", "atp", "geryon"])
def test_a_baseline_cut_by_its_limit_says_so(name):
    """A 0.1 s limit on fat-tree k=16 (800 flows): a plan of every worker, status timeout and the
    reason; on k=8 with no limit in reach, status heuristic and no reason."""
    def instance(k: int, workers: int):
        sc = fat_tree(k)
        mark_programmable(sc, 0.5, pipelines=2, seed=1)
        place_jobs(sc, 2, 2, workers, seed=1)
        return sc

    plan = run_planner(get(name), instance(16, 200), {"time_limit": 0.1, "limit_kind": "wall"})
    assert sum(len(t.routes) for t in plan.tasks) == 800
    assert plan.planner.status == "timeout"
    assert plan.planner.params["stopped"].startswith("the time limit stopped")
    free = run_planner(get(name), instance(8, 50), {})
    assert free.planner.status == "heuristic" and "stopped" not in free.planner.params
