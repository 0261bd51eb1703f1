"""A constructive answer to ARO's feasibility question, tried before the MILP.

"Can every task i send at ``rates[i]``?" is what :func:`formulation.feasibility_model` asks HiGHS.
Many of those questions are easy yes-instances on which HiGHS still spends seconds in presolve and
root cuts before a heuristic finds a point. This greedy routes the workers one by one, each on the
path that adds the fewest new flows: a flow reaching a programmable switch where its task already
has an aggregate on that ingress pipeline merges into it for free (ARO Alg. 1's reuse of an INP's
subpath), otherwise every link it crosses must still have ``rate`` of bandwidth left. Workers of
one leaf go consecutively so they meet at their leaf's aggregate.

It is only a heuristic: ``None`` means "not found", never "infeasible" — the MILP then decides.
A plan it does find is exact (the same flow rules), returned as per-task :class:`Flows`.
"""

from __future__ import annotations

import itertools
import math

from inaplanner.model import Scenario
from inaplanner.planners.aro.accel import aa_groups
from inaplanner.planners.aro.formulation import Flows
from inaplanner.planners.aro.graph import TaskGraph, UNode, inp_scores, resource_capacity
from inaplanner.planners.solver import CancelToken

#: Keep the search's values from one worker to the next (False: each worker's search starts
#: afresh, as the values are defined; the tests compare the two)
KEEP_VALUES = True


def greedy_flows(
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
            flows = route_one(sc, graphs[i], rates[i], left, cancel)
            if flows is None:  # stuck: retry with this task routed first
                order = [i] + [j for j in order if j != i]
                break
            out[i] = flows
        else:
            return [out[i] for i in range(len(graphs))]
    return None


def route_one(
    sc: Scenario, g: TaskGraph, rate: float, left: dict[tuple, float], cancel: CancelToken | None = None
) -> Flows | None:
    """Route one task at ``rate`` in the bandwidth ``left`` (resource -> what remains; missing
    resources are untouched) and take what it uses from ``left``; None (and ``left`` unchanged)
    when the greedy finds no way."""
    rate = max(rate, 0.0)
    for blocked in _options(sc, g, rate, left):
        if cancel is not None:
            cancel.check()
        trial = dict(left)
        flows = _route_task(sc, g, rate, trial, blocked, cancel)
        if flows is not None:
            left.clear()
            left.update(trial)
            return flows
    return None


def _options(sc: Scenario, g: TaskGraph, rate: float, left: dict):  # noqa: ANN201
    """Each last-hop choice as is, then with the alternative aggregators' INPs pre-opened in
    balance (:func:`_balanced_openings`)."""
    for blocked in last_hop_options(sc, g, rate, left):
        yield blocked
        extra = _balanced_openings(sc, g, rate, left, blocked)
        if extra:
            yield blocked | extra


def _balanced_openings(sc: Scenario, g: TaskGraph, rate: float, left: dict, blocked: set) -> set:
    """Edges to block so that each alternative aggregator keeps only as many INPs as its links
    onward can carry flows at ``rate``, the INPs shared out over the classes of inputs (same
    predecessors) in proportion to the flows that may come from them (D'Hondt: the class with the
    largest score / (opened + 1) gets the next slot). The hop-by-hop greedy otherwise opens INPs
    first come, first served, and leaves some inputs without any."""
    if rate <= 0:
        return set()
    scores = inp_scores(g)
    pred = g.dag.pred()
    extra: set[tuple[str, str]] = set()
    for group in aa_groups(g):
        slots: dict[str, int] = {}
        members: dict[str, dict[frozenset, tuple[str, int]]] = {}
        for s in group:
            k = 0
            for v in g.dag.succ.get(s, ()):
                if (s, v) in blocked:
                    continue
                res = ("link", s, v)
                k += math.floor(left.get(res, resource_capacity(sc, res)) / rate + 1e-9)
            ins: dict[int, list[str]] = {}
            for u in pred[s]:
                if (u, s) not in blocked:
                    ins.setdefault(sc.ingress_pipeline(u, s), []).append(u)
            if len(ins) <= k:
                continue  # every INP can stay open
            slots[s] = k
            members[s] = {frozenset(us): (s, p) for p, us in ins.items()}
        if not members:
            continue
        score: dict[frozenset, float] = {}
        for s, classes in members.items():
            for cls, (_, p) in classes.items():
                score[cls] = max(score.get(cls, 0.0), float(scores.get(("inp", s, p), 0)))
        opened: dict[frozenset, int] = dict.fromkeys(score, 0)
        chosen: dict[str, set[frozenset]] = {s: set() for s in members}
        while True:
            best = None
            for cls in sorted(score, key=lambda c: (-score[c] / (opened[c] + 1), sorted(c))):
                hosts = [s for s in members if cls in members[s] and cls not in chosen[s]
                         and len(chosen[s]) < slots[s]]
                if hosts:
                    best = (cls, max(hosts, key=lambda s: (slots[s] - len(chosen[s]), s)))
                    break
            if best is None:
                break
            cls, s = best
            chosen[s].add(cls)
            opened[cls] += 1
        for s, classes in members.items():
            for cls in classes:
                if cls not in chosen[s]:
                    extra.update((u, s) for u in cls)
    return extra


def last_hop_options(sc: Scenario, g: TaskGraph, rate: float, left: dict):  # noqa: ANN201
    """Sets of blocked edges into the PS's last switch (see :func:`greedy_flows`); the empty set
    (no restriction) comes last."""
    preds = g.dag.pred()[g.ps]
    if len(preds) == 1 and preds[0] in g.aggregators and rate > 0:
        last = preds[0]
        room = left.get(("link", last, g.ps), resource_capacity(sc, ("link", last, g.ps)))
        k = math.floor(room / rate + 1e-9)
        by_pipe: dict[int, list[str]] = {}
        for u in g.dag.pred()[last]:
            by_pipe.setdefault(sc.ingress_pipeline(u, last), []).append(u)
        workers = set(g.workers)
        forced = {p for p, us in by_pipe.items() if any(u in workers for u in us)}
        pred = g.dag.pred()

        def free(s: str) -> float:
            """How much of the bandwidth into aggregator s earlier tasks left (1 = all)."""
            links = [("link", u, s) for u in pred[s]]
            return sum(left.get(r, resource_capacity(sc, r)) / max(resource_capacity(sc, r), 1e-12)
                       for r in links) / max(len(links), 1)

        others = sorted((p for p in by_pipe if p not in forced),
                        key=lambda p: (-sum(free(u) for u in by_pipe[p] if u in g.aggregators),
                                       -len(by_pipe[p]), p))
        allowed = k - len(forced)
        if 1 <= allowed < len(others):
            for keep in itertools.islice(itertools.combinations(others, allowed), 6):
                yield {(u, last) for p in others if p not in keep for u in by_pipe[p]}
    yield set()


def _route_task(
    sc: Scenario, g: TaskGraph, rate: float, left: dict, blocked: set, cancel: CancelToken | None = None
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
            cost = rate / slack if slack > 0 else 0.0
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
