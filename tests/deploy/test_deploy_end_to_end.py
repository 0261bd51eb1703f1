"""Full deployments of real plans over real SSH (the sshd fixture) onto emulated P4Runtime switches:
deploy and read back, reject mid-way and roll everything back, redeploy only the diff, cancel,
failing builds, P4Info mismatch, dry run, worker files."""

from __future__ import annotations

import json
import re
from pathlib import Path

import networkx as nx
import paramiko
import pytest

from inaplanner.dataplane.entries import build_entities
from inaplanner.dataplane.p4info import parse_p4info_text
from inaplanner.deploy.deployer import (
    CONTRACT_P4INFO,
    DeployOptions,
    Progress,
    deploy,
    desired_from_spec,
    entities_text,
)
from inaplanner.deploy.device_config import stub_bmv2_json, unpack_tofino_config
from inaplanner.deploy.p4rt import P4RTSession
from inaplanner.deploy.state import diff_state, index_entities
from inaplanner.emulator.target import start_emulator
from inaplanner.io.native import scenario_sha256
from inaplanner.model import Job, Plan, PlannerInfo, Route, TaskPlan
from inaplanner.progress import CancelToken
from inaplanner.testbed.inventory import HostInventory, Inventory, SwitchInventory
from inaplanner.topologies import leaf_spine, mark_programmable

# the "compiler" copies the contract P4Info and a bmv2-JSON-shaped device config naming its tables
# and actions (written by the fixture beside the work directories)
FAKE_BUILD = (
    "mkdir -p build && cp ina_v1model.p4info.txtpb {p4info} && "
    "cp ../stub_bmv2.json {device_config} && echo compiled {program}"
)
STUB = stub_bmv2_json(parse_p4info_text(CONTRACT_P4INFO.read_text()))


def make_scenario():
    sc = leaf_spine(3, 2, 2)  # leaves L1..L3, spines S1 S2, hosts H1..H6 (two per leaf)
    mark_programmable(sc, tiers=["leaf", "spine"])
    sc.jobs = [Job("j0", ["H1", "H2", "H3", "H4"], ["H5"], model_mb=100.0),
               Job("j1", ["H2", "H6"], ["H3"], model_mb=50.0)]
    sc.touch()
    sc.validate()
    return sc


def make_plan(sc, spines: tuple[str, ...] = ("S1", "S2"), rate: float = 2.0,
              merge: bool = True) -> Plan:
    """Each worker goes to its leaf, then over a spine (job i takes ``spines[i % n]``) to the PS's
    leaf; merges at the leaves."""
    g = sc.graph()
    tasks = []
    for i, job in enumerate(sc.jobs):
        spine = spines[i % len(spines)]
        for ps in job.parameter_servers:
            ps_leaf = next(iter(g.neighbors(ps)))
            routes = []
            for w in job.workers:
                leaf = next(iter(g.neighbors(w)))
                path = [w, leaf, ps] if leaf == ps_leaf else [w, leaf, spine, ps_leaf, ps]
                assert nx.is_path(g, path)
                routes.append(Route(w, path, [leaf] if merge else []))
            tasks.append(TaskPlan(job.id, ps, rate, routes))
    return Plan(scenario_sha256(sc), PlannerInfo("hand", status="heuristic"), tasks)


class _Testbed:
    def __init__(self, sc, sshd, tmp: Path):
        self.sc = sc
        self.sshd = sshd
        self.tmp = tmp
        self.switch_ids = [s.id for s in sc.switches()]
        self.emulators = {s: start_emulator(name=s) for s in self.switch_ids}
        self.remote = tmp / "remote"
        self.remote.mkdir()
        (self.remote / "stub_bmv2.json").write_bytes(STUB)
        self.inv = Inventory(source=str(tmp / "testbed.toml"), known_hosts=sshd.known_hosts,
                             connect_timeout=5.0, base_dir=tmp)
        target = sshd.target(label="build host")
        for sid, h in self.emulators.items():
            self.inv.switches[sid] = SwitchInventory(
                id=sid, p4runtime=h.address, device_id=1, target="bmv2", ssh=target,
                workdir=str(self.remote / "build"), build_command=FAKE_BUILD,
                program="ina_v1model.p4", program_name="ina_v1model",
                p4info_path="build/ina.p4info.txtpb", device_config_path="build/ina.json",
                build_timeout=20.0,
            )
        for job in sc.jobs:
            for w in job.workers:
                self.inv.hosts[w] = HostInventory(w, sshd.target(label=f"host {w}"),
                                                  str(self.remote / "workers" / f"{w}.json"))

    def options(self, **kw) -> DeployOptions:
        kw.setdefault("ssh_config", paramiko.SSHConfig())
        kw.setdefault("use_system_known_hosts", False)
        kw.setdefault("batch_size", 4)
        kw.setdefault("log_path", self.tmp / "deploy.log")
        return DeployOptions(**kw)

    def held(self) -> dict[str, list[str]]:
        """What every switch holds, read back over P4Runtime (pipeline cookie and entities)."""
        out = {}
        for sid, h in self.emulators.items():
            with P4RTSession(h.address, 1, primary=False, label=sid) as s:
                pipe = s.get_pipeline()
                if pipe is None:
                    out[sid] = ["no pipeline"]
                    continue
                out[sid] = [f"cookie {pipe.cookie.cookie}"] + entities_text(s.read_state())
        return out

    def wanted(self, plan) -> dict:
        return desired_from_spec(build_entities(self.sc, plan, self.inv))

    def stop(self):
        for h in self.emulators.values():
            h.stop()


@pytest.fixture
def testbed(sshd, tmp_path):
    tb = _Testbed(make_scenario(), sshd, tmp_path)
    yield tb
    tb.stop()


def test_full_deploy_reads_back_equal(testbed):
    plan = make_plan(testbed.sc)
    events: list[Progress] = []
    report = deploy(testbed.sc, plan, testbed.inv, testbed.options(), progress=events.append)
    assert report.ok, report.text()
    want = testbed.wanted(plan)
    assert set(want.switches) <= set(testbed.switch_ids) and len(want.switches) >= 3
    for sid, ents in want.switches.items():
        st = testbed.emulators[sid].state
        held = [*st.table_entries, *st.default_entries]
        got = index_entities([_entity(e) for e in held] + [_group(g) for g in st.multicast_groups])
        assert diff_state(list(got.values()), ents).empty, sid
        assert report.switches[sid].status == "deployed"
        assert report.switches[sid].diff["insert"] == len(ents) > 0
        assert st.device_config == STUB
    # the build ran once on the shared build host and its output was streamed
    outputs = [e for e in events if e.state == "output"]
    assert [e.message for e in outputs].count("compiled ina_v1model.p4") == 1
    steps = {(e.node, e.phase) for e in events if e.state == "done"}
    for sid in want.switches:
        for step in ("build", "p4info", "connect", "snapshot", "pipeline", "write", "verify"):
            assert (sid, step) in steps
    # worker files written atomically on the host, with what the spec says
    for w, data in want.hosts.items():
        path = testbed.remote / "workers" / f"{w}.json"
        assert path.read_bytes() == data
        assert json.loads(data)["format"] == "inaplanner-worker"
        assert report.hosts[w].status == "configured"
    log = (testbed.tmp / "deploy.log").read_text()
    assert "[L1] verify done" in log and "compiled ina_v1model.p4" in log
    # the run's overall progress: switches prepared, switches applied, worker files, in order,
    # never going back, each stage ending with all of its items
    overall = [e for e in events if not e.node]
    assert [e.phase for e in overall if e.phase != overall[overall.index(e) - 1].phase
            or e is overall[0]] == ["prepare", "apply", "workers"]
    fractions = [e.fraction for e in overall]
    assert fractions == sorted(fractions) and fractions[0] == 0.0 and fractions[-1] == 1.0
    n, w = len(want.switches), len(want.hosts)
    last = {e.phase: e.message for e in overall}
    assert last == {"prepare": f"{n}/{n} switches", "apply": f"{n}/{n} switches",
                    "workers": f"{w}/{w} worker files"}


def test_rejected_entry_rolls_every_switch_back(testbed):
    first = make_plan(testbed.sc, spines=("S1", "S2"))
    assert deploy(testbed.sc, first, testbed.inv, testbed.options()).ok
    before = testbed.held()
    workers_before = {w: (testbed.remote / "workers" / f"{w}.json").read_bytes()
                      for w in testbed.inv.hosts}
    second = make_plan(testbed.sc, spines=("S2", "S1"), rate=3.0)
    # S2 refuses the third update it sees (after two went in), mid-batch
    seen = []

    def refuse(update):
        seen.append(update)
        return len(seen) == 3 and "ASIC table write error (bad port)"

    testbed.emulators["S2"].fail_on(refuse)
    events: list[Progress] = []
    report = deploy(testbed.sc, second, testbed.inv, testbed.options(parallel=1),
                    progress=events.append)
    assert not report.ok
    assert report.error.startswith("switch S2: write: the target rejected update #2")
    assert "INTERNAL: ASIC table write error (bad port)" in report.error
    assert report.switches["S2"].status == "rolled back"
    touched = [s for s, r in report.switches.items() if r.status == "rolled back"]
    assert len(touched) >= 2  # switches written before S2 were rolled back too
    # the overall progress says a switch failed to apply, then counts the rollback
    apply = [e.message for e in events if not e.node and e.phase == "apply"]
    went, rest = apply[-1].split("/", 1)  # "4/5 switches, 1 failed": S2 did not go through
    assert int(went) < len(report.switches) and rest == f"{len(report.switches)} switches, 1 failed"
    rollback = [e.message for e in events if not e.node and e.phase == "rollback"]
    assert rollback[0] == f"0/{len(touched)} switches"
    assert rollback[-1] == f"{len(touched)}/{len(touched)} switches"
    testbed.emulators["S2"].fail_on(None)
    assert testbed.held() == before
    assert {w: (testbed.remote / "workers" / f"{w}.json").read_bytes()
            for w in testbed.inv.hosts} == workers_before


def test_redeploy_writes_only_the_diff(testbed):
    first = make_plan(testbed.sc, spines=("S1", "S2"))
    assert deploy(testbed.sc, first, testbed.inv, testbed.options()).ok
    requests = {s: h.state.write_requests for s, h in testbed.emulators.items()}
    again = deploy(testbed.sc, first, testbed.inv, testbed.options())
    assert again.ok and all(r.status == "unchanged" for r in again.switches.values())
    assert {s: h.state.write_requests for s, h in testbed.emulators.items()} == requests
    second = make_plan(testbed.sc, spines=("S2", "S1"))
    a, b = testbed.wanted(first), testbed.wanted(second)
    report = deploy(testbed.sc, second, testbed.inv, testbed.options())
    assert report.ok, report.text()
    for sid in testbed.switch_ids:
        r = report.switches[sid]
        assert not r.pipeline_pushed  # same pipeline: entries kept, not rewritten
        expect = diff_state(a.switches.get(sid, []), b.switches.get(sid, [])).counts()
        assert r.diff == expect, sid
    total = sum(r.diff["insert"] + r.diff["modify"] + r.diff["delete"]
                for r in report.switches.values())
    unchanged = sum(r.diff["unchanged"] for r in report.switches.values())
    assert 0 < total and unchanged > 0
    assert report.switches["S1"].diff["delete"] > 0 and report.switches["S2"].diff["insert"] > 0


def test_cancel_during_deploy_rolls_back(testbed):
    first = make_plan(testbed.sc, spines=("S1", "S2"))
    assert deploy(testbed.sc, first, testbed.inv, testbed.options()).ok
    before = testbed.held()
    cancel = CancelToken()

    def progress(p: Progress) -> None:
        if p.phase == "write" and p.state == "progress":
            cancel.cancel()  # the user presses Cancel while the first batches go in

    report = deploy(testbed.sc, make_plan(testbed.sc, spines=("S2", "S1"), rate=5.0), testbed.inv,
                    testbed.options(batch_size=1, parallel=2), progress=progress, cancel=cancel)
    assert not report.ok and "cancelled" in report.error
    assert any(r.status == "rolled back" for r in report.switches.values())
    assert testbed.held() == before


def test_failed_build_shows_its_last_lines(testbed):
    for sw in testbed.inv.switches.values():
        sw.build_command = ("for i in $(seq 1 40); do echo step $i; done; "
                            "echo 'ina_v1model.p4(12): error: no such header' >&2; exit 1")
    report = deploy(testbed.sc, make_plan(testbed.sc), testbed.inv, testbed.options())
    assert not report.ok
    assert re.match(r"switch \w+: build: build host: remote command failed: build exited with "
                    r"status 1; last lines:\n", report.error), report.error
    assert "ina_v1model.p4(12): error: no such header" in report.error
    assert "step 40" in report.error and "step 2\n" not in report.error
    assert all(not h.state.pipeline_set for h in testbed.emulators.values())  # nothing touched
    assert all(r.status in ("not touched", "failed") for r in report.switches.values())


def test_p4info_mismatch_is_refused(testbed):
    for sw in testbed.inv.switches.values():
        sw.build_command = FAKE_BUILD + " && sed -i 's/bitwidth: 16/bitwidth: 12/' {p4info}"
    report = deploy(testbed.sc, make_plan(testbed.sc), testbed.inv, testbed.options())
    assert not report.ok
    assert re.match(r"switch \w+: p4info: P4Info mismatch with the contract: action "
                    r"InaIngress.aggregate parameters", report.error), report.error
    assert "table InaIngress.ina_aggregate match fields" in report.error
    assert all(not h.state.pipeline_set for h in testbed.emulators.values())


def test_unknown_host_key_stops_the_build(testbed, tmp_path):
    empty = tmp_path / "empty_known_hosts"
    for sw in testbed.inv.switches.values():
        sw.ssh = testbed.sshd.target(known_hosts=empty, label=f"switch {sw.id}")
    report = deploy(testbed.sc, make_plan(testbed.sc), testbed.inv, testbed.options())
    assert not report.ok and ": build: host key unknown:" in report.error
    assert "SHA256:" in report.error


def test_dry_run_changes_nothing(testbed):
    first = make_plan(testbed.sc, spines=("S1", "S2"))
    dry = deploy(testbed.sc, first, testbed.inv, testbed.options(dry_run=True))
    assert dry.ok and all(r.pipeline_change == "install" for r in dry.switches.values()
                          if r.diff.get("insert"))
    assert all(not h.state.pipeline_set for h in testbed.emulators.values())
    assert deploy(testbed.sc, first, testbed.inv, testbed.options()).ok
    before = testbed.held()
    second = make_plan(testbed.sc, spines=("S2", "S1"))
    dry = deploy(testbed.sc, second, testbed.inv, testbed.options(dry_run=True))
    assert dry.ok and testbed.held() == before
    a, b = testbed.wanted(first), testbed.wanted(second)
    for sid in testbed.switch_ids:
        r = dry.switches[sid]
        assert r.pipeline_change == ""
        assert r.diff == diff_state(a.switches.get(sid, []), b.switches.get(sid, [])).counts()
        assert len(r.changes) == r.diff["insert"] + r.diff["modify"] + r.diff["delete"]
    assert any(line.startswith("+ table InaIngress.") for r in dry.switches.values()
               for line in r.changes)
    assert all(h.state.primary_election_id is None for h in testbed.emulators.values())


def test_tofino_switch_gets_the_packed_device_config(testbed):
    sw = testbed.inv.switches["L2"]
    sw.target = "tofino"
    sw.program_name = "ina_tna"
    sw.workdir = str(testbed.remote / "tofino")
    sw.p4info_path = "build/ina_tna.p4info.txtpb"
    sw.device_config_path = "build/pipe/tofino.bin"
    sw.context_json_path = "build/pipe/context.json"
    sw.build_command = ("mkdir -p build/pipe && cp ina_v1model.p4info.txtpb {p4info} && "
                        "printf 'BIN\\001' > {device_config} && printf '{{}}' > {context_json}")
    report = deploy(testbed.sc, make_plan(testbed.sc), testbed.inv, testbed.options())
    assert report.ok, report.text()
    blob = testbed.emulators["L2"].state.device_config
    assert unpack_tofino_config(blob) == ("ina_tna", b"BIN\x01", b"{}")
    assert testbed.emulators["L1"].state.device_config == STUB


def _entity(te):
    from p4.v1 import p4runtime_pb2

    return p4runtime_pb2.Entity(table_entry=te)


def _group(g):
    from p4.v1 import p4runtime_pb2

    return p4runtime_pb2.Entity(packet_replication_engine_entry=
                                p4runtime_pb2.PacketReplicationEngineEntry(multicast_group_entry=g))
