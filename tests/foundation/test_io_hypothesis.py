"""Property tests: random malformed documents are refused with the project's own error, never
anything else, and whatever loads can be written and hashed."""

from __future__ import annotations

import copy
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inaplanner.errors import ValidationError
from inaplanner.evaluate import evaluate
from inaplanner.io.native import (
    canonical_json,
    plan_from_dict,
    scenario_from_dict,
    scenario_sha256,
    scenario_to_dict,
)
from inaplanner.topologies import leaf_spine, place_jobs

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 10**12) | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)


def _base() -> dict:
    sc = leaf_spine(2, 2, 2)
    sc.switches()[0].programmable = True
    place_jobs(sc, 1, 1, 2, seed=0)
    return scenario_to_dict(sc)


BASE = _base()


def _paths(doc, prefix=()):
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _paths(v, (*prefix, i))


ALL_PATHS = [p for p in _paths(BASE) if p]


@st.composite
def mutated(draw):
    doc = copy.deepcopy(BASE)
    for _ in range(draw(st.integers(1, 4))):
        path = draw(st.sampled_from(ALL_PATHS))
        parent = doc
        try:
            for key in path[:-1]:
                parent = parent[key]
            action = draw(st.sampled_from(["set", "delete", "dup"]))
            if action == "set":
                parent[path[-1]] = draw(json_values)
            elif action == "delete":
                del parent[path[-1]]
            elif isinstance(parent, list):
                parent.append(copy.deepcopy(parent[path[-1]]))
        except (KeyError, IndexError, TypeError):
            continue
    return doc


def _load_or_refuse(doc) -> None:
    try:
        sc = scenario_from_dict(doc, "fuzz.json")
    except ValidationError as exc:
        assert str(exc).startswith("fuzz.json")
        return
    # what loads must write, hash and load again to the same thing
    again = scenario_from_dict(json.loads(canonical_json(scenario_to_dict(sc))))
    assert scenario_sha256(again) == scenario_sha256(sc)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_mutated_scenarios_refused_cleanly(doc):
    _load_or_refuse(doc)


@settings(max_examples=150, deadline=None)
@given(json_values)
def test_arbitrary_json_refused_cleanly(doc):
    _load_or_refuse(doc)


PLAN = {
    "format": "inaplanner-plan", "version": 1, "scenario_sha256": "a" * 64,
    "planner": {"name": "hand", "status": "heuristic"},
    "tasks": [{"job": "job0", "ps": BASE["jobs"][0]["parameter_servers"][0], "rate": 1.0,
               "routes": [{"worker": w, "path": [w, "L1", "S1", "L2"], "merge_at": ["L1"]}
                          for w in BASE["jobs"][0]["workers"]]}],
}
PLAN_PATHS = [p for p in _paths(PLAN) if p]


@st.composite
def mutated_plans(draw):
    doc = copy.deepcopy(PLAN)
    for _ in range(draw(st.integers(1, 4))):
        path = draw(st.sampled_from(PLAN_PATHS))
        parent = doc
        try:
            for key in path[:-1]:
                parent = parent[key]
            if draw(st.booleans()):
                parent[path[-1]] = draw(json_values | st.sampled_from(["L1", "L2", "S1", "S2", "H1", "H3"]))
            else:
                del parent[path[-1]]
        except (KeyError, IndexError, TypeError):
            continue
    return doc


@settings(max_examples=300, deadline=None)
@given(mutated_plans())
def test_mutated_plans_refused_or_evaluated(doc):
    sc = scenario_from_dict(BASE)
    try:
        plan = plan_from_dict(doc, "plan.json")
    except ValidationError:
        return
    ev = evaluate(sc, plan)  # must never raise, whatever the routes say
    assert ev.valid or ev.errors
