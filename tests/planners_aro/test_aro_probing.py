"""Probing the pipelines next to each PS (issue 13): a pipeline forced on whose relaxation is
infeasible is fixed off. Every fixing is sound (the MILP with that pipeline forced on has no
solution), a refutation is one (the MILP agrees), fixings carry only to higher rates, and the
planner's checks use them: on a leaf-spine whose PS leaf splits the spines over two pipelines,
the relaxation is feasible at a rate no plan reaches, and probing refutes it."""

from __future__ import annotations

import itertools

import pytest

from inaplanner.errors import Cancelled
from inaplanner.model import Job
from inaplanner.planners import CancelToken, get, run_planner
from inaplanner.planners.aro.formulation import feasibility_model
from inaplanner.planners.aro.graph import task_graphs
from inaplanner.planners.aro.planner import _Clock, rate_candidates
from inaplanner.planners.aro.probing import (
    crowded_ps_side,
    fix_known,
    fix_off,
    known_off,
    probe_check,
    probe_pipelines,
    ps_side_inps,
    remember_joint,
    solo_fixings,
)
from inaplanner.topologies import leaf_spine

#: Three cases on a 4 x 4 leaf-spine (hosts H1-H4 under L1, H5-H8 under L2 ...): link capacities
#: (Gbps; each link once: (a, b, capacity)), the switches that aggregate besides the PS leaf (with
#: their pipelines), the workers, the PSs (one job).
CASES = {
    "one task": ([
        ("H1", "L1", 2), ("H2", "L1", 2), ("H3", "L1", 3), ("H4", "L1", 2),
        ("L1", "S1", 2), ("L1", "S2", 1), ("L1", "S3", 2), ("L1", "S4", 3),
        ("H5", "L2", 2), ("H6", "L2", 3), ("H7", "L2", 1), ("H8", "L2", 1),
        ("L2", "S1", 2), ("L2", "S2", 2), ("L2", "S3", 2), ("L2", "S4", 1),
        ("H9", "L3", 2), ("H10", "L3", 1), ("H11", "L3", 1), ("H12", "L3", 3),
        ("L3", "S1", 1), ("L3", "S2", 3), ("L3", "S3", 1), ("L3", "S4", 2),
        ("H13", "L4", 2), ("H14", "L4", 3), ("H15", "L4", 2), ("H16", "L4", 2),
        ("L4", "S1", 3), ("L4", "S2", 2), ("L4", "S3", 2), ("L4", "S4", 2),
    ], {"S1": 2, "S3": 1}, ["H16", "H8", "H2", "H6", "H12", "H5", "H11", "H3", "H7", "H4"], ["H1"]),
    "two tasks": ([
        ("H1", "L1", 2), ("H2", "L1", 2), ("H3", "L1", 2), ("H4", "L1", 2),
        ("L1", "S1", 3), ("L1", "S2", 2), ("L1", "S3", 3), ("L1", "S4", 1),
        ("H5", "L2", 2), ("H6", "L2", 2), ("H7", "L2", 3), ("H8", "L2", 1),
        ("L2", "S1", 2), ("L2", "S2", 2), ("L2", "S3", 3), ("L2", "S4", 1),
        ("H9", "L3", 2), ("H10", "L3", 3), ("H11", "L3", 3), ("H12", "L3", 3),
        ("L3", "S1", 3), ("L3", "S2", 1), ("L3", "S3", 2), ("L3", "S4", 3),
        ("H13", "L4", 2), ("H14", "L4", 2), ("H15", "L4", 3), ("H16", "L4", 3),
        ("L4", "S1", 3), ("L4", "S2", 2), ("L4", "S3", 2), ("L4", "S4", 2),
    ], {"S1": 1, "S3": 1}, ["H16", "H11", "H3", "H13", "H15", "H9", "H12", "H6"], ["H1", "H2"]),
    # where a joint probe fixes a pipeline the solo probes leave open (at 0.667 and 1.0 Gbps)
    "joint": ([
        ("H1", "L1", 3), ("H2", "L1", 2), ("H3", "L1", 2), ("H4", "L1", 2),
        ("L1", "S1", 2), ("L1", "S2", 1), ("L1", "S3", 2), ("L1", "S4", 2),
        ("H5", "L2", 3), ("H6", "L2", 2), ("H7", "L2", 2), ("H8", "L2", 3),
        ("L2", "S1", 2), ("L2", "S2", 2), ("L2", "S3", 2), ("L2", "S4", 2),
        ("H9", "L3", 2), ("H10", "L3", 2), ("H11", "L3", 2), ("H12", "L3", 2),
        ("L3", "S1", 3), ("L3", "S2", 2), ("L3", "S3", 1), ("L3", "S4", 2),
        ("H13", "L4", 1), ("H14", "L4", 2), ("H15", "L4", 3), ("H16", "L4", 2),
        ("L4", "S1", 2), ("L4", "S2", 2), ("L4", "S3", 2), ("L4", "S4", 1),
    ], {"L4": 1, "S1": 1, "S3": 2}, ["H16", "H15", "H7", "H10", "H6", "H4", "H14", "H8", "H5"], ["H1", "H2"]),
}


def split_leaf(case: str = "one task"):
    """A 4 x 4 leaf-spine whose PS leaf L1 takes its hosts on pipeline 0, spines S1-S2 on
    pipeline 1 and S3-S4 on pipeline 2 (the lambda = 3 setting's PS leaf in small): a local
    worker keeps pipeline 0 on, so a PS link of two flows leaves room for one spine pipeline
    only. ``case`` names the capacities, aggregators and job (``CASES``)."""
    links, aggregators, workers, pss = CASES[case]
    sc = leaf_spine(4, 4, 4)
    caps = {frozenset((a, b)): float(c) for a, b, c in links}
    for lk in sc.links:
        lk.capacity = caps[frozenset((lk.a, lk.b))]
    l1 = sc.node("L1")
    l1.programmable, l1.pipelines = True, 3
    l1.port_pipeline = {1: 0, 2: 0, 3: 0, 4: 0, 5: 1, 6: 1, 7: 2, 8: 2}
    for sw, pipes in aggregators.items():
        node = sc.node(sw)
        node.programmable, node.pipelines = True, pipes
    sc.jobs.append(Job("job0", list(workers), list(pss)))
    sc.touch()
    sc.validate()
    return sc


def relax(m):
    return m.solve(relax=True, presolve=False, ipm=True)


def refuted(sc, graphs, rates):
    """Probing as the planner runs it, from scratch: what is known and the solo probes fixed
    first, the relaxation, then the joint probes. Returns what refuted the check (or "open"),
    and the model with its fixings."""
    for g in graphs:
        g.memo.clear()
    m, blocks = feasibility_model(sc, graphs, rates)
    if relax(m).status == "infeasible":
        return "relaxation", m, blocks
    fix_known(sc, graphs, rates, m, blocks, relax, lambda: 60.0)
    lp = relax(m)
    if lp.status == "infeasible":
        return "solo", m, blocks
    if probe_check(sc, graphs, rates, m, blocks, lp.values, relax, lambda: 60.0):
        return "joint", m, blocks
    return "open", m, blocks


def test_the_ps_side_pipelines_are_those_of_the_ps_switch():
    sc = split_leaf()
    (g,) = task_graphs(sc)
    assert sorted(g.inps[i] for i in ps_side_inps(g)) == [("inp", "L1", 0), ("inp", "L1", 1), ("inp", "L1", 2)]


def test_only_pipelines_a_crowded_ps_link_may_leave_off_are_probed():
    """L1's link to the PS carries 2 Gbps: at 0.75 Gbps two flows for three pipelines, so some
    pipeline stays off; pipeline 0 is the only way out of a worker under L1, so it is always
    on and not probed. At 0.5 Gbps the link takes four flows: nothing to probe."""
    sc = split_leaf()
    (g,) = task_graphs(sc)
    assert sorted(g.inps[i] for i in crowded_ps_side(sc, g, 0.75)) == [("inp", "L1", 1), ("inp", "L1", 2)]
    assert crowded_ps_side(sc, g, 0.5) == []


def test_probing_refutes_a_rate_the_relaxation_admits():
    """At 0.75 Gbps the PS link takes two flows: pipeline 0 (the local worker) and one spine
    pipeline. The relaxation switches the spine pipelines partly on and reaches every spine;
    forcing the one it uses least on is infeasible, and with it off the relaxation is too: the
    check is refuted, and the pipeline kept as impossible. The MILP agrees; at the optimum
    below it nothing is refuted, and the MILP with the fixings still finds the plan."""
    sc = split_leaf()
    graphs = task_graphs(sc)
    m, _ = feasibility_model(sc, graphs, [0.75])
    assert relax(m).status != "infeasible"
    assert m.solve().status == "infeasible"
    how, _, _ = refuted(sc, graphs, [0.75])
    assert how == "joint"  # a task alone: its own probes are the joint ones
    off = graphs[0].memo[("solo", 0.75)][1]
    assert off and off <= {("inp", "L1", 1), ("inp", "L1", 2)}
    best = run_planner(get("aro"), sc, {"time_limit": 30})
    assert best.tasks[0].rate < 0.75
    how, m, _ = refuted(sc, graphs, [best.tasks[0].rate])
    assert how == "open"
    assert m.solve().status == "optimal"  # the fixings keep the plan


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_pipeline_probing_fixes_off_is_impossible(case):
    """Soundness on every rate vector of the top candidates: a pipeline fixed off (solo or
    joint) cannot be on in any plan at those rates (the MILP with it forced on is infeasible),
    and a refuted check has no plan (the MILP says infeasible)."""
    sc = split_leaf(case)
    graphs = task_graphs(sc)
    cands = [rate_candidates(sc, g)[-6:] for g in graphs]
    fixed = refutations = 0
    for rates in itertools.product(*cands):
        rates = list(rates)
        how, m, blocks = refuted(sc, graphs, rates)
        if how == "relaxation":
            continue
        plain, plain_blocks = feasibility_model(sc, graphs, rates)
        if how in ("solo", "joint"):
            refutations += 1
            assert plain.solve().status == "infeasible", rates
            continue
        for b, pb in zip(blocks, plain_blocks, strict=True):
            for c, pc in zip(b.x, pb.x, strict=True):
                if m.ub[c] == 0.0 and plain.ub[pc] > 0.0:
                    fixed += 1
                    lb = plain.lb[pc]
                    plain.lb[pc] = 1.0
                    assert plain.solve().status == "infeasible", (rates, b.graph.inps[b.x.index(c)])
                    plain.lb[pc] = lb
    assert refutations + fixed > 0  # the cases exercise probing at all


def test_a_joint_probe_fixes_what_the_tasks_alone_leave_open():
    """Two tasks at (0.667, 1.0): with what each task alone cannot use fixed off, the joint
    relaxation is feasible, and forcing one more pipeline on is not: a fixing the solo probes
    miss. It is kept for later checks at these rates or higher ones."""
    sc = split_leaf("joint")
    graphs = task_graphs(sc)
    rates = [2 / 3, 1.0]
    m, blocks = feasibility_model(sc, graphs, rates)
    solo = solo_fixings(sc, graphs, rates, relax, lambda: 60.0)
    fix_off(m, blocks, solo)
    lp = relax(m)
    assert lp.status != "infeasible"
    found, off = probe_pipelines(m, blocks, lp.values, relax, lambda: 60.0)
    assert found.fixed == sum(len(o) for o in off) >= 1 and not found.refuted
    assert not any(a & b for a, b in zip(off, solo, strict=True))
    remember_joint(graphs, rates, off)
    assert known_off(graphs, [2 / 3, 1.5]) == [a | b for a, b in zip(off, solo, strict=True)]


def test_fixings_carry_to_higher_rates_only():
    sc = split_leaf("two tasks")
    graphs = task_graphs(sc)
    off = [frozenset({("inp", "L1", 1)}), frozenset()]
    remember_joint(graphs, [0.5, 0.5], off)
    assert known_off(graphs, [0.5, 0.75]) == off
    assert known_off(graphs, [0.5, 0.25]) == [frozenset(), frozenset()]
    assert known_off(list(reversed(graphs)), [0.5, 0.5]) == [frozenset(), frozenset()]  # another model
    graphs[1].memo[("solo", 0.75)] = (frozenset(), frozenset({("inp", "L1", 2)}))
    assert known_off(graphs, [0.5, 1.0])[1] == frozenset({("inp", "L1", 2)})
    assert known_off(graphs, [0.5, 0.5])[1] == frozenset()


def test_the_planners_joint_checks_probe_and_remember():
    """ARO's joint check of both tasks at 1 Gbps on the two-task split leaf: the relaxation
    admits it, probing refutes it, and what the probes found is kept on the graphs for later
    checks at those rates or higher ones (not lower)."""
    sc = split_leaf("two tasks")
    graphs = task_graphs(sc)
    m, _ = feasibility_model(sc, graphs, [1.0, 1.0])
    assert relax(m).status != "infeasible"
    status, flows = get("aro")._feasible(sc, graphs, [1.0, 1.0], _Clock(30), CancelToken())
    assert (status, flows) == ("infeasible", None)
    assert any(known_off(graphs, [1.0, 1.0]))
    assert any(known_off(graphs, [1.5, 1.0]))
    assert not any(known_off(graphs, [0.5, 0.5]))


def test_probing_stops_when_its_time_is_up_or_cancel_fires():
    """No probe once the time is up, and a cancel raises out of the probes (the planner's
    token checks between them, and HiGHS is interrupted inside one)."""
    sc = split_leaf("two tasks")
    graphs = task_graphs(sc)
    m, blocks = feasibility_model(sc, graphs, [1.0, 1.0])
    values = relax(m).values
    found, off = probe_pipelines(m, blocks, values, relax, lambda: 0.0)
    assert found.solves == 0 and not any(off)
    assert not any(solo_fixings(sc, graphs, [1.0, 1.0], relax, lambda: 0.0))
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        probe_pipelines(m, blocks, values, relax, lambda: 60.0, token.check)
    with pytest.raises(Cancelled):
        solo_fixings(sc, graphs, [1.0, 1.0], relax, lambda: 60.0, token.check)



def test_a_check_left_undecided_before_gives_its_joint_probes_all_of_its_time(monkeypatch):
    """The joint probes of a first check get at most ``PROBE_SHARE`` of what the check has left;
    those of a check left undecided before get all of it: its plan side has had its try, and on
    the lambda = 3 setting with the 32-flow fan-in the last relaxation of the probes that refute
    it was cut short. The check is the joint case's (0.667, 1.0), where the joint relaxation
    admits the rates once the solo fixings are in; both checks give the same verdict."""
    from inaplanner.planners.aro import planner as aro

    seen: list[float] = []
    real = aro.probe_check

    def watched(sc, graphs, rates, m, blocks, values, relax, time_left, check=None):  # noqa: ANN001, ANN202
        seen.append(time_left())
        return real(sc, graphs, rates, m, blocks, values, relax, time_left, check)

    monkeypatch.setattr(aro, "probe_check", watched)
    sc = split_leaf("joint")
    rates = [2 / 3, 1.0]
    planner = get("aro")
    verdicts = []
    for again in (False, True):
        graphs = task_graphs(sc)
        if again:  # how the planner marks a check it left undecided
            graphs[0].memo[aro._undecided_key(graphs, rates)] = ()
        status, _ = planner._feasible(sc, graphs, rates, _Clock(40), CancelToken(), heuristics=False,
                                      greedy=False, share=0.5)
        verdicts.append(status)
    assert verdicts[0] == verdicts[1] != "timeout"
    budget = 0.5 * 40  # the check's share of the clock
    first, retried = seen
    assert first <= aro.PROBE_SHARE * budget + 1e-6
    assert retried > aro.PROBE_SHARE * budget + 0.5 * (1 - aro.PROBE_SHARE) * budget
