"""Solving PuLP models with HiGHS (highspy) by default, CBC as fallback, with time limit and cancel.

``solve`` returns an honest status: ``optimal`` (proven), ``feasible``/``timeout`` (an incumbent
without proof; ``timeout`` when the limit stopped it), ``infeasible``, or raises
:class:`~inaplanner.errors.Cancelled` when the cancel token fired (HiGHS is interrupted from its
callback within a fraction of a second). The dual bound of a MIP is reported as ``bound``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import pulp

from inaplanner.errors import Cancelled, PlanError
from inaplanner.progress import CancelToken

__all__ = ["CancelToken", "SolveResult", "solve", "solver_name"]

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


def solver_name() -> str:
    if highspy is not None:
        h = highspy.Highs()
        return f"HiGHS {h.version()}" if hasattr(h, "version") else "HiGHS"
    return "CBC"


def solve(
    prob: pulp.LpProblem,
    *,
    time_limit: float | None = None,
    cancel: CancelToken | None = None,
    gap: float | None = None,
    msg: bool = False,
    on_log: Callable[[str], None] | None = None,
    options: dict[str, object] | None = None,
) -> SolveResult:
    """Solve ``prob`` in place (variable values set) and report status, objective and bound.
    ``options`` are HiGHS options (e.g. ``{"solver": "ipm"}``); CBC ignores them."""
    start = time.perf_counter()
    if cancel is not None:
        cancel.check()
    if highspy is None:
        return _solve_cbc(prob, time_limit, gap, msg, start)
    interrupted = {"flag": False}

    def callback(cb_type, message, data_out, data_in, user_data):  # noqa: ANN001 - highspy API
        if cb_type == highspy.cb.HighsCallbackType.kCallbackLogging:
            if on_log is not None and message:
                on_log(message.rstrip())
            return
        if cancel is not None and cancel.cancelled and data_in is not None:
            data_in.user_interrupt = True
            interrupted["flag"] = True

    kinds = [
        highspy.cb.HighsCallbackType.kCallbackMipInterrupt,
        highspy.cb.HighsCallbackType.kCallbackSimplexInterrupt,
        highspy.cb.HighsCallbackType.kCallbackIpmInterrupt,
    ]
    if on_log is not None:
        kinds.append(highspy.cb.HighsCallbackType.kCallbackLogging)
    solver = pulp.HiGHS(
        msg=msg or on_log is not None,
        timeLimit=time_limit,
        gapRel=gap,
        callbackTuple=(callback, None),
        callbacksToActivate=kinds,
        threads=1,
        **(options or {}),
    )
    prob.solve(solver)
    seconds = time.perf_counter() - start
    if interrupted["flag"] or (cancel is not None and cancel.cancelled):
        raise Cancelled("cancelled")
    model = prob.solverModel
    status = model.getModelStatus()
    hs = highspy.HighsModelStatus
    info = model.getInfo()
    has_sol = info.primal_solution_status == 2  # kSolutionStatusFeasible
    is_mip = any(v.cat == pulp.LpInteger for v in prob.variables())
    objective = pulp.value(prob.objective) if has_sol else None
    bound: float | None = objective if status == hs.kOptimal else None
    if is_mip:
        raw = info.mip_dual_bound
        if raw is not None and abs(raw) < highspy.kHighsInf:
            # PuLP hands HiGHS -objective when maximising, so the bound comes back negated
            bound = -float(raw) if prob.sense == pulp.LpMaximize else float(raw)
    if status == hs.kOptimal:
        return SolveResult("optimal", objective, objective if bound is None else bound, seconds, solver_name())
    if status in (hs.kInfeasible, hs.kUnboundedOrInfeasible):
        return SolveResult("infeasible", None, None, seconds, solver_name())
    if status == hs.kTimeLimit:
        return SolveResult("timeout" if has_sol else "infeasible", objective, bound, seconds, solver_name())
    if has_sol:
        return SolveResult("feasible", objective, bound, seconds, solver_name())
    raise PlanError(f"solver stopped without a solution ({status})")


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
