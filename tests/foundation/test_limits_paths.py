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

    shallow = []
    real_depth = limits._too_deep

    def depth(doc):
        shallow.append(doc)
        return real_depth(doc)

    monkeypatch.setattr(limits, "check_tree", counting)
    monkeypatch.setattr(native, "check_tree", counting)
    monkeypatch.setattr(limits, "_too_deep", depth)
    assert len(load_scenario(path).nodes) == 2 + 2 + 4
    # the parser's hooks refused nothing and the text holds no surrogate escape: only the
    # nesting is walked, over the containers, once
    assert (len(walks), len(shallow)) == (0, 1)
    shallow.clear()
    native.scenario_from_dict(json.loads(path.read_text()))  # a dict from elsewhere: walked
    assert (len(walks), len(shallow)) == (1, 0)


def _nested(depth: int, kind: str):
    doc: object = 1
    for i in range(depth):
        doc = [doc] if (kind == "list" or (kind == "mixed" and i % 2)) else {"k": doc}
    return doc


@pytest.mark.parametrize("kind", ["list", "dict", "mixed"])
@pytest.mark.parametrize("extra", [-1, 0, 1])
def test_the_parser_refuses_the_nesting_the_full_walk_refuses(kind, extra):
    """parse_json walks only the containers when its hooks refused nothing: its verdict on depth
    must be check_tree's, at the limit and either side of it."""
    doc = _nested(limits.MAX_DEPTH + extra, kind)
    try:
        check_tree(doc)
        full = None
    except ValidationError as exc:
        full = (exc.why, exc.where)
    try:
        parse_json(json.dumps(doc))
        fast = None
    except ValidationError as exc:
        fast = (exc.why, exc.where)
    assert fast == full
    assert (full is None) == (extra <= 0)


def test_a_raw_lone_surrogate_in_the_text_is_refused():
    with pytest.raises(ValidationError, match="lone surrogate") as info:
        parse_json('{"nodes": [{"id": "a' + chr(0xD800) + '"}]}')
    assert info.value.where == "nodes[0].id"


def test_loading_pauses_the_collector_and_restores_it(tmp_path, monkeypatch):
    """The cyclic collector is off while a file is parsed and built, and back as it was after,
    whether the file loads or is refused."""
    import gc

    from inaplanner.io import native
    from inaplanner.io.native import load_scenario, scenario_to_dict
    from inaplanner.topologies import leaf_spine

    seen = []
    build0 = native._scenario_from_dict

    def build(*a, **k):
        seen.append(gc.isenabled())
        return build0(*a, **k)

    monkeypatch.setattr(native, "_scenario_from_dict", build)
    good = tmp_path / "s.json"
    good.write_text(json.dumps(scenario_to_dict(leaf_spine(2, 2, 2))))
    bad = tmp_path / "b.json"
    bad.write_text(json.dumps({**scenario_to_dict(leaf_spine(2, 2, 2)), "links": [{"a": "x"}]}))
    before = gc.isenabled()  # a GUI test may have left pyqtgraph's collector in charge (gc off)
    gc.enable()
    try:
        load_scenario(good)
        assert gc.isenabled() and seen == [False]
        with pytest.raises(ValidationError):
            load_scenario(bad)
        assert gc.isenabled() and seen == [False, False]
        gc.disable()
        load_scenario(good)
        assert not gc.isenabled()  # off before, off after (the GUI's case: collection on a timer)
    finally:
        (gc.enable if before else gc.disable)()
