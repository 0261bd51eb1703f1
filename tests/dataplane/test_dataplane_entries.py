"""Entries generated from a plan, against hand-written expectations (GRID testbed, GRID Fig. 3)."""

from __future__ import annotations

import json

import pytest

from inaplanner.dataplane.entries import build_entities
from inaplanner.dataplane.spec import MulticastGroupSpec, TableEntrySpec
from inaplanner.errors import InaplannerError
from inaplanner.model import Plan, PlannerInfo, Route, TaskPlan
from inaplanner.topologies import grid_testbed

FWD, AGG, FB, RES = ("InaIngress.ina_forward", "InaIngress.ina_aggregate",
                     "InaIngress.ina_fallback", "InaIngress.ina_result")
TASK = (("job_id", 1), ("ps_id", 0))


def grid_plan(rate: float = 25.0) -> Plan:
    """W1-W3 merge at S1; W4 detours S1-S2 and merges at S2 with W5, W6; W7, W8 merge at S3.
    Every aggregate then goes to the PS unmerged (GRID: at most one aggregation per flow)."""
    routes = [Route(w, [w, "S1", "S3", "PS"], ["S1"]) for w in ("W1", "W2", "W3")]
    routes.append(Route("W4", ["W4", "S1", "S2", "S3", "PS"], ["S2"]))
    routes += [Route(w, [w, "S2", "S3", "PS"], ["S2"]) for w in ("W5", "W6")]
    routes += [Route(w, [w, "S3", "PS"], ["S3"]) for w in ("W7", "W8")]
    return Plan("hand", PlannerInfo("hand"), [TaskPlan("job0", "PS", rate, routes)])


def fwd(flow, port):
    return TableEntrySpec(FWD, (*TASK, ("flow_id", flow)), "InaIngress.forward", (("port", port),))


def agg(node, port, fan_in, epoch, out_flow):
    return TableEntrySpec(AGG, (*TASK, ("node_id", node), ("ingress_port", port)),
                          "InaIngress.aggregate",
                          (("fan_in", fan_in), ("agg_base", 0), ("agg_mask", 8191),
                           ("epoch", epoch), ("out_flow_id", out_flow), ("next_node_id", 0),
                           ("next_bitmap", 0)))


def fallback(port):
    return TableEntrySpec(FB, TASK, "InaIngress.forward", (("port", port),))


RESULT = TableEntrySpec(RES, TASK, "InaIngress.multicast", (("group", 1),))


def test_grid_testbed_entries_match_the_hand_written_list():
    spec = build_entities(grid_testbed(), grid_plan())
    assert list(spec.switches) == ["S1", "S2", "S3"]
    assert spec.node_ids == {"S1": 1, "S2": 2, "S3": 3} and spec.job_ids == {"job0": 1}
    e1, e2, e3 = (spec.switches[s].pools[0].epoch for s in ("S1", "S2", "S3"))
    # Ports (GRID testbed wiring): S1: W1-W4 1-4, S3 5, S2 6; S2: W5 1, W6 2, S1 3, S3 4;
    # S3: W7 1, W8 2, S1 3, S2 4, PS 5. Flow ids: W1..W8 = 1..8, aggregates S1/S2/S3 = 9/10/11.
    expected = {
        "S1": ([MulticastGroupSpec(1, ((1, 0), (2, 0), (3, 0), (4, 0)))],  # W4's result via S1
               [RESULT, fallback(5),
                fwd(4, 6),  # W4's own flow detours to S2
                fwd(9, 5),  # the S1 aggregate goes up to S3
                agg(1, 1, 3, e1, 9), agg(1, 2, 3, e1, 9), agg(1, 3, 3, e1, 9)]),
        "S2": ([MulticastGroupSpec(1, ((1, 0), (2, 0)))],
               [RESULT, fallback(4), fwd(10, 4),
                agg(2, 1, 3, e2, 10), agg(2, 2, 3, e2, 10), agg(2, 3, 3, e2, 10)]),
        "S3": ([MulticastGroupSpec(1, ((1, 0), (2, 0), (3, 0), (4, 0)))],
               [RESULT, fallback(5), fwd(9, 5), fwd(10, 5), fwd(11, 5),
                agg(3, 1, 2, e3, 11), agg(3, 2, 2, e3, 11)]),
    }
    for sid, (groups, entries) in expected.items():
        sw = spec.switches[sid]
        assert sw.multicast_groups == groups, sid
        assert sw.table_entries == entries, sid
        assert [p.to_dict() for p in sw.pools] == [
            {"pipeline": 0, "base": 0, "size": 8192, "epoch": sw.pools[0].epoch,
             "aggregates": ("job0/PS",)}]
    workers = {h: (t.flow_id, t.node_id, t.aggregation_node, t.bitmap, t.first_hop)
               for h, cfg in spec.workers.items() for t in cfg.tasks}
    assert workers == {
        "W1": (1, 1, "S1", 1, "S1"), "W2": (2, 1, "S1", 2, "S1"), "W3": (3, 1, "S1", 4, "S1"),
        "W4": (4, 2, "S2", 1, "S1"), "W5": (5, 2, "S2", 2, "S2"), "W6": (6, 2, "S2", 4, "S2"),
        "W7": (7, 3, "S3", 1, "S3"), "W8": (8, 3, "S3", 2, "S3"),
    }
    assert all(t.rate_gbps == 25.0 for cfg in spec.workers.values() for t in cfg.tasks)


def test_output_is_deterministic_and_dumps_are_readable():
    a = build_entities(grid_testbed(), grid_plan())
    b = build_entities(grid_testbed(), grid_plan())
    assert a.to_json() == b.to_json()
    text = a.to_text()
    assert "switch S2 (node id 2, tofino)" in text
    assert "ina_aggregate job_id=1 ps_id=0 node_id=2 ingress_port=3 -> aggregate(fan_in=3" in text
    assert "worker W4: job0/PS flow 4 -> S2 (node 2, bitmap 0x1) at 25 Gbps" in text
    doc = json.loads(a.to_json())
    assert doc["format"] == "inaplanner-entries"
    assert doc["switches"]["S3"]["table_entries"][0]["action"] == "InaIngress.multicast"
    worker = json.loads(a.workers["W4"].to_json())
    assert worker["format"] == "inaplanner-worker" and worker["tasks"][0]["node_id"] == 2


def test_multi_level_aggregation_and_relabel():
    """ARO-style: S1's aggregate merges again at S3; a merge of a single flow is a relabel."""
    routes = [Route(w, [w, "S1", "S3", "PS"], ["S1", "S3"]) for w in ("W1", "W2")]
    routes.append(Route("W5", ["W5", "S2", "S3", "PS"], ["S2", "S3"]))  # alone at S2
    routes.append(Route("W7", ["W7", "S3", "PS"], ["S3"]))
    sc = grid_testbed()
    sc.jobs[0].workers = ["W1", "W2", "W5", "W7"]
    spec = build_entities(sc, Plan("h", PlannerInfo("h"), [TaskPlan("job0", "PS", 10.0, routes)]))
    # flows: W1 1, W2 2, W5 3, W7 4, agg S1 5, agg S2 6, agg S3 7
    s1_agg = [e for e in spec.switches["S1"].table_entries if e.table == AGG]
    assert {dict(e.params)["next_node_id"] for e in s1_agg} == {3}
    s2 = [e for e in spec.switches["S2"].table_entries if e.table == AGG]
    assert s2 == [TableEntrySpec(AGG, (*TASK, ("node_id", 2), ("ingress_port", 1)),
                                 "InaIngress.relabel",
                                 (("out_flow_id", 6), ("next_node_id", 3), ("next_bitmap", 4)))]
    # at S3: inputs W7 (4), agg S1 (5), agg S2 (6) -> bits 1, 2, 4; S1's aggregate carries bit 2
    assert {dict(e.params)["next_bitmap"] for e in s1_agg} == {2}
    s3 = {dict(e.match)["ingress_port"]: dict(e.params) for e in spec.switches["S3"].table_entries
          if e.table == AGG}
    assert sorted(s3) == [1, 3, 4] and {p["fan_in"] for p in s3.values()} == {3}
    assert spec.workers["W5"].tasks[0].node_id == 2


def test_inventory_ports_device_ids_and_unlisted_switches(tmp_path):
    from inaplanner.testbed.inventory import Inventory, SwitchInventory

    inv = Inventory(switches={
        "S1": SwitchInventory("S1", "127.0.0.1:1", 11, "bmv2", ports={"W1": 17, "S3": 30}),
        "S2": SwitchInventory("S2", "127.0.0.1:2", 12, "bmv2"),
        "S3": SwitchInventory("S3", "127.0.0.1:3", 13, "bmv2"),
    })
    spec = build_entities(grid_testbed(), grid_plan(), inv)
    s1 = spec.switches["S1"]
    assert s1.device_id == 11 and s1.target == "bmv2"
    assert fwd(9, 30) in s1.table_entries  # toward S3: the inventory's port
    assert fwd(4, 6) in s1.table_entries  # toward S2: not mapped, the scenario's port
    ports = [dict(e.match)["ingress_port"] for e in s1.table_entries if e.table == AGG]
    assert ports == [2, 3, 17]
    del inv.switches["S2"]
    with pytest.raises(InaplannerError, match="S2 carries flows of the plan but is not in"):
        build_entities(grid_testbed(), grid_plan(), inv)
    inv.switches["S9"] = SwitchInventory("S9", "127.0.0.1:9", 9, "bmv2")
    with pytest.raises(InaplannerError, match="'S9' is not in the scenario"):
        build_entities(grid_testbed(), grid_plan(), inv)


def test_bmv2_pipelines_share_one_register_space():
    sc = grid_testbed()
    s3 = sc.node("S3")
    s3.target, s3.pipelines, s3.aggregators = "bmv2", 2, None
    s3.port_pipeline = {1: 0, 2: 1, 3: 1, 4: 1, 5: 1}
    sc.touch()
    # W7 enters S3 on pipeline 0, W8 on pipeline 1: two aggregates of one flow each (relabels,
    # which hold no aggregator)
    spec = build_entities(sc, grid_plan())
    aggs = [e for e in spec.switches["S3"].table_entries if e.table == AGG]
    assert [e.action for e in aggs] == ["InaIngress.relabel", "InaIngress.relabel"]
    assert spec.switches["S3"].pools == []
    # the S1 and S2 aggregates merge again at S3 on pipeline 1, with W8
    plan = grid_plan()
    for r in plan.tasks[0].routes:
        if r.worker != "W7":
            r.merge_at = [*r.merge_at, "S3"] if r.merge_at != ["S3"] else r.merge_at
    spec = build_entities(sc, plan)
    pools = spec.switches["S3"].pools
    assert [(p.pipeline, p.base, p.size) for p in pools] == [(1, 4096, 4096)]
    assert {dict(e.params).get("fan_in") for e in spec.switches["S3"].table_entries
            if e.table == AGG} == {None, 3}
    s3.target = "tofino"
    spec = build_entities(sc, plan)
    assert [(p.pipeline, p.base, p.size) for p in spec.switches["S3"].pools] == [(1, 0, 8192)]


def test_epoch_changes_only_with_the_pool_configuration():
    a = build_entities(grid_testbed(), grid_plan())
    b = build_entities(grid_testbed(), grid_plan(rate=5.0))  # rates do not touch the switches
    assert [p.epoch for s in a.switches.values() for p in s.pools] == \
        [p.epoch for s in b.switches.values() for p in s.pools]
    plan = grid_plan()
    plan.tasks[0].routes[3] = Route("W4", ["W4", "S1", "S3", "PS"], ["S1"])  # W4 now at S1
    c = build_entities(grid_testbed(), plan)
    assert c.switches["S1"].pools[0].epoch != a.switches["S1"].pools[0].epoch
    assert c.switches["S3"].pools[0].epoch == a.switches["S3"].pools[0].epoch
    assert all(1 <= p.epoch <= 255 for s in c.switches.values() for p in s.pools)


def test_esa_priorities_from_memsched():
    from inaplanner.memsched.priority import choose_frac_bits, priority, quantise

    sc = grid_testbed()
    job = sc.jobs[0]
    job.layers, job.comm_comp_ratio, job.remaining_s = 4, 2.0, 100.0
    spec = build_entities(sc, grid_plan())
    t = spec.workers["W1"].tasks[0]
    values = [priority(layer, 4, 2.0, 100.0) for layer in range(1, 5)]
    frac = choose_frac_bits(values)
    assert t.priority_frac_bits == frac
    assert t.priority_per_layer == [quantise(v, frac) for v in values]
    assert t.priority_per_layer[0] > t.priority_per_layer[-1] > 0


def test_invalid_plan_is_refused_with_the_evaluator_reason():
    plan = grid_plan()
    plan.tasks[0].routes[0] = Route("W1", ["W1", "S2", "PS"], [])
    with pytest.raises(InaplannerError, match="cannot be deployed: .*W1"):
        build_entities(grid_testbed(), plan)


def test_too_many_flows_for_the_bitmap(monkeypatch):
    from inaplanner.model import Host, Job, Link, Scenario, Switch

    sc = Scenario("wide")
    sc.nodes.append(Switch("S", programmable=True))
    sc.nodes.append(Host("PS"))
    sc.links.append(Link("PS", "S", 100.0, None, 40))
    workers = [f"W{i}" for i in range(33)]
    for i, w in enumerate(workers):
        sc.nodes.append(Host(w))
        sc.links.append(Link(w, "S", 100.0, None, i + 1))
    sc.jobs.append(Job("j", workers, ["PS"]))
    routes = [Route(w, [w, "S", "PS"], ["S"]) for w in workers]
    plan = Plan("x", PlannerInfo("h"), [TaskPlan("j", "PS", 1.0, routes)])
    with pytest.raises(InaplannerError, match="aggregates 33 flows .* bitmap holds 32"):
        build_entities(sc, plan)
