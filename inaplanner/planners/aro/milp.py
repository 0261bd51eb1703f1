"""A small sparse MILP builder solved by HiGHS through highspy directly.

ARO's models have tens of thousands of integer columns at the paper's scaling setting; PuLP builds
them one Python object at a time and hands them to HiGHS column by column, which costs more than
solving. This builder keeps plain lists and passes the whole matrix in one call (measured in
``benchmarks/bench_aro.py --build``). Status, bound and cancel follow
:func:`inaplanner.planners.solver.solve`: ``optimal`` (proven), ``feasible``/``timeout`` (an
incumbent without proof), ``infeasible``; a fired :class:`CancelToken` interrupts HiGHS from its
callback and raises :class:`~inaplanner.errors.Cancelled`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import highspy
import numpy as np

from inaplanner.errors import Cancelled
from inaplanner.planners.solver import (
    CancelToken,
    highs_status,
    mip_reporter,
    silence_banner,
    solver_name,
)
from inaplanner.progress import Progress

INF = highspy.kHighsInf
#: Interior point is watched for cancel and the deadline only above this many nonzeros. Its
#: interrupt callback fires every few microseconds of work (4,384 times in a 0.03 s solve of
#: a fat-tree k=8 check, 1,358 columns and 4,696 nonzeros), and through highspy each call costs
#: Python time: 30-40 % of such a solve (0.042 s against 0.031 s), and ARO's level refutation
#: makes hundreds of them. Below this size a solve takes under 0.2 s (fat-tree k=16 with 200
#: workers per job, 34,362 nonzeros: 0.4 s), so cancel still acts well within a second: it is
#: honoured when the solve returns.
IPM_WATCH_MIN_NNZ = 20_000
#: The interrupt callback asks for cancel and the deadline at most this often (seconds, from the
#: end of one poll to the start of the next); the calls between return at once.
INTERRUPT_POLL_SECONDS = 0.01


@dataclass
class MilpResult:
    status: str  # optimal | feasible | timeout | infeasible | error (HiGHS gave no answer)
    objective: float | None
    bound: float | None  # dual bound in the model's own sense (max: upper, min: lower)
    values: np.ndarray | None
    seconds: float
    solver: str
    nodes: int = 0


@dataclass
class LpWarm:
    """What a simplex solve leaves for the next solve of a model of the same shape: its final
    basis, and (when it proved the LP infeasible) its dual ray, a Farkas certificate
    (:mod:`~inaplanner.planners.aro.certificates`)."""

    basis: highspy.HighsBasis | None = None
    ray: np.ndarray | None = None


class Milp:
    """Columns and rows collected in Python lists, passed to HiGHS in one go."""

    def __init__(self, maximize: bool = False) -> None:
        self.maximize = maximize
        self.lb: list[float] = []
        self.ub: list[float] = []
        self.cost: list[float] = []
        self.integer: list[int] = []
        self.row_lo: list[float] = []
        self.row_hi: list[float] = []
        self.row_start: list[int] = [0]
        self.row_idx: list[int] = []
        self.row_val: list[float] = []

    @property
    def n_cols(self) -> int:
        return len(self.lb)

    @property
    def n_rows(self) -> int:
        return len(self.row_lo)

    def var(self, lb: float = 0.0, ub: float = INF, cost: float = 0.0, integer: bool = False) -> int:
        self.lb.append(lb)
        self.ub.append(ub)
        self.cost.append(cost)
        self.integer.append(1 if integer else 0)
        return len(self.lb) - 1

    def row(self, idx: list[int], val: list[float], lo: float = -INF, hi: float = INF) -> int:
        self.row_idx.extend(idx)
        self.row_val.extend(val)
        self.row_start.append(len(self.row_idx))
        self.row_lo.append(lo)
        self.row_hi.append(hi)
        return len(self.row_lo) - 1

    def solve(
        self,
        *,
        time_limit: float | None = None,
        cancel: CancelToken | None = None,
        gap: float | None = None,
        start: dict[int, float] | None = None,
        msg: bool = False,
        threads: int = 1,
        relax: bool = False,
        presolve: bool = True,
        ipm: bool = False,
        progress: Progress | None = None,
        stop: Callable[[], bool] | None = None,
        warm: LpWarm | None = None,
    ) -> MilpResult:
        """Solve; ``start`` is a (possibly partial) MIP start column -> value; ``relax`` drops
        integrality (the LP relaxation). With ``progress``, the MIP's incumbent and dual bound are
        reported (``phase="solve"``) as they improve. HiGHS' output is off unless ``msg``. ``stop``
        (e.g. a CPU-time deadline; HiGHS' own limit is wall-clock) interrupts it from its callback:
        the result is then ``timeout`` with what was found so far. ``warm`` (simplex only): the
        solve starts from its basis when that has this model's shape, and leaves its own final
        basis and, when the model is infeasible, its dual ray there."""
        begin = time.perf_counter()
        if cancel is not None:
            cancel.check()
        silence_banner()  # HiGHS' banner never reaches stdout
        h = highspy.Highs()
        h.setOptionValue("output_flag", bool(msg))
        h.setOptionValue("threads", threads)
        if time_limit is not None:
            h.setOptionValue("time_limit", max(float(time_limit), 0.01))
        if gap is not None:
            h.setOptionValue("mip_rel_gap", float(gap))
        if not presolve:  # HiGHS' presolve cannot be interrupted and can take seconds
            h.setOptionValue("presolve", "off")
        if ipm:  # interior point without crossover: on ARO's relaxations it settles feasibility
            h.setOptionValue("solver", "ipm")  # far sooner than simplex
            h.setOptionValue("run_crossover", "off")
        lp = highspy.HighsLp()
        lp.num_col_ = self.n_cols
        lp.num_row_ = self.n_rows
        lp.col_cost_ = np.asarray(self.cost, dtype=float)
        lp.col_lower_ = np.asarray(self.lb, dtype=float)
        lp.col_upper_ = np.asarray(self.ub, dtype=float)
        lp.row_lower_ = np.asarray(self.row_lo, dtype=float)
        lp.row_upper_ = np.asarray(self.row_hi, dtype=float)
        lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
        lp.a_matrix_.start_ = np.asarray(self.row_start, dtype=np.int32)
        lp.a_matrix_.index_ = np.asarray(self.row_idx, dtype=np.int32)
        lp.a_matrix_.value_ = np.asarray(self.row_val, dtype=float)
        lp.a_matrix_.num_col_ = self.n_cols
        lp.a_matrix_.num_row_ = self.n_rows
        lp.sense_ = highspy.ObjSense.kMaximize if self.maximize else highspy.ObjSense.kMinimize
        is_mip = not relax and any(self.integer)
        if is_mip:
            lp.integrality_ = [
                highspy.HighsVarType.kInteger if i else highspy.HighsVarType.kContinuous for i in self.integer
            ]
        h.passModel(lp)
        if warm is not None and warm.basis is not None and len(warm.basis.col_status) == self.n_cols \
                and len(warm.basis.row_status) == self.n_rows:
            h.setBasis(warm.basis)
        if start and is_mip:
            idx = np.fromiter(start.keys(), dtype=np.int32, count=len(start))
            val = np.fromiter(start.values(), dtype=float, count=len(start))
            h.setSolution(len(idx), idx, val)
        interrupted = {"flag": False}

        stopped = {"flag": False}

        polled = [-math.inf]

        def on_interrupt(event) -> None:  # noqa: ANN001 - highspy callback event
            if time.perf_counter() - polled[0] < INTERRUPT_POLL_SECONDS:
                return
            try:
                if cancel is not None and cancel.cancelled:
                    event.interrupt()
                    interrupted["flag"] = True
                elif stop is not None and stop():
                    event.interrupt()
                    stopped["flag"] = True
            finally:
                # from the end of this poll: two polls are that far apart however long the
                # process waited inside one (a loaded machine; the CI's test of this rule
                # failed once when the clock was read before the checks)
                polled[0] = time.perf_counter()

        if cancel is not None or stop is not None:
            h.cbSimplexInterrupt.subscribe(on_interrupt)
            if len(self.row_idx) > IPM_WATCH_MIN_NNZ:
                h.cbIpmInterrupt.subscribe(on_interrupt)
            h.cbMipInterrupt.subscribe(on_interrupt)
        if progress is not None and is_mip:
            report = mip_reporter(progress)
            h.cbMipInterrupt.subscribe(
                lambda event: report(event.data_out.mip_primal_bound, event.data_out.mip_dual_bound))
        h.run()
        seconds = time.perf_counter() - begin
        if interrupted["flag"] or (cancel is not None and cancel.cancelled):
            raise Cancelled("cancelled")
        status = h.getModelStatus()
        hs = highspy.HighsModelStatus
        if warm is not None:
            basis = h.getBasis()
            warm.basis = basis if basis.valid else None
            warm.ray = None
            if status == hs.kInfeasible:
                _, has_ray, ray = h.getDualRay()
                warm.ray = np.asarray(ray, dtype=float) if has_ray else None
        info = h.getInfo()
        has_sol = info.primal_solution_status == 2
        values = np.asarray(h.getSolution().col_value) if has_sol else None
        objective = float(info.objective_function_value) if has_sol else None
        bound: float | None = None
        if is_mip:
            raw = info.mip_dual_bound
            if raw is not None and abs(raw) < INF:
                bound = float(raw)
        elif status == hs.kOptimal:
            bound = objective
        nodes = int(getattr(info, "mip_node_count", 0) or 0)
        name = solver_name()
        verdict = highs_status(status, has_sol, stopped=stopped["flag"])
        if verdict == "optimal":
            return MilpResult("optimal", objective, objective if bound is None else bound, values, seconds, name, nodes)
        if verdict == "infeasible":
            return MilpResult("infeasible", None, None, None, seconds, name, nodes)
        if verdict == "error":  # a numerical failure or an unknown stop: no answer (undecided)
            return MilpResult("error", None, bound, None, seconds, name, nodes)
        return MilpResult(verdict, objective, bound, values, seconds, name, nodes)  # timeout | feasible
