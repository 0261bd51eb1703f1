"""Small scenarios for the sweep tests, and a real Dask cluster on 127.0.0.1 (one scheduler and two
worker processes started with the ``dask`` command, stopped at the end)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from inaplanner.topologies import fat_tree, leaf_spine, mark_programmable, place_jobs


def small_leaf_spine(seed: int = 1, jobs: int = 2):
    sc = leaf_spine(3, 2, 3)
    mark_programmable(sc, tiers=["leaf", "spine"], pipelines=1)
    place_jobs(sc, jobs=jobs, tasks_per_job=1, workers_per_job=3, seed=seed)
    sc.validate()
    return sc


def small_fat_tree(seed: int = 1):
    sc = fat_tree(4)
    mark_programmable(sc, 0.3, seed=seed, pipelines=1)
    place_jobs(sc, jobs=1, tasks_per_job=1, workers_per_job=4, seed=seed)
    sc.validate()
    return sc


@pytest.fixture
def leafspine():
    return small_leaf_spine()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class DaskProcs:
    def __init__(self, address: str, scheduler: subprocess.Popen, workers: list[subprocess.Popen]):
        self.address = address
        self.scheduler = scheduler
        self.workers = workers

    def kill_worker(self, i: int = 0) -> None:
        """SIGKILL a worker process and its children (a nanny-less worker is one process)."""
        p = self.workers[i]
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _dask_exe() -> str:
    exe = Path(sys.executable).with_name("dask")
    if exe.exists():
        return str(exe)
    found = shutil.which("dask")
    assert found, "the dask command is not installed (pip install 'inaplanner[cluster]')"
    return found


@pytest.fixture
def dask_cluster(tmp_path):
    """A real scheduler and two single-threaded worker processes on 127.0.0.1."""
    from distributed import Client

    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = {**os.environ, "DASK_DISTRIBUTED__WORKER__DAEMON": "False",
           "DASK_TEMPORARY_DIRECTORY": str(tmp_path)}
    exe = _dask_exe()
    log = open(tmp_path / "dask.log", "wb")  # noqa: SIM115 - closed at teardown
    sched = subprocess.Popen([exe, "scheduler", "--host", "127.0.0.1", "--port", str(port),
                              "--no-dashboard"], stdout=log, stderr=log, env=env,
                             start_new_session=True, cwd=tmp_path)
    workers = [subprocess.Popen([exe, "worker", address, "--nthreads", "1", "--nworkers", "1",
                                 "--no-nanny", "--no-dashboard", "--host", "127.0.0.1",
                                 "--name", f"w{i}"], stdout=log, stderr=log, env=env,
                                start_new_session=True, cwd=tmp_path) for i in range(2)]
    procs = DaskProcs(address, sched, workers)
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                with Client(address, timeout=5) as c:
                    if len(c.scheduler_info()["workers"]) >= 2:
                        break
            except OSError:
                pass
            assert time.monotonic() < deadline, (tmp_path / "dask.log").read_text(errors="replace")[-3000:]
            time.sleep(0.5)
        yield procs
    finally:
        # the workers first, then the scheduler: a worker whose scheduler went first can hang
        # in its close until killed (10 s each, seen as a 20 s teardown in the suite)
        for group in (workers, [sched]):
            for p in group:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
            for p in group:
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait(5)
        log.close()
