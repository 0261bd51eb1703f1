"""Running a planner to the end in a thread or in a child process (Qt-free).

Two back ends run a :class:`~inaplanner.views.runs.RunRequest`:

- ``process``: a spawned child gets the request (the scenario as its canonical document), plans,
  and sends the plan document back; the parent rebuilds the scenario on a helper thread meanwhile
  and evaluates. Nothing of the planner touches the parent's GIL or heap - a big PuLP model's
  garbage collection stops every thread of its process for 70-350 ms (grid-exact on a 576-server
  leaf-spine), which a UI thread cannot afford. Runs go truly in parallel, and a planner that
  ignores its token is terminated :data:`KILL_AFTER` seconds after cancel. Only planners the
  registry finds in a fresh interpreter (built-ins and entry points) can run there. Starting a
  child and importing the planners takes one to a few seconds, so :class:`ChildPool` keeps one
  started child waiting (after the first process run, or on ``prewarm``).
- ``thread``: :func:`~inaplanner.views.runs.execute` on the calling (worker) thread. HiGHS
  releases the GIL while it solves and pure Python yields it every few milliseconds; cancel sets
  the planner's CancelToken (HiGHS is interrupted from its callback, ``progress`` raises
  ``Cancelled`` on the next report).

``auto`` picks ``process`` when the planner can run there, else ``thread``.
"""

from __future__ import annotations

import dataclasses
import logging
import multiprocessing
import os
import sys
import threading
import time
import traceback
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any

from inaplanner.errors import Cancelled, InaplannerError
from inaplanner.io.native import plan_from_dict, plan_to_dict
from inaplanner.planners import CancelToken, Planner, available
from inaplanner.planners import registry as planner_registry
from inaplanner.views.runs import (
    RunRequest,
    execute,
    finish,
    plan_only,
    planning_scenario,
    scenarios,
)

BACKENDS = ("auto", "thread", "process")
#: A process that has not stopped this long after cancel is terminated.
KILL_AFTER = 0.7
#: list items of the scenario document per message to a child: pickling is one C call that holds
#: the GIL, and a fat-tree k=64's document (196,608 links) pickled whole stopped the window ~1 s
SEND_CHUNK = 4096
#: Niceness added to planner processes (batch work: the UI goes first).
CHILD_NICE = 10
PROGRESS_EVERY = 0.05  # seconds between progress reports
LOG_EVERY = 0.1  # seconds between log batches

Emit = Callable[[str, Any], None]
Outcome = tuple[str, Any]  # ("result", PlanResult) | ("cancelled", None) | ("error", message)


class Throttle:
    """Turns a stream of ``(kind, payload)`` reports into few sends: the latest progress at most
    every PROGRESS_EVERY seconds, log lines in batches. A small flusher thread sends what is held
    back once the planner falls quiet. Use as a context manager."""

    def __init__(self, send: Emit) -> None:
        self._send = send
        self._last_progress = 0.0
        self._pending_progress: tuple[float, str] | None = None
        self._lines: list[str] = []
        self._last_log = 0.0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._flusher = threading.Thread(target=self._flush_loop, daemon=True, name="inaplanner-throttle")

    def __enter__(self) -> Throttle:
        self._flusher.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._flusher.join()
        self.flush()

    def _flush_loop(self) -> None:
        while not self._stop.wait(PROGRESS_EVERY):
            self.flush()

    def __call__(self, kind: str, payload: Any) -> None:
        now = time.monotonic()
        with self._lock:
            if kind == "progress":
                self._pending_progress = payload
                if now - self._last_progress >= PROGRESS_EVERY:
                    self._last_progress = now
                    self._send("progress", payload)
                    self._pending_progress = None
            elif kind == "log":
                self._lines.append(payload)
                if now - self._last_log >= LOG_EVERY or len(self._lines) >= 500:
                    self._last_log = now
                    self._send("log", self._lines)
                    self._lines = []
            else:
                self._send(kind, payload)

    def flush(self) -> None:
        with self._lock:
            if self._pending_progress is not None:
                self._last_progress = time.monotonic()
                self._send("progress", self._pending_progress)
                self._pending_progress = None
            if self._lines:
                self._last_log = time.monotonic()
                self._send("log", self._lines)
                self._lines = []


class _ThreadLogHandler(logging.Handler):
    """Forwards ``inaplanner`` log records made on one thread to a run's log."""

    def __init__(self, thread_id: int, emit: Emit) -> None:
        super().__init__(logging.INFO)
        self.thread_id = thread_id
        self._emit = emit
        self.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        if record.thread == self.thread_id:
            try:
                self._emit("log", self.format(record))
            except Exception:  # a log line must never break a run
                pass


def run_guarded(work: Callable[[], Outcome], title: str, emit: Emit) -> Outcome:
    """Call ``work`` and classify the outcome: its own ``(kind, payload)``, ("cancelled", None) or
    ("error", message). Records of the ``inaplanner`` loggers made meanwhile on this thread go to
    the run's log."""
    logger = logging.getLogger("inaplanner")
    if logger.level == logging.NOTSET:
        logger.setLevel(logging.INFO)
    handler = _ThreadLogHandler(threading.get_ident(), emit)
    logger.addHandler(handler)
    try:
        return work()
    except Cancelled:
        return "cancelled", None
    except InaplannerError as exc:
        return "error", str(exc)
    except Exception as exc:  # a planner bug: report it on the run, keep the program alive
        emit("log", traceback.format_exc().rstrip())
        return "error", f"{title} failed: {type(exc).__name__}: {exc}"
    finally:
        logger.removeHandler(handler)


def loadable_in_child(planner: Planner) -> bool:
    """True when a fresh interpreter finds this very planner through the registry (a built-in
    module or an entry point), so it can run in a child process."""
    for name in planner_registry.BUILTIN_MODULES:
        module = sys.modules.get(name)
        if module is not None and any(p is planner for p in getattr(module, "PLANNERS", ())):
            return True
    for ep in entry_points(group=planner_registry.ENTRY_POINT_GROUP):
        try:
            obj = ep.load()
        except Exception:
            continue
        for item in obj if isinstance(obj, (list, tuple)) else [obj]:
            if item is planner or (isinstance(item, type) and isinstance(planner, item)):
                return True
    return False


def resolve_backend(backend: str, planner_name: str) -> str:
    """``auto``: a child process when the planner can be found there, else a thread."""
    if backend not in BACKENDS:
        raise InaplannerError(f"unknown run back end {backend!r} (one of {', '.join(BACKENDS)})")
    if backend != "auto":
        return backend
    planner = available().get(planner_name)
    return "process" if planner is not None and loadable_in_child(planner) else "thread"


def run_in_thread(request: RunRequest, emit: Emit, cancel: CancelToken) -> Outcome:
    """The whole run on the calling thread."""
    return run_guarded(lambda: ("result", execute(request, emit, cancel)), request.planner, emit)


# ---- child processes ----------------------------------------------------------------------------


def send_request(conn: Any, request: RunRequest, chunk: int = SEND_CHUNK) -> None:
    """Send ``request`` to a child: its scenario document's long lists (nodes, links) go in parts
    of ``chunk`` items after the rest, so the window gets the GIL between parts."""
    doc = request.scenario_doc
    long = {k: v for k, v in doc.items() if isinstance(v, list) and len(v) > chunk}
    head = dataclasses.replace(request, scenario_doc={k: [] if k in long else v for k, v in doc.items()})
    conn.send(("run", head, {k: len(v) for k, v in long.items()}))
    for key, items in long.items():
        for i in range(0, len(items), chunk):
            conn.send(("part", key, items[i:i + chunk]))


def receive_request(conn: Any) -> RunRequest | None:
    """The request :func:`send_request` sent, its lists put back together (None: not a run)."""
    message = conn.recv()
    if not (isinstance(message, tuple) and message[0] == "run"):
        return None
    request: RunRequest = message[1]
    for key, count in (message[2] if len(message) > 2 else {}).items():
        items = request.scenario_doc[key]
        while len(items) < count:
            kind, part_key, part = conn.recv()
            if kind != "part" or part_key != key:
                return None
            items.extend(part)
    return request


def child_main(out_conn: Any, in_conn: Any) -> None:
    """Entry point of a spawned child: import the planners (a waiting child does this ahead of
    time), take one request, plan, stream reports, send the plan document, exit. The parent
    evaluates: a plan document is small and quick to unpickle, an evaluated result is not
    (unpickling holds the parent's GIL: 150 ms for a fat-tree k=16 scenario). The child runs at a
    lower CPU priority, so on a busy machine the window keeps its share of the CPU."""
    try:
        os.nice(CHILD_NICE)
    except (AttributeError, OSError):  # not on this platform
        pass
    available()
    try:
        request = receive_request(in_conn)
    except (EOFError, OSError):
        return
    if request is None:
        return
    cancel = CancelToken()

    def listen() -> None:
        try:
            while True:
                if in_conn.recv() == "cancel":
                    cancel.cancel()
                    return
        except (EOFError, OSError):
            cancel.cancel()  # the parent went away

    threading.Thread(target=listen, daemon=True).start()
    lock = threading.Lock()

    def send(kind: str, payload: Any) -> None:
        with lock:
            out_conn.send((kind, payload))

    def work() -> Outcome:
        scenario = planning_scenario(request)
        cancel.check()
        return "plan", plan_to_dict(plan_only(request, scenario, throttle, cancel))

    with Throttle(send) as throttle:
        kind, payload = run_guarded(work, request.planner, throttle)
    send(kind, payload)
    out_conn.close()


class Child:
    """A started child process and the two pipes to it."""

    def __init__(self) -> None:
        ctx = multiprocessing.get_context("spawn")
        self.from_child, child_out = ctx.Pipe(duplex=False)
        child_in, self.to_child = ctx.Pipe(duplex=False)
        self.proc = ctx.Process(target=child_main, args=(child_out, child_in), daemon=True,
                                name="inaplanner-planner")
        self.proc.start()
        child_out.close()
        child_in.close()

    def alive(self) -> bool:
        return self.proc.is_alive()

    def close(self) -> None:
        """Close the pipes and end the process. A child that sent its last message has nothing
        left to do, so it is not waited for (interpreter shutdown takes a while)."""
        for conn in (self.to_child, self.from_child):
            try:
                conn.close()
            except OSError:
                pass
        self.proc.join(0.05)
        if self.proc.is_alive():
            self.proc.terminate()
            self.proc.join(1.0)


class ChildPool:
    """Keeps up to ``spare`` started children waiting, so a process run does not pay for starting
    Python and importing the planners. A child serves one run and exits."""

    def __init__(self, spare: int = 1, auto_warm: bool = True) -> None:
        self.spare = spare
        self.auto_warm = auto_warm  # keep a spare once a process run happened
        self._idle: list[Child] = []
        self._lock = threading.Lock()
        self._closed = False
        self.warm = False

    def prewarm(self) -> None:
        self.warm = True
        self._refill()

    def _refill(self) -> None:
        with self._lock:
            if self._closed or not self.warm:
                return
            self._idle = [c for c in self._idle if c.alive()]
            while len(self._idle) < self.spare:
                self._idle.append(Child())

    def take(self) -> Child:
        """A started child (a waiting one when there is one); a new spare is started behind it."""
        with self._lock:
            if self._closed:
                raise InaplannerError("the planner process pool is closed")
            child = None
            while self._idle and child is None:
                c = self._idle.pop(0)
                if c.alive():
                    child = c
                else:
                    c.close()
        if child is None:
            child = Child()
        if self.auto_warm:
            self.warm = True
            self._refill()
        return child

    def idle_count(self) -> int:
        with self._lock:
            return sum(1 for c in self._idle if c.alive())

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for c in idle:
            c.close()


class _Background:
    """Runs a function on a helper thread; ``result()`` waits for it (re-raising its error)."""

    def __init__(self, fn: Callable[[], Any]) -> None:
        self._value: Any = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(fn,), daemon=True)
        self._thread.start()

    def _run(self, fn: Callable[[], Any]) -> None:
        try:
            self._value = fn()
        except BaseException as exc:  # re-raised in result()
            self._error = exc

    def done(self) -> bool:
        return not self._thread.is_alive()

    def result(self) -> Any:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value


def _process_run(request: RunRequest, emit: Emit, cancel: CancelToken, pool: ChildPool) -> Outcome:
    start = time.perf_counter()
    emit("log", f"{request.title}: planning in a separate process")
    child = pool.take()
    # the request (the whole scenario document) goes out on a helper thread: a child still
    # importing reads it late, and cancel must not wait for that
    sending = _Background(lambda: send_request(child.to_child, request))
    prepared = _Background(lambda: scenarios(request))
    cancel_sent: float | None = None
    try:
        while True:
            if cancel.cancelled and cancel_sent is None:
                cancel_sent = time.monotonic()
                if sending.done():
                    try:
                        child.to_child.send("cancel")
                    except OSError:
                        pass
                else:  # it has not even started planning
                    child.proc.terminate()
                    return "cancelled", None
            if cancel_sent is not None and time.monotonic() - cancel_sent > KILL_AFTER:
                child.proc.terminate()
                return "cancelled", None
            if child.from_child.poll(0.05):
                try:
                    kind, payload = child.from_child.recv()
                except EOFError:
                    child.proc.join(1.0)
                    return "error", f"the planner process ended unexpectedly (exit code {child.proc.exitcode})"
                if kind in ("progress", "log"):
                    for item in payload if kind == "log" else [payload]:
                        emit(kind, item)
                    continue
                if kind != "plan":
                    return kind, payload
                plan = plan_from_dict(payload, f"plan from {request.planner}")
                cancel.check()
                scenario, display = prepared.result()
                return "result", finish(request, scenario, display, plan, start)
            if not child.alive() and not child.from_child.poll(0):
                return "error", f"the planner process ended unexpectedly (exit code {child.proc.exitcode})"
    finally:
        child.close()


def run_in_process(request: RunRequest, emit: Emit, cancel: CancelToken, pool: ChildPool) -> Outcome:
    """The run in a child process from ``pool``; the evaluation happens here."""
    return run_guarded(lambda: _process_run(request, emit, cancel, pool), request.planner, emit)


def run_request(request: RunRequest, backend: str, emit: Emit, cancel: CancelToken,
                pool: ChildPool | None = None) -> Outcome:
    """Run ``request`` on ``backend`` ("thread" or "process") with reports throttled into ``emit``."""
    with Throttle(emit) as throttle:
        if backend == "process":
            return run_in_process(request, throttle, cancel, pool or ChildPool(auto_warm=False))
        return run_in_thread(request, throttle, cancel)


__all__ = [
    "BACKENDS",
    "ChildPool",
    "resolve_backend",
    "run_request",
]
