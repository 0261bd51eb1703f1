"""Solving PuLP models with HiGHS (highspy) by default, CBC as fallback, with time limit and cancel.

``solve`` returns an honest status (:func:`highs_status`): ``optimal`` (proven), ``feasible`` (an
incumbent without proof), ``timeout`` (the limit stopped it, with or without an incumbent: never
``infeasible``), ``infeasible`` (proven), or raises
:class:`~inaplanner.errors.Cancelled` when the cancel token fired (HiGHS is interrupted from its
callback within a fraction of a second). The dual bound of a MIP is reported as ``bound``.
"""

from __future__ import annotations

import logging
import math
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pulp

from inaplanner.errors import Cancelled, PlanError
from inaplanner.progress import CancelToken, Progress, current_progress

__all__ = [
    "CancelToken", "SolveResult", "WarmLp", "highs_status", "mip_reporter", "new_variable", "solve",
    "solver_name",
]

log = logging.getLogger("inaplanner.solver")

try:
    import highspy
except ImportError:  # pragma: no cover - highspy is a declared dependency
    highspy = None


@dataclass
class SolveResult:
    status: str  # optimal | feasible | timeout | infeasible
    objective: float | None
    bound: float | None
    seconds: float
    solver: str
    #: a limit stopped an LP before any feasible point, and its variables hold the interior-point
    #: method's last iterate (``solve(..., iterate=True)`` only)
    iterate: bool = False


def solver_name() -> str:
    if highspy is not None:
        parts = [getattr(highspy, f"HIGHS_VERSION_{p}", None) for p in ("MAJOR", "MINOR", "PATCH")]
        return "HiGHS " + ".".join(map(str, parts)) if None not in parts else "HiGHS"
    return "CBC"


_banner_lock = threading.Lock()
_banner_written = False


def silence_banner() -> None:
    """Make sure HiGHS' start-up banner ("Running HiGHS ...") never reaches stdout.

    HiGHS writes it once per process, from C, the first time an instance starts with its output
    on, which ``highspy.Highs()`` does before any option can be set. So the first instance of the
    process is made here with file descriptor 1 pointed at the null device; every later one (ours
    or PuLP's) is silent as far as the banner goes, and their log follows ``output_flag``."""
    global _banner_written
    if highspy is None or _banner_written:
        return
    with _banner_lock:
        if _banner_written:
            return
        _banner_written = True
        try:
            sys.stdout.flush()
            saved = os.dup(1)
        except (OSError, ValueError, AttributeError):  # no stdout at all: nothing to protect
            highspy.Highs()
            return
        try:
            with open(os.devnull, "w") as null:
                os.dup2(null.fileno(), 1)
                highspy.Highs()
        finally:
            os.dup2(saved, 1)
            os.close(saved)


def new_variable(prob: pulp.LpProblem, name: str, low: float | None = None,
                 up: float | None = None, cat: str = pulp.LpContinuous) -> pulp.LpVariable:
    """A variable of ``prob``, made the way the installed PuLP wants: ``prob.add_variable`` where it
    exists (PuLP >= 3.3.1, the PuLP 4 API; a bare ``LpVariable(...)`` is deprecated there), else
    ``LpVariable`` (the older PuLP the dependency floor allows)."""
    add = getattr(prob, "add_variable", None)
    if add is not None:
        return add(name, lowBound=low, upBound=up, cat=cat)
    return pulp.LpVariable(name, lowBound=low, upBound=up, cat=cat)


def highs_status(model_status: object, has_solution: bool, stopped: bool = False) -> str:
    """THE mapping of a HiGHS model status to inaplanner's solve status, for the PuLP path
    (:func:`solve`) and the highspy path (:meth:`inaplanner.planners.aro.milp.Milp.solve`) alike:

    * ``optimal``: proven optimal;
    * ``infeasible``: HiGHS proved there is no solution (infeasible, or unbounded-or-infeasible);
    * ``timeout``: the time limit (or a ``stop`` deadline of ours, ``stopped``) ended the solve,
      with or without an incumbent: a time-out is never reported as ``infeasible``;
    * ``feasible``: another stop (iteration or solution limit...) with an incumbent;
    * ``error``: stopped without an answer (a numerical failure, an unknown status).
    """
    hs = highspy.HighsModelStatus
    if model_status == hs.kOptimal:
        return "optimal"
    if model_status in (hs.kInfeasible, hs.kUnboundedOrInfeasible):
        return "infeasible"
    if model_status == hs.kTimeLimit or stopped:
        return "timeout"
    return "feasible" if has_solution else "error"


#: what a MIP's callback reports to the progress (see :func:`mip_reporter`)
Reports = Literal["both", "bound", "none"]


def mip_reporter(progress: Progress | None, sign: float = 1.0,
                 reports: Reports = "both") -> Callable[[float, float], None]:
    """A function for a HiGHS MIP callback: given HiGHS' primal and dual bound (times ``sign``:
    -1 when the model was negated to minimise), reports ``phase="solve"`` with the incumbent and
    the bound to ``progress`` when either improved (nothing when ``progress`` is None).
    ``reports``: ``both``; ``bound``, for a model whose solutions are not yet plans (GRID's MILP
    ignores the links: the planner's incumbent is the evaluator's score of a plan); ``none``, for
    a model whose objective is not the planner's (GRID's tie-break re-solves minimise overload)."""
    seen: dict[str, float | None] = {"incumbent": None, "bound": None}

    def report(primal: float, dual: float) -> None:
        if progress is None or reports == "none":
            return
        inc = sign * float(primal) if reports == "both" and primal is not None and abs(primal) < 1e300 else None
        bnd = sign * float(dual) if dual is not None and abs(dual) < 1e300 else None
        inc = inc if inc is not None and math.isfinite(inc) else None
        bnd = bnd if bnd is not None and math.isfinite(bnd) else None
        if (inc, bnd) == (seen["incumbent"], seen["bound"]) or (inc is None and bnd is None):
            return
        seen["incumbent"], seen["bound"] = inc, bnd
        progress.update(phase="solve", incumbent=inc, bound=bnd)

    return report


def solve(
    prob: pulp.LpProblem,
    *,
    time_limit: float | None = None,
    cancel: CancelToken | None = None,
    gap: float | None = None,
    msg: bool = False,
    on_log: Callable[[str], None] | None = None,
    options: dict[str, object] | None = None,
    progress: Progress | None = None,
    reports: Reports = "both",
    iterate: bool = False,
) -> SolveResult:
    """Solve ``prob`` in place (variable values set) and report status, objective and bound.
    ``options`` are HiGHS options (e.g. ``{"solver": "ipm"}``); CBC ignores them. HiGHS' log never
    reaches stdout: it goes to ``on_log`` or, at DEBUG level, to the ``inaplanner.solver`` logger.
    A MIP's incumbent and bound go to ``progress`` (default: the current one) as they improve,
    as ``reports`` says (see :func:`mip_reporter`). ``iterate``: an LP that its time or iteration
    limit stops before it has a feasible point returns ``timeout`` with ``iterate`` set and the
    interior-point method's last iterate in its variables, when it made one iteration or more
    (an iteration limit would otherwise raise, and a time limit leave values no caller should
    read). Such a point satisfies no constraint exactly and proves nothing: it only guides a
    rounding."""
    start = time.perf_counter()
    if progress is None:
        progress = current_progress()
    if on_log is None and not msg and log.isEnabledFor(logging.DEBUG):
        on_log = log.debug
    report = mip_reporter(progress, -1.0 if prob.sense == pulp.LpMaximize else 1.0, reports)
    if cancel is not None:
        cancel.check()
    if highspy is None:
        return _solve_cbc(prob, time_limit, gap, msg, start)
    # the callback stays on the HiGHS model that WarmLp re-solves with other objectives: it goes
    # on honouring cancel there, but reports only while this solve runs
    run = {"interrupted": False, "reporting": True}

    def callback(cb_type, message, data_out, data_in, user_data):  # noqa: ANN001 - highspy API
        if cb_type == highspy.cb.HighsCallbackType.kCallbackLogging:
            if on_log is not None and message:
                on_log(message.rstrip())
            return
        if (cb_type == highspy.cb.HighsCallbackType.kCallbackMipInterrupt and data_out is not None
                and run["reporting"]):
            report(data_out.mip_primal_bound, data_out.mip_dual_bound)
        if cancel is not None and cancel.cancelled and data_in is not None:
            data_in.user_interrupt = True
            run["interrupted"] = True

    kinds = [
        highspy.cb.HighsCallbackType.kCallbackMipInterrupt,
        highspy.cb.HighsCallbackType.kCallbackSimplexInterrupt,
        highspy.cb.HighsCallbackType.kCallbackIpmInterrupt,
    ]
    if on_log is not None:
        kinds.append(highspy.cb.HighsCallbackType.kCallbackLogging)
    solver = _TimedHiGHS(
        time_limit,
        msg=msg or on_log is not None,
        gapRel=gap,
        callbackTuple=(callback, None),
        callbacksToActivate=kinds,
        threads=1,
        **({} if msg else {"log_to_console": False}),  # the log goes to on_log, never stdout
        **(options or {}),
    )
    silence_banner()
    prob.solve(solver)
    run["reporting"] = False
    seconds = time.perf_counter() - start
    if run["interrupted"] or (cancel is not None and cancel.cancelled):
        raise Cancelled("cancelled")
    model = prob.solverModel
    status = model.getModelStatus()
    hs = highspy.HighsModelStatus
    info = model.getInfo()
    has_sol = info.primal_solution_status == 2  # kSolutionStatusFeasible
    # HiGHS counts nodes only for a MIP (-1 for an LP); prob.variables() would take 0.7 s on
    # GRID's MILP at fat-tree k=32 (PuLP collects them from every row again)
    is_mip = info.mip_node_count >= 0
    objective = pulp.value(prob.objective) if has_sol else None
    bound: float | None = objective if status == hs.kOptimal else None
    if is_mip:
        raw = info.mip_dual_bound
        if raw is not None and abs(raw) < highspy.kHighsInf:
            # PuLP hands HiGHS -objective when maximising, so the bound comes back negated
            bound = -float(raw) if prob.sense == pulp.LpMaximize else float(raw)
    verdict = highs_status(status, has_sol)
    if iterate and not has_sol and not is_mip and status in (hs.kTimeLimit, hs.kIterationLimit) \
            and info.ipm_iteration_count > 0 and len(model.getSolution().col_value) == model.getNumCol():
        # HiGHS leaves the iterate in the solution without marking it valid (value_valid is
        # false: it is not a solution); PuLP has copied it into the variables
        return SolveResult("timeout", None, None, seconds, solver_name(), iterate=True)
    if verdict == "optimal":
        return SolveResult("optimal", objective, objective if bound is None else bound, seconds, solver_name())
    if verdict == "infeasible":
        return SolveResult("infeasible", None, None, seconds, solver_name())
    if verdict == "error":
        raise PlanError(f"solver stopped without a solution ({status})")
    return SolveResult(verdict, objective, bound, seconds, solver_name())  # timeout | feasible


if highspy is not None:
    class _TimedHiGHS(pulp.HiGHS):
        """PuLP's HiGHS with its time limit set again just before the run: what is left of it,
        less as long again as the handover took. Handing a large model over takes seconds, and
        reading the solution back about as long (GRID's MILP on fat-tree k=32, 236,000 columns:
        2.2 s and 1.3 s); HiGHS' own clock sees neither, so the solve would return that much past
        the caller's limit (3.7 s there, before this)."""

        def __init__(self, time_limit: float | None, **kwargs: Any) -> None:
            super().__init__(timeLimit=time_limit, **kwargs)
            self._limit = time_limit
            self._made = time.perf_counter()

        def callSolver(self, lp: pulp.LpProblem) -> None:  # noqa: N802 - PuLP's name
            if self._limit is not None:
                handover = time.perf_counter() - self._made
                # at least a moment to return what it has, never more than was given
                left = max(self._limit - 2.0 * handover, min(self._limit, 0.05))
                lp.solverModel.setOptionValue("time_limit", left)
            super().callSolver(lp)


def _solve_cbc(prob: pulp.LpProblem, time_limit: float | None, gap: float | None, msg: bool, start: float) -> SolveResult:
    prob.solve(pulp.PULP_CBC_CMD(msg=msg, timeLimit=time_limit, gapRel=gap))
    seconds = time.perf_counter() - start
    st = pulp.LpStatus[prob.status]
    obj = pulp.value(prob.objective)
    if st == "Optimal":
        return SolveResult("optimal", obj, obj, seconds, "CBC")
    if st == "Infeasible":
        return SolveResult("infeasible", None, None, seconds, "CBC")
    if obj is not None:
        return SolveResult("timeout", obj, None, seconds, "CBC")
    raise PlanError(f"CBC stopped without a solution ({st})")


class WarmLp:
    """Follow-up solves of an LP that :func:`solve` has just solved with HiGHS, each started from
    the previous optimal basis instead of from scratch (lexicographic tie-breaks: hold the first
    objective, minimise a second one, and so on). Rows and variables given to :meth:`add` go to
    the live HiGHS model in one batch before the next :meth:`solve`, which sets a new objective,
    runs HiGHS' simplex from the last basis and writes the values back to the PuLP
    variables of the first solve (new variables get theirs too). Without highspy (the CBC
    fallback) rows go to the PuLP problem and every :meth:`solve` is a full :func:`solve`."""

    def __init__(self, prob: pulp.LpProblem) -> None:
        self.prob = prob
        model = getattr(prob, "solverModel", None)
        self.h = model if highspy is not None and isinstance(model, highspy.Highs) else None
        self.col: dict[str, int] = {}
        self.new_vars: list[pulp.LpVariable] = []
        self._cols: list[tuple[float, float]] = []  # bounds of columns not yet in the model
        self._rows: list[tuple[float, float, list[int], list[float]]] = []
        self._swaps: list[tuple[str, int]] = []  # (new column, new row): basic in the row's place
        if self.h is not None:
            self.col = {v.name: v.index for v in prob.variables()}
            self._n = self.h.getNumCol()

    def _index(self, v: pulp.LpVariable) -> int:
        k = self.col.get(v.name)
        if k is None:
            lo = -math.inf if v.lowBound is None else float(v.lowBound)
            hi = math.inf if v.upBound is None else float(v.upBound)
            self._cols.append((lo, hi))
            self.new_vars.append(v)
            k = self.col[v.name] = self._n
            self._n += 1
        return k

    def add(self, constraint: pulp.LpConstraint, name: str | None = None) -> None:
        if self.h is None:
            self.prob += (constraint, name) if name else constraint
            return
        lo, hi = constraint.getLb(), constraint.getUb()
        self.add_row(list(constraint.items()), -math.inf if lo is None else float(lo),
                     math.inf if hi is None else float(hi))

    def add_row(self, terms: list[tuple[pulp.LpVariable, float]], lo: float, hi: float, *,
                basic: pulp.LpVariable | None = None) -> None:
        """``lo <= sum c v <= hi`` without building a PuLP expression (GRID adds one per link).

        ``basic``: a new variable of this row (coefficient 1, not yet in the model) that the next
        :meth:`solve` starts basic in the row's place, the row at its lower bound ``lo``. Give it
        for a row the current values break, whose variable takes up the difference (an overload
        ``o >= load - cap``): the solve then starts from a primal feasible basis instead of
        repairing the broken rows first. GRID's overload stage on leaf-spine lambda = 3 seed 1:
        0.11 s against 1.86 s (2,079 against 4,627 simplex iterations); fat-tree k=8 seeds 0-2:
        0.02 / 0.10 / 0.03 s against 0.06 / 0.15 / 0.09 s."""
        if self.h is None:
            expr = pulp.LpAffineExpression(terms)
            if lo > -math.inf:
                self.prob += expr >= lo
            if hi < math.inf:
                self.prob += expr <= hi
            return
        if basic is not None:
            assert basic.name not in self.col, "the basic variable must be new to the model"
            self._swaps.append((basic.name, self.h.getNumRow() + len(self._rows)))
        items = [(self._index(v), float(c)) for v, c in terms if c != 0]
        self._rows.append((lo, hi, [k for k, _ in items], [c for _, c in items]))

    def _flush(self) -> None:
        assert self.h is not None
        inf = highspy.kHighsInf
        if self._cols:
            n = len(self._cols)
            self.h.addCols(n, np.zeros(n), np.array([max(lo, -inf) for lo, _ in self._cols]),
                           np.array([min(hi, inf) for _, hi in self._cols]), 0,
                           np.zeros(n, dtype=np.int32), np.zeros(0, dtype=np.int32), np.zeros(0))
            self._cols = []
        if self._rows:
            starts, idx, val = [], [], []
            for _lo, _hi, i, v in self._rows:
                starts.append(len(idx))
                idx.extend(i)
                val.extend(v)
            self.h.addRows(len(self._rows), np.array([max(r[0], -inf) for r in self._rows]),
                           np.array([min(r[1], inf) for r in self._rows]), len(idx),
                           np.array(starts, dtype=np.int32), np.array(idx, dtype=np.int32),
                           np.array(val, dtype=float))
            self._rows = []
        if self._swaps:
            # new rows come in basic and new columns nonbasic at their bound; swap the pairs
            basis = self.h.getBasis()
            cols, rows = list(basis.col_status), list(basis.row_status)
            for name, row in self._swaps:
                cols[self.col[name]] = highspy.HighsBasisStatus.kBasic
                rows[row] = highspy.HighsBasisStatus.kLower
            basis.col_status, basis.row_status = cols, rows
            self._swaps = []
            # a basis HiGHS refuses leaves the last one in place: the solve is only slower
            self.h.setBasis(basis)

    def solve(self, objective: pulp.LpAffineExpression | pulp.LpVariable, *, minimize: bool,
              time_limit: float | None, cancel: CancelToken | None = None) -> SolveResult:
        """Optimise ``objective`` over the rows so far; raises :class:`Cancelled` on cancel and
        :class:`PlanError` when HiGHS ends without a solution."""
        objective = pulp.LpAffineExpression(objective)
        if self.h is None:
            self.prob.setObjective(objective)
            self.prob.sense = pulp.LpMinimize if minimize else pulp.LpMaximize
            # a re-solve of another objective: its MIP bounds are not the planner's
            return solve(self.prob, time_limit=time_limit, cancel=cancel, reports="none")
        if cancel is not None:
            cancel.check()
        start = time.perf_counter()
        h = self.h
        terms = [(self._index(v), float(c)) for v, c in objective.items()]  # may add columns
        cost = np.zeros(self._n)
        for k, c in terms:
            cost[k] += c
        self._flush()
        h.changeColsCost(self._n, np.arange(self._n, dtype=np.int32), cost)
        h.changeObjectiveOffset(float(objective.constant))
        h.changeObjectiveSense(highspy.ObjSense.kMinimize if minimize else highspy.ObjSense.kMaximize)
        h.setOptionValue("time_limit", float(time_limit) if time_limit is not None else highspy.kHighsInf)
        # HiGHS picks primal or dual simplex from the basis it starts with (new rows leave it
        # primal infeasible, a new objective dual infeasible). Forcing primal was slower on GRID's
        # overload stage: fat-tree k=8 seeds 0-2, medians of 5, 0.06 / 0.15 / 0.09 s against
        # 0.08 / 0.20 / 0.10 s; leaf-spine lambda = 3 about the same (1.9-2.2 s either way)
        h.setOptionValue("simplex_strategy", 0)
        h.setOptionValue("presolve", "off")
        h.run()
        if cancel is not None and cancel.cancelled:
            raise Cancelled("cancelled")
        status = h.getModelStatus()
        has_sol = h.getInfo().primal_solution_status == 2
        verdict = highs_status(status, has_sol)
        if not has_sol or verdict in ("infeasible", "error"):
            if verdict == "infeasible":
                return SolveResult("infeasible", None, None, time.perf_counter() - start, solver_name())
            raise PlanError(f"solver stopped without a solution ({status})")
        values = h.getSolution().col_value
        for v in [*self.prob.variables(), *self.new_vars]:
            k = self.col.get(v.name)
            v.varValue = values[k] if k is not None else None
        obj = float(h.getInfo().objective_function_value)
        return SolveResult(verdict if verdict != "feasible" else "timeout", obj,
                           obj if verdict == "optimal" else None, time.perf_counter() - start, solver_name())
