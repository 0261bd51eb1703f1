"""ARO's greedy (greedy.py) routes exactly as its first, recursive search did, kept below verbatim
as :func:`reference_route_task` (with :func:`reference_greedy_flows` and :func:`reference_route_one`
around it): the same Flows (``y`` and ``x``, with the order of their keys), the same None cases,
the same bandwidth left and the same cancel checks, on fat-trees and leaf-spines with several
programmable shares and pipelines, small fan-in limits, finite aggregation capacities (bypasses),
link background, blocked edges and rates from easy to impossible. The greedy keeps and drops its
search's values differently now; the reference's way is also run with KEEP_VALUES off."""

from __future__ import annotations

import math
import random

import pytest

from inaplanner.errors import Cancelled
from inaplanner.model import Scenario
from inaplanner.planners.aro import greedy as G
from inaplanner.planners.aro.formulation import Flows
from inaplanner.planners.aro.graph import TaskGraph, UNode, resource_capacity, task_graphs
from inaplanner.planners.aro.greedy import (
    _options,
    _route_task,
    greedy_flows,
    last_hop_options,
    route_one,
)
from inaplanner.planners.aro.rates import structural_bound
from inaplanner.planners.solver import CancelToken
from inaplanner.topologies import (
    fat_tree,
    leaf_spine,
    mark_programmable,
    place_jobs,
    set_max_fan_in,
)

KEEP_VALUES = True  # the reference's switch (greedy.KEEP_VALUES for the new code)


# ---- the reference: greedy.py's search before it was made faster, verbatim (renamed) -------------

def reference_greedy_flows(
    sc: Scenario, graphs: list[TaskGraph], rates: list[float], cancel: CancelToken | None = None
) -> list[Flows] | None:
    """Per-task flows meeting ``rates`` on every resource, or None when the greedy gets stuck.

    Tasks go one after the other (a task that gets stuck is moved to the front and all are
    routed again, at most once per task). When the PS's last switch aggregates and its link to the PS
    admits fewer flows than there are ingress pipelines facing the fabric, which pipelines to
    feed is a global choice the hop-by-hop greedy makes badly; the task is then tried with each
    admissible set of those pipelines (first the ones behind the most programmable switches that
    earlier tasks left room to reach)."""
    order = list(range(len(graphs)))
    for _attempt in range(len(graphs)):
        left: dict[tuple, float] = {}  # resource -> bandwidth left
        out: dict[int, Flows] = {}
        for i in order:
            flows = reference_route_one(sc, graphs[i], rates[i], left, cancel)
            if flows is None:  # stuck: retry with this task routed first
                order = [i] + [j for j in order if j != i]
                break
            out[i] = flows
        else:
            return [out[i] for i in range(len(graphs))]
    return None


def reference_route_one(
    sc: Scenario, g: TaskGraph, rate: float, left: dict[tuple, float], cancel: CancelToken | None = None,
    prefer: frozenset = frozenset(),
) -> Flows | None:
    """Route one task at ``rate`` in the bandwidth ``left`` (resource -> what remains; missing
    resources are untouched) and take what it uses from ``left``; None (and ``left`` unchanged)
    when the greedy finds no way."""
    rate = max(rate, 0.0)
    for blocked, fallback in _options(sc, g, rate, left):
        if fallback is not None and left:
            continue  # a worker's fallback: only for a task routed first
        if cancel is not None:
            cancel.check()
        trial = dict(left)
        if fallback is None:
            flows = reference_route_task(sc, g, rate, trial, blocked, cancel, prefer)
        else:  # a worker's fallback is not in the reference: the search under test routes those tries
            flows = _route_task(sc, g, rate, trial, blocked, cancel, fallback=fallback, prefer=prefer)
        if flows is not None:
            left.clear()
            left.update(trial)
            return flows
    return None


def reference_route_task(
    sc: Scenario, g: TaskGraph, rate: float, left: dict, blocked: set, cancel: CancelToken | None = None,
    prefer: frozenset = frozenset(),
) -> Flows | None:
    def room(res: tuple) -> float:
        if res not in left:
            left[res] = resource_capacity(sc, res)
        return left[res]

    dag = g.dag
    agg = g.aggregators
    pipe: dict[tuple[str, str], int] = {}

    def pipeline(u: str, v: str) -> int:
        key = (u, v)
        if key not in pipe:
            pipe[key] = sc.ingress_pipeline(u, v)
        return pipe[key]

    limited = {n for n in g.bypass if sc.node(n).aggregation_capacity is not None}  # type: ignore[union-attr]
    tails: set[tuple[str, int]] = set()  # aggregates (switch, pipeline) already formed
    merged: dict[tuple[str, int], int] = {}  # flows each aggregate merges (rule 5: <= fan-in)

    def joinable(key: tuple[str, int]) -> bool:
        return key in tails and merged[key] < g.fan_in[key[0]]
    counts: dict[tuple[UNode, UNode], int] = {}
    inps: dict[UNode, int] = {}
    eps = 1e-9 * max(rate, 1.0)

    # workers of one leaf together, the most crowded leaves first
    crowd: dict[tuple[str, ...], int] = {}
    for w in g.workers:
        crowd[dag.succ[w]] = crowd.get(dag.succ[w], 0) + 1
    order = sorted(g.workers, key=lambda w: (-crowd[dag.succ[w]], dag.succ[w], w))
    # each node's usable next hops, once per call: (u, link, u's switch resource if its capacity is
    # finite, (u, ingress pipeline) if u aggregates, u's fan-in, u has a bypass); blocked edges left
    # out. The search below is the hot loop (fat-tree k=64 with 1,000 workers per job: 3.7 million
    # visits, 16 million before values were kept), so it reads these and ``left`` directly.
    hops: dict[str, list[tuple[str, tuple, tuple | None, tuple[str, int] | None, int, bool]]] = {}

    def hops_of(v: str) -> list[tuple[str, tuple, tuple | None, tuple[str, int] | None, int, bool]]:
        out = hops.get(v)
        if out is None:
            out = hops[v] = [
                (u, ("link", v, u), ("switch", u) if u in limited else None,
                 (u, pipeline(v, u)) if u in agg else None, g.fan_in[u] if u in agg else 0, u in g.bypass)
                for u in dag.succ[v] if (v, u) not in blocked
            ]
        return out

    dest = dag.dest
    need = rate - eps
    # best(v) depends only on what its hops read (rooms, aggregates) and on best() of the hops it
    # continues through; it is kept from one worker to the next and dropped, with every kept value
    # that used it, where a routed flow changed what it read (a worker reads a few dozen fresh
    # values instead of all of its DAG)
    memo: dict[str, tuple[float, float, str | None]] = {}
    pred = dag.pred()
    # workers no flow crosses are read once, on their own turn: never dropped (a leaf of lambda = 3
    # has hundreds of them)
    crossed = {u for hops_v in dag.succ.values() for u in hops_v}
    sources = {w for w in g.workers if w not in crossed}
    ups: dict[str, list[str]] = {}

    def best(v: str) -> tuple[float, float, str | None]:
        """(cost, -tightest room, next hop) for a new flow leaving v towards the PS; a link
        costs the share of its remaining bandwidth the flow takes, so scarce links (the PS's,
        a spine's down-link) are used last and merging into an aggregate is preferred. A hop
        must fit (link, and a finite switch capacity, with ``rate`` left) and be passable (a
        full aggregate is crossed only through a bypass); joining an aggregate ends there."""
        got = memo.get(v)
        if got is not None:
            return got
        if v == dest:
            return 0.0, 0.0, None
        c_cost, c_neg, c_hop = math.inf, 0.0, None
        for u, link, switch, key, fan, bypass in hops_of(v):
            slack = left.get(link)
            if slack is None:
                slack = left[link] = resource_capacity(sc, link)
            if slack < need:
                continue
            if switch is not None:
                room_u = left.get(switch)
                if room_u is None:
                    room_u = left[switch] = resource_capacity(sc, switch)
                if room_u < need:
                    continue
            join = False
            if key is not None and key in tails:
                join = merged[key] < fan
                if not join and not bypass:
                    continue  # a full aggregate without a bypass: not passable
            # a preferred link costs PREFER_COST of its share (added to the reference with
            # ``prefer``; without it every factor is 1 and the cost is the reference's own)
            cost = rate / slack * (G.PREFER_COST if link[1:] in prefer else 1.0) if slack > 0 else 0.0
            if not join:
                sub = best(u)
                if sub[2] is None and u != dest:
                    continue  # no way on from u
                cost += sub[0]
                if sub[2] is not None:
                    slack = min(slack, -sub[1])
            if cost < c_cost or (cost == c_cost and -slack < c_neg):
                c_cost, c_neg, c_hop = cost, -slack, u
        memo[v] = choice = (c_cost, c_neg, c_hop)
        return choice

    def forget(changed: set[str]) -> None:
        """Drop the kept values of ``changed`` and of every node whose kept value used one. The
        search stops, and drops all, once it has looked at as many nodes as are kept (on a
        leaf-spine most values used the PS's link, and each spine has every leaf above it)."""
        if not KEEP_VALUES:
            memo.clear()
            return
        stack = [v for v in changed if v in memo]
        for v in stack:
            del memo[v]
        budget = len(memo)
        while stack:
            v = stack.pop()
            above = ups.get(v)
            if above is None:
                above = ups[v] = [u for u in pred.get(v, ()) if u not in sources]
            budget -= len(above)
            if budget < 0:
                memo.clear()
                return
            for u in above:
                if u in memo:
                    del memo[u]
                    stack.append(u)

    for n_done, w in enumerate(order):
        if cancel is not None and n_done % 32 == 0:
            cancel.check()
        first = best(w)
        if first[2] is None:
            return None
        # walk the chosen path, merging into an existing aggregate when one is met
        node = w
        state: UNode = ("w", w)
        changed: set[str] = set()
        while node != dag.dest:
            nxt = best(node)[2]
            if nxt is None:
                return None
            p = pipeline(node, nxt)
            key = (nxt, p)
            full = nxt in agg and key in tails and not joinable(key)  # rule 5: cross unmerged
            head: UNode = ("ps", nxt) if nxt == dag.dest else (
                ("inp", nxt, p) if nxt in agg and not full else ("cs", nxt))
            counts[(state, head)] = counts.get((state, head), 0) + 1
            left[("link", node, nxt)] = room(("link", node, nxt)) - rate
            changed.add(node)  # its hop's room
            if nxt in agg and not full:  # nxt's aggregate (and room) as every hop into it reads them
                changed.update(pred[nxt])
            if nxt in limited and not full:
                left[("switch", nxt)] = room(("switch", nxt)) - rate
            if nxt in agg and not full:
                inps[head] = 1
                merged[key] = merged.get(key, 0) + 1
                if key in tails:
                    break
                tails.add(key)  # this flow becomes the aggregate; its onward path follows
                state = ("op", nxt)
            elif nxt in agg:
                state = ("cs", nxt)
            else:
                state = head
            node = nxt
        if w in sources:
            del memo[w]  # read on its own turn only
        forget(changed)
    return Flows(y=counts, x=inps)


# ---- cases ------------------------------------------------------------------------------------------

def _scenario(kind: str, size: int, seed: int, workers: int) -> Scenario:
    """A fat-tree k=``size`` or a leaf-spine of ``size`` leaves, 2 jobs x 2 tasks; the seed also
    picks the programmable share and pipelines, small fan-in limits (all switches or some),
    finite aggregation capacities (bypasses) and link background."""
    rng = random.Random(seed)
    if kind == "fat-tree":
        sc = fat_tree(size)
    else:
        sc = leaf_spine(size, max(2, size // 2), 5, fabric_capacity=rng.choice([40.0, 100.0]))
    mark_programmable(sc, (0.2, 0.5, 1.0)[seed % 3], pipelines=(4, 1, 2)[seed % 3], seed=seed)
    place_jobs(sc, 2, 2, workers, seed=seed)
    if seed % 4 == 1:
        set_max_fan_in(sc, rng.choice([2, 3, 4]))
    for sw in sc.switches():
        if not sw.programmable:
            continue
        if seed % 4 == 2 and rng.random() < 0.6:
            sw.max_fan_in = rng.choice([2, 3, 8])
        if seed % 3 != 0 and rng.random() < 0.5:
            sw.aggregation_capacity = rng.choice([30.0, 60.0, 150.0, 400.0])
    if seed % 2:
        for lk in sc.links:
            if rng.random() < 0.3:
                lk.background = (rng.choice([0.0, 10.0, 50.0]), rng.choice([0.0, 20.0, 60.0]))
    sc.touch()
    sc.validate()
    return sc


CASES = [  # (kind, size, seed, workers per job)
    *[("fat-tree", 4, s, 5) for s in range(8)],
    *[("fat-tree", 8, s, 40) for s in range(6)],
    *[("fat-tree", 16, s, 200) for s in range(4)],
    *[("leaf-spine", 6, s, 12) for s in range(6)],
    *[("leaf-spine", 4, s, 4) for s in range(4)],
]


def _rate_vectors(sc: Scenario, graphs: list[TaskGraph], seed: int) -> list[list[float]]:
    """No rate, a tiny one, then shares of each task's structural bound from several times too
    much (the greedy fails) to a hundredth (fan-in limits bind before links do), jittered."""
    rng = random.Random(seed)
    bounds = [b if math.isfinite(b) else 100.0 for b in (structural_bound(sc, g) for g in graphs)]
    out = [[0.0] * len(graphs), [1e-9] * len(graphs)]
    for scale in (4.0, 1.0, 0.5, 0.3, 0.2, 0.14, 0.1, 0.07, 0.05, 0.03, 0.01):
        out.append([b * scale * rng.choice([0.7, 1.0, 1.3]) for b in bounds])
    return out


class _Counting(CancelToken):
    """A cancel token that counts its checks and cancels itself at the ``stop``-th one."""

    def __init__(self, stop: int | None = None) -> None:
        super().__init__()
        self.checks = 0
        self.stop = stop

    def check(self) -> None:
        self.checks += 1
        if self.checks == self.stop:
            self.cancel()
        super().check()


def _items(flows: Flows | None) -> tuple | None:
    """A Flows as its keys and values in order (None stays None)."""
    return None if flows is None else (list(flows.y.items()), list(flows.x.items()))


def _both_greedy(sc: Scenario, graphs: list[TaskGraph], rates: list[float]) -> list[Flows] | None:
    """greedy_flows and the reference on the same rates: the same flows and cancel checks."""
    tok_new, tok_ref = _Counting(), _Counting()
    got = greedy_flows(sc, graphs, rates, tok_new)
    want = reference_greedy_flows(sc, graphs, rates, tok_ref)
    assert (got is None) == (want is None), rates
    if got is not None and want is not None:
        assert [_items(f) for f in got] == [_items(f) for f in want], rates
    assert tok_new.checks == tok_ref.checks
    return got


def _coverage(sc: Scenario, graphs: list[TaskGraph], flows: list[Flows]) -> set[str]:
    """What a plan exercised: an aggregate that merged its fan-in limit, a flow crossing a
    programmable switch unmerged, an aggregate at a switch with a finite capacity."""
    seen = set()
    for g, f in zip(graphs, flows, strict=True):
        into: dict[UNode, int] = {}
        for (_, head), n in f.y.items():
            into[head] = into.get(head, 0) + n
            if head[0] == "cs" and head[1] in g.aggregators:
                seen.add("unmerged")
        for head, n in into.items():
            if head[0] == "inp":
                if n >= g.fan_in[head[1]]:
                    seen.add("fan-in reached")
                if sc.node(head[1]).aggregation_capacity is not None:  # type: ignore[union-attr]
                    seen.add("limited switch aggregates")
    return seen


# ---- tests ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(map(str, c)))
def test_greedy_flows_equal_the_reference(case):
    sc = _scenario(*case)
    graphs = task_graphs(sc)
    for rates in _rate_vectors(sc, graphs, case[2]):
        _both_greedy(sc, graphs, rates)


def test_the_cases_exercise_failures_fan_in_limits_and_bypasses():
    """The cases above (the small ones) see the greedy fail and succeed, aggregates reach their
    fan-in limit, flows cross programmable switches unmerged and aggregate at limited switches."""
    seen: set[str] = set()
    for case in CASES:
        if case[1] > 8:
            continue
        sc = _scenario(*case)
        graphs = task_graphs(sc)
        for rates in _rate_vectors(sc, graphs, case[2]):
            flows = _both_greedy(sc, graphs, rates)
            seen |= {"failed"} if flows is None else {"found"} | _coverage(sc, graphs, flows)
    assert seen == {"failed", "found", "fan-in reached", "unmerged", "limited switch aggregates"}


@pytest.mark.parametrize("case", [c for c in CASES if c[1] <= 8], ids=lambda c: "-".join(map(str, c)))
def test_route_task_equals_the_reference_with_blocked_edges_and_bandwidth_used(case):
    """Each task routed alone in what another task left, with random edges blocked and with each
    last-hop option: the same flows and the same bandwidth left (the resources read are filled
    with their capacity, as before)."""
    sc = _scenario(*case)
    graphs = task_graphs(sc)
    rng = random.Random(case[2])
    for rates in _rate_vectors(sc, graphs, case[2])[1:6]:
        for i, g in enumerate(graphs):
            left: dict[tuple, float] = {}
            reference_route_one(sc, graphs[i - 1], rates[i - 1], left)
            edges = [(u, v) for u, vs in g.dag.succ.items() for v in vs]
            blocks = [set(), set(rng.sample(edges, len(edges) // 10)), set(rng.sample(edges, len(edges) // 3))]
            blocks += list(last_hop_options(sc, g, rates[i], left))
            for blocked in blocks:
                trial_new, trial_ref = dict(left), dict(left)
                got = _route_task(sc, g, rates[i], trial_new, blocked)
                want = reference_route_task(sc, g, rates[i], trial_ref, blocked)
                assert _items(got) == _items(want)
                assert trial_new == trial_ref
            left_new, left_ref = dict(left), dict(left)
            got = route_one(sc, g, rates[i], left_new)
            assert _items(got) == _items(reference_route_one(sc, g, rates[i], left_ref))
            assert left_new == left_ref


@pytest.mark.parametrize("case", [c for c in CASES if c[1] <= 8], ids=lambda c: "-".join(map(str, c)))
def test_preferred_links_route_as_the_reference(case):
    """``route_one(..., prefer=...)``: preferred links cost ``PREFER_COST`` of their share in the
    search under test and in the reference alike: the same flows and bandwidth left, for a random
    third of the edges and for the links of another task's plan (which shares some of them). That
    the preference changes routes at all is the next test."""
    sc = _scenario(*case)
    graphs = task_graphs(sc)
    rng = random.Random(case[2])
    for rates in _rate_vectors(sc, graphs, case[2])[1:6]:
        for i, g in enumerate(graphs):
            edges = [(u, v) for u, vs in g.dag.succ.items() for v in vs]
            other = route_one(sc, graphs[i - 1], rates[i - 1], {})
            for prefer in (frozenset(rng.sample(edges, len(edges) // 3)), G.plan_links(other or Flows())):
                left_new: dict[tuple, float] = {}
                left_ref: dict[tuple, float] = {}
                got = route_one(sc, g, rates[i], left_new, prefer=prefer)
                assert _items(got) == _items(reference_route_one(sc, g, rates[i], left_ref, prefer=prefer))
                assert left_new == left_ref


def test_a_preference_changes_routes():
    """A preference for every link the plain greedy's plan does not use changes its routes on
    the cases above (so the factor is applied, not ignored alike by both searches)."""
    changed = 0
    for case in [c for c in CASES if c[1] <= 8][::3]:
        sc = _scenario(*case)
        graphs = task_graphs(sc)
        for rates in _rate_vectors(sc, graphs, case[2])[1:4]:
            for g, r in zip(graphs, rates, strict=True):
                plain = route_one(sc, g, r, {})
                if plain is None:
                    continue
                everything_else = frozenset((u, v) for u, vs in g.dag.succ.items() for v in vs) - G.plan_links(plain)
                changed += _items(route_one(sc, g, r, {}, prefer=everything_else)) != _items(plain)
    assert changed > 0


@pytest.mark.parametrize("case", [("fat-tree", 8, s, 40) for s in range(4)] + [("leaf-spine", 6, s, 12) for s in range(2)],
                         ids=lambda c: "-".join(map(str, c)))
def test_switch_capacities_that_run_out(case):
    """Every programmable switch with an aggregation capacity of a few flows at the rate: switches
    fill up while the search keeps values that crossed them."""
    sc = _scenario(*case)
    for sw in sc.switches():
        if sw.programmable:
            sw.aggregation_capacity = 10.0
    sc.touch()
    graphs = task_graphs(sc)
    found = 0
    for flows_per_switch in (1.5, 2.5, 4.5, 8.5, 16.5, 32.5, 64.5):
        for jitter in ((1.0,) * 4, (1.0, 0.5, 0.7, 1.3)):
            found += _both_greedy(sc, graphs, [10.0 / flows_per_switch * f for f in jitter]) is not None
    assert found  # flows to compare, not only failures


@pytest.mark.parametrize("case", [("fat-tree", 8, s, 40) for s in range(4)] + [("leaf-spine", 6, s, 12) for s in range(2)],
                         ids=lambda c: "-".join(map(str, c)))
def test_without_kept_values_too(case, monkeypatch):
    """KEEP_VALUES off (every value searched afresh for each worker) in both: the same flows."""
    monkeypatch.setattr(G, "KEEP_VALUES", False)
    monkeypatch.setitem(globals(), "KEEP_VALUES", False)
    sc = _scenario(*case)
    graphs = task_graphs(sc)
    for rates in _rate_vectors(sc, graphs, case[2])[2:7]:
        _both_greedy(sc, graphs, rates)


@pytest.mark.parametrize("case", [("fat-tree", 8, 5, 40), ("fat-tree", 16, 3, 200)], ids=lambda c: "-".join(map(str, c)))
def test_cancel_stops_at_the_same_check(case):
    """Cancelled at its first, second, middle or last check, the greedy raises there, as the
    reference does (checks: per option tried and every 32 workers)."""
    sc = _scenario(*case)
    graphs = task_graphs(sc)
    for rates in _rate_vectors(sc, graphs, case[2])[3:8]:
        tok = _Counting()
        reference_greedy_flows(sc, graphs, rates, tok)
        for stop in sorted({1, 2, tok.checks // 2, tok.checks}):
            raised = []
            for run in (greedy_flows, reference_greedy_flows):
                tok = _Counting(stop)
                with pytest.raises(Cancelled):
                    run(sc, graphs, rates, tok)
                raised.append(tok.checks)
            assert raised == [stop, stop]
