"""Where the cases run: a local pool of worker processes (default) or a Dask cluster.

Both take the same list of tasks (case, planner) in the same order and call the same function
(:func:`inaplanner.sweeps.run.run_case`) with the same arguments, so they give the same results.

:class:`LocalPool` starts ``workers`` spawned processes (all cores by default); each gets the base
scenario once, then tasks one at a time. Cancel terminates them. A worker that dies (killed, out of
memory, a crash in native code) is replaced and its case is retried once on another worker; a case
that kills two workers is recorded as an error.

:class:`DaskCluster` sends the tasks to an existing ``dask.distributed`` scheduler: the scenario is
scattered once to every worker, each task is a small call; results stream back as they finish. A
worker that dies is handled by the scheduler, which reruns its tasks elsewhere (up to its
``allowed-failures``); a task that still fails is recorded as an error. Dask is the optional extra
``inaplanner[cluster]``.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection, wait
from typing import Any

from inaplanner.errors import Cancelled, InaplannerError
from inaplanner.progress import CancelToken
from inaplanner.sweeps.cases import Case

Task = tuple[Case, str, dict[str, Any]]  # case, planner, resolved params
OnResult = Callable[[int, dict[str, Any]], None]


def error_row(case: Case, planner: str, why: str) -> dict[str, Any]:
    from inaplanner.sweeps.run import CaseResult

    return CaseResult(case.id, planner, case.generator, case.element, list(case.members), case.weight,
                      status="error", error=why).to_row()


# ---- local pool ------------------------------------------------------------------------------


def _worker_main(conn: Connection) -> None:
    from inaplanner.sweeps.run import run_case

    try:
        os.nice(5)  # the sweep runs beside a desktop; let it keep its share of the CPU
    except (AttributeError, OSError):
        pass
    doc: Any = None
    sha = ""
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg[0] == "init":
            _, doc, sha = msg
        elif msg[0] == "task":
            _, idx, case, planner, params = msg
            row = run_case(doc, sha, case, planner, params)
            try:
                conn.send(("result", idx, row))
            except (BrokenPipeError, OSError):
                return
        else:
            return


class _Worker:
    def __init__(self, ctx: Any, doc: Any, sha: str) -> None:
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker_main, args=(child,), daemon=True, name="inaplanner-sweep")
        self.proc.start()
        child.close()
        self.conn.send(("init", doc, sha))
        self.task: int | None = None

    def stop(self) -> None:
        try:
            self.conn.close()
        except OSError:
            pass
        if self.proc.is_alive():
            self.proc.terminate()
        self.proc.join(2.0)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join(1.0)


class LocalPool:
    name = "local"

    def __init__(self, workers: int | None = None) -> None:
        self.workers = max(1, workers or os.cpu_count() or 1)
        self.pids: list[int] = []  # of the live workers (tests kill one)

    def describe(self) -> str:
        return f"local pool, {self.workers} worker process{'es' if self.workers > 1 else ''}"

    def run(self, doc: Any, sha: str, tasks: Sequence[Task], on_result: OnResult,
            cancel: CancelToken) -> None:
        ctx = multiprocessing.get_context("spawn")
        pending = list(range(len(tasks)))
        attempts = [0] * len(tasks)
        n = min(self.workers, len(tasks))
        pool: list[_Worker] = []
        try:
            pool = [_Worker(ctx, doc, sha) for _ in range(n)]
            remaining = len(tasks)
            while remaining:
                if cancel.cancelled:
                    raise Cancelled("sweep cancelled")
                for w in pool:
                    if w.task is None and pending:
                        idx = pending.pop(0)
                        case, planner, params = tasks[idx]
                        attempts[idx] += 1
                        w.task = idx
                        w.conn.send(("task", idx, case, planner, params))
                self.pids = [w.proc.pid for w in pool if w.proc.pid is not None]
                busy = [w for w in pool if w.task is not None]
                ready = wait([w.conn for w in busy] + [w.proc.sentinel for w in busy], timeout=0.2)
                for i, w in enumerate(list(pool)):
                    if w.task is None:
                        continue
                    if w.conn not in ready and w.proc.sentinel not in ready:
                        continue
                    got = False
                    try:
                        if w.conn.poll(0):
                            kind, idx, row = w.conn.recv()
                            got = kind == "result"
                    except (EOFError, OSError):
                        got = False
                    if got:
                        w.task = None
                        remaining -= 1
                        on_result(idx, row)
                        continue
                    if w.proc.is_alive() and w.proc.sentinel not in ready:
                        continue  # woken, but nothing whole to read yet
                    idx = w.task
                    w.task = None
                    code = w.proc.exitcode
                    w.stop()
                    pool[i] = _Worker(ctx, doc, sha)
                    if attempts[idx] < 2:
                        pending.insert(0, idx)  # once more, on the new worker
                    else:
                        case, planner, _ = tasks[idx]
                        remaining -= 1
                        on_result(idx, error_row(case, planner,
                                                 f"the worker process died twice (exit code {code})"))
        finally:
            for w in pool:
                w.stop()
            self.pids = []


# ---- Dask ------------------------------------------------------------------------------------


class DaskCluster:
    name = "dask"

    def __init__(self, address: str, *, connect_timeout: float = 20.0) -> None:
        self.address = address
        self.connect_timeout = connect_timeout

    def describe(self) -> str:
        return f"Dask cluster at {self.address}"

    def _client(self) -> Any:
        try:
            from distributed import Client
        except ImportError:
            raise InaplannerError(
                "sweep --cluster needs Dask: pip install 'inaplanner[cluster]'") from None
        try:
            return Client(self.address, timeout=self.connect_timeout, set_as_default=False)
        except (OSError, TimeoutError) as exc:
            raise InaplannerError(f"sweep: cannot reach the Dask scheduler at {self.address}: {exc}") from None

    def run(self, doc: Any, sha: str, tasks: Sequence[Task], on_result: OnResult,
            cancel: CancelToken) -> None:
        import queue

        from inaplanner.sweeps.run import run_case

        client = self._client()
        futures: dict[Any, int] = {}
        try:
            # a list of one: scatter would send a dict's items as separate pieces
            doc_future = client.scatter([doc], broadcast=True, hash=False)[0]
            finished: queue.Queue[Any] = queue.Queue()
            attempts = [0] * len(tasks)

            def submit(idx: int) -> None:
                case, planner, params = tasks[idx]
                attempts[idx] += 1
                fut = client.submit(run_case, doc_future, sha, case, planner, params, pure=False,
                                    key=f"inaplanner-sweep-{sha[:12]}-{idx}-{attempts[idx]}-{case.id}-{planner}")
                futures[fut] = idx
                fut.add_done_callback(finished.put)  # called on the client's thread

            for idx in range(len(tasks)):
                submit(idx)
            left = len(tasks)
            while left:
                if cancel.cancelled:
                    client.cancel(list(futures))
                    raise Cancelled("sweep cancelled")
                try:
                    fut = finished.get(timeout=0.2)
                except queue.Empty:
                    continue
                idx = futures.pop(fut)
                case, planner, _ = tasks[idx]
                # a result lost with a dead worker is recomputed by the scheduler: result() waits
                try:
                    row = fut.result()
                except BaseException as exc:  # noqa: BLE001 - Dask's cancel is a BaseException
                    if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                        raise
                    # the scenario's copy went with a dead worker, or the task was lost: ...
                    if attempts[idx] < 2:  # ... so once more, with the scenario sent again
                        if doc_future.status != "finished":
                            doc_future = client.scatter([doc], broadcast=True, hash=False)[0]
                        submit(idx)
                        continue
                    row = error_row(case, planner, f"{type(exc).__name__}: {exc}"[:500])
                left -= 1
                on_result(idx, row)
        finally:
            try:
                client.close()
            except Exception:  # closing a client of a dying cluster must not hide the result
                pass
