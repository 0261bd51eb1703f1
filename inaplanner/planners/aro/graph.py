"""ARO's unfolded, decomposed graph of one aggregation task (ARO section III-A).

The physical shortest up-down DAG of the task (:func:`inaplanner.planners.routing.shortest_dag`)
is turned into the paper's five node types:

* ``("w", id)`` a worker, ``("ps", id)`` the task's PS;
* ``("cs", id)`` a common switch (CS): forwards, conserves flow (Eq. 9);
* ``("inp", id, p)`` input pipeline p of a programmable switch: aggregates every flow of the task
  that enters on a port of pipeline p into one (Eqs. 6-8);
* ``("op", id)`` the switch's output node: forwards the INPs' aggregates (Eq. 9).

Because the DAG keeps only shortest paths towards one PS, a switch never appears twice on a path,
so the paper's ``in``/``out`` copies of a leaf coincide with one node here; workers under the PS's
own leaf simply enter that leaf directly (its "out" side).

Extension beyond the paper, needed to be exact under CONTRACTS.md rule 4: a programmable switch with
a finite ``aggregation_capacity`` also gets a *bypass* ``("cs", id)`` node, so flows may cross it
without being aggregated (aggregation there costs capacity). With no such limit aggregating is
never worse for link loads, so the paper's forced aggregation loses nothing.

Rule 5 of CONTRACTS.md (issue 17) as a constraint of the model, per INP: the aggregate a task
forms at (switch, pipeline) merges at most the switch's ``max_fan_in`` incoming flows (null: 32),
so every edge into an INP carries at most that many flows and :func:`formulation.add_task_block`
bounds their sum. Where an INP could receive more flows than that, its switch also gets the
bypass copy, so the excess flows may cross it without merging (exact, as above).

Each edge is one integer variable y (flows of the task on it, Eq. 4) and names the *resources* it
uses: the physical directed link, and for edges into an INP of a capacity-limited switch, that
switch's aggregation capacity.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from inaplanner.model import Scenario, Switch, Task
from inaplanner.planners.routing import Dag, task_dags

UNode = tuple  # ("w", id) | ("cs", id) | ("inp", id, pipeline) | ("op", id) | ("ps", id)
Resource = tuple  # ("link", u, v) directed | ("switch", id)


@dataclass
class UEdge:
    """An edge of the unfolded graph: one y variable."""

    tail: UNode
    head: UNode
    link: tuple[str, str]  # physical directed link it rides on
    resources: tuple[Resource, ...]


@dataclass
class TaskGraph:
    """The unfolded graph of one task."""

    task: Task
    workers: tuple[str, ...]
    dag: Dag
    aggregators: frozenset[str]  # programmable switches decomposed into INPs + OP
    bypass: frozenset[str]  # aggregators that also offer a non-aggregating CS copy
    edges: list[UEdge] = field(default_factory=list)
    inps: list[UNode] = field(default_factory=list)
    out_edges: dict[UNode, list[int]] = field(default_factory=dict)
    in_edges: dict[UNode, list[int]] = field(default_factory=dict)
    ub: list[int] = field(default_factory=list)  # upper bound of each y
    fan_in: dict[str, int] = field(default_factory=dict)  # aggregator -> max_fan_in (rule 5)
    nodes: list[UNode] = field(default_factory=list)  # topological order
    #: what the checks learnt about this task, kept for the later checks of the run: pipelines no
    #: plan can use at given rates (module ``probing``), rate vectors left undecided (the planner)
    memo: dict[tuple, tuple] = field(default_factory=dict, repr=False, compare=False)

    @property
    def ps(self) -> str:
        return self.task.ps

    def inp_index(self) -> dict[UNode, int]:
        return {n: i for i, n in enumerate(self.inps)}

    def edge_key(self, k: int) -> tuple[UNode, UNode]:
        e = self.edges[k]
        return e.tail, e.head

    def inps_of(self, switch: str) -> list[UNode]:
        return [n for n in self.inps if n[1] == switch]


def resource_capacity(sc: Scenario, res: Resource) -> float:
    """Available capacity of a resource: capacity minus background, never below 0."""
    if res[0] == "link":
        lk = sc.link_between(res[1], res[2])
        assert lk is not None
        return max(lk.capacity - lk.background_from(res[1]), 0.0)
    sw = sc.node(res[1])
    assert isinstance(sw, Switch) and sw.aggregation_capacity is not None
    return max(sw.aggregation_capacity - sw.aggregation_background, 0.0)


def fan_in_limit(sw: Switch) -> int:
    """The most flows one aggregate at ``sw`` may merge (CONTRACTS.md rule 5; null means 32)."""
    return int(getattr(sw, "max_fan_in", None) or DEFAULT_FAN_IN)


DEFAULT_FAN_IN = 32


def build_task_graph(
    sc: Scenario, task: Task, workers: tuple[str, ...], dag: Dag, extra_bypass: frozenset[str] = frozenset(),
    check: Callable[[], None] | None = None,
) -> TaskGraph:
    """Decompose ``dag`` (paths of ``workers`` to ``task.ps``) into ARO's node types. ``check``
    (a cancel token's) is called every few hundred nodes: building honours cancel and the limit.

    Which aggregators also get a bypass for rule 5 (an INP that could receive more flows than
    the fan-in) is settled first on the physical DAG (:func:`_crowded`), so the graph is built
    once: at fat-tree k=64 with 1,000 workers per job every task has such INPs, and building it
    a second time took half of the 6-7 s the four tasks' graphs took."""
    nodes_far_first = dag.nodes()
    aggregators = []
    bypass: set[str] = set()
    fan_in: dict[str, int] = {}
    for n in nodes_far_first:
        node = sc.node(n)
        if isinstance(node, Switch) and node.programmable:
            aggregators.append(n)
            fan_in[n] = fan_in_limit(node)
            if node.aggregation_capacity is not None or n in extra_bypass:
                bypass.add(n)
    agg = frozenset(aggregators)
    worker_set = set(workers)
    ps = task.ps
    # the ingress pipeline of every DAG edge into an aggregator (the INP it feeds)
    pipe: dict[tuple[str, str], int] = {}
    for u in nodes_far_first:
        for v in dag.succ.get(u, ()):
            if v in agg and v != ps:
                pipe[(u, v)] = sc.ingress_pipeline(u, v)
    while crowded := _crowded(dag, nodes_far_first, worker_set, ps, agg, bypass, fan_in, pipe):
        bypass |= crowded  # rule 5 may bind: let the excess flows cross those switches unmerged
    g = TaskGraph(task, workers, dag, agg, frozenset(bypass), fan_in=fan_in)
    limited = {n for n in g.bypass if sc.node(n).aggregation_capacity is not None}  # type: ignore[union-attr]

    def out_nodes(u: str) -> list[UNode]:
        if u in worker_set:
            return [("w", u)]
        if u in agg:
            return [("op", u), ("cs", u)] if u in g.bypass else [("op", u)]
        return [("cs", u)]

    edges, out_edges, in_edges = g.edges, g.out_edges, g.in_edges
    inps: dict[UNode, None] = {}
    order: dict[UNode, None] = {}
    for n_done, u in enumerate(nodes_far_first):
        if check is not None and n_done % 256 == 0:
            check()
        tails = out_nodes(u) if u != ps else [("ps", u)]
        for o in tails:
            order.setdefault(o, None)
        succ = dag.succ.get(u, ())
        if not succ:
            continue
        tail_out = [(tail, out_edges.setdefault(tail, [])) for tail in tails]
        for v in succ:
            link = (u, v)
            res: tuple[Resource, ...] = (("link", u, v),)
            if v == ps:
                heads: list[tuple[UNode, tuple[Resource, ...]]] = [(("ps", v), res)]
            elif v in agg:
                inp = ("inp", v, pipe[link])
                inps.setdefault(inp, None)
                inp_res = (*res, ("switch", v)) if v in limited else res
                heads = [(inp, inp_res), (("cs", v), res)] if v in g.bypass else [(inp, inp_res)]
            else:
                heads = [(("cs", v), res)]
            for tail, outs in tail_out:
                for head, head_res in heads:
                    k = len(edges)
                    edges.append(UEdge(tail, head, link, head_res))
                    outs.append(k)
                    ins = in_edges.get(head)
                    if ins is None:
                        ins = in_edges[head] = []
                    ins.append(k)
    g.inps = sorted(inps, key=lambda n: (-dag.dist[n[1]], n[1], n[2]))
    # topological order: by physical distance, INPs and bypass before the OP of the same switch
    kind_rank = {"w": 0, "inp": 1, "cs": 2, "op": 3, "ps": 4}
    nodes = set(order) | set(g.inps) | {h for h in g.in_edges}
    g.nodes = sorted(nodes, key=lambda n: (-dag.dist[n[1]], kind_rank[n[0]], n[1:]))
    g.ub = _upper_bounds(g)
    crowded = {n[1] for n in g.inps if n[1] not in g.bypass
               and sum(g.ub[k] for k in g.in_edges.get(n, [])) > g.fan_in[n[1]]}
    if crowded:  # never expected: _crowded settled them (the graph's own check, kept as a guard)
        return build_task_graph(sc, task, workers, dag, frozenset(bypass) | crowded, check)
    return g


def _crowded(dag: Dag, nodes_far_first: list[str], worker_set: set[str], ps: str, agg: frozenset[str],
             bypass: set[str], fan_in: dict[str, int], pipe: dict[tuple[str, str], int]) -> set[str]:
    """The aggregators without a bypass with an INP that could receive more flows than their
    fan-in, given ``bypass``: :func:`_upper_bounds` on the graph :func:`build_task_graph` would
    build, worked out per physical node. A worker sends 1 flow; an aggregator's OP at most one
    per INP, its bypass copy and a plain switch what they receive; an edge into an INP carries at
    most the fan-in."""
    n_inps: dict[str, int] = {}
    for v in {(v, p) for (_u, v), p in pipe.items()}:
        n_inps[v[0]] = n_inps.get(v[0], 0) + 1
    cs_in: dict[str, int] = {}
    inp_in: dict[tuple[str, int], int] = {}
    for u in nodes_far_first:
        if u == ps:
            continue
        if u in worker_set:
            outs = (1,)
        elif u in agg:
            outs = (n_inps.get(u, 0), cs_in.get(u, 0)) if u in bypass else (n_inps.get(u, 0),)
        else:
            outs = (cs_in.get(u, 0),)
        total = sum(outs)
        for v in dag.succ.get(u, ()):
            if v == ps:
                continue
            if v in agg:
                cap = fan_in[v]
                key = (v, pipe[(u, v)])
                inp_in[key] = inp_in.get(key, 0) + sum(min(o, cap) for o in outs)
                if v in bypass:
                    cs_in[v] = cs_in.get(v, 0) + total
            else:
                cs_in[v] = cs_in.get(v, 0) + total
    return {v for (v, _p), flows in inp_in.items() if v not in bypass and flows > fan_in[v]}


def task_graphs(sc: Scenario, tasks: list[Task] | None = None,
                check: Callable[[], None] | None = None, dags: list[Dag] | None = None) -> list[TaskGraph]:
    """Each task's graph (in order; all of ``sc``'s tasks by default): the shortest up-down paths
    from its job's workers (all but the PS itself) to its PS (``dags``, when made already: one per
    task, in order), decomposed by :func:`build_task_graph`. ``check`` is called before each task
    and while building."""
    tasks = sc.tasks() if tasks is None else tasks
    dags = task_dags(sc, tasks, check) if dags is None else dags
    out = []
    for t, dag in zip(tasks, dags, strict=True):
        if check is not None:
            check()
        workers = tuple(w for w in sc.job(t.job).workers if w != t.ps)
        out.append(build_task_graph(sc, t, workers, dag, check=check))
    return out


def _upper_bounds(g: TaskGraph) -> list[int]:
    """Largest number of flows each edge can carry: a worker sends 1, an INP 1, an OP one per INP
    of its switch, a CS what it receives (the "scores" of ARO's APP use the same counts)."""
    most_out: dict[UNode, int] = {}
    ub = [0] * len(g.edges)
    n_inps: dict[str, int] = {}
    for n in g.inps:
        n_inps[n[1]] = n_inps.get(n[1], 0) + 1
    for n in g.nodes:
        kind = n[0]
        if kind == "w":
            most_out[n] = 1
        elif kind == "inp":
            most_out[n] = 1
        elif kind == "op":
            most_out[n] = n_inps.get(n[1], 0)
        elif kind == "cs":
            most_out[n] = sum(ub[k] for k in g.in_edges.get(n, []))
        for k in g.out_edges.get(n, []):
            head = g.edges[k].head
            ub[k] = min(most_out[n], g.fan_in[head[1]]) if head[0] == "inp" else most_out[n]
    return ub


def inp_scores(g: TaskGraph) -> dict[UNode, int]:
    """ARO APP score of each INP: the most flows its upstream nodes may send into it (Fig. 6)."""
    return {n: sum(g.ub[k] for k in g.in_edges.get(n, [])) for n in g.inps}
