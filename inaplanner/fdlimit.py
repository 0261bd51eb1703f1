"""Room for the sockets a datacenter-scale run holds open at once.

A deployment holds a connection to every switch it changes until it ends (a rollback needs every
switch's session), a monitor one per switch, an emulated switch a listening socket plus the
connection it accepts. Most Linux systems start a process with a soft limit of 1,024 open files
and allow far more (the hard limit; systemd's default is 524,288). With 1,024, fat-tree k=16's
320 switches, deployed onto emulated switches in one process, failed at the 150th switch with
"Too many open files", and a real deployment of fat-tree k=32's 1,280 switches would fail the
same way half-way.

:func:`ensure_open_files` raises the soft limit to the hard one when the work will need more than
the soft limit leaves, which is what the hard limit is for, and refuses with one clear line,
before anything is touched, when even the hard limit is too low.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

from inaplanner.errors import InaplannerError

try:
    import resource
except ImportError:  # not on Windows: the C runtime's limit there is the system's business
    resource = None  # type: ignore[assignment]

#: files a process of ours holds besides the sockets counted (modules, logs, the event loop's)
HEADROOM = 64

_lock = threading.Lock()
_reserved = 0  # descriptors promised to work already started (see reserve)


def open_files() -> int:
    """How many file descriptors this process has open now (0 when the system does not say)."""
    for where in ("/proc/self/fd", "/dev/fd"):
        try:
            return len(os.listdir(where))
        except OSError:
            continue
    return 0


def ensure_open_files(needed: int, what: str) -> None:
    """Make room for ``needed`` more open files (sockets) besides those open now: raise the soft
    limit up to the hard one if it leaves too little; raise InaplannerError naming ``what``
    ("deploying 1280 switches") when the hard limit does not allow it either."""
    if resource is None or needed <= 0:
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    with _lock:
        want = open_files() + needed + _reserved + HEADROOM
    if soft == resource.RLIM_INFINITY or want <= soft:
        return
    if hard != resource.RLIM_INFINITY and want > hard:
        raise InaplannerError(
            f"{what} needs about {want} open files (sockets) at once, but this process may open "
            f"at most {hard} (the hard limit, ulimit -Hn); raise it (limits.conf, or LimitNOFILE "
            "for a service) or work on fewer switches at a time")
    new = hard if hard != resource.RLIM_INFINITY else max(want, 2 * soft)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (new, hard))
    except (ValueError, OSError) as exc:  # e.g. above fs.nr_open with an unlimited hard limit
        raise InaplannerError(
            f"{what} needs about {want} open files (sockets) at once, but this process may open "
            f"{soft} and could not raise that limit: {exc}") from None


def reserve(count: int) -> Callable[[], None]:
    """Count ``count`` descriptors that work already started will open later (the connections
    an emulated switch of this process accepts when a deployment or a monitor connects to it)
    in every later :func:`ensure_open_files`, until the returned function is called.

    Without it a deployment onto switches emulated in the same process counted only its own
    end of each connection: at fat-tree k=64 (5,120 switches, then five open files each: a
    listening socket and both ends of two connections) the check passed and the deployment
    failed at the 3,650th switch with "Too many open files"."""
    global _reserved
    with _lock:
        _reserved += count
    done = threading.Event()

    def release() -> None:
        global _reserved
        if not done.is_set():
            done.set()
            with _lock:
                _reserved -= count

    return release
