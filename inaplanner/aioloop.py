"""One asyncio event loop per process, in one daemon thread, for the gRPC work that would
otherwise hold threads per switch.

Synchronous gRPC in Python keeps a thread per server, and per open stream three threads on the
client side, one of which wakes five times a second. At datacenter scale that is thousands of
threads: deploying fat-tree k=32's 1,280 emulated switches from one process reached 4,340
threads and load average 40 on a 2-core machine, and arbitration answers came too late. Served by
this one loop, the emulated switches (:mod:`inaplanner.emulator.target`) and the deployer's
P4Runtime streams (:mod:`inaplanner.deploy.p4rt`) cost no thread while idle.

Callers stay synchronous: :func:`submit` runs a coroutine on the loop and returns a
``concurrent.futures.Future``.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Coroutine
from concurrent import futures
from typing import Any

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_pid = 0


def loop() -> asyncio.AbstractEventLoop:
    """The process's loop, started on first use (and again in a child process after a fork)."""
    global _loop, _pid
    with _lock:
        if _loop is None or _pid != os.getpid() or not _loop.is_running():
            new = asyncio.new_event_loop()
            started = threading.Event()
            new.call_soon(started.set)
            threading.Thread(target=new.run_forever, name="inaplanner-grpc-loop",
                             daemon=True).start()
            started.wait()
            _loop, _pid = new, os.getpid()
        return _loop


def submit(coro: Coroutine[Any, Any, Any]) -> futures.Future:
    """Run ``coro`` on the loop; its result (or exception) comes through the returned future."""
    return asyncio.run_coroutine_threadsafe(coro, loop())


def call_soon(fn: Any, *args: Any) -> None:
    """Call ``fn(*args)`` on the loop's thread (thread-safe)."""
    loop().call_soon_threadsafe(fn, *args)
