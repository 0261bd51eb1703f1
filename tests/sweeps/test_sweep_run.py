"""Sweeps run for real: a local pool of worker processes and a real Dask cluster on 127.0.0.1 give
the same results; an interrupted sweep resumes without recomputing; a failing case is recorded; a
worker that dies (locally or on the cluster) does not stop the sweep."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from inaplanner.errors import Cancelled, InaplannerError
from inaplanner.progress import Progress
from inaplanner.sweeps import BASELINE, Case, SweepSpec, run_sweep, summarise
from inaplanner.sweeps.backends import DaskCluster, LocalPool
from inaplanner.sweeps.store import ResultStore, load_results
from inaplanner.views.whatif import FailSwitch, RemoveJob

from .conftest import small_leaf_spine

#: fields that depend on where and how fast a case ran, not on what it computed
VOLATILE = ("seconds", "worker")


def _key(rows):
    return sorted(({k: v for k, v in r.items() if k not in VOLATILE} for r in rows),
                  key=lambda r: (r["case_id"], r["planner"]))


def _spec(sc, **kw):
    kw.setdefault("generators", ["single-link"])
    kw.setdefault("planners", ["random", "aggtree"])
    kw.setdefault("time_limit", 5.0)
    return SweepSpec(scenario=sc, **kw)


def test_a_local_sweep_scores_every_case_with_the_evaluator(tmp_path, leafspine):
    rows = run_sweep(_spec(leafspine), str(tmp_path / "r.sqlite"), LocalPool(2))
    n_cases = 1 + len(leafspine.links)
    assert len(rows) == 2 * n_cases
    base = {r["planner"]: r for r in rows if r["case_id"] == BASELINE.id}
    assert base["random"]["objective"] > 0 and base["random"]["feasible"]
    # a host access link of a worker disconnects it: objective 0, status disconnected
    worker = leafspine.jobs[0].workers[0]
    access = next(r for r in rows if r["planner"] == "random" and worker in r["element"].split("-"))
    assert access["status"] == "disconnected" and access["objective"] == 0.0
    # a fabric link never raises the objective above the no-failure plan's for aggtree
    fabric = [r for r in rows if r["planner"] == "aggtree" and r["element"][0] == "L" and "S" in r["element"]]
    assert fabric and all(r["status"] != "error" for r in fabric)
    summary = summarise(rows)
    assert summary["planners"]["random"]["worst"] == 0.0
    assert summary["critical"][0]["loss"]["random"] == 1.0


def test_a_failing_case_is_recorded_and_the_sweep_goes_on(tmp_path, leafspine):
    no_jobs = Case("custom:no-jobs", "custom", "every job removed",
                   tuple(RemoveJob(j.id) for j in leafspine.jobs))
    rows = run_sweep(_spec(leafspine, generators=["single-switch"], planners=["random"],
                           extra_cases=[no_jobs]), str(tmp_path / "r.sqlite"), LocalPool(1))
    bad = next(r for r in rows if r["case_id"] == "custom:no-jobs")
    assert bad["status"] == "error" and "no jobs" in bad["error"]
    assert len(rows) == 1 + 5 + 1
    assert sum(r["status"] == "error" for r in rows) == 1
    assert summarise(rows)["planners"]["random"]["errors"] == 1


def test_an_interrupted_sweep_resumes_without_recomputing(tmp_path, leafspine):
    out = str(tmp_path / "r.sqlite")
    progress = Progress()
    seen = []

    def stop_after_three(ev):
        if ev.phase == "run" and ev.fraction and ev.fraction > 0:
            seen.append(ev)
            if len(seen) == 3:
                progress.cancel()

    progress.subscribe(stop_after_three)
    with pytest.raises(Cancelled):
        run_sweep(_spec(leafspine, planners=["random"]), out, LocalPool(1), progress)
    with ResultStore(out) as st:
        first = {(r["case_id"], r["planner"]): r for r in st.rows()}
    assert 3 <= len(first) < 1 + len(leafspine.links)
    # the rerun computes only the missing cases: the stored rows are untouched
    ran = []
    p2 = Progress()
    p2.subscribe(lambda ev: ran.append(ev) if ev.phase == "run" and "runs, ETA" in ev.message else None)
    rows = run_sweep(_spec(leafspine, planners=["random"]), out, LocalPool(1), p2)
    assert len(rows) == 1 + len(leafspine.links)
    assert len(ran) == len(rows) - len(first)
    again = {(r["case_id"], r["planner"]): r for r in rows}
    for key, row in first.items():
        assert again[key] == row  # same worker and seconds: not recomputed
    # a resumed sweep equals one run straight through
    straight = run_sweep(_spec(leafspine, planners=["random"]), str(tmp_path / "s.sqlite"), LocalPool(1))
    assert _key(rows) == _key(straight)


def test_resuming_another_sweep_into_the_same_file_is_refused(tmp_path, leafspine):
    out = str(tmp_path / "r.sqlite")
    run_sweep(_spec(leafspine, generators=["single-switch"], planners=["random"]), out, LocalPool(1))
    with pytest.raises(InaplannerError, match="holds results of another sweep.*planners"):
        run_sweep(_spec(leafspine, generators=["single-switch"], planners=["aggtree"]), out, LocalPool(1))
    meta, rows = load_results(out)
    assert meta["identity"]["planners"] == ["random"] and len(rows) == 6


def test_a_local_worker_killed_mid_sweep_is_replaced_and_its_case_retried(tmp_path, leafspine):
    pool = LocalPool(2)
    progress = Progress()
    killed = []

    def kill_one(ev):
        if ev.phase == "run" and ev.fraction and not killed and pool.pids:
            killed.append(pool.pids[0])
            os.kill(pool.pids[0], signal.SIGKILL)

    progress.subscribe(kill_one)
    rows = run_sweep(_spec(leafspine, planners=["random"]), str(tmp_path / "r.sqlite"), pool, progress)
    assert killed
    assert len(rows) == 1 + len(leafspine.links)
    assert not [r for r in rows if r["status"] == "error"]
    straight = run_sweep(_spec(leafspine, planners=["random"]), str(tmp_path / "s.sqlite"), LocalPool(1))
    assert _key(rows) == _key(straight)


@pytest.mark.slow
def test_a_dask_cluster_gives_the_same_results_as_the_local_pool(tmp_path, leafspine, dask_cluster):
    spec = _spec(leafspine, generators=["single-link", "single-switch"])
    local = run_sweep(spec, str(tmp_path / "local.sqlite"), LocalPool(2))
    remote = run_sweep(spec, str(tmp_path / "dask.sqlite"), DaskCluster(dask_cluster.address))
    assert _key(local) == _key(remote)
    workers = {r["worker"] for r in remote}
    assert len(workers) >= 1 and all(":" in w for w in workers)


@pytest.mark.slow
def test_killing_a_dask_worker_mid_sweep_still_completes(tmp_path, dask_cluster):
    sc = small_leaf_spine(jobs=2)
    spec = _spec(sc, generators=["single-link", "single-switch"], planners=["random", "aggtree"])
    progress = Progress()
    killed = threading.Event()

    def kill(ev):
        if ev.phase == "run" and ev.fraction and ev.fraction > 0.1 and not killed.is_set():
            killed.set()
            dask_cluster.kill_worker(0)

    progress.subscribe(kill)
    rows = run_sweep(spec, str(tmp_path / "dask.sqlite"), DaskCluster(dask_cluster.address), progress)
    assert killed.is_set()
    assert len(rows) == 2 * (1 + len(sc.links) + len(sc.switches()))
    assert not [r for r in rows if r["status"] == "error"], [r["error"] for r in rows if r["error"]]
    local = run_sweep(spec, str(tmp_path / "local.sqlite"), LocalPool(2))
    assert _key(rows) == _key(local)


def test_a_cluster_that_cannot_be_reached_is_one_clear_error(tmp_path, leafspine):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(InaplannerError, match=f"cannot reach the Dask scheduler at tcp://127.0.0.1:{port}"):
        run_sweep(_spec(leafspine), str(tmp_path / "r.sqlite"),
                  DaskCluster(f"tcp://127.0.0.1:{port}", connect_timeout=2))


def test_failing_a_switch_keeps_the_what_if_semantics(tmp_path, leafspine):
    """A case is the what-if the GUI runs: the same changes, the same copy."""
    from inaplanner.io.native import scenario_sha256, scenario_to_dict
    from inaplanner.planners import get
    from inaplanner.planners.base import resolve_params
    from inaplanner.sweeps.run import run_case

    case = Case("switch:S1", "single-switch", "S1", (FailSwitch("S1"),))
    params = resolve_params(get("random"), {"time_limit": 5})
    row = run_case(scenario_to_dict(leafspine), scenario_sha256(leafspine), case, "random", params)
    assert row["status"] not in ("error", "disconnected")
    assert 0 < row["objective"]
