"""Which scenario and plan the Deploy dialog deploys, and onto which testbed (no Qt).

A plan is deployed together with the scenario it was made for (its ``scenario_sha256``,
CONTRACTS.md): a planning result carries that scenario; for a plan file it is the scenario open
in the window when the hash matches, else the one the plan names or that lies beside it
(:func:`inaplanner.io.scenario_lookup.find_scenario`), as ``inaplanner deploy`` does.
The deployment runs on a worker thread while the user may go on editing, so it always gets a
private copy of the scenario, never the document's own object.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inaplanner.errors import InaplannerError
from inaplanner.io.native import (
    document_sha256,
    load_plan,
    scenario_from_dict,
    scenario_sha256,
    scenario_to_dict,
)
from inaplanner.model import Plan, Scenario
from inaplanner.testbed.inventory import Inventory, load_inventory


@dataclass
class DeployInputs:
    """What one run needs. ``label`` names the plan in messages."""

    scenario: Scenario
    plan: Plan
    label: str


def private_copy(scenario: Scenario) -> Scenario:
    """A copy the worker thread can read while the document changes."""
    return scenario_from_dict(scenario_to_dict(scenario))


def from_result(result: Any) -> DeployInputs:
    """The plan of a planning result (``inaplanner.views.runs.PlanResult``) with the
    scenario it was planned on (for a what-if result: the changed copy). A result's scenario is
    its own (made from the run's snapshot), so this may run off the window's thread."""
    if result is None:
        raise InaplannerError("no result is selected in the Results list; select one or choose "
                              "a plan file")
    return DeployInputs(private_copy(result.scenario), result.plan, result.title)


def from_plan_file(path: str | os.PathLike[str], current: dict[str, Any] | None) -> DeployInputs:
    """The plan in ``path`` and its scenario: the open one when the hash matches (``current``, its
    canonical document: a snapshot, so this runs off the window's thread, 4-6 s at fat-tree
    k=64), else the scenario the plan names or that lies beside it; InaplannerError when none
    fits."""
    if not str(path).strip():
        raise InaplannerError("choose a plan file (or the selected result)")
    plan = load_plan(path)
    if current is not None and document_sha256(current) == plan.scenario_sha256:
        return DeployInputs(scenario_from_dict(current), plan, Path(path).name)
    from inaplanner.io.scenario_lookup import find_scenario

    scenario = find_scenario(plan, path)
    if scenario is None or scenario_sha256(scenario) != plan.scenario_sha256:
        raise InaplannerError(
            f"{path}: the plan was made for another scenario than the one open (scenario_sha256 "
            "differs) and no matching scenario is named by it or lies beside it; open the "
            "plan's scenario first")
    return DeployInputs(scenario, plan, Path(path).name)


def testbed(path: str | os.PathLike[str]) -> Inventory:
    """The testbed inventory in ``path`` (ValidationError naming the file and field)."""
    if not str(path).strip():
        raise InaplannerError("choose a testbed file (testbed.toml), or start an emulated testbed")
    return load_inventory(Path(path))
