"""The planner interface: a name, a description, declared parameters and ``plan(...) -> Plan``.

A planner is any object with the attributes of :class:`Planner`. The GUI builds its form from
``params`` and the CLI its ``--param`` flags; ``seed`` and ``time_limit`` are common to all
(:data:`COMMON_PARAMS`). ``plan`` reports progress through ``progress(fraction, message)``, checks
``cancel`` between phases and hands it to the solver, and returns a complete Plan or raises
:class:`~inaplanner.errors.Cancelled` — never something half done.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from inaplanner.errors import InaplannerError, PlanError
from inaplanner.model import Plan, Scenario
from inaplanner.progress import CancelToken, Progress, as_progress


@dataclass(frozen=True)
class Param:
    """A declared planner parameter."""

    name: str
    type: type
    default: Any
    help: str
    min: float | None = None
    max: float | None = None
    choices: tuple[Any, ...] | None = None

    def convert(self, value: Any) -> Any:
        """Turn ``value`` (possibly CLI text) into this parameter's type and check its range."""
        try:
            if self.type is bool and isinstance(value, str):
                low = value.strip().lower()
                if low not in ("1", "0", "true", "false", "yes", "no", "on", "off"):
                    raise ValueError(value)
                out: Any = low in ("1", "true", "yes", "on")
            elif self.type is int and isinstance(value, float) and not value.is_integer():
                raise ValueError(value)
            else:
                out = self.type(value)
        except (TypeError, ValueError):
            raise InaplannerError(
                f"parameter {self.name}: {value!r} is not a valid {self.type.__name__}"
            ) from None
        if self.min is not None and out < self.min:
            raise InaplannerError(f"parameter {self.name}: {out} is below the minimum {self.min}")
        if self.max is not None and out > self.max:
            raise InaplannerError(f"parameter {self.name}: {out} is above the maximum {self.max}")
        if self.choices is not None and out not in self.choices:
            raise InaplannerError(f"parameter {self.name}: {out!r} is not one of {list(self.choices)}")
        return out


COMMON_PARAMS: tuple[Param, ...] = (
    Param("seed", int, 0, "random seed (rounding, tie breaks, ECMP choices)", min=0),
    Param("time_limit", float, 60.0, "time limit of the whole run in seconds (every phase)", min=0.1),
    Param("limit_kind", str, "wall", "what the time limit counts: wall-clock or CPU seconds",
          choices=("wall", "cpu")),
)


@runtime_checkable
class Planner(Protocol):
    name: str
    description: str
    params: tuple[Param, ...]

    def plan(self, scenario: Scenario, params: dict[str, Any], progress: Progress, cancel: CancelToken) -> Plan:
        ...


def all_params(planner: Planner) -> tuple[Param, ...]:
    """The planner's own parameters followed by the common ones it does not redefine."""
    own = {p.name for p in planner.params}
    return tuple(planner.params) + tuple(p for p in COMMON_PARAMS if p.name not in own)


def resolve_params(planner: Planner, given: dict[str, Any] | None = None) -> dict[str, Any]:
    """Defaults filled in, values converted and range-checked; an unknown name is an error."""
    declared = {p.name: p for p in all_params(planner)}
    given = dict(given or {})
    unknown = sorted(set(given) - set(declared))
    if unknown:
        raise InaplannerError(
            f"planner {planner.name}: unknown parameter {unknown[0]!r} (known: {', '.join(declared)})"
        )
    return {name: p.convert(given[name]) if name in given else p.default for name, p in declared.items()}


def run_planner(
    planner: Planner,
    scenario: Scenario,
    params: dict[str, Any] | None = None,
    progress: Progress | Callable[[float, str], None] | None = None,
    cancel: CancelToken | None = None,
) -> Plan:
    """Resolve parameters, run the planner, and stamp the plan with the scenario hash, the resolved
    parameters, the seed and the wall-clock seconds of the whole run."""
    from inaplanner.io.native import scenario_sha256

    if not scenario.jobs:
        raise PlanError("the scenario has no jobs: add a job (workers and a parameter server) first")
    resolved = resolve_params(planner, params)
    if cancel is None:
        cancel = progress.token if isinstance(progress, Progress) else CancelToken()
    prog = as_progress(progress, cancel)
    start = time.perf_counter()
    with prog.active():  # the solver wrappers report incumbent/bound to it (current_progress)
        plan = planner.plan(scenario, resolved, prog, cancel)
    cancel.check()
    plan.scenario_sha256 = scenario_sha256(scenario)
    plan.planner.name = planner.name
    reported = {k: v for k, v in plan.planner.params.items() if k not in resolved}
    # declared parameters as resolved, plus what the planner reports it applied (e.g. a rule)
    plan.planner.params = {**{k: v for k, v in resolved.items() if k not in ("seed",)}, **reported}
    plan.planner.seed = resolved.get("seed")
    plan.planner.seconds = time.perf_counter() - start
    return plan
