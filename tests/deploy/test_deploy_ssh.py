"""SSH layer against a real OpenSSH server: host keys, auth, commands with deadlines, files."""

from __future__ import annotations

import os
import socket
import subprocess
import threading
import time
from pathlib import Path

import paramiko
import pytest

from inaplanner.deploy import ssh
from inaplanner.errors import Cancelled
from inaplanner.testbed.inventory import SSHTarget


def test_unknown_host_key_is_refused_until_recorded(sshd, tmp_path):
    known = tmp_path / "known_hosts"
    target = sshd.target(known_hosts=known)
    with pytest.raises(ssh.HostKeyUnknown) as err:
        ssh.connect(target, config=paramiko.SSHConfig(), use_system_known_hosts=False)
    expected = subprocess.run(
        ["ssh-keygen", "-lf", str(sshd.dir / "host_ed25519.pub")], capture_output=True, text=True,
        check=True,
    ).stdout.split()[1]
    assert err.value.fingerprint == expected
    assert "host key unknown" in str(err.value) and expected in str(err.value)
    assert not known.exists()  # nothing recorded without a decision

    info = ssh.scan_host_key(target, config=paramiko.SSHConfig())
    assert info.fingerprint == expected and info.name == f"[127.0.0.1]:{sshd.port}"
    ssh.record_host_key(known, info)
    assert known.read_text().split()[:2] == [info.name, "ssh-ed25519"]
    with ssh.connect(target, config=paramiko.SSHConfig(), use_system_known_hosts=False) as s:
        assert s.run("echo hello", timeout=10).lines == ["hello"]
    ssh.record_host_key(known, info)  # the same key again: no duplicate line
    assert len(known.read_text().splitlines()) == 1


def test_host_key_mismatch_is_refused(sshd, tmp_path):
    known = tmp_path / "known_hosts"
    other = " ".join((sshd.dir / "wrong_ed25519.pub").read_text().split()[:2])
    known.write_text(f"[127.0.0.1]:{sshd.port} {other}\n")
    with pytest.raises(ssh.HostKeyMismatch, match="host key mismatch"):
        ssh.connect(sshd.target(known_hosts=known), config=paramiko.SSHConfig(),
                    use_system_known_hosts=False)
    info = ssh.scan_host_key(sshd.target(known_hosts=known), config=paramiko.SSHConfig())
    with pytest.raises(ssh.HostKeyMismatch):
        ssh.record_host_key(known, info)  # never silently replaced
    ssh.record_host_key(known, info, replace=True)
    with ssh.connect(sshd.target(known_hosts=known), config=paramiko.SSHConfig(),
                     use_system_known_hosts=False):
        pass


def test_wrong_key_is_refused(sshd):
    with pytest.raises(ssh.AuthFailed, match="authentication failed") as err:
        ssh.connect(sshd.target(key=sshd.wrong_key), config=paramiko.SSHConfig(),
                    use_system_known_hosts=False)
    assert str(sshd.wrong_key) in str(err.value)


def test_encrypted_key_asks_for_the_agent(sshd, tmp_path):
    key = tmp_path / "enc_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "secret phrase", "-f", str(key)],
                   check=True)
    with pytest.raises(ssh.AuthFailed, match="ssh-agent"):
        ssh.connect(sshd.target(key=key), config=paramiko.SSHConfig(), use_system_known_hosts=False)


def test_connection_refused_is_named():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    target = SSHTarget("127.0.0.1", port, "root", None, None, 2.0, "switch S9")
    with pytest.raises(ssh.ConnectionRefused, match="switch S9: connection refused"):
        ssh.connect(target, config=paramiko.SSHConfig())


def test_ssh_config_fills_what_the_inventory_leaves_out(tmp_path):
    cfg_file = tmp_path / "config"
    key = tmp_path / "id_test"
    key.write_text("x")
    cfg_file.write_text(
        f"Host buildbox\n  HostName 10.1.2.3\n  Port 2222\n  User builder\n  IdentityFile {key}\n"
    )
    cfg = paramiko.SSHConfig.from_path(str(cfg_file))
    rt = ssh.resolve_target(SSHTarget("buildbox", label="switch S1"), cfg)
    assert (rt.hostname, rt.port, rt.user, rt.key_files) == ("10.1.2.3", 2222, "builder", (key,))
    assert rt.known_hosts_name == "[10.1.2.3]:2222"
    rt2 = ssh.resolve_target(SSHTarget("buildbox", port=22, user="me", key=Path("/k")), cfg)
    assert (rt2.port, rt2.user, rt2.key_files, rt2.use_agent) == (22, "me", (Path("/k"),), False)
    assert rt2.known_hosts_name == "10.1.2.3"


def test_failed_command_shows_its_last_lines(sshd):
    lines: list[str] = []
    with ssh.connect(sshd.target(), config=paramiko.SSHConfig(), use_system_known_hosts=False) as s:
        with pytest.raises(ssh.RemoteCommandFailed) as err:
            s.run("for i in $(seq 1 30); do echo line$i; done; echo 'error: boom' >&2; exit 3",
                  timeout=10, on_line=lines.append, what="build")
    assert err.value.exit_status == 3
    assert err.value.last_lines[-1] == "error: boom"
    assert "line30" in str(err.value) and "line5\n" not in str(err.value)  # only the tail
    assert lines[0] == "line1" and len(lines) == 31  # streamed, stderr merged by the pty


def test_deadline_kills_the_remote_command(sshd, tmp_path):
    marker = tmp_path / "still-running"
    pidfile = tmp_path / "pid"
    with ssh.connect(sshd.target(), config=paramiko.SSHConfig(), use_system_known_hosts=False) as s:
        with pytest.raises(ssh.RemoteTimeout, match="timed out"):
            s.run(f"echo $$ > {pidfile}; echo started; sleep 60; touch {marker}", timeout=1)
    pid = int(pidfile.read_text())
    end = time.monotonic() + 30  # a bound for a loaded machine, not a timing assertion
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    with pytest.raises(ProcessLookupError):  # killed, long before its sleep would have ended
        os.kill(pid, 0)
    assert not marker.exists()


def test_cancel_kills_the_remote_command(sshd, tmp_path):
    marker = tmp_path / "done"
    pidfile = tmp_path / "pid"
    stop = threading.Event()
    lines: list[str] = []

    def on_line(line: str) -> None:
        lines.append(line)
        if line == "started":
            stop.set()

    with ssh.connect(sshd.target(), config=paramiko.SSHConfig(), use_system_known_hosts=False) as s:
        with pytest.raises(Cancelled):
            s.run(f"echo $$ > {pidfile}; echo started; sleep 3; touch {marker}", timeout=30,
                  on_line=on_line, cancel=stop.is_set)
        assert s.run("echo still usable", timeout=5).lines == ["still usable"]
    pid = int(pidfile.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert lines == ["started"] and not marker.exists()


def test_files_upload_read_and_atomic_write(sshd, tmp_path):
    src = tmp_path / "src"
    (src / "include").mkdir(parents=True)
    (src / "a.p4").write_text("control A {}\n")
    (src / "include" / "h.p4").write_text("header h_t {}\n")
    (src / "notes.txt").write_text("skip me")
    remote = tmp_path / "remote" / "work"
    with ssh.connect(sshd.target(), config=paramiko.SSHConfig(), use_system_known_hosts=False) as s:
        written = s.upload_tree(src, str(remote), include=lambda p: p.suffix == ".p4")
        assert written == [f"{remote}/a.p4", f"{remote}/include/h.p4"]
        assert (remote / "include" / "h.p4").read_text() == "header h_t {}\n"
        assert not (remote / "notes.txt").exists()
        assert s.read_file(f"{remote}/a.p4") == b"control A {}\n"
        with pytest.raises(ssh.RemoteFileError, match="does not exist"):
            s.read_file(f"{remote}/missing")
        cfg = remote / "etc" / "worker.json"
        s.write_file_atomic(str(cfg), b'{"v": 1}')
        s.write_file_atomic(str(cfg), b'{"v": 2}')
    assert cfg.read_bytes() == b'{"v": 2}'
    assert sorted(p.name for p in cfg.parent.iterdir()) == ["worker.json"]  # no temp left
