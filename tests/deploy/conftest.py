"""Fixtures for the deployment tests: a real OpenSSH server on 127.0.0.1 with its own keys.

The server runs ``/usr/sbin/sshd -D -e -f CONFIG`` on a free port (sshd cannot bind port 0) with its
own host key, one authorized client key, no PAM and no passwords, and is stopped at the end of the
session. Remote work directories live under a temporary directory.
"""

from __future__ import annotations

import getpass
import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from inaplanner.testbed.inventory import SSHTarget

SSHD = shutil.which("sshd") or "/usr/sbin/sshd"


@dataclass
class SSHServer:
    host: str
    port: int
    user: str
    dir: Path
    client_key: Path
    wrong_key: Path
    host_key_pub: str  # "ssh-ed25519 AAAA..."
    known_hosts: Path  # holds this server's key

    def target(self, key: Path | None = None, known_hosts: Path | None = None,
               label: str = "test host") -> SSHTarget:
        return SSHTarget(
            host=self.host, port=self.port, user=self.user, key=key or self.client_key,
            known_hosts=known_hosts if known_hosts is not None else self.known_hosts,
            connect_timeout=5.0, label=label,
        )


def _keygen(path: Path) -> None:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "inaplanner-test", "-f", str(path)],
        check=True,
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_banner(port: int, proc: subprocess.Popen, deadline: float) -> bool:
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1.0) as s:
                s.settimeout(2.0)
                if s.recv(64).startswith(b"SSH-2.0"):
                    return True
        except OSError:
            time.sleep(0.05)
    return False


@pytest.fixture(scope="session")
def sshd(tmp_path_factory: pytest.TempPathFactory):
    assert os.path.exists(SSHD), "OpenSSH server is not installed (apt-get install openssh-server)"
    d = tmp_path_factory.mktemp("sshd")
    host_key = d / "host_ed25519"
    client_key = d / "client_ed25519"
    wrong_key = d / "wrong_ed25519"
    for k in (host_key, client_key, wrong_key):
        _keygen(k)
    authorized = d / "authorized_keys"
    authorized.write_text(client_key.with_suffix(".pub").read_text())
    authorized.chmod(0o600)
    if os.geteuid() == 0:
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
    host_pub = " ".join(host_key.with_suffix(".pub").read_text().split()[:2])
    proc = None
    port = 0
    for _attempt in range(5):
        port = _free_port()
        config = d / "sshd_config"
        config.write_text(
            "\n".join([
                f"Port {port}",
                "ListenAddress 127.0.0.1",
                f"HostKey {host_key}",
                f"PidFile {d / 'sshd.pid'}",
                f"AuthorizedKeysFile {authorized}",
                "PubkeyAuthentication yes",
                "PasswordAuthentication no",
                "KbdInteractiveAuthentication no",
                "PermitRootLogin prohibit-password",
                "UsePAM no",
                "StrictModes no",
                "PrintMotd no",
                "MaxStartups 50",
                "MaxSessions 50",
                "Subsystem sftp internal-sftp",
                "LogLevel ERROR",
                "",
            ])
        )
        proc = subprocess.Popen(
            [SSHD, "-D", "-e", "-f", str(config)],
            stdout=subprocess.DEVNULL, stderr=open(d / "sshd.log", "ab"),  # noqa: SIM115
        )
        if _wait_banner(port, proc, time.monotonic() + 10):
            break
        proc.terminate()
        proc.wait(5)
        proc = None
    assert proc is not None, f"sshd did not start; log:\n{(d / 'sshd.log').read_text()}"
    known_hosts = d / "known_hosts"
    known_hosts.write_text(f"[127.0.0.1]:{port} {host_pub}\n")
    try:
        yield SSHServer("127.0.0.1", port, getpass.getuser(), d, client_key, wrong_key, host_pub,
                        known_hosts)
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
