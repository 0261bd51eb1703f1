"""What a real switch (bmv2 ``simple_switch_grpc``) does that a strict target does not, and what
the deployer makes of it; every case runs against the emulated target in both behaviours
("strict" and "bmv2"): a device config checked before it is sent, VERIFY before
VERIFY_AND_COMMIT, a pipeline left in a failed state, a wrong device_id, refusals reported as
UNKNOWN, the multicast group limit, and a terminal that stays readable."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from p4.v1 import p4runtime_pb2

from inaplanner.cli import main
from inaplanner.deploy.deployer import DeployOptions, deploy
from inaplanner.deploy.emulated import DEVICE_CONFIG_NAME, start_emulated_testbed
from inaplanner.deploy.journal import journal_path, read_journal
from inaplanner.deploy.p4rt import P4RTSession
from inaplanner.emulator.target import BEHAVIOURS
from inaplanner.io.native import save_plan, save_scenario
from tests.deploy.test_deploy_cli import small_case

Req = p4runtime_pb2.SetForwardingPipelineConfigRequest


@pytest.fixture(params=BEHAVIOURS)
def bed(request, tmp_path):
    sc, plan = small_case()
    tb = start_emulated_testbed(sc, tmp_path / "tb.toml", behaviour=request.param)
    tb.sc, tb.plan, tb.dir, tb.behaviour = sc, plan, tmp_path, request.param
    yield tb
    tb.stop()


def _entities(h) -> int:
    st = h.state
    return len(st.table_entries) + len(st.default_entries) + len(st.multicast_groups)


def test_a_broken_device_config_is_never_sent(bed):
    path = bed.dir / DEVICE_CONFIG_NAME
    path.write_bytes(path.read_bytes()[:200])  # truncated, as a half-copied p4c output
    report = deploy(bed.sc, bed.plan, bed.inventory)
    assert not report.ok
    assert re.search(r"p4info: the bmv2 device config is not valid JSON \(200 bytes; "
                     r"truncated\?\)", report.error), report.error
    assert all(not h.state.pipeline_set and h.state.write_requests == 0
               for h in bed.handles.values())


def test_a_config_for_another_program_is_never_sent(bed):
    path = bed.dir / DEVICE_CONFIG_NAME
    path.write_text(path.read_text().replace("InaIngress.ina_forward", "Other.table"))
    report = deploy(bed.sc, bed.plan, bed.inventory)
    assert not report.ok and "has no table 'InaIngress.ina_forward' of the P4Info" in report.error
    assert all(not h.state.pipeline_set for h in bed.handles.values())


def test_a_commit_that_fails_after_verify(bed):
    assert deploy(bed.sc, bed.plan, bed.inventory).ok
    before = {sid: (h.state.entries_text(), h.servicer.state.config.cookie.cookie)
              for sid, h in bed.handles.items()}
    path = bed.dir / DEVICE_CONFIG_NAME  # a rebuilt program: another cookie, a pipeline push
    path.write_text(path.read_text().replace('"emulated": true', '"emulated": true, "build": 2'))
    l2 = bed.handles["L2"]
    l2.servicer.fail_next_commit = True  # VERIFY passes, the commit does not
    report = deploy(bed.sc, bed.plan, bed.inventory, DeployOptions(parallel=1))
    assert not report.ok and "switch L2: pipeline: SetForwardingPipelineConfig " \
        "(VERIFY_AND_COMMIT) failed" in report.error
    assert report.switches["L1"].status == "rolled back"
    now = lambda sid: (bed.handles[sid].state.entries_text(),  # noqa: E731
                       bed.handles[sid].servicer.state.config.cookie.cookie)
    assert now("L1") == before["L1"]
    if bed.behaviour == "strict":  # the switch refused and kept running: all is rolled back
        assert report.switches["L2"].status == "rolled back" and now("L2") == before["L2"]
        assert not journal_path(bed.path).exists()
        return
    # bmv2: the switch keeps forwarding with its old pipeline but cannot be read any more
    assert "the switch's pipeline is in a failed state after the rejected push" in report.error
    assert "restart the switch" in report.error
    assert report.switches["L2"].status == "rollback failed"
    assert "NOT POSSIBLE" in report.switches["L2"].rollback
    j = read_journal(journal_path(bed.path))
    assert j.switches["L2"].state == "pipeline failed"  # named in the journal
    with pytest.raises(Exception, match=r"pipeline in a failed state \(restart the switch\): L2"):
        deploy(bed.sc, bed.plan, bed.inventory)
    l2.restart()
    assert main(["deploy", "--recover", "--testbed", str(bed.path), "-q"]) == 0
    assert not journal_path(bed.path).exists()
    assert now("L1") == before["L1"] and now("L2") == before["L2"]  # both on the old plan
    assert deploy(bed.sc, bed.plan, bed.inventory).ok


def test_a_switch_left_failed_by_someone_else_is_not_reported_empty(bed):
    assert deploy(bed.sc, bed.plan, bed.inventory).ok
    h = bed.handles["L1"]
    with P4RTSession(h.address, 1, (0, 1), label="another controller") as s:
        cfg = s.get_pipeline()
        cfg.p4_device_config = cfg.p4_device_config[:100]
        req = Req(device_id=1, action=Req.VERIFY_AND_COMMIT, config=cfg)
        req.election_id.low = 1
        with pytest.raises(Exception):  # noqa: B017 - either behaviour refuses it
            s.stub.SetForwardingPipelineConfig(req)
    dry = deploy(bed.sc, bed.plan, bed.inventory, DeployOptions(dry_run=True))
    real = deploy(bed.sc, bed.plan, bed.inventory)
    if bed.behaviour == "strict":
        assert dry.ok and real.ok and real.switches["L1"].status == "unchanged"
        return
    for report in (dry, real):
        assert not report.ok
        assert "switch L1: snapshot: the switch's pipeline is in a failed state" in report.error
        assert "restart the switch" in report.error
        assert report.switches["L1"].pipeline_change != "install"
    assert h.state.table_entries  # nothing was touched


def test_a_wrong_device_id_on_a_redeploy_is_warned_about(bed, capsys):
    assert deploy(bed.sc, bed.plan, bed.inventory).ok
    bed.inventory.switches["L1"].device_id = 7
    dry = deploy(bed.sc, bed.plan, bed.inventory, DeployOptions(dry_run=True))
    warning = ("switch L1 reports no pipeline but the last deployment installed one: device_id 7 "
               f"in {bed.path} may be wrong")
    if bed.behaviour == "bmv2":  # accepted at arbitration, "no pipeline" for reads
        assert dry.ok and dry.switches["L1"].pipeline_change.startswith("install (warning: ")
        assert warning in dry.switches["L1"].pipeline_change
        real = deploy(bed.sc, bed.plan, bed.inventory)
        assert any(warning in w for w in real.warnings)  # said before the push ...
        assert not real.ok and "Error when trying to assign device" in real.error
        assert bed.handles["L1"].stopped.wait(10)  # ... which, as on bmv2, ends the switch
    else:
        assert warning in " ".join(dry.warnings)
        real = deploy(bed.sc, bed.plan, bed.inventory)
        assert not real.ok and "switch L1: connect:" in real.error and "NOT_FOUND" in real.error
    assert bed.handles["L2"].state.table_entries  # the other switch kept its entries


def test_a_full_multicast_group_table(tmp_path):
    sc, plan = small_case()
    for behaviour, code in (("strict", "RESOURCE_EXHAUSTED"), ("bmv2", "UNKNOWN")):
        d = tmp_path / behaviour
        d.mkdir()
        with start_emulated_testbed(sc, d / "tb.toml", behaviour=behaviour,
                                    max_multicast_groups=0) as tb:
            report = deploy(sc, plan, tb.inventory)
            assert not report.ok and "multicast group" in report.error and code in report.error
            assert all(_entities(h) == 0 for h in tb.handles.values())
            assert all(r.status in ("rolled back", "failed") for r in report.switches.values())
            assert not journal_path(d / "tb.toml").exists()


def test_parallel_progress_lines_stay_whole_and_stream_errors_stay_quiet(tmp_path):
    """A real subprocess: every stderr line is one whole progress line, and the switch that dies
    (bmv2 after a push for a wrong device id) gives no CRITICAL lines from the client library."""
    sc, plan = small_case()
    save_scenario(sc, tmp_path / "sc.json")
    save_plan(plan, tmp_path / "plan.json")
    with start_emulated_testbed(sc, tmp_path / "tb.toml", behaviour="bmv2") as tb:
        text = (tmp_path / "tb.toml").read_text()
        (tmp_path / "tb.toml").write_text(text.replace("device_id = 1", "device_id = 5", 1))
        proc = subprocess.run(
            [sys.executable, "-m", "inaplanner", "deploy", str(tmp_path / "plan.json"),
             "--testbed", str(tmp_path / "tb.toml"), "--parallel", "8", "-v"],
            capture_output=True, text=True, timeout=120,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert "Error when trying to assign device" in proc.stdout
        lines = proc.stderr.splitlines()
        assert lines and "CRITICAL" not in proc.stderr and "Traceback" not in proc.stderr
        # -v: every step of every switch, besides the warnings and the overall progress
        pattern = re.compile(r"^(\[[\w-]+\] [\w-]+: \w+( — .*)?|  \[[\w-]+\] \| .*"
                             r"|\[[\w-]+\] warning: .*|inaplanner: .*)$")
        bad = [line for line in lines if not pattern.match(line)]
        assert not bad, bad
        assert sum(line.endswith(": start") for line in lines) >= 4
        assert tb.handles["L2"].state.write_requests >= 0
