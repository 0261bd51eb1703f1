"""ARO's model (section III-B) as mixed-integer *linear* programs HiGHS can solve.

Every formulation shares the per-task block (:func:`add_task_block`): integer flows y on the
unfolded edges (Eq. 4), worker constraints (5), binary INP usage x with aggregation (6)-(8),
conservation at CSs and OPs (9). They differ in how the capacity constraint (10),
``sum_i y[i]_e r[i] <= b_e``, is made linear:

* :func:`feasibility_model` — every rate fixed: (10) is linear and each y bounded by
  floor(b / r); the planner's work-horse (exact answer to "can task i send at r_i?").
* :func:`ratio_model` — the rates are fixed up to one common factor, r = theta * rho. With
  u = 1/theta, (10) reads ``sum_i rho_i y[i]_e <= b_e u`` and minimising u maximises theta. For one
  task (rho = 1) this *is* the paper's SJST model (Eq. 1), exactly; for several it is exact along
  the direction rho. (Its LP relaxation is weak: the planner uses it for a quick bound only.)
* :func:`exact_model` with ``qsr=True`` — QSR (section III-C): r[i] = Delta * k[i] with
  k[i] in {0..K}, Delta = b_bar / N (Eq. 11). k[i] is held both one-hot (z) and in binary (beta).
  A resource one task uses gets ``y <= sum_k floor(b / (Delta k)) z_k``; a shared one gets the exact
  products w = y * beta (integer times binary, bounded by y's upper bound).
* :func:`exact_model` with ``qsr=False`` — continuous rates, the products y * r written with the
  binary expansion of y and bounded products w = delta * r (binary times continuous) — an exact
  linearisation of the paper's MIQP.

"Exact" means the optimum of the MILP equals the optimum of the paper's model over the same graph
(up to the quantisation for QSR); tests check each against brute force on small instances.
"""

from __future__ import annotations

import itertools
import math
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from inaplanner.model import Scenario
from inaplanner.planners.aro.graph import Resource, TaskGraph, UNode, resource_capacity
from inaplanner.planners.aro.milp import INF, Milp

MU = 0.001


def _no_check() -> None:
    return None


@dataclass
class TaskBlock:
    graph: TaskGraph
    y: list[int]  # column of each edge
    x: list[int]  # column of each INP


@dataclass
class Flows:
    """A solution of one task in graph-independent form: y per (tail, head), x per INP."""

    y: dict[tuple[UNode, UNode], int] = field(default_factory=dict)
    x: dict[UNode, int] = field(default_factory=dict)


@dataclass
class Objective:
    """Which of ARO's objectives (Eqs. 1-3) applies: ``job_of[i]`` is task i's job index."""

    kind: str  # SJST | SJMT | MJMT
    job_of: list[int]
    weights: list[float]  # beta_s per job

    def throughputs(self, rates: np.ndarray | list[float]) -> np.ndarray:
        """Each job's throughput T_s: the sum of its tasks' rates."""
        thr = np.zeros(len(self.weights))
        for i, r in enumerate(rates):
            thr[self.job_of[i]] += r
        return thr

    def weighted(self, rates: np.ndarray | list[float]) -> np.ndarray:
        """Each job's weighted throughput beta_s T_s (Eq. 3)."""
        return np.asarray(self.weights) * self.throughputs(rates)

    def value(self, rates: np.ndarray | list[float]) -> float:
        if self.kind != "MJMT":
            return float(self.throughputs(rates).sum())
        w = self.weighted(rates)
        return float(w.min() + MU * w.sum())


def objective_for(sc: Scenario, tasks: list) -> Objective:
    jobs = [j.id for j in sc.jobs]
    job_of = [jobs.index(t.job) for t in tasks]
    weights = [j.weight for j in sc.jobs]
    if len(sc.jobs) == 1:
        kind = "SJST" if len(tasks) == 1 else "SJMT"
    else:
        kind = "MJMT"
    return Objective(kind, job_of, weights)


def add_task_block(m: Milp, g: TaskGraph, strengthen: bool = True, ub: list[int] | None = None,
                   bounds_at: list[tuple[int, UNode, int]] | None = None) -> TaskBlock:
    """Variables and constraints (4)-(9) of one task; ``ub`` overrides the graph's y bounds.
    ``bounds_at`` receives, per INP, where the y bounds enter its rows (:class:`FeasibilityShape`
    rewrites them per rate vector): its big-M row of (7), the INP, and its first one-edge row
    (one per in-edge, in order; -1 when none)."""
    ub = g.ub if ub is None else ub
    y = [m.var(0.0, float(u), integer=True) for u in ub]
    x = [m.var(0.0, 1.0, integer=True) for _ in g.inps]
    inp_col = dict(zip(g.inps, x, strict=True))
    for n in g.nodes:
        out = g.out_edges.get(n, [])
        inn = g.in_edges.get(n, [])
        kind = n[0]
        if kind == "w":  # (5)
            m.row([y[k] for k in out], [1.0] * len(out), 1.0, 1.0)
        elif kind == "cs":  # (9)
            m.row([y[k] for k in inn] + [y[k] for k in out], [1.0] * len(inn) + [-1.0] * len(out), 0.0, 0.0)
        elif kind == "inp":  # (7): x <= sum in <= M x; M <= max_fan_in is rule 5 (issue 17)
            xc = inp_col[n]
            big_m = float(min(sum(ub[k] for k in inn), g.fan_in.get(n[1], sum(ub[k] for k in inn)))) or 1.0
            m.row([xc] + [y[k] for k in inn], [1.0] + [-1.0] * len(inn), -INF, 0.0)
            bigm = m.row([y[k] for k in inn] + [xc], [1.0] * len(inn) + [-big_m], -INF, 0.0)
            one_edge = -1
            if strengthen and len(inn) > 1:
                one_edge = m.n_rows
                for k in inn:  # y_e <= ub_e x: the same rule, one edge at a time (tighter LP)
                    m.row([y[k], xc], [1.0, -float(ub[k])], -INF, 0.0)
            if bounds_at is not None:
                bounds_at.append((bigm, n, one_edge))
        elif kind == "op":  # (8) + (9): out = sum of the switch's INP outputs
            xs = [inp_col[p] for p in g.inps_of(n[1])]
            m.row(xs + [y[k] for k in out], [1.0] * len(xs) + [-1.0] * len(out), 0.0, 0.0)
    return TaskBlock(g, y, x)


def resource_usage(blocks: list[TaskBlock]) -> dict[Resource, dict[int, list[int]]]:
    """resource -> task index -> edge indices (into that task's graph) using it."""
    use: dict[Resource, dict[int, list[int]]] = {}
    for i, b in enumerate(blocks):
        for k, e in enumerate(b.graph.edges):
            for res in e.resources:
                use.setdefault(res, {}).setdefault(i, []).append(k)
    return use


def feasibility_columns(graphs: list[TaskGraph]) -> int:
    """The columns :func:`feasibility_model` will have (a y per edge and an x per INP of each
    task), known without building it (fat-tree k=64 with 1,000 workers per job: 3 s a build)."""
    return sum(len(g.edges) + len(g.inps) for g in graphs)


def feasibility_model(
    sc: Scenario, graphs: list[TaskGraph], rates: list[float], left: dict[Resource, float] | None = None,
    check: Callable[[], None] | None = None,
) -> tuple[Milp, list[TaskBlock]]:
    """Is there a plan where task i sends at ``rates[i]``? Constraints (4)-(9) and (10) with the
    rates fixed, which makes (10) linear: ``sum_i rates_i y[i]_e <= b_e``. Each y is also bounded
    by the flows its resources admit at that rate, and the bounds are propagated downstream, so the
    big-M of (7) is small and the LP relaxation tight (most checks end at the root node).
    ``left`` overrides the bandwidth of some resources (what other, already routed tasks left).
    ``check`` (e.g. a cancel token's) is called between blocks, so building honours cancel and
    the time limit. The model's shape depends on the graphs only (:class:`FeasibilityShape`,
    kept for the run on small enough lists of graphs); a call writes in the numbers."""
    shape = feasibility_shape(sc, graphs, check)
    return shape.model(rates, left, give=not shape.kept, check=check)  # one not kept gives its own lists


#: The shape of a joint check is kept (on ``graphs[0].memo``) up to this many columns: fat-tree
#: k=8's level refutation builds about 1,500 models of 1,358 columns, 6 ms each from scratch.
SHAPE_KEEP_MAX_COLS = 50_000


def feasibility_shape(sc: Scenario, graphs: list[TaskGraph], check: Callable[[], None] | None = None) -> FeasibilityShape:
    """The :class:`FeasibilityShape` of ``graphs``, kept for later calls when small enough."""
    if feasibility_columns(graphs) > SHAPE_KEEP_MAX_COLS or not graphs:
        return FeasibilityShape(sc, graphs, check)
    key = ("shape", tuple(id(g) for g in graphs), id(sc), sc.revision)
    entry = graphs[0].memo.get(key)
    if entry is None:
        entry = graphs[0].memo[key] = (FeasibilityShape(sc, graphs, check),)
        entry[0].keep()
    return entry[0]


class FeasibilityShape:
    """:func:`feasibility_model` of one list of graphs with every number that depends on the
    rates or the capacities left open: the y bounds (capacity at the rate, propagated by
    :func:`tight_bounds`), the big-M of (7) and the one-edge rows that follow them, the rates as
    coefficients of the shared rows (10) and the right-hand sides of the capacity rows. Rows and
    columns come in the same order as a model built from scratch, so :meth:`model` gives the
    same model, number for number."""

    def __init__(self, sc: Scenario, graphs: list[TaskGraph], check: Callable[[], None] | None = None) -> None:
        check = check or _no_check
        m = Milp(maximize=False)
        self.kept = False  # kept for later calls (:func:`feasibility_shape`)
        self.blocks: list[TaskBlock] = []
        bounds_at: list[list[tuple[int, UNode, int]]] = []
        for g in graphs:
            check()
            bounds_at.append([])
            self.blocks.append(add_task_block(m, g, bounds_at=bounds_at[-1]))
        index: dict[Resource, int] = {}
        single = array("q")  # row, resource, task, each in turn
        shared_rows = array("q")  # row, resource, each in turn
        shared_pos = array("q")  # the rate coefficients: position in row_val, task
        shared_task = array("q")
        for n_res, (res, per_task) in enumerate(resource_usage(self.blocks).items()):
            if n_res % 500 == 0:
                check()
            ri = index.setdefault(res, len(index))
            idx: list[int] = []
            for i, ks in per_task.items():
                idx.extend(self.blocks[i].y[k] for k in ks)
                if len(per_task) > 1:
                    shared_pos.extend(range(len(m.row_idx) + len(idx) - len(ks), len(m.row_idx) + len(idx)))
                    shared_task.extend(itertools.repeat(i, len(ks)))
            row = m.row(idx, [1.0] * len(idx), -INF, INF)
            if len(per_task) == 1:
                (i,) = per_task
                single.extend((row, ri, i))
            else:
                shared_rows.extend((row, ri))
        self.milp = m
        self.index = index
        self.caps = np.array([resource_capacity(sc, res) for res in index], dtype=float)
        self.single = np.frombuffer(single, dtype=np.int64).reshape(-1, 3)
        self.shared_rows = np.frombuffer(shared_rows, dtype=np.int64).reshape(-1, 2)
        self.shared_pos = np.frombuffer(shared_pos, dtype=np.int64)
        self.shared_task = np.frombuffer(shared_task, dtype=np.int64)
        starts = m.row_start
        # per task: each (edge, resource) pair; the big-M rows' coefficient positions, their
        # in-edges (flattened, with the INP each belongs to) and fan-in limits; the one-edge rows
        self.pairs: list[tuple[np.ndarray, np.ndarray]] = []
        self.bigm: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
        self.edge_rows: list[tuple[np.ndarray, np.ndarray]] = []
        for b, at in zip(self.blocks, bounds_at, strict=True):
            g = b.graph
            # arrays of machine integers, not lists: at fat-tree k=64 with 1,000 workers per job
            # lists of these indices raised the run's peak by 42 MB
            counts = np.fromiter((len(e.resources) for e in g.edges), dtype=np.int64, count=len(g.edges))
            res_of = np.fromiter((index[res] for e in g.edges for res in e.resources), dtype=np.int64,
                                 count=int(counts.sum()))
            self.pairs.append((np.repeat(np.arange(len(g.edges)), counts), res_of))
            pos, fan = array("q"), array("d")
            inn_edges, inn_owner, epos, eks = array("q"), array("q"), array("q"), array("q")
            for j, (row, n, one_edge) in enumerate(at):
                pos.append(starts[row + 1] - 1)
                inn = g.in_edges.get(n, [])
                inn_edges.extend(inn)
                inn_owner.extend(itertools.repeat(j, len(inn)))
                fan.append(float(g.fan_in.get(n[1], math.inf)))
                if one_edge >= 0:
                    epos.extend(starts[one_edge + t] + 1 for t in range(len(inn)))
                    eks.extend(inn)
            self.bigm.append((np.frombuffer(pos, dtype=np.int64), np.frombuffer(inn_edges, dtype=np.int64),
                              np.frombuffer(inn_owner, dtype=np.int64), np.frombuffer(fan, dtype=float)))
            self.edge_rows.append((np.frombuffer(epos, dtype=np.int64), np.frombuffer(eks, dtype=np.int64)))
        self._ub = np.array(m.ub, dtype=float)
        self._val = np.array(m.row_val, dtype=float)
        self._hi = np.array(m.row_hi, dtype=float)
        self._same: dict[str, np.ndarray] = {}

    #: the lists every model of the shape shares
    SAME = ("lb", "cost", "integer", "row_lo", "row_start", "row_idx")

    def keep(self) -> None:
        """Kept for later calls: the shared lists are held as arrays (a Python list of floats
        takes four times the memory), and each model gets its own copy."""
        self.kept = True
        self._same = {name: np.asarray(getattr(self.milp, name)) for name in self.SAME}
        self.milp = Milp(maximize=False)

    def model(self, rates: list[float], left: dict[Resource, float] | None = None,
              give: bool = False, check: Callable[[], None] | None = None) -> tuple[Milp, list[TaskBlock]]:
        """The feasibility model at ``rates``, with ``left`` overriding some capacities. ``give``
        (a shape used once, not kept): its own model is filled in and returned, no copy made.
        ``check`` is called before each task's bounds."""
        check = check or _no_check
        caps = self.caps
        if left:
            caps = caps.copy()
            for res, v in left.items():
                ri = self.index.get(res)
                if ri is not None:
                    caps[ri] = max(v, 0.0)
        r = np.asarray(rates, dtype=float)
        own = give and not self.kept  # then its arrays are written in place too
        ub, val, hi = (self._ub, self._val, self._hi) if own else (self._ub.copy(), self._val.copy(), self._hi.copy())
        for i, b in enumerate(self.blocks):
            check()
            g = b.graph
            edge_of, res_of = self.pairs[i]
            least = np.full(len(g.edges), np.inf)
            np.minimum.at(least, edge_of, caps[res_of])
            limit = np.floor(least / r[i] + 1e-9) if r[i] > 0 else np.full(len(g.edges), np.inf)
            yub = np.array(tight_bounds(g, limit.tolist()), dtype=float)
            ub[b.y] = yub
            pos, inn_edges, inn_owner, fan = self.bigm[i]
            if len(pos):
                total = np.bincount(inn_owner, weights=yub[inn_edges], minlength=len(pos))
                big = np.minimum(total, fan)
                val[pos] = -np.where(big == 0, 1.0, big)
            epos, edges = self.edge_rows[i]
            val[epos] = -yub[edges]
        if len(self.shared_pos):
            val[self.shared_pos] = r[self.shared_task]
            rows, res = self.shared_rows[:, 0], self.shared_rows[:, 1]
            hi[rows] = caps[res] * (1 + 1e-12)
        if len(self.single):
            rows, res, task = self.single[:, 0], self.single[:, 1], self.single[:, 2]
            rt = r[task]
            hi[rows] = np.where(rt > 0, np.floor(caps[res] / np.where(rt > 0, rt, 1.0) + 1e-9), INF)
        if own:
            m = self.milp
            m.ub = m.row_val = m.row_hi = []  # the old lists go before the new ones are made
        else:
            m = Milp(maximize=False)
            for name in self.SAME:
                setattr(m, name, self._same[name].tolist())
        m.ub, m.row_val, m.row_hi = ub.tolist(), val.tolist(), hi.tolist()
        return m, self.blocks


def tight_bounds(g: TaskGraph, limit: list[float]) -> list[int]:
    """The flow upper bounds of ``g.ub`` propagated with per-edge limits (capacity at a rate)."""
    most_out: dict[UNode, float] = {}
    ub = [0] * len(g.edges)
    n_inps: dict[str, int] = {}
    for n in g.inps:
        n_inps[n[1]] = n_inps.get(n[1], 0) + 1
    for n in g.nodes:
        kind = n[0]
        if kind in ("w", "inp"):
            most_out[n] = 1
        elif kind == "op":
            most_out[n] = n_inps.get(n[1], 0)
        elif kind == "cs":
            most_out[n] = sum(ub[k] for k in g.in_edges.get(n, []))
        for k in g.out_edges.get(n, []):
            ub[k] = int(min(most_out[n], limit[k], g.ub[k]))
    return ub


def ratio_model(
    sc: Scenario, graphs: list[TaskGraph], rho: list[float], *, u_max: float | None = None
) -> tuple[Milp, list[TaskBlock], int]:
    """Minimise u = 1/theta subject to (4)-(9) and ``sum_i rho_i y[i]_e <= b_e u`` (10)."""
    m = Milp(maximize=False)
    u = m.var(0.0, INF if u_max is None else u_max, cost=1.0)
    blocks = [add_task_block(m, g) for g in graphs]
    for res, per_task in resource_usage(blocks).items():
        cap = resource_capacity(sc, res)
        idx: list[int] = []
        val: list[float] = []
        for i, ks in per_task.items():
            idx.extend(blocks[i].y[k] for k in ks)
            val.extend([float(rho[i])] * len(ks))
        m.row(idx + [u], val + [-cap], -INF, 0.0)
    return m, blocks, u


@dataclass
class ExactModel:
    milp: Milp
    blocks: list[TaskBlock]
    qsr: bool
    delta: float  # Gbps per level (QSR), 0 for continuous rates
    rate_expr: list[tuple[list[int], list[float]]]  # r_i as (cols, coefs)
    level_cols: list[list[int]] = field(default_factory=list)  # QSR: one-hot z_i0..z_iK
    bit_cols: list[list[int]] = field(default_factory=list)  # QSR: beta_i0..
    products: list[tuple] = field(default_factory=list)  # (task, edge idxs, ub, [(bit, w col, delta col)])
    t_col: int | None = None


def qsr_delta(sc: Scenario, graphs: list[TaskGraph], levels: int) -> float:
    """Delta = b_bar / N with b_bar the largest link bandwidth of the model (Eq. 11)."""
    caps = [resource_capacity(sc, r) for g in graphs for e in g.edges for r in e.resources if r[0] == "link"]
    b_bar = max(caps, default=1.0) or 1.0
    return b_bar / levels


def exact_model(
    sc: Scenario,
    graphs: list[TaskGraph],
    objective: Objective,
    rate_ub: list[float],
    *,
    qsr: bool,
    levels: int = 100,
    check: Callable[[], None] | None = None,
) -> ExactModel:
    """The full multi-task model with (10) linearised exactly (see the module docstring)."""
    check = check or _no_check
    m = Milp(maximize=True)
    blocks = []
    for g in graphs:
        check()
        blocks.append(add_task_block(m, g))
    n = len(graphs)
    em = ExactModel(m, blocks, qsr, qsr_delta(sc, graphs, levels) if qsr else 0.0, [])
    if qsr:
        delta = em.delta
        for i in range(n):
            top = max(0, min(levels, math.floor(rate_ub[i] / delta + 1e-9)))
            z = [m.var(0.0, 1.0, integer=True) for _ in range(top + 1)]
            m.row(z, [1.0] * len(z), 1.0, 1.0)
            nbits = max(top.bit_length(), 1)
            beta = [m.var(0.0, 1.0, integer=True) for _ in range(nbits)]
            m.row(z + beta, [float(k) for k in range(top + 1)] + [-(2.0**b) for b in range(nbits)], 0.0, 0.0)
            em.level_cols.append(z)
            em.bit_cols.append(beta)
            em.rate_expr.append((z, [delta * k for k in range(top + 1)]))
    else:
        for i in range(n):
            r = m.var(0.0, max(rate_ub[i], 0.0))
            em.rate_expr.append(([r], [1.0]))
    for n_res, (res, per_task) in enumerate(resource_usage(blocks).items()):
        if n_res % 200 == 0:
            check()
        cap = resource_capacity(sc, res)
        shared = len(per_task) > 1
        load_idx: list[int] = []
        load_val: list[float] = []
        for i, ks in per_task.items():
            ycols = [blocks[i].y[k] for k in ks]
            yub = int(sum(graphs[i].ub[k] for k in ks))
            if yub == 0:
                continue
            if qsr:
                z = em.level_cols[i]
                # y <= floor(cap / (Delta k)) for the chosen level k (k = 0: no limit)
                coef = [float(yub)] + [float(min(yub, math.floor(cap / (em.delta * k) + 1e-9))) for k in range(1, len(z))]
                m.row(ycols + z, [1.0] * len(ycols) + [-c for c in coef], -INF, 0.0)
                if not shared:
                    continue
                for b, bc in enumerate(em.bit_cols[i]):  # w >= y - yub (1 - beta_b), w >= 0
                    w = m.var(0.0, float(yub))
                    m.row(ycols + [w, bc], [1.0] * len(ycols) + [-1.0, float(yub)], -INF, float(yub))
                    load_idx.append(w)
                    load_val.append(2.0**b)
                    em.products.append((i, ks, yub, b, w, bc))
            else:
                r_col = em.rate_expr[i][0][0]
                rub = max(rate_ub[i], 0.0)
                nbits = max(yub.bit_length(), 1)
                deltas = [m.var(0.0, 1.0, integer=True) for _ in range(nbits)]
                m.row(ycols + deltas, [1.0] * len(ycols) + [-(2.0**b) for b in range(nbits)], 0.0, 0.0)
                for b, dc in enumerate(deltas):  # w >= r - R (1 - delta_b), w >= 0
                    w = m.var(0.0, rub)
                    m.row([r_col, w, dc], [1.0, -1.0, rub], -INF, rub)
                    load_idx.append(w)
                    load_val.append(2.0**b)
                    em.products.append((i, ks, yub, b, w, dc))
        if qsr and not shared:
            continue
        if load_idx:
            limit = math.floor(cap / em.delta + 1e-9) if qsr else cap
            m.row(load_idx, load_val, -INF, float(limit))
    # objective (1)-(3)
    if objective.kind == "MJMT":
        t = m.var(0.0, INF, cost=1.0)
        em.t_col = t
        for s, beta_s in enumerate(objective.weights):
            idx, val = [t], [1.0]
            for i in range(n):
                if objective.job_of[i] == s:
                    cols, coefs = em.rate_expr[i]
                    idx.extend(cols)
                    val.extend(-beta_s * c for c in coefs)
            m.row(idx, val, -INF, 0.0)
        for i in range(n):
            cols, coefs = em.rate_expr[i]
            w = MU * objective.weights[objective.job_of[i]]
            for c, v in zip(cols, coefs, strict=True):
                m.cost[c] += w * v
    else:
        for i in range(n):
            cols, coefs = em.rate_expr[i]
            for c, v in zip(cols, coefs, strict=True):
                m.cost[c] += v
    return em


def exact_start(em: ExactModel, flows: list[Flows], rates: list[float], objective: Objective) -> dict[int, float]:
    """A complete MIP start from per-task flows and rates (rates rounded down to a level)."""
    start: dict[int, float] = {}
    ys: list[np.ndarray] = []
    for b, f in zip(em.blocks, flows, strict=True):
        yv = np.array([float(f.y.get(b.graph.edge_key(k), 0)) for k in range(len(b.y))])
        ys.append(yv)
        start.update(zip(b.y, yv, strict=True))
        start.update((c, float(f.x.get(n, 0))) for c, n in zip(b.x, b.graph.inps, strict=True))
    used_rates = []
    for i, r in enumerate(rates):
        if em.qsr:
            z = em.level_cols[i]
            k = max(0, min(len(z) - 1, math.floor(r / em.delta + 1e-9)))
            start.update((c, 1.0 if j == k else 0.0) for j, c in enumerate(z))
            start.update((c, float((k >> bit) & 1)) for bit, c in enumerate(em.bit_cols[i]))
            used_rates.append(k * em.delta)
        else:
            start[em.rate_expr[i][0][0]] = float(r)
            used_rates.append(float(r))
    for i, ks, _yub, b, w, bc in em.products:
        yi = int(round(sum(ys[i][k] for k in ks)))
        if em.qsr:
            k = int(round(used_rates[i] / em.delta))
            start[w] = float(yi if (k >> b) & 1 else 0)
        else:
            bit = (yi >> b) & 1
            start[bc] = float(bit)
            start[w] = used_rates[i] if bit else 0.0
    if em.t_col is not None:
        start[em.t_col] = float(objective.weighted(used_rates).min())
    return start


def block_flows(block: TaskBlock, values: np.ndarray) -> Flows:
    """Round a solution of one task block to integers."""
    g = block.graph
    f = Flows()
    for k, c in enumerate(block.y):
        v = int(round(values[c]))
        if v:
            f.y[g.edge_key(k)] = v
    for n, c in zip(g.inps, block.x, strict=True):
        if round(values[c]):
            f.x[n] = 1
    return f
