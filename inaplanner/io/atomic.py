"""Atomic file writes: a crash never leaves a half-written file in place of the old one, and a save
never leaves (or keeps finding) temp files beside its target.

How a save works (:func:`atomic_write_bytes`):

1. On Linux the data goes into an anonymous file made with ``O_TMPFILE`` in the target's
   directory: it has no name while it is written and fsynced, so a process killed at that point
   (``kill -9``, power loss) leaves nothing behind; the kernel frees the inode. The file then gets a
   name ``.NAME.XXXXXXXX.tmp`` with ``linkat`` and is renamed over the target at once.
   Where ``O_TMPFILE`` is missing (other systems, file systems without it) the data goes into a
   named temp file of the same pattern, removed on every error path.
2. ``rename`` replaces the target atomically; the directory is fsynced.
3. Before writing, temp files of our own pattern for the same target whose last change is older
   than this save began are removed: what a killed earlier save left (only possible in the short
   window between ``linkat`` and ``rename``, or with the named fallback).

Why both: ``O_TMPFILE`` closes the window during the (long) write, the clean-up catches the rest
(and files left by older versions). If a concurrent save of the same target removed our named
link before our rename, the still-open anonymous file is linked again.

Errors (disk full, permission, read-only file system...) raise :class:`SaveError`, an
``OSError`` and an :class:`~inaplanner.errors.InaplannerError` whose one-line message names the
file, so the command line prints it as one line; the old file is untouched.
"""

from __future__ import annotations

import errno
import os
import re
import secrets
import tempfile
import time
from pathlib import Path

from inaplanner.errors import InaplannerError

#: Use ``O_TMPFILE`` where the platform has it (set False to force the named temp file path).
USE_O_TMPFILE = True

_TOKEN_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789_"  # what tempfile.mkstemp uses
_TOKEN = re.compile(r"[a-z0-9_]{8}")


class SaveError(InaplannerError, OSError):
    """Saving ``filename`` failed; ``errno``/``strerror`` say why. One line: ``FILE: cannot save:
    WHY``."""

    def __init__(self, err: int | None, strerror: str, filename: str) -> None:
        OSError.__init__(self, err, strerror, filename)

    def __str__(self) -> str:
        return f"{self.filename}: cannot save: {self.strerror}"


def temp_pattern_matches(name: str, target_name: str) -> bool:
    """True when ``name`` is one of our temp files for ``target_name`` (``.NAME.XXXXXXXX.tmp``)."""
    prefix = f".{target_name}."
    if not (name.startswith(prefix) and name.endswith(".tmp")):
        return False
    return bool(_TOKEN.fullmatch(name[len(prefix):-4]))


def remove_stale_temps(target: Path, older_than: float) -> int:
    """Remove our temp files for ``target`` last changed before ``older_than`` (epoch seconds).
    Returns how many were removed; files that vanish meanwhile or cannot be removed are skipped."""
    directory = target.parent if str(target.parent) else Path(".")
    removed = 0
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return 0
    for entry in entries:
        if not temp_pattern_matches(entry.name, target.name):
            continue
        try:
            if not entry.is_file(follow_symlinks=False):
                continue
            if entry.stat(follow_symlinks=False).st_mtime >= older_than:
                continue
            os.unlink(entry.path)
            removed += 1
        except OSError:
            continue
    return removed


def _why(exc: OSError) -> str:
    if exc.errno == errno.ENOSPC:
        return "no space left on the device (disk full); the old file is unchanged"
    if exc.errno == errno.EDQUOT:
        return "disk quota exceeded; the old file is unchanged"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if exc.errno == errno.EROFS:
        return "read-only file system"
    return exc.strerror or str(exc)


def _mode_for(target: Path) -> int:
    try:
        return target.stat().st_mode & 0o7777
    except OSError:
        return 0o644


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _open_anonymous(directory: Path) -> int | None:
    """An ``O_TMPFILE`` descriptor in ``directory``, or None when the platform or file system has
    none (then the named fallback is used)."""
    flag = getattr(os, "O_TMPFILE", None)
    if flag is None or not USE_O_TMPFILE or not os.path.isdir("/proc/self/fd"):
        return None
    try:
        return os.open(directory, flag | os.O_WRONLY | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        if exc.errno in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL, errno.ENOENT):
            if exc.errno == errno.ENOENT and not directory.is_dir():
                raise
            return None
        raise


def _link_anonymous(fd: int, directory: Path, target_name: str) -> str:
    """Give the anonymous file a name of our temp pattern (linkat through /proc/self/fd)."""
    dfd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for _ in range(100):
            token = "".join(secrets.choice(_TOKEN_CHARS) for _ in range(8))
            name = f".{target_name}.{token}.tmp"
            try:
                # a dir fd makes Python call linkat(..., AT_SYMLINK_FOLLOW), which links the
                # anonymous inode itself (plain link() would try to link the /proc symlink)
                os.link(f"/proc/self/fd/{fd}", name, dst_dir_fd=dfd, follow_symlinks=True)
                return str(directory / name)
            except FileExistsError:
                continue
    finally:
        os.close(dfd)
    raise FileExistsError(errno.EEXIST, "no free temp file name", str(directory))


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (see the module doc): readers see the old file or the
    new one, never a mix; no temp file is left on any error; stale temps of earlier killed saves of
    this target are removed. Raises :class:`SaveError` naming the file."""
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    started = time.time()
    remove_stale_temps(target, started)
    mode = _mode_for(target)
    tmp: str | None = None
    fd: int | None = None
    try:
        fd = _open_anonymous(directory)
        if fd is not None:
            _write_all(fd, data)
            os.fchmod(fd, mode)
            os.fsync(fd)
            tmp = _link_anonymous(fd, directory, target.name)
            try:
                os.replace(tmp, target)
            except FileNotFoundError:  # a concurrent save removed our name: link it again
                tmp = _link_anonymous(fd, directory, target.name)
                os.replace(tmp, target)
            tmp = None
        else:
            fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
            _write_all(fd, data)
            os.fchmod(fd, mode)
            os.fsync(fd)
            os.close(fd)
            fd = None
            os.replace(tmp, target)
            tmp = None
    except OSError as exc:
        raise SaveError(exc.errno, _why(exc), str(target)) from None
    finally:
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
    _fsync_dir(directory)


def _fsync_dir(directory: Path) -> None:
    try:
        dfd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))
