"""One memory-sharing run by name: a policy's simulation or the unlimited-memory floor.

Shared by ``inaplanner memsim`` (:mod:`inaplanner.cli.memsim`) and the GUI's memory-sharing tool,
so both run exactly the same thing; :func:`run_one` is picklable for process pools.
"""

from __future__ import annotations

import multiprocessing
import os
import queue

from inaplanner.memsched.bound import lower_bound
from inaplanner.memsched.results import SimResult
from inaplanner.memsched.simulator import simulate
from inaplanner.memsched.workload import SimConfig
from inaplanner.progress import Progress, as_progress

#: the name under which the unlimited-memory run (the floor no policy can beat) is reported
BOUND = "unlimited-memory"


def run_one(job: tuple[SimConfig, str]) -> SimResult:
    """One policy (or :data:`BOUND`) on a configuration; picklable for process pools."""
    config, policy = job
    return lower_bound(config) if policy == BOUND else simulate(config, policy)


def run_many(config: SimConfig, runs: list[str], processes: int | None = None,
             progress: Progress | None = None) -> dict[str, SimResult]:
    """Each of ``runs`` (policies and/or :data:`BOUND`) on ``config``, in parallel processes when
    there are several cores; results in the order of ``runs``.

    ``progress`` (the one protocol, :mod:`inaplanner.progress`) hears ``phase="simulate"`` with the
    share of runs finished, and its cancel request stops the work between runs (the child
    processes still simulating are terminated) by raising :class:`~inaplanner.errors.Cancelled`.
    """
    progress = as_progress(progress)
    n = min(len(runs), processes or os.cpu_count() or 1)
    results: dict[str, SimResult] = {}
    progress.update(0.0, f"{len(runs)} run(s)", phase="simulate")
    if n <= 1:
        for name in runs:
            progress.check()
            results[name] = run_one((config, name))
            progress.update(len(results) / len(runs), f"{name} done", phase="simulate")
        return {name: results[name] for name in runs}
    arrived: queue.Queue[tuple[str, SimResult | BaseException]] = queue.Queue()
    pool = multiprocessing.get_context().Pool(processes=n)
    try:
        for name in runs:
            pool.apply_async(run_one, ((config, name),),
                             callback=lambda r, n=name: arrived.put((n, r)),
                             error_callback=lambda e, n=name: arrived.put((n, e)))
        pool.close()
        while len(results) < len(runs):
            progress.check()
            try:
                name, got = arrived.get(timeout=0.1)
            except queue.Empty:
                continue
            if isinstance(got, BaseException):
                raise got
            results[name] = got
            progress.update(len(results) / len(runs), f"{name} done", phase="simulate")
        pool.join()
    finally:
        pool.terminate()
    return {name: results[name] for name in runs}
