"""P4Runtime over TLS on loopback: the testbed's tls settings, deploy and monitor over real TLS
and mutual TLS against emulated switches serving it, refusals (wrong CA, missing client
certificate, wrong server name), plaintext only when the testbed says so, and arbitration
messages (default election id, another controller holding the switch)."""

from __future__ import annotations

import dataclasses

import pytest

from inaplanner.deploy.deployer import DeployOptions, deploy
from inaplanner.deploy.emulated import start_emulated_testbed
from inaplanner.deploy.p4rt import P4RTError, P4RTSession
from inaplanner.emulator.pki import make_pki
from inaplanner.emulator.target import ServerTLS
from inaplanner.errors import ValidationError
from inaplanner.monitor.poller import Poller
from inaplanner.testbed.inventory import (
    DEFAULT_ELECTION_ID,
    TLSSettings,
    check_transport,
    dump_inventory,
    load_inventory,
    parse_inventory,
)
from tests.deploy.test_deploy_cli import small_case


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    return make_pki(tmp_path_factory.mktemp("pki"))


def _server(pki, mutual: bool) -> ServerTLS:
    return ServerTLS(pki.read("server_cert"), pki.read("server_key"),
                     client_ca=pki.read("ca_cert") if mutual else None,
                     require_client_auth=mutual)


def _bed(tmp_path, pki, mutual: bool, client: TLSSettings):
    sc, plan = small_case()
    tb = start_emulated_testbed(sc, tmp_path / "tb.toml", server_tls=_server(pki, mutual),
                                client_tls=client)
    return sc, plan, tb


def _with_tls(inv, tls: TLSSettings):
    for sw in inv.switches.values():
        sw.tls = tls


# ---- the testbed file --------------------------------------------------------------------------

SWITCH = '[[switch]]\nid = "L1"\np4runtime = "127.0.0.1:9559"\ndevice_id = 1\ntarget = "bmv2"\n'


def test_tls_fields_per_switch_and_in_defaults(tmp_path):
    inv = parse_inventory('[defaults]\ntls = true\nca_cert = "pki/ca.pem"\n'
                          'client_cert = "pki/c.pem"\nclient_key = "pki/c.key"\n' + SWITCH
                          + 'server_name = "switch.test"\n'
                          + SWITCH.replace("L1", "L2").replace("9559", "9560")
                          + 'tls = false\n', "tb.toml", tmp_path)
    l1, l2 = inv.switches["L1"].tls, inv.switches["L2"].tls
    assert l1 == TLSSettings(True, tmp_path / "pki/ca.pem", tmp_path / "pki/c.pem",
                             tmp_path / "pki/c.key", "switch.test")
    assert l2 == TLSSettings(False)  # a switch may opt out of [defaults]
    again = parse_inventory(dump_inventory(inv), "tb.toml", tmp_path)
    assert again.switches["L1"].tls == l1 and again.switches["L2"].tls == l2


@pytest.mark.parametrize("extra, field, why", [
    ('tls = true\nclient_key = "-----BEGIN PRIVATE KEY-----"\nclient_cert = "c.pem"\n',
     "client_key", "must be the path of a PEM file, not its contents"),
    ('tls = true\nclient_cert = "c.pem"\n', "client_key", "go together"),
    ('ca_cert = "ca.pem"\n', "ca_cert", "given without tls = true"),
    ('tls = false\nca_cert = "ca.pem"\n', "ca_cert", "given with tls = false"),
    ('tls = "yes"\n', "tls", "must be true or false"),
])
def test_bad_tls_fields_are_one_line(extra, field, why):
    with pytest.raises(ValidationError) as exc:
        parse_inventory(SWITCH + extra, "tb.toml")
    msg = str(exc.value)
    assert "\n" not in msg and f"field {field!r}" in msg and why in msg


def test_plaintext_needs_the_file_to_say_so(tmp_path, capsys):
    sc, plan = small_case()
    inv = parse_inventory(SWITCH, "tb.toml")
    with pytest.raises(ValidationError, match=r"switch 'L1', field 'tls': no 'tls' setting"):
        check_transport(inv)
    both = parse_inventory(SWITCH + SWITCH.replace("L1", "L2").replace("9559", "9560"), "tb.toml")
    with pytest.raises(ValidationError, match="no 'tls' setting"):
        deploy(sc, plan, both, DeployOptions(dry_run=True))
    far = parse_inventory(SWITCH.replace("127.0.0.1", "10.1.2.3") + "tls = false\n", "tb.toml")
    [warning] = check_transport(far)
    assert "switch L1: P4Runtime to 10.1.2.3:9559 is plaintext" in warning
    assert check_transport(parse_inventory(SWITCH + "tls = false\n", "tb.toml")) == []  # loopback


def test_new_testbeds_do_not_take_the_lowest_election_id(tmp_path):
    sc, _ = small_case()
    with start_emulated_testbed(sc, tmp_path / "tb.toml") as tb:
        inv = load_inventory(tmp_path / "tb.toml")
        assert DEFAULT_ELECTION_ID > (0, 1)
        assert all(sw.election_id == DEFAULT_ELECTION_ID for sw in inv.switches.values())
        assert all(sw.tls == TLSSettings(False) for sw in inv.switches.values())
        assert len(tb.handles) == 2


def test_another_controller_holding_the_switch_is_named(tmp_path):
    sc, plan = small_case()
    with start_emulated_testbed(sc, tmp_path / "tb.toml") as tb:
        h = tb.handles["L1"]
        with P4RTSession(h.address, 1, (0, 5000), label="other controller"):
            report = deploy(sc, plan, tb.inventory)
            assert not report.ok
            assert "another controller holds the switch (arbitration" in report.error
        with P4RTSession(h.address, 1, DEFAULT_ELECTION_ID, label="other controller"):
            with pytest.raises(P4RTError, match="another controller holds the switch with "
                                                "election id"):
                P4RTSession(h.address, 1, DEFAULT_ELECTION_ID, label="switch L1")
        assert deploy(sc, plan, tb.inventory).ok  # once it is gone


# ---- deploy and monitor over TLS ---------------------------------------------------------------


def _monitor_once(sc, inv):
    poller = Poller(sc, inv, interval=1.0)
    try:
        poller.poll_once()
        return {sid: h.state for sid, h in poller.health().items()}, \
            {sid: h.last_error for sid, h in poller.health().items()}
    finally:
        poller.stop()


def test_deploy_and_monitor_over_tls(tmp_path, pki):
    sc, plan, tb = _bed(tmp_path, pki, False, TLSSettings(True, pki.ca_cert))
    with tb:
        text = (tmp_path / "tb.toml").read_text()
        assert "tls = true" in text and f'ca_cert = "{pki.ca_cert}"' in text
        inv = load_inventory(tmp_path / "tb.toml")
        report = deploy(sc, plan, inv)
        assert report.ok, report.text()
        assert report.switches["L1"].status == "deployed"
        assert tb.handles["L1"].state.table_entries  # it went over TLS: the server has no other
        states, _ = _monitor_once(sc, inv)
        assert set(states.values()) == {"ok"}
        # the name the certificate carries, when the address is not it
        _with_tls(inv, TLSSettings(True, pki.ca_cert, server_name="switch.test"))
        assert deploy(sc, plan, inv).ok
        _with_tls(inv, TLSSettings(True, pki.ca_cert, server_name="elsewhere.test"))
        report = deploy(sc, plan, inv)
        assert not report.ok and "TLS handshake failed" in report.error


def test_a_wrong_ca_is_refused_by_deploy_and_monitor(tmp_path, pki):
    sc, plan, tb = _bed(tmp_path, pki, False, TLSSettings(True, pki.other_ca_cert))
    with tb:
        inv = load_inventory(tmp_path / "tb.toml")
        report = deploy(sc, plan, inv)
        assert not report.ok
        assert "connect: P4Runtime session with" in report.error
        assert "TLS handshake failed" in report.error, report.error
        assert not tb.handles["L1"].state.pipeline_set
        dry = deploy(sc, plan, inv, DeployOptions(dry_run=True))
        assert not dry.ok and "TLS handshake failed" in dry.error
        states, errors = _monitor_once(sc, inv)
        assert set(states.values()) == {"stale"}
        assert all("TLS handshake failed" in e for e in errors.values()), errors
        # plaintext against a TLS server is refused too
        _with_tls(inv, TLSSettings(False))
        assert not deploy(sc, plan, inv).ok


def test_mutual_tls(tmp_path, pki):
    full = TLSSettings(True, pki.ca_cert, pki.client_cert, pki.client_key)
    sc, plan, tb = _bed(tmp_path, pki, True, full)
    with tb:
        inv = load_inventory(tmp_path / "tb.toml")
        assert inv.switches["L1"].tls == full
        report = deploy(sc, plan, inv)
        assert report.ok, report.text()
        states, _ = _monitor_once(sc, inv)
        assert set(states.values()) == {"ok"}
        # without a client certificate, or with one from another CA: refused, nothing changes
        for tls in (TLSSettings(True, pki.ca_cert),
                    TLSSettings(True, pki.ca_cert, pki.other_client_cert, pki.other_client_key)):
            _with_tls(inv, tls)
            before = tb.handles["L1"].state.write_requests
            report = deploy(sc, plan, inv)
            assert not report.ok and report.switches["L1"].step == "connect", report.text()
            assert tb.handles["L1"].state.write_requests == before
            states, _ = _monitor_once(sc, inv)
            assert set(states.values()) == {"stale"}


def test_unreadable_certificate_files_are_named(tmp_path, pki):
    sc, plan, tb = _bed(tmp_path, pki, False, TLSSettings(True, pki.ca_cert))
    with tb:
        inv = tb.inventory
        _with_tls(inv, dataclasses.replace(inv.switches["L1"].tls, ca_cert=tmp_path / "nope.pem"))
        report = deploy(sc, plan, inv)
        assert not report.ok and f"cannot read ca_cert {tmp_path / 'nope.pem'}" in report.error
        (tmp_path / "junk.pem").write_text("not a certificate")
        _with_tls(inv, TLSSettings(True, tmp_path / "junk.pem"))
        report = deploy(sc, plan, inv)
        assert not report.ok and "is not a PEM file" in report.error


def test_emulate_with_tls_from_the_command_line(tmp_path, capsys):
    import os
    import signal
    import subprocess
    import sys

    from inaplanner.cli import main
    from inaplanner.io.native import save_plan, save_scenario

    sc, plan = small_case()
    save_scenario(sc, tmp_path / "sc.json")
    save_plan(plan, tmp_path / "plan.json")
    tb = tmp_path / "tb.toml"
    proc = subprocess.Popen(
        [sys.executable, "-m", "inaplanner", "testbed", "emulate", str(tmp_path / "sc.json"),
         "-o", str(tb), "--tls-dir", str(tmp_path / "pki")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        for line in proc.stdout:
            if line.startswith("running"):
                break
        inv = load_inventory(tb)
        tls = inv.switches["L1"].tls
        assert tls.enabled and tls.client_cert == tmp_path / "pki" / "client.pem"
        assert (tmp_path / "pki" / "client.key").stat().st_mode & 0o077 == 0
        assert main(["deploy", str(tmp_path / "plan.json"), "--testbed", str(tb), "-q"]) == 0
        assert "switch L1: deployed" in capsys.readouterr().out
        _with_tls(inv, TLSSettings(False))  # the emulators speak TLS only
        assert not deploy(sc, plan, inv).ok
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            assert proc.wait(60) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
