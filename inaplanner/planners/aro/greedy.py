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

#: What a link of the preferred plan (``route_one(..., prefer=...)``) costs, as a share of what
#: the same link costs otherwise. Measured on 121 rate vectors of fat-tree k=16 with 200 workers
#: per job (four tasks placed one after another, each task's own plan first, then the greedy):
#: 0-5 of them routed without a preference, 11-65 at 0.2 (seeds 0-2); 0.5 and 0.05 route fewer.
PREFER_COST = 0.2


def plan_links(flows: Flows) -> frozenset[tuple[str, str]]:
    """The physical links (u, v) on which ``flows`` send anything: what :func:`route_one`'s
    ``prefer`` takes."""
    return frozenset((tail[1], head[1]) for (tail, head), n in flows.y.items() if n > 0)


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
    index: dict[int, TaskIndex] = {}
    pipe: dict[tuple[str, str], int] = {}
    cap_of: dict[tuple, float] = {}
    for _attempt in range(len(graphs)):
        left: dict[tuple, float] = {}  # resource -> bandwidth left
        out: dict[int, Flows] = {}
        for i in order:
            if i not in index:
                index[i] = TaskIndex(sc, graphs[i], pipe, cap_of)
            flows = route_one(sc, graphs[i], rates[i], left, cancel, index=index[i])
            if flows is None:  # stuck: retry with this task routed first
                order = [i] + [j for j in order if j != i]
                break
            out[i] = flows
        else:
            return [out[i] for i in range(len(graphs))]
    return None


def route_one(
    sc: Scenario, g: TaskGraph, rate: float, left: dict[tuple, float], cancel: CancelToken | None = None,
    *, index: TaskIndex | None = None, prefer: frozenset[tuple[str, str]] | None = None,
) -> Flows | None:
    """Route one task at ``rate`` in the bandwidth ``left`` (resource -> what remains; missing
    resources are untouched) and take what it uses from ``left``; None (and ``left`` unchanged)
    when the greedy finds no way. ``index``: a :class:`TaskIndex` of ``sc`` and ``g`` that the
    caller keeps from one call to the next (as :func:`greedy_flows` does). ``prefer``: physical
    links (u, v) a known plan of the task uses (:func:`plan_links`); they cost ``PREFER_COST`` of
    what other links cost, so the greedy keeps to that plan's aggregation tree where the
    bandwidth left allows and leaves it only where it must."""
    rate = max(rate, 0.0)
    ix = TaskIndex(sc, g) if index is None else index
    for blocked, fallback in _options(sc, g, rate, left):
        if fallback is not None and left:
            # a worker's fallback only for a task routed first: in what other tasks left, the
            # raw flows it lets in take links a later task needs (leaf-spine lambda = 4 seed 0
            # with the 32-flow fan-in: jobs 1-3 placed that way left job 4 no room, and its MILP
            # ran 17 s in vain, where the MILP placements of the code before reached the optimum)
            continue
        if cancel is not None:
            cancel.check()
        trial = dict(left)
        flows = _route_task(sc, g, rate, trial, blocked, cancel, ix, fallback, prefer)
        if flows is not None:
            left.clear()
            left.update(trial)
            return flows
    return None


def _options(sc: Scenario, g: TaskGraph, rate: float, left: dict):  # noqa: ANN201
    """(blocked, fallback) edge sets to try (see :func:`_route_task`): each last-hop choice as
    is, then with the alternative aggregators' INPs pre-opened in balance
    (:func:`_balanced_openings`), then, where the last-hop choice restricts the pipelines (the PS
    link takes fewer aggregates than the last switch has pipelines facing the fabric, so its
    fan-in is scarce), with raw flows into that switch only for a worker that has no other way
    (:func:`raw_into_last`), without and with those openings."""
    raw = raw_into_last(g)
    for blocked in last_hop_options(sc, g, rate, left):
        yield blocked, None
        extra = _balanced_openings(sc, g, rate, left, blocked)
        if extra:
            yield blocked | extra, None
        if raw and blocked:  # the PS link leaves room for few aggregates at its last switch
            yield blocked | raw, blocked
            if extra:
                yield blocked | extra | raw, blocked | extra


def raw_into_last(g: TaskGraph) -> set[tuple[str, str]]:
    """The edges into the PS's last switch from switches that do not aggregate for the task,
    when that switch's fan-in (rule 5) can bind: what to block so that only aggregates (and the
    local workers) reach it. A flow coming through such a switch is one worker's and takes one of
    the few flows an aggregate there may merge, as one from an aggregator takes one for up to
    ``max_fan_in`` workers. The hop-by-hop greedy sees both at the same cost and fills the last
    switch's aggregate with raw flows: on leaf-spine lambda = 5 with the 32-flow fan-in, every
    task alone at 50 Gbps got stuck after 80-130 of its 500 workers with the PS leaf's spine
    pipeline full (14 spine aggregates merging 59 flows, the rest raw). Empty when the last
    switch does not aggregate, its fan-in cannot bind, or no aggregator would be left to feed it."""
    pred = g.dag.pred()
    preds = pred.get(g.ps, [])
    if len(preds) != 1 or preds[0] not in g.aggregators:
        return set()
    last = preds[0]
    if g.fan_in.get(last, len(g.workers)) >= len(g.workers):
        return set()
    workers = set(g.workers)
    into = [u for u in pred.get(last, []) if u not in workers]
    raw = {(u, last) for u in into if u not in g.aggregators}
    if len(raw) == len(into):
        return set()
    return raw


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


#: One next hop of a node in :func:`_route_task`'s search: (u, index of the link's room, index of
#: u's switch room if its capacity is finite, index of u's aggregate for this ingress pipeline if u
#: aggregates, u's fan-in, u has a bypass)
_Hop = tuple[str, int, int | None, int | None, int, bool]


class TaskIndex:
    """What :func:`_route_task` needs of one task graph besides the rate, the bandwidth left and
    the blocked edges, made once for all the calls of one :func:`greedy_flows` (or
    :func:`route_one`): the order of the workers, each node's next hops (made when the search
    first meets the node), an index per resource and per aggregate (switch, ingress pipeline), the
    resources' capacities and the nodes that read each aggregate and switch room. On fat-tree k=64
    with 1,000 workers per job (nine calls for four tasks) the calls spent over a quarter of their
    time remaking these. ``pipe`` ((u, v) -> ingress pipeline) and ``cap_of`` (resource ->
    capacity) may be shared by the tasks of one scenario."""

    def __init__(self, sc: Scenario, g: TaskGraph, pipe: dict[tuple[str, str], int] | None = None,
                 cap_of: dict[tuple, float] | None = None) -> None:
        self.sc, self.g = sc, g
        self.ready = False  # the rest is made by the first call (:meth:`prepare`)
        self.limited: set[str] = set()
        self.order: list[str] = []
        self.pred: dict[str, list[str]] = {}
        self.sources: set[str] = set()
        self.pipe = {} if pipe is None else pipe
        self.cap_of = {} if cap_of is None else cap_of
        self.hops: dict[str, list[_Hop]] = {}
        self.res_keys: list[tuple] = []  # resource of each index
        self.caps: list[float | None] = []  # its capacity, once asked
        self.switch_at: dict[str, int] = {}
        self.agg_at: dict[tuple[str, int], int] = {}
        # the nodes whose hops read each aggregate and each switch room (blocked or not): those a
        # flow merging there can change the value of, besides the node whose link it takes
        self.key_readers: list[list[str]] = []
        self.switch_readers: dict[int, list[str]] = {}
        self.ups: dict[str, list[str]] = {}  # the predecessors whose values may use a node's

    def prepare(self) -> None:
        """What the first call needs first (made there, so a call fails where it always did)."""
        sc, g = self.sc, self.g
        dag = g.dag
        self.limited = {n for n in g.bypass if sc.node(n).aggregation_capacity is not None}  # type: ignore[union-attr]
        # workers of one leaf together, the most crowded leaves first
        crowd: dict[tuple[str, ...], int] = {}
        for w in g.workers:
            crowd[dag.succ[w]] = crowd.get(dag.succ[w], 0) + 1
        self.order = sorted(g.workers, key=lambda w: (-crowd[dag.succ[w]], dag.succ[w], w))
        self.pred = dag.pred()
        # workers no flow crosses are read once, on their own turn: never dropped (a leaf of
        # lambda = 3 has hundreds of them)
        crossed = {u for hops_v in dag.succ.values() for u in hops_v}
        self.sources = {w for w in g.workers if w not in crossed}
        self.ready = True

    def pipeline(self, u: str, v: str) -> int:
        key = (u, v)
        pipe = self.pipe
        if key not in pipe:
            pipe[key] = self.sc.ingress_pipeline(u, v)
        return pipe[key]

    def hops_of(self, v: str) -> list[_Hop]:
        """v's next hops, blocked ones included, each resource and aggregate indexed."""
        g, res_keys = self.g, self.res_keys
        agg, limited, fan_in = g.aggregators, self.limited, g.fan_in
        out: list[_Hop] = []
        for u in g.dag.succ[v]:
            link = len(res_keys)
            res_keys.append(("link", v, u))
            self.caps.append(None)
            switch = None
            if u in limited:
                switch = self.switch_at.get(u)
                if switch is None:
                    switch = self.switch_at[u] = len(res_keys)
                    res_keys.append(("switch", u))
                    self.caps.append(None)
                    self.switch_readers[switch] = []
                self.switch_readers[switch].append(v)
            key = None
            fan = 0
            if u in agg:
                pair = (u, self.pipeline(v, u))
                key = self.agg_at.get(pair)
                if key is None:
                    key = self.agg_at[pair] = len(self.key_readers)
                    self.key_readers.append([])
                self.key_readers[key].append(v)
                fan = fan_in[u]
            out.append((u, link, switch, key, fan, u in g.bypass))
        self.hops[v] = out
        return out

    def capacity(self, i: int) -> float:
        cap = self.caps[i]
        if cap is None:
            res = self.res_keys[i]
            cap = self.cap_of.get(res)
            if cap is None:
                cap = self.cap_of[res] = resource_capacity(self.sc, res)
            self.caps[i] = cap
        return cap


def _route_task(
    sc: Scenario, g: TaskGraph, rate: float, left: dict, blocked: set, cancel: CancelToken | None = None,
    index: TaskIndex | None = None, fallback: set | None = None, prefer: frozenset | None = None,
) -> Flows | None:
    """The task's workers routed one by one (see :func:`greedy_flows`) without the ``blocked``
    edges; a worker that finds no way may use the edges ``fallback`` does not block (it alone:
    the workers after it are routed without the ``blocked`` edges again). Links in ``prefer``
    cost ``PREFER_COST`` of their share (see :func:`route_one`)."""
    ix = TaskIndex(sc, g) if index is None else index
    assert ix.g is g and ix.sc is sc
    if not ix.ready:
        ix.prepare()
    dag = g.dag
    pipeline = ix.pipeline
    # The search below is the hot loop (fat-tree k=64 with 1,000 workers per job: 3.7 million
    # values read, 16 million before values were kept; hashing the tuple keys of ``left`` and of
    # the aggregates took much of it). It reads them by index: ``room[i]`` is
    # ``left[ix.res_keys[i]]``, None while ``left`` has no such key (the first read fills it with
    # the capacity, as the search always did, so ``left`` ends the same; every write goes to
    # both), and ``merged[k]`` is how many flows aggregate k merges (rule 5: <= fan-in), -1 while
    # it is not formed.
    res_keys = ix.res_keys
    left_get = left.get
    room: list[float | None] = [left_get(res) for res in res_keys]  # those indexed so far
    merged: list[int] = [-1] * len(ix.key_readers)
    # with ``prefer``, each indexed resource's cost factor: PREFER_COST on the preferred plan's
    # links, else 1 (None without: no list as long as the index at fat-tree k=64)
    factor: list[float] | None = [] if prefer else None

    def grow_factors() -> None:
        if factor is not None:
            for res in res_keys[len(factor):]:
                factor.append(PREFER_COST if res[0] == "link" and (res[1], res[2]) in prefer else 1.0)

    grow_factors()

    def load(i: int) -> float:
        res = res_keys[i]
        val = left_get(res)
        if val is None:
            val = left[res] = ix.capacity(i)
        room[i] = val
        return val

    # each node's usable next hops (:data:`_Hop`): the index's, blocked edges left out (one
    # table for ``blocked``, one for ``fallback``)
    usable: dict[str, list[_Hop]] = ix.hops if not blocked else {}
    tables = {id(blocked): usable}

    def hops_of(v: str) -> list[_Hop]:
        out = ix.hops.get(v)
        if out is None:
            out = ix.hops_of(v)  # new indices: grow this call's rooms and aggregates
            room.extend([None] * (len(res_keys) - len(room)))
            merged.extend([-1] * (len(ix.key_readers) - len(merged)))
            grow_factors()
        if blocked:
            out = usable[v] = [hop for hop in out if (v, hop[0]) not in blocked]
        return out

    counts: dict[tuple[UNode, UNode], int] = {}
    inps: dict[UNode, int] = {}
    eps = 1e-9 * max(rate, 1.0)
    dest = dag.dest
    need = rate - eps
    # best(v) depends only on what its hops read (rooms, aggregates) and on best() of the hops it
    # continues through; it is kept from one worker to the next and dropped, with every kept value
    # that used it, where a routed flow changed what it read (a worker reads a few dozen fresh
    # values instead of all of its DAG)
    memo: dict[str, tuple[float, float, _Hop | None]] = {}
    memo_get = memo.get
    usable_get = usable.get
    pred, sources, ups = ix.pred, ix.sources, ix.ups
    at_dest: tuple[float, float, _Hop | None] = (0.0, 0.0, None)
    inf = math.inf

    def best(v: str) -> tuple[float, float, _Hop | None]:
        """(cost, -tightest room, next hop) for a new flow leaving v towards the PS; a link
        costs the share of its remaining bandwidth the flow takes, so scarce links (the PS's,
        a spine's down-link) are used last and merging into an aggregate is preferred. A hop
        must fit (link, and a finite switch capacity, with ``rate`` left) and be passable (a
        full aggregate is crossed only through a bypass); joining an aggregate ends there.
        Called where v has no kept value (the search reads kept ones in place: most reads)."""
        if v == dest:
            return at_dest
        c_cost, c_neg, c_hop = inf, 0.0, None
        hops_v = usable_get(v)
        if hops_v is None:
            hops_v = hops_of(v)
        for hop in hops_v:
            u, link, switch, key, fan, bypass = hop
            slack = room[link]
            if slack is None:
                slack = load(link)
            if slack < need:
                continue
            if switch is not None:
                room_u = room[switch]
                if room_u is None:
                    room_u = load(switch)
                if room_u < need:
                    continue
            join = False
            if key is not None:
                n_merged = merged[key]
                if n_merged >= 0:  # the aggregate is formed
                    join = n_merged < fan
                    if not join and not bypass:
                        continue  # a full aggregate without a bypass: not passable
            cost = (rate / slack if factor is None else rate / slack * factor[link]) if slack > 0 else 0.0
            if not join:
                sub = memo_get(u)
                if sub is None:
                    sub = best(u)
                if sub[2] is None:
                    if u != dest:
                        continue  # no way on from u
                    cost += sub[0]
                else:
                    cost += sub[0]
                    tight = -sub[1]
                    if tight < slack:  # min(slack, tight), as min() does with NaN too
                        slack = tight
            if cost < c_cost or (cost == c_cost and -slack < c_neg):
                c_cost, c_neg, c_hop = cost, -slack, hop
        memo[v] = choice = (c_cost, c_neg, c_hop)
        return choice

    def forget(changed: set[str]) -> None:
        """Drop the kept values of ``changed`` and of every node whose kept value used one. The
        search stops, and drops all, once it has looked at twice as many nodes as are kept (on a
        leaf-spine most values used the PS's link, and each spine has every leaf above it). A
        look costs far less than a value searched again: with "as many" instead, fat-tree k=64
        with 1,000 workers per job searched 285,000 values instead of 82,000 (1.9 million hops
        instead of 1.3), k=16 with 200 workers per job about twice as many."""
        if not KEEP_VALUES:
            memo.clear()
            return
        stack = [v for v in changed if v in memo]
        for v in stack:
            del memo[v]
        budget = 2 * len(memo)
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

    key_readers, switch_readers = ix.key_readers, ix.switch_readers
    for n_done, w in enumerate(ix.order):
        if cancel is not None and n_done % 32 == 0:
            cancel.check()
        first = memo_get(w) or best(w)
        swapped = first[2] is None and fallback is not None
        if swapped:  # this worker alone may use what ``fallback`` leaves open
            blocked, fallback = fallback, blocked  # type: ignore[assignment]
            usable = tables.setdefault(id(blocked), ix.hops if not blocked else {})
            usable_get = usable.get
            memo.clear()
            first = best(w)
        if first[2] is None:
            return None
        # walk the chosen path, merging into an existing aggregate when one is met
        node = w
        state: UNode = ("w", w)
        # the nodes whose hops read what the flow changes: the hop's own node for its link; for
        # a switch's room and aggregate, only where the read gives another answer (dropping every
        # hop into each switch where a flow merged, fat-tree k=64 with 1,000 workers per job
        # searched 1.3 million values instead of 0.3 million)
        changed: set[str] = set()
        while node != dest:
            hop = (memo_get(node) or best(node))[2]
            if hop is None:
                return None
            nxt, link, switch, key, fan, _ = hop
            p = pipeline(node, nxt)
            n_merged = merged[key] if key is not None else -1
            full = n_merged >= 0 and not n_merged < fan  # rule 5: cross unmerged
            head: UNode = ("ps", nxt) if nxt == dest else (
                ("inp", nxt, p) if key is not None and not full else ("cs", nxt))
            counts[(state, head)] = counts.get((state, head), 0) + 1
            val = room[link]
            room[link] = left[res_keys[link]] = (load(link) if val is None else val) - rate
            changed.add(node)  # its hop's room
            if switch is not None and not full:
                val = room[switch]
                if val is None:
                    val = load(switch)
                room[switch] = left[res_keys[switch]] = val - rate
                if (val < need) != (val - rate < need):  # all a hop into nxt reads of it
                    changed.update(switch_readers[switch])
            if key is not None and not full:
                # a hop into the aggregate reads whether it is formed and whether it is full
                if n_merged < 0 or not n_merged + 1 < fan:
                    changed.update(key_readers[key])
                inps[head] = 1
                if n_merged >= 0:
                    merged[key] = n_merged + 1
                    break
                merged[key] = 1  # this flow becomes the aggregate; its onward path follows
                state = ("op", nxt)
            elif key is not None:
                state = ("cs", nxt)
            else:
                state = head
            node = nxt
        if w in sources:
            del memo[w]  # read on its own turn only
        forget(changed)
        if swapped:  # back to the ``blocked`` edges for the next workers
            blocked, fallback = fallback, blocked  # type: ignore[assignment]
            usable = tables[id(blocked)]
            usable_get = usable.get
            memo.clear()
    return Flows(y=counts, x=inps)
