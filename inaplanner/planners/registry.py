"""Finding planners: the built-in modules and third-party ones through the entry-point group
``inaplanner.planners`` (an entry point names a Planner object, a class to instantiate, or a list)."""

from __future__ import annotations

import importlib
import logging
from importlib.metadata import entry_points
from typing import Any

from inaplanner.errors import InaplannerError
from inaplanner.planners.base import Planner

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "inaplanner.planners"

#: Built-in planner modules; each defines ``PLANNERS``, a list of Planner objects.
BUILTIN_MODULES = (
    "inaplanner.planners.aro",
    "inaplanner.planners.aro_baselines",
    "inaplanner.planners.grid",
    "inaplanner.planners.inart",
    "inaplanner.planners.ina_baselines",
)

_cache: dict[str, Planner] | None = None


def _as_planners(obj: Any) -> list[Planner]:
    if isinstance(obj, type):
        obj = obj()
    items = obj if isinstance(obj, (list, tuple)) else [obj]
    out = []
    for item in items:
        if not isinstance(item, Planner):
            raise InaplannerError(f"{item!r} is not a planner (needs name, description, params, plan)")
        out.append(item)
    return out


def available(reload: bool = False) -> dict[str, Planner]:
    """Every planner by name: built-ins first, then entry points (a clash keeps the built-in)."""
    global _cache
    if _cache is not None and not reload:
        return _cache
    found: dict[str, Planner] = {}
    for name in BUILTIN_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue
            raise
        for p in module.PLANNERS:
            found.setdefault(p.name, p)
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            for p in _as_planners(ep.load()):
                if p.name in found:
                    log.warning("planner %s from %s ignored: the name is taken", p.name, ep.value)
                    continue
                found[p.name] = p
        except Exception as exc:  # a broken plug-in must not take the program down
            log.warning("planner entry point %s failed to load: %s", ep.value, exc)
    _cache = found
    return found


def get(name: str) -> Planner:
    planners = available()
    if name not in planners:
        raise InaplannerError(f"unknown planner {name!r} (available: {', '.join(sorted(planners)) or 'none'})")
    return planners[name]
