"""The Qt-free document: every edit validated, reversible exactly, and announced."""

from __future__ import annotations

import copy

import pytest

from inaplanner.errors import ValidationError
from inaplanner.io.native import scenario_to_dict
from inaplanner.model import Host, Job, Link, Switch
from inaplanner.model.document import ScenarioDocument


def snapshot(doc: ScenarioDocument) -> dict:
    return scenario_to_dict(doc.scenario)


def test_edits_undo_exactly_and_emit_events(small):
    doc = ScenarioDocument(small)
    events = []
    doc.subscribe(events.append)
    states = [snapshot(doc)]
    changes = [
        doc.add_node(Switch("S9", tier="spine", pos=(5.0, 5.0))),
        doc.add_link(Link("L1", "S9", 40.0)),
        doc.set_node_attrs("L1", pipelines=3, port_pipeline=None),
        doc.set_link_attrs(0, capacity=25.0, background=(1.0, 2.0)),
        doc.rename_node("H2", "W2"),
        doc.move_nodes({"H1": (1.0, 2.0)}),
        doc.add_job(Job("job1", ["H3"], ["H4"])),
        doc.set_job("job1", model_mb=5.0, weight=2.0),
        doc.remove_nodes(["H4"]),
        doc.remove_links([0]),
    ]
    kinds = [e.kind for e in events]
    for k in ("node_added", "link_added", "node_changed", "link_changed", "nodes_moved", "job_changed",
              "node_removed", "link_removed"):
        assert k in kinds
    # the new link got the lowest free port on L1 (hosts 1-2, spine 3 -> 4) and on S9 (1)
    s9_link = next(lk for lk in doc.scenario.links if "S9" in (lk.a, lk.b))
    assert (s9_link.a_port, s9_link.b_port) == (4, 1)
    # the rename reached links and jobs
    assert doc.scenario.job("job0").workers[0] == "W2"
    # removing H4 dropped job1 (its only PS) and H4 from job0
    assert [j.id for j in doc.scenario.jobs] == ["job0"]
    assert "H4" not in doc.scenario.job("job0").workers
    # undo everything, newest first: back to the start, exactly
    for ch in reversed(changes):
        ch.undo()
    assert snapshot(doc) == states[0]
    with pytest.raises(RuntimeError):
        changes[0].undo()


def test_a_refused_edit_leaves_the_scenario_untouched(small):
    doc = ScenarioDocument(small)
    before = snapshot(doc)
    events = []
    doc.subscribe(events.append)
    with pytest.raises(ValidationError, match="pipelines"):
        doc.set_node_attrs("L1", pipelines=0)
    with pytest.raises(ValidationError, match="port 3 names pipeline 5"):
        doc.set_node_attrs("L1", port_pipeline={1: 0, 2: 1, 3: 5})
    with pytest.raises(ValidationError, match="capacity"):
        doc.set_link_attrs(0, capacity=-1.0)
    with pytest.raises(ValidationError, match="already exists"):
        doc.add_node(Host("H1"))
    with pytest.raises(ValidationError, match="already exists"):
        doc.rename_node("H1", "H2")
    with pytest.raises(ValidationError, match="is a switch"):
        doc.set_job("job0", parameter_servers=["L1"])
    with pytest.raises(ValidationError, match="unknown node"):
        doc.add_link(Link("H1", "nowhere", 1.0))
    with pytest.raises(ValidationError, match="no editable field"):
        doc.set_node_attrs("H1", pipelines=2)
    assert snapshot(doc) == before
    assert events == []
    assert doc.modified is False


def test_a_custom_port_map_learns_the_new_port_and_forgets_it_on_undo(small):
    doc = ScenarioDocument(small)
    doc.set_node_attrs("L1", port_pipeline={1: 1, 2: 1, 3: 0})
    before = snapshot(doc)
    doc.add_node(Host("H9"))
    ch = doc.add_link(Link("H9", "L1", 10.0))
    sw = doc.scenario.node("L1")
    assert isinstance(sw, Switch)
    # the default split of ports 1..4 over 2 pipelines puts port 4 on pipeline 1
    assert sw.port_pipeline == {1: 1, 2: 1, 3: 0, 4: 1}
    ch.undo()
    doc.remove_nodes(["H9"])
    assert snapshot(doc) == before


def test_replace_and_open(small):
    doc = ScenarioDocument()
    events = []
    doc.subscribe(events.append)
    ch = doc.replace_scenario(small)
    assert doc.scenario is small and doc.modified
    ch.undo()
    assert doc.scenario.name == "untitled"
    doc.open(small, "/tmp/x.json")
    assert doc.path == "/tmp/x.json" and not doc.modified
    assert [e.kind for e in events] == ["reset", "reset", "reset"]


def test_a_memo_lasts_until_any_change_and_a_derived_value_until_the_network_changes(small):
    """The file document a save, the autosave and the planner runs share is made once per state:
    any change (a move too) makes a new one. What is derived from the network alone is kept over
    moves, dropped by an edit, and kept when a scenario the loader just made is opened."""
    doc = ScenarioDocument(small)
    made = []

    def make():
        made.append(object())
        return made[-1]

    first = doc.memo("x", make)
    assert doc.memo("x", make) is first and len(made) == 1
    grouping = small.derived("g", make)
    assert small.derived("g", make) is grouping
    x, y = small.node("H1").pos or (0.0, 0.0)
    doc.move_nodes({"H1": (x + 1.0, y)})
    assert doc.memo("x", make) is not first  # a move is a change of the file
    assert small.derived("g", make) is grouping  # but not of the network
    doc.set_link_attrs(0, capacity=5.0)
    assert small.derived("g", make) is not grouping
    fresh = copy.deepcopy(small)
    kept = fresh.derived("g", make)
    doc.open(fresh, None, validated=True)
    assert doc.scenario.derived("g", make) is kept and doc.memo("x", make) is made[-1] is not kept
    doc.open(copy.deepcopy(small), None)  # not checked by a loader: touched and checked here
    assert doc.scenario.__dict__.get("_derived") is None
