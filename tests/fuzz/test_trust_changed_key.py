"""D18: ``testbed trust --yes`` after a host key changed refuses with one line (exit 2) saying the
key changed and how to replace it; ``--replace-changed`` replaces it. Real sshd on 127.0.0.1."""

from __future__ import annotations

import subprocess

from inaplanner.cli import main


def _testbed(tmp_path, sshd):
    tb = tmp_path / "tb.toml"
    tb.write_text(
        '[defaults]\nknown_hosts = "kh"\n'
        f'[[host]]\nid = "H1"\nssh_host = "127.0.0.1"\nssh_port = {sshd.port}\n'
        f'ssh_user = "{sshd.user}"\nssh_key = "{sshd.client_key}"\n'
    )
    return tb


def test_changed_host_key_is_refused_then_replaced_only_when_told(sshd, tmp_path, capsys,
                                                                   monkeypatch):
    tb = _testbed(tmp_path, sshd)
    other = tmp_path / "other_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)], check=True)
    old_line = f"[127.0.0.1]:{sshd.port} " + " ".join(other.with_suffix(".pub").read_text().split()[:2])
    kh = tmp_path / "kh"
    kh.write_text(old_line + "\n")
    monkeypatch.setenv("HOME", str(tmp_path))  # no system known_hosts of the user in the way

    assert main(["testbed", "trust", str(tb), "--yes"]) == 2
    cap = capsys.readouterr()
    assert cap.err.count("\n") == 1, cap.err
    assert "CHANGED" in cap.err and "--replace-changed" in cap.err and str(tb) in cap.err
    assert f"[127.0.0.1]:{sshd.port}" in cap.err
    assert kh.read_text() == old_line + "\n"  # nothing recorded

    monkeypatch.setattr("builtins.input", lambda prompt: "n")
    assert main(["testbed", "trust", str(tb), "--replace-changed"]) == 0
    assert "CHANGED: replaces the recorded key" in capsys.readouterr().out
    assert kh.read_text() == old_line + "\n"  # declined: still nothing recorded

    assert main(["testbed", "trust", str(tb), "--yes", "--replace-changed"]) == 0
    out = capsys.readouterr().out
    assert "1 key(s) recorded" in out
    lines = kh.read_text().splitlines()
    assert lines == [f"[127.0.0.1]:{sshd.port} {sshd.host_key_pub}"]

    assert main(["testbed", "trust", str(tb)]) == 0
    assert "already known" in capsys.readouterr().out
