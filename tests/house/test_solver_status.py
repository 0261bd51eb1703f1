"""One HiGHS status mapping for the PuLP path and the highspy path: a time-out, with or without an
incumbent, is ``timeout``, never ``infeasible`` (issue 12, item 7)."""

from __future__ import annotations

import random

import highspy
import pulp
import pytest

from inaplanner.errors import Cancelled, PlanError
from inaplanner.planners.aro.milp import INTERRUPT_POLL_SECONDS, IPM_WATCH_MIN_NNZ, Milp
from inaplanner.planners.solver import CancelToken, highs_status, new_variable, solve

HS = highspy.HighsModelStatus


@pytest.mark.parametrize(("status", "has_solution", "stopped", "expected"), [
    (HS.kOptimal, True, False, "optimal"),
    (HS.kInfeasible, False, False, "infeasible"),
    (HS.kUnboundedOrInfeasible, False, False, "infeasible"),
    (HS.kTimeLimit, True, False, "timeout"),
    (HS.kTimeLimit, False, False, "timeout"),  # no incumbent yet: still a time-out
    (HS.kInterrupt, True, True, "timeout"),  # our own (CPU-time) deadline stopped it
    (HS.kInterrupt, False, True, "timeout"),
    (HS.kIterationLimit, True, False, "feasible"),
    (HS.kSolutionLimit, True, False, "feasible"),
    (HS.kIterationLimit, False, False, "error"),
    (HS.kSolveError, False, False, "error"),
])
def test_every_status_maps_once(status, has_solution, stopped, expected):
    assert highs_status(status, has_solution, stopped=stopped) == expected


def _knapsacks(seed: int = 1, n: int = 60, rows: int = 20) -> tuple[list[int], list[list[int]]]:
    rng = random.Random(seed)
    profit = [rng.randint(1000, 5000) for _ in range(n)]
    weights = [[rng.randint(1000, 5000) for _ in range(n)] for _ in range(rows)]
    return profit, weights


def test_pulp_path_times_out_as_timeout():
    profit, weights = _knapsacks()
    prob = pulp.LpProblem("knapsacks", pulp.LpMaximize)
    xs = [new_variable(prob, f"x{i}", 0, 1, pulp.LpInteger) for i in range(len(profit))]
    prob += pulp.lpSum(p * x for p, x in zip(profit, xs, strict=True))
    for row in weights:
        prob += pulp.lpSum(w * x for w, x in zip(row, xs, strict=True)) <= 40_000
    res = solve(prob, time_limit=1e-9)
    assert res.status == "timeout"  # the model is feasible (all zero): never "infeasible"
    full = solve(prob)
    assert full.status == "optimal" and full.objective > 0


def test_highspy_path_times_out_as_timeout():
    profit, weights = _knapsacks()
    m = Milp(maximize=True)
    cols = [m.var(0, 1, p, integer=True) for p in profit]
    for row in weights:
        m.row(cols, row, hi=40_000)
    res = m.solve(time_limit=1e-9)  # clamped to HiGHS' smallest useful limit
    assert res.status in ("timeout", "optimal")  # a fast machine may prove it in 10 ms
    assert res.status != "infeasible"
    stopped = m.solve(stop=lambda: True)  # our own deadline, at HiGHS' first callback
    assert stopped.status == "timeout"


def _transport(n: int) -> Milp:
    """An n x n transport LP (supply rows, demand rows, random costs): 2 n^2 nonzeros."""
    rng = random.Random(n)
    m = Milp()
    cols = [[m.var(0.0, 10.0, rng.uniform(1, 9)) for _ in range(n)] for _ in range(n)]
    for i in range(n):
        m.row(cols[i], [1.0] * n, hi=float(n))
        m.row([cols[k][i] for k in range(n)], [1.0] * n, lo=float(n))
    return m


def test_interior_point_honours_the_deadline_on_large_models():
    """Interior point is watched from its callback above IPM_WATCH_MIN_NNZ nonzeros: the
    deadline stops it there. Below, solves take a fraction of a second and are not watched (the
    callback fires every few microseconds and cost 30-40 % of each small solve)."""
    big = _transport(110)
    assert len(big.row_idx) > IPM_WATCH_MIN_NNZ
    assert big.solve(relax=True, ipm=True, presolve=False).status == "optimal"
    assert big.solve(relax=True, ipm=True, presolve=False, stop=lambda: True).status == "timeout"
    small = _transport(20)
    assert len(small.row_idx) < IPM_WATCH_MIN_NNZ
    assert small.solve(relax=True, ipm=True, presolve=False, stop=lambda: True).status == "optimal"


def test_the_deadline_is_polled_at_most_every_poll_interval():
    """Interior point calls back thousands of times a second; the deadline (here a counter that
    never stops it) is asked at most once per ``INTERRUPT_POLL_SECONDS``, and at least once."""
    import time

    big = _transport(110)
    asked = []

    def stop() -> bool:
        asked.append(time.perf_counter())
        return False

    begin = time.perf_counter()
    assert big.solve(relax=True, ipm=True, presolve=False, stop=stop).status == "optimal"
    seconds = time.perf_counter() - begin
    assert 1 <= len(asked) <= seconds / INTERRUPT_POLL_SECONDS + 1
    assert all(b - a >= INTERRUPT_POLL_SECONDS for a, b in zip(asked, asked[1:], strict=False))


class _CancelledAfterStart(CancelToken):
    """A cancel that arrives once the solve has started (after its first check)."""

    @property
    def cancelled(self) -> bool:
        return True


def test_a_cancel_during_an_unwatched_solve_is_honoured_when_it_returns():
    small = _transport(20)
    with pytest.raises(Cancelled):
        small.solve(relax=True, ipm=True, presolve=False, cancel=_CancelledAfterStart())


def test_pulp_variables_raise_no_deprecation(recwarn):
    prob = pulp.LpProblem("p", pulp.LpMinimize)
    x = new_variable(prob, "x", 0, 3)
    prob += x
    prob += x >= 1
    assert solve(prob).objective == pytest.approx(1.0)
    assert not [w for w in recwarn if issubclass(w.category, DeprecationWarning)]


def test_no_bare_lpvariable_outside_the_solver_module():
    """PuLP variables are made through :func:`new_variable` (PuLP 4's ``prob.add_variable`` where
    the installed PuLP has it), so no deprecation warning is silenced or raised: a bare
    ``LpVariable(...)`` call anywhere else in the package fails here."""
    import ast
    from pathlib import Path

    import inaplanner

    root = Path(inaplanner.__file__).parent
    bare = []
    for path in sorted(root.rglob("*.py")):
        if path == root / "planners" / "solver.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
                if name in ("LpVariable", "matrix", "dicts") and "LpVariable" in ast.unparse(f):
                    bare.append(f"{path.relative_to(root)}:{node.lineno}")
    assert bare == []


def test_the_solver_gets_what_is_left_after_the_handover():
    from inaplanner.planners.solver import _TimedHiGHS

    prob = pulp.LpProblem("one", pulp.LpMaximize)
    x = new_variable(prob, "x", 0, 1)
    prob += x
    solver = _TimedHiGHS(10.0, msg=False, log_to_console=False)
    solver._made -= 3.0  # as if handing the model over had taken 3 s
    prob.solve(solver)
    left = prob.solverModel.getOptionValue("time_limit")[1]
    assert 3.9 < left <= 4.0  # 10 s less the handover, less as long again to read the answer back
    tiny = _TimedHiGHS(1e-9, msg=False, log_to_console=False)
    tiny._made -= 3.0
    prob.solve(tiny)
    assert prob.solverModel.getOptionValue("time_limit")[1] == 1e-9  # never more than was given


def _dense_transport(n: int = 30, seed: int = 2) -> pulp.LpProblem:
    """A dense transport LP with exact demands: interior point needs a dozen iterations or more,
    and its early iterates meet no demand exactly (not feasible points)."""
    rng = random.Random(seed)
    prob = pulp.LpProblem("transport", pulp.LpMinimize)
    x = {(i, j): new_variable(prob, f"x_{i}_{j}", 0) for i in range(n) for j in range(n)}
    prob += pulp.lpSum(rng.uniform(1, 10) * v for v in x.values())
    for i in range(n):
        prob += pulp.lpSum(x[i, j] for j in range(n)) <= rng.uniform(10, 20)
    for j in range(n):
        prob += pulp.lpSum(x[i, j] for i in range(n)) == rng.uniform(1, 9)
    return prob


def test_an_lp_stopped_mid_interior_point_gives_its_iterate_only_when_asked():
    """``iterate=True``: an LP its limit stops after some interior-point iterations returns
    ``timeout`` with the iterate in its variables, no objective and no bound. Without it, the
    same stop raises as before; with no iteration made there is no iterate to give."""
    stop = {"solver": "ipm", "ipm_iteration_limit": 1}
    prob = _dense_transport()
    res = solve(prob, options=stop, iterate=True)
    assert (res.status, res.iterate, res.objective, res.bound) == ("timeout", True, None, None)
    values = [v.value() for v in prob.variables()]
    assert all(v is not None for v in values) and any(abs(v) > 1e-6 for v in values)
    with pytest.raises(PlanError, match="without a solution"):
        solve(_dense_transport(), options=stop)
    with pytest.raises(PlanError, match="without a solution"):
        solve(_dense_transport(), options={"solver": "ipm", "ipm_iteration_limit": 0}, iterate=True)
    full = solve(_dense_transport(), options={"solver": "ipm"}, iterate=True)
    assert full.status == "optimal" and not full.iterate
