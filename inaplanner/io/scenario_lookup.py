"""Finding the scenario a plan was made for, when the user does not name it.

A plan carries the sha256 of its scenario (CONTRACTS.md). Without ``--scenario`` we try, in order:
the plan's ``x-scenario`` key (a path, relative to the plan file), then the ``.json`` scenarios in
the plan's folder whose hash matches.
"""

from __future__ import annotations

import os
from pathlib import Path

from inaplanner.errors import InaplannerError, ValidationError
from inaplanner.io.formats import load_any
from inaplanner.io.native import read_json, scenario_from_dict, scenario_sha256
from inaplanner.model import Plan, Scenario

MAX_CANDIDATES = 200
MAX_BYTES = 50 << 20


def find_scenario(plan: Plan, plan_path: str | os.PathLike[str]) -> Scenario | None:
    """The scenario ``plan`` names or whose hash it carries, near ``plan_path``; None if none."""
    base = Path(plan_path).resolve().parent
    named = plan.extra.get("x-scenario")
    if isinstance(named, str) and named:
        p = Path(named).expanduser()
        p = p if p.is_absolute() else base / p
        if p.is_file():
            return load_any(p)
    checked = 0
    for p in sorted(base.glob("*.json")):
        if checked >= MAX_CANDIDATES:
            break
        try:
            if p.resolve() == Path(plan_path).resolve() or p.stat().st_size > MAX_BYTES:
                continue
            doc = read_json(p)
        except (OSError, ValidationError):
            continue
        if not isinstance(doc, dict) or doc.get("format") != "inaplanner-scenario":
            continue
        checked += 1
        try:
            sc = scenario_from_dict(doc, str(p), tree_checked=True)
        except ValidationError:
            continue
        if scenario_sha256(sc) == plan.scenario_sha256:
            return sc
    return None


def scenario_for(plans: list[tuple[str, Plan]], scenario_path: str | None) -> Scenario:
    """The scenario to judge ``plans`` (``(path, plan)`` pairs) on: ``scenario_path`` when given,
    else the one found for the first plan."""
    if scenario_path:
        return load_any(scenario_path)
    if not plans:
        raise InaplannerError("no plan given")
    path, plan = plans[0]
    sc = find_scenario(plan, path)
    if sc is None:
        raise InaplannerError(
            f"{path}: cannot tell which scenario this plan is for (no 'x-scenario' key and no "
            "scenario with its scenario_sha256 beside it); give --scenario FILE"
        )
    return sc
