"""Fixtures of the monitoring tests: a leaf-spine with a hand-made plan, deployed with the real
deployer onto emulated P4Runtime switches on 127.0.0.1."""

from __future__ import annotations

import os

import pytest

from inaplanner.io.native import scenario_sha256
from inaplanner.model import Job, Plan, PlannerInfo, Route, Scenario, TaskPlan
from inaplanner.topologies import leaf_spine

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def _route(worker: str, path: str, merges: list[str]) -> Route:
    return Route(worker, path.split("-"), merges)


@pytest.fixture
def leafspine() -> tuple[Scenario, Plan]:
    """2 leaves, 2 spines, 3 hosts per leaf, 10 Gbps; job j: workers H4-H6 under L2, PS H1 under
    L1. H4, H5 merge at L2 and go via S1; H6 goes raw via S2 and merges at L1."""
    sc = leaf_spine(2, 2, 3, host_capacity=10.0, fabric_capacity=10.0)
    for s in sc.switches():
        s.programmable = True
    sc.jobs = [Job("j", ["H4", "H5", "H6"], ["H1"])]
    sc.touch()
    sc.validate()
    routes = [_route("H4", "H4-L2-S1-L1-H1", ["L2"]),
              _route("H5", "H5-L2-S1-L1-H1", ["L2"]),
              _route("H6", "H6-L2-S2-L1-H1", ["L1"])]
    plan = Plan(scenario_sha256(sc), PlannerInfo("hand", {}, None, None, 0.0, "heuristic"),
                [TaskPlan("j", "H1", 3.0, routes)])
    return sc, plan


@pytest.fixture
def deployed(leafspine, tmp_path):
    """(scenario, plan, emulated testbed) with the plan deployed on every switch."""
    from inaplanner.deploy.deployer import deploy
    from inaplanner.deploy.emulated import start_emulated_testbed

    sc, plan = leafspine
    tb = start_emulated_testbed(sc, tmp_path / "testbed.toml", switch_ids=[s.id for s in sc.switches()])
    try:
        report = deploy(sc, plan, tb.inventory)
        assert report.ok, report.text()
        yield sc, plan, tb
    finally:
        tb.stop()


class ManualClock:
    """A clock the test moves by hand, shared by the emulated switches (their counters grow with
    it) and the poller (its timestamps): rates come out exact and the test never sleeps."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def start_clocked_switch(sid: str, clock: ManualClock, port: int = 0):
    """An emulated switch on ``clock`` running the INA pipeline (the shipped P4Info)."""
    from p4.v1 import p4runtime_pb2

    from inaplanner.dataplane.p4info import load_p4info
    from inaplanner.deploy.p4rt import P4RTSession
    from inaplanner.emulator.target import start_emulator

    handle = start_emulator("127.0.0.1", port, device_id=1, name=sid, clock=clock)
    cfg = p4runtime_pb2.ForwardingPipelineConfig(p4_device_config=b'{"emulated": true}')
    cfg.p4info.CopyFrom(load_p4info().proto)
    with P4RTSession(handle.address, 1, (0, 1), label=sid) as s:
        s.set_pipeline(cfg)
    return handle


@pytest.fixture
def clocked(leafspine):
    """(scenario, plan, clock, handles, inventory): every switch emulated on a manual clock."""
    from inaplanner.testbed.inventory import Inventory, SwitchInventory

    sc, plan = leafspine
    clock = ManualClock()
    handles = {}
    inv = Inventory(source="<clocked testbed>")
    try:
        for s in sc.switches():
            h = start_clocked_switch(s.id, clock)
            handles[s.id] = h
            ports = {n: sc.link_between(s.id, n).port_at(s.id) for n in sc.neighbours(s.id)}
            inv.switches[s.id] = SwitchInventory(id=s.id, p4runtime=h.address, device_id=1,
                                                 target="bmv2", ports=ports)
        yield sc, plan, clock, handles, inv
    finally:
        for h in handles.values():
            h.stop()


@pytest.fixture
def manual_clock_factory():
    return ManualClock


@pytest.fixture
def clocked_switch_factory():
    return start_clocked_switch
