"""Probing the pipelines next to each PS: refutations the LP relaxation misses (issue 13).

A joint check (:func:`~inaplanner.planners.aro.formulation.feasibility_model`: every rate fixed)
whose LP relaxation is feasible may still have no plan, and HiGHS can take minutes to prove it.
On the ARO paper's scaling setting (leaf-spine lambda = 3, five tasks at 50 Gbps, section IV-C)
the reason is the PS's own switch. Its link to the PS carries floor(b / r) flows, one per input
pipeline (INP, Eqs. 6-8) of the switch that aggregates the task, so at 50 Gbps at most two of
its pipelines can be used. Which ones decides which spines can deliver the task's flows: each
pipeline owns a quarter of the switch's ports. The relaxation spreads x over every pipeline
(0.12 / 0.42 / 0.45 on one task there) and so reaches every spine at once.

Probing settles those choices one at a time. x = 1 is forced on one such INP and the relaxation
solved again; if it is infeasible, no plan uses that pipeline at these rates, and x = 0 is fixed
in the model. Each fixing tightens the relaxation, which may then be infeasible itself: the check
is refuted. Two kinds of probe:

* **solo**: the task alone at its rate (:func:`solo_off`). The other tasks only take bandwidth
  away, so a pipeline the task cannot use alone it cannot use in any joint plan. The model is a
  fifth of the joint one or less, and the answer is kept on the task's graph per rate.
* **joint** (:func:`probe_pipelines`): the joint relaxation with the fixings so far. Candidates go
  in ascending order of their value in the last relaxation solved: the pipelines the relaxation
  uses least are the likeliest to be impossible. After a fixing the relaxation is solved again
  and the order follows its new values.

Fixings only ever remove what no plan at these rates can have, so every answer stays exact: a
refutation is a proof, and a MILP solved with the fixings has the same plans. They are monotone
in the rates (plans are downward closed): a pipeline impossible at r is impossible at every r'
>= r, so a solo answer at a lower rate is reused at a higher one.

Only a PS switch whose link takes fewer flows at the task's rate than the switch has pipelines is
probed (:func:`crowded_ps_side`), and not a pipeline that a worker's only way out keeps on.

Measured (CPU seconds, the 2-core machine of round 20; benchmarks/bench_scale.py's lambda = 3
instances, every task at 50 Gbps): seed 1, HiGHS' own search 140 s (round 6, presolve on);
solo probes alone refute it. Seed 2 and the 32-flow fan-in's seed 0 need joint probes: two and
three of them (16 and 30 s offline, 534 s for HiGHS on the fan-in's). In the planner, seeds 1
and 2 now end at 33.5 against a bound of 33.58 in 17 and 42 s, where they stopped at 50.25.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from inaplanner.model import Scenario
from inaplanner.planners.aro.formulation import TaskBlock, feasibility_model
from inaplanner.planners.aro.graph import TaskGraph, UNode, resource_capacity
from inaplanner.planners.aro.milp import Milp, MilpResult

#: ``relax(model)``: the model's LP relaxation, within the caller's clock and cancel.
Relax = Callable[[Milp], MilpResult]

#: An INP whose value in the relaxation is at least this is on already: forcing it changes nothing.
ON = 1.0 - 1e-6


def ps_side_inps(g: TaskGraph) -> list[int]:
    """Indices into ``g.inps`` of the input pipelines whose switch sends straight to the PS (the
    PS's own switch, when it aggregates the task)."""
    ps = ("ps", g.ps)
    feeds = {n[1] for n in g.inps if any(g.edges[k].head == ps for k in g.out_edges.get(("op", n[1]), ()))}
    return [i for i, n in enumerate(g.inps) if n[1] in feeds]


def crowded_ps_side(sc: Scenario, g: TaskGraph, r: float) -> list[int]:
    """The PS-side INPs (:func:`ps_side_inps`) of the switches whose link to the PS carries fewer
    flows at rate ``r`` than the switch has such pipelines: only there must some stay off, so
    only there can probing find one that no plan uses. At 25 Gbps a 100 Gbps PS link takes four
    aggregates, as many as four pipelines give: nothing to probe."""
    by_switch: dict[str, list[int]] = {}
    for i in ps_side_inps(g):
        by_switch.setdefault(g.inps[i][1], []).append(i)
    out: list[int] = []
    for s, idx in by_switch.items():
        room = resource_capacity(sc, ("link", s, g.ps))
        if r > 0 and math.floor(room / r + 1e-9) < len(idx):
            out.extend(i for i in idx if not _forced_on(g, g.inps[i]))
    return out


def _forced_on(g: TaskGraph, inp: UNode) -> bool:
    """Whether a worker's only way out enters ``inp`` (a worker under the PS's own switch, on
    its hosts' pipeline): then every plan has it on, and forcing it on tells nothing."""
    for k in g.in_edges.get(inp, ()):
        tail = g.edges[k].tail
        if tail[0] == "w" and len(g.out_edges.get(tail, ())) == 1:
            return True
    return False


@dataclass
class Probed:
    """What :func:`probe_pipelines` did: whether the check is refuted, the pipelines fixed off,
    the relaxations solved, and whether it stopped for time (a relaxation without an answer)."""

    refuted: bool = False
    fixed: int = 0
    solves: int = 0
    stopped: bool = False


def _infeasible(res: MilpResult) -> bool:
    return res.status == "infeasible"


def fix_off(m: Milp, blocks: list[TaskBlock], off: list[frozenset[UNode]]) -> int:
    """x = 0 in ``m`` for each task's INPs in ``off``; returns how many columns changed."""
    changed = 0
    for b, nodes in zip(blocks, off, strict=True):
        if not nodes:
            continue
        for n, c in zip(b.graph.inps, b.x, strict=True):
            if n in nodes and m.ub[c] > 0.0 and m.lb[c] <= 0.0:
                m.ub[c] = 0.0
                changed += 1
    return changed


def _below(p: tuple[float, ...], q: tuple[float, ...]) -> bool:
    return len(p) == len(q) and all(a <= b * (1 + 1e-12) for a, b in zip(p, q, strict=True))


def _solo_known(g: TaskGraph, r: float) -> set[UNode]:
    """The pipelines task ``g`` alone was found unable to use at rate ``r`` or a lower one."""
    off: set[UNode] = set()
    for k, v in g.memo.items():
        if k[0] == "solo" and k[1] <= r * (1 + 1e-12):
            off |= v[1]
    return off


def known_off(graphs: list[TaskGraph], rates: list[float]) -> list[frozenset[UNode]]:
    """Per task, the pipelines earlier probes found impossible at these rates or lower ones (a
    task's solo answers, and joint answers on this list of graphs): fixings are monotone."""
    key = tuple(id(g) for g in graphs)
    r = tuple(float(v) for v in rates)
    out = [_solo_known(g, r[i]) for i, g in enumerate(graphs)]
    for k, v in graphs[0].memo.items():
        if k[0] == "joint" and k[1] == key and _below(k[2], r):
            for i, nodes in enumerate(v):
                out[i] |= nodes
    return [frozenset(o) for o in out]


def remember_joint(graphs: list[TaskGraph], rates: list[float], off: list[frozenset[UNode]]) -> None:
    """Keep joint fixings for later checks of these graphs at these rates or higher ones."""
    if any(off):
        key = ("joint", tuple(id(g) for g in graphs), tuple(float(v) for v in rates))
        old = graphs[0].memo.get(key, tuple(frozenset() for _ in graphs))
        graphs[0].memo[key] = tuple(a | b for a, b in zip(old, off, strict=True))


def probe_pipelines(
    m: Milp, blocks: list[TaskBlock], values: np.ndarray, relax: Relax, time_left: Callable[[], float],
    check: Callable[[], None] | None = None, only: list[frozenset[UNode]] | None = None,
) -> tuple[Probed, list[frozenset[UNode]]]:
    """Joint probes on the PS-side INPs of every task (those in ``only``, per task, if given;
    module docstring). ``values`` is a solution of the relaxation of ``m`` as it stands. Fixings
    are made in ``m`` itself (column upper bounds set to 0), so a MILP solved on it afterwards
    has them; they are also returned, per task. Stops when the check is refuted, no candidate is
    left, or ``time_left()`` runs out."""
    out = Probed()
    owner = {b.x[i]: (t, b.graph.inps[i]) for t, b in enumerate(blocks) for i in ps_side_inps(b.graph)
             if only is None or b.graph.inps[i] in only[t]}
    off: list[set[UNode]] = [set() for _ in blocks]
    tried: set[int] = set()
    while time_left() > 0:
        if check is not None:
            check()
        open_ = [c for c in owner if c not in tried and m.ub[c] > 0.0 and m.lb[c] <= 0.0 and values[c] < ON]
        if not open_:
            break
        c = min(open_, key=lambda col: (values[col], col))
        tried.add(c)
        lb = m.lb[c]
        m.lb[c] = 1.0
        try:
            forced = relax(m)
        finally:
            m.lb[c] = lb
        out.solves += 1
        if not _infeasible(forced):
            if forced.values is None and forced.status != "optimal":
                out.stopped = True  # no answer within the time: nothing learnt
                break
            continue
        m.ub[c] = 0.0
        out.fixed += 1
        off[owner[c][0]].add(owner[c][1])
        again = relax(m)
        out.solves += 1
        if _infeasible(again):
            out.refuted = True
            break
        if again.values is None:
            out.stopped = True
            break
        values = again.values
        tried = set()  # the relaxation moved: a probe that passed before may fail now
    return out, [frozenset(o) for o in off]


def solo_off(
    sc: Scenario, g: TaskGraph, r: float, relax: Relax, time_left: Callable[[], float],
    check: Callable[[], None] | None = None, only: frozenset[UNode] | None = None,
) -> frozenset[UNode]:
    """The PS-side INPs (those in ``only``, if given) that task ``g`` cannot use at rate ``r``
    even alone (module docstring), as far as the time allows. Kept on the graph per rate
    (``g.memo``): what was tried and what failed; an answer at a lower rate holds here too."""
    entry = g.memo.get(("solo", r), (frozenset(), frozenset()))
    tried, off = set(entry[0]), _solo_known(g, r)
    todo = [i for i in ps_side_inps(g) if g.inps[i] not in tried and g.inps[i] not in off
            and (only is None or g.inps[i] in only)]
    if todo and time_left() > 0:
        m, (block,) = feasibility_model(sc, [g], [r], check=check)
        fix_off(m, [block], [frozenset(off)])
        for i in todo:
            if time_left() <= 0:
                break
            c = block.x[i]
            m.lb[c] = 1.0
            try:
                res = relax(m)
            finally:
                m.lb[c] = 0.0
            if _infeasible(res):
                off.add(g.inps[i])
                m.ub[c] = 0.0
            elif res.values is None and res.status != "optimal":
                break  # no answer within the time
            tried.add(g.inps[i])
        g.memo[("solo", r)] = (frozenset(tried), frozenset(off))
    return frozenset(off)


def solo_fixings(
    sc: Scenario, graphs: list[TaskGraph], rates: list[float], relax: Relax, time_left: Callable[[], float],
    check: Callable[[], None] | None = None, only: list[frozenset[UNode]] | None = None,
) -> list[frozenset[UNode]]:
    """:func:`solo_off` for every task (nothing for a task at rate 0)."""
    return [solo_off(sc, g, r, relax, time_left, check, None if only is None else only[i])
            if r > 0 and math.isfinite(r) else frozenset()
            for i, (g, r) in enumerate(zip(graphs, rates, strict=True))]


def fix_known(
    sc: Scenario, graphs: list[TaskGraph], rates: list[float], m: Milp, blocks: list[TaskBlock], relax: Relax,
    time_left: Callable[[], float], check: Callable[[], None] | None = None,
) -> int:
    """Before a check's relaxation is solved: x = 0 in ``m`` for the pipelines earlier checks found
    impossible at these rates or lower ones, and, with several tasks, for what solo probes of each
    task alone find on its crowded PS switch (:func:`crowded_ps_side`; cheap, and kept). The
    relaxation is then solved once, with them. Returns how many columns were fixed."""
    known = known_off(graphs, rates)
    if len(graphs) > 1:
        only = [frozenset(g.inps[i] for i in crowded_ps_side(sc, g, r)) for g, r in zip(graphs, rates, strict=True)]
        if any(only):
            solo = solo_fixings(sc, graphs, rates, relax, time_left, check, only=only)
            known = [a | b for a, b in zip(known, solo, strict=True)]
    return fix_off(m, blocks, known)


def probe_check(
    sc: Scenario, graphs: list[TaskGraph], rates: list[float], m: Milp, blocks: list[TaskBlock],
    values: np.ndarray, relax: Relax, time_left: Callable[[], float], check: Callable[[], None] | None = None,
) -> bool:
    """Joint probes (:func:`probe_pipelines`) of a check whose relaxation, with the fixings of
    :func:`fix_known`, is feasible (solution ``values``); True when refuted. Candidates: the
    PS-side INPs of crowded PS switches not already on in the relaxation. The fixings stay in
    ``m`` and are remembered on the graphs; a task alone keeps its answers as solo ones, so the
    joint checks that follow start from them."""
    only = [frozenset(g.inps[i] for i in crowded_ps_side(sc, g, r) if values[b.x[i]] < ON)
            for g, r, b in zip(graphs, rates, blocks, strict=True)]
    if not any(only):
        return False
    found, off = probe_pipelines(m, blocks, values, relax, time_left, check, only=only)
    if len(graphs) == 1:
        (g,), (r,) = graphs, rates
        entry = g.memo.get(("solo", r), (frozenset(), frozenset()))
        tried = only[0] if not found.stopped else frozenset()
        g.memo[("solo", r)] = (entry[0] | tried, entry[1] | off[0])
    else:
        remember_joint(graphs, rates, off)
    return found.refuted
