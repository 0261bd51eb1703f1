"""Atomic saves that clean up (issue 16, item 4 and D20): no temp file left on any error path or
after ``kill -9`` mid-save, stale temps of our own pattern removed by the next save, and disk-full
and permission errors that name the file in one line while the old file stays as it was.

Real failures, no mocks: ENOSPC from a small tmpfs (mounted when running as root), EFBIG from a
real file-size limit (RLIMIT_FSIZE), EACCES from a process without write permission, SIGKILL of
a real child process."""

from __future__ import annotations

import errno
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import inaplanner
from inaplanner.cli import main
from inaplanner.io.atomic import SaveError, atomic_write_bytes, temp_pattern_matches


def temps(directory: Path, name: str) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if temp_pattern_matches(p.name, name))


CHILD = """
import sys
from inaplanner.io import atomic
atomic.USE_O_TMPFILE = sys.argv[2] == "anonymous"
data = bytes([int(sys.argv[3])]) * 4_000_000
print("ready", flush=True)
while True:
    atomic.atomic_write_bytes(sys.argv[1], data)
"""


@pytest.mark.parametrize("mode", ["anonymous", "named"])
def test_kill_9_mid_save_leaves_no_temp_after_the_next_save(tmp_path, mode):
    target = tmp_path / "plan.json"
    rnd = random.Random(16)
    kills_that_left_a_temp = 0
    for i in range(15):  # 2 modes x 15 = 30 kills
        proc = subprocess.Popen([sys.executable, "-c", CHILD, str(target), mode, str(65 + i % 3)],
                                stdout=subprocess.PIPE, text=True)
        try:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
            time.sleep(rnd.uniform(0.0, 0.06))
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(10)
        if target.exists():  # the target is always a whole file: old or new, never a mix
            data = target.read_bytes()
            assert len(data) == 4_000_000 and len(set(data)) == 1
        kills_that_left_a_temp += bool(temps(tmp_path, target.name))
    print(f"{mode}: {kills_that_left_a_temp} of 15 kills left a temp file until the next save")
    atomic_write_bytes(target, b"final")
    assert target.read_bytes() == b"final"
    assert temps(tmp_path, target.name) == []


def test_stale_temps_are_removed_but_not_fresh_ones_or_other_files(tmp_path):
    target = tmp_path / "s.json"
    stale = tmp_path / ".s.json.abcd1234.tmp"  # what a save killed in the named fallback leaves
    fresh = tmp_path / ".s.json.zzzz9999.tmp"  # a concurrent save that started after ours
    other = tmp_path / ".s.json.backup.tmp"  # not our pattern
    for p in (stale, fresh, other):
        p.write_bytes(b"x" * 1000)
    past, future = time.time() - 3600, time.time() + 3600
    os.utime(stale, (past, past))
    os.utime(other, (past, past))
    os.utime(fresh, (future, future))
    atomic_write_bytes(target, b"new")
    assert not stale.exists() and fresh.exists() and other.exists()
    assert target.read_bytes() == b"new"


def test_a_missing_directory_names_the_file(tmp_path):
    with pytest.raises(SaveError) as info:
        atomic_write_bytes(tmp_path / "nope" / "x.json", b"1")
    assert str(info.value) == f"{tmp_path / 'nope' / 'x.json'}: cannot save: No such file or directory"
    assert isinstance(info.value, OSError) and info.value.errno == errno.ENOENT


FSIZE_CHILD = """
import resource, signal, sys
from inaplanner.io.atomic import atomic_write_bytes, SaveError
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, 100_000))
try:
    atomic_write_bytes(sys.argv[1], b"y" * 1_000_000)
except SaveError as exc:
    print(exc.errno, exc)
"""


def test_a_file_size_limit_keeps_the_old_file_and_leaves_no_temp(tmp_path):
    target = tmp_path / "big.json"
    target.write_bytes(b"old")
    out = subprocess.run([sys.executable, "-c", FSIZE_CHILD, str(target)], capture_output=True,
                         text=True, timeout=60)
    assert out.stdout.strip() == f"{errno.EFBIG} {target}: cannot save: File too large", out
    assert target.read_bytes() == b"old" and temps(tmp_path, target.name) == []


PERM_CHILD = """
import os, sys
from inaplanner.io.atomic import atomic_write_bytes, SaveError
os.setgid(65534); os.setuid(65534)
try:
    atomic_write_bytes(sys.argv[1], b"new")
except SaveError as exc:
    print(exc.errno, exc)
"""


def test_permission_denied_names_the_file(tmp_path):
    d = tmp_path / "ro"
    d.mkdir()
    target = d / "scenario.json"
    target.write_bytes(b"old")
    if os.geteuid() == 0:  # root ignores permissions: save as an unprivileged user instead
        for p in (tmp_path, d):
            p.chmod(0o755)
        out = subprocess.run([sys.executable, "-c", PERM_CHILD, str(target)], capture_output=True,
                             text=True, timeout=60, cwd="/")
        line = out.stdout.strip()
    else:
        d.chmod(0o555)
        try:
            with pytest.raises(SaveError) as info:
                atomic_write_bytes(target, b"new")
            line = f"{info.value.errno} {info.value}"
        finally:
            d.chmod(0o755)
    assert line == f"{errno.EACCES} {target}: cannot save: permission denied"
    assert target.read_bytes() == b"old" and temps(d, target.name) == []


@pytest.fixture
def small_tmpfs(tmp_path):
    """A 256 kB tmpfs (root only): a real disk that fills up."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root; EFBIG covers the write failure path")
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mnt)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], check=False)


def _fill(mnt: Path, leave: int) -> None:
    """Fill the file system until fewer than ``leave`` bytes are free."""
    with open(mnt / "filler", "wb") as fh:
        while True:
            st = os.statvfs(mnt)
            free = st.f_bavail * st.f_frsize
            if free <= leave:
                break
            try:
                fh.write(b"\0" * min(4096, free - leave if free > leave else 4096))
                fh.flush()
            except OSError:
                break


def test_disk_full_names_the_file_keeps_the_old_one_and_leaves_no_temp(small_tmpfs, capsys):
    target = small_tmpfs / "out.graphml"
    target.write_bytes(b"old")
    _fill(small_tmpfs, 8192)
    with pytest.raises(SaveError) as info:
        atomic_write_bytes(target, b"z" * 200_000)
    assert info.value.errno == errno.ENOSPC
    assert str(info.value) == (f"{target}: cannot save: no space left on the device (disk full); "
                               "the old file is unchanged")
    assert target.read_bytes() == b"old" and temps(small_tmpfs, target.name) == []

    sample = Path(inaplanner.SAMPLES) / "fat_tree_k4.json"
    assert main(["convert", str(sample), str(target)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(target) in err and "disk full" in err
    assert target.read_bytes() == b"old" and temps(small_tmpfs, target.name) == []
