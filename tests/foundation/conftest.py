"""Shared builders for the foundation tests."""

from __future__ import annotations

import copy

import pytest

from inaplanner.io.native import scenario_to_dict
from inaplanner.topologies import leaf_spine


@pytest.fixture
def small_doc() -> dict:
    """A valid native document of a 2x2x2 leaf-spine with one job."""
    from inaplanner.topologies import place_jobs

    sc = leaf_spine(2, 2, 2)
    place_jobs(sc, 1, 1, 2, seed=0)
    return copy.deepcopy(scenario_to_dict(sc))
