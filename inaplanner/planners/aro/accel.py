"""ARO's search-space pruning (section III-C): SRO and APP. (QSR lives in ``formulation``.)

*Alternative aggregators* (AAs) of a task are programmable switches that are interchangeable
choices for its flows: here, aggregators at the same distance from the PS with the same set of
predecessors in the task's DAG (all programmable spines of a leaf-spine; per pod the programmable
aggregation switches, and per core plane the programmable cores, of a fat-tree). An AA group needs
at least two members to be prunable; a switch that is the only choice is never pruned.

* SRO — stage 1 solves the model without the non-programmable switches above the leaves (where
  removing them leaves every worker a path); AAs whose INPs all stay unused (x = 0) are then
  removed, with their paths, for stage 2, which starts from stage 1's solution (its rate is a
  lower bound).
* APP — per task and AA group keep ``max(1, floor(alpha * n))`` of the n AAs: those whose INPs'
  scores (the most flows that may enter them, Fig. 6) have the least variance, popped in round
  robin from one list shared by all tasks so tasks spread over different AAs. The paper writes
  floor(alpha * n); keeping at least one avoids deleting a group's only programmable choice.

Checked against section III-C (issue 17 item 5): SRO removes exactly the INA-agnostic switches
above the leaves in stage 1 and, in stage 2, the aggregators whose INPs stage 1 left unused (x = 0),
starting from stage 1's plan; APP's score is the most flows an INP may receive (Fig. 6), its
variance the sum of squared deviations (Fig. 6: 8 and 2), and the shared list is popped least
variance first and re-initialised when empty or exhausted for the current task, as written. What
differs from Table II / Fig. 11 is the outcome, measured on ``benchmarks/bench_aro.py``'s settings
(seeds 0 and 1, 30 s CPU): SJST loses 25 % on seed 0 (33.3 -> 25.0 Gbps; APP alone, with all five
programmable spines equally scored it keeps the first three) and 0 % on seed 1; SJMT-2 0 % on both;
MJMT-2 25 % on seed 0 (APP alone; SRO alone is lossless) and 0 % on seed 1. No time is saved:
ARO's exact search takes 0.3-2.7 CPU s there and SRO's first stage is an extra solve (aro-acc
0.3-5.0 s). The paper's ~90 % saving is for Gurobi on the full MIQP, which ARO does not solve.
"""

from __future__ import annotations

import math

from inaplanner.model import Scenario
from inaplanner.planners.aro.formulation import Flows
from inaplanner.planners.aro.graph import TaskGraph, build_task_graph, inp_scores


def aa_groups(g: TaskGraph) -> list[list[str]]:
    """Groups (of two or more) of interchangeable aggregators of the task."""
    pred = g.dag.pred()
    groups: dict[tuple, list[str]] = {}
    for s in g.dag.nodes():
        if s in g.aggregators:
            groups.setdefault((g.dag.dist[s], frozenset(pred[s])), []).append(s)
    return [members for members in groups.values() if len(members) > 1]


def rebuild(sc: Scenario, g: TaskGraph, removed: set[str]) -> TaskGraph | None:
    """The task graph without ``removed`` switches and their paths (None if a worker is cut off)."""
    if not removed:
        return g
    dag = g.dag.without(removed)
    if dag is None:
        return None
    return build_task_graph(sc, g.task, g.workers, dag)


def sro_stage1(sc: Scenario, g: TaskGraph) -> TaskGraph:
    """Stage 1 graph: the non-programmable switches above the leaf tier removed (when possible)."""
    if not sc.is_tiered():
        return g
    drop = {n for n in g.dag.nodes() if sc.is_switch(n) and n not in g.aggregators and sc.rank(n) >= 2}
    return rebuild(sc, g, drop) or g


def sro_unused(g1: TaskGraph, flows: Flows) -> set[str]:
    """AAs of stage 1 that aggregate nothing: all their INPs have x = 0."""
    unused = set()
    for group in aa_groups(g1):
        for s in group:
            if not any(flows.x.get(n, 0) for n in g1.inps_of(s)):
                unused.add(s)
    return unused


def variance(values: list[float]) -> float:
    """Sum of squared deviations from the mean (ARO Fig. 6: scores 5, 1 give 8)."""
    if not values:
        return 0.0
    mean = sum(values) / len(values)
    return float(sum((v - mean) ** 2 for v in values))


def app_prune(graphs: list[TaskGraph], alpha: float) -> list[set[str]]:
    """Per task, the AAs APP removes."""
    all_aas = sorted({s for g in graphs for grp in aa_groups(g) for s in grp})
    pool = list(all_aas)
    removed: list[set[str]] = []
    for g in graphs:
        scores = inp_scores(g)
        var = {s: variance([float(scores[n]) for n in g.inps_of(s)]) for s in g.aggregators}
        drop: set[str] = set()
        for group in aa_groups(g):
            keep_n = max(1, math.floor(alpha * len(group)))
            chosen: list[str] = []
            while len(chosen) < keep_n:
                options = [s for s in pool if s in group and s not in chosen]
                if not options:
                    pool = list(all_aas)  # re-initialise the shared list
                    options = [s for s in pool if s in group and s not in chosen]
                best = min(options, key=lambda s: (var[s], all_aas.index(s)))
                pool.remove(best)
                chosen.append(best)
            drop.update(s for s in group if s not in chosen)
        removed.append(drop)
    return removed
