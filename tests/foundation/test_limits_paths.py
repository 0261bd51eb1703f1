"""The document walk (:func:`inaplanner.io.limits.check_tree`) names the refused element by its
JSON path, built only when something is refused; a file parsed by :func:`read_json` is walked
once, not again by the scenario builder."""

from __future__ import annotations

import json

import pytest

from inaplanner.errors import ValidationError
from inaplanner.io import limits
from inaplanner.io.limits import check_tree, parse_json


@pytest.mark.parametrize(("text", "where", "why"), [
    ('{"nodes": [{"id": "a"}, {"id": "b", "pos": [1.0, 1e999]}]}', "x.nodes[1].pos[1]",
     "not a finite number"),
    ('{"links": [{"capacity": 99999999999999999999999}]}', "x.links[0].capacity", "out of range"),
    ('{"jobs": [{"id": "j", "w": 1, "w": 2}]}', "x.jobs[0]", "duplicate key"),
    ('{"nodes": [{"id": "\\ud800"}]}', "x.nodes[0].id", "lone surrogate"),
    ('{"a": {"\\udc00": 1}}', "x.a", "lone surrogate"),
])
def test_refusal_names_the_element(text, where, why):
    with pytest.raises(ValidationError) as info:
        parse_json(text, "f.json", where="x")
    assert info.value.where == where and why in info.value.why and info.value.source == "f.json"


def test_deep_nesting_and_top_level_duplicate():
    deep = [1]
    for _ in range(limits.MAX_DEPTH + 1):
        deep = [deep]
    with pytest.raises(ValidationError, match="nested deeper") as info:
        check_tree({"k": deep})
    assert info.value.where.startswith("k[0][0]")
    with pytest.raises(ValidationError, match="duplicate key") as info:
        parse_json('{"a": 1, "a": 2}')
    assert info.value.where == "(top level)"


def test_a_read_file_is_walked_once(tmp_path, monkeypatch):
    from inaplanner.io import native
    from inaplanner.io.native import load_scenario, scenario_to_dict
    from inaplanner.topologies import leaf_spine

    path = tmp_path / "s.json"
    path.write_text(json.dumps(scenario_to_dict(leaf_spine(2, 2, 2))))
    walks = []
    real = limits.check_tree

    def counting(doc, *a, **k):
        walks.append(doc)
        return real(doc, *a, **k)

    monkeypatch.setattr(limits, "check_tree", counting)
    monkeypatch.setattr(native, "check_tree", counting)
    assert len(load_scenario(path).nodes) == 2 + 2 + 4
    assert len(walks) == 1
    walks.clear()
    native.scenario_from_dict(json.loads(path.read_text()))  # a dict from elsewhere: walked
    assert len(walks) == 1
