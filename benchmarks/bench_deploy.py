"""Deployment speed on the emulated P4Runtime target (prints figures; asserts nothing).

1. Entries per second installed by batched WriteRequests, per batch size, and read back.
2. Time to deploy a plan on a k=8 fat-tree (80 switches, 128 hosts) onto 80 emulated switches:
   entity generation, then the full deploy (pipeline, diff, write, read back, verify), then a
   redeploy of the same plan (nothing to write) and a dry run; then, on fresh switches, the first
   deploy with one switch at a time and the first deploy without the deploy journal (what the
   journal that makes a killed deployment recoverable costs).

Run: ``/tmp/venv/bin/python benchmarks/bench_deploy.py [--entries N] [--k K]``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import networkx as nx
from p4.v1 import p4runtime_pb2

from inaplanner.dataplane.bytestrings import encode
from inaplanner.dataplane.p4info import DEFAULT_P4INFO, load_p4info
from inaplanner.deploy.deployer import DeployOptions, deploy
from inaplanner.deploy.emulated import start_emulated_testbed
from inaplanner.deploy.p4rt import P4RTSession
from inaplanner.emulator.target import start_emulator
from inaplanner.io.native import scenario_sha256
from inaplanner.model import Job, Plan, PlannerInfo, Route, TaskPlan
from inaplanner.topologies import fat_tree, mark_programmable


def forward_entries(n: int) -> list[p4runtime_pb2.Entity]:
    p4 = load_p4info(DEFAULT_P4INFO)
    t = p4.table("ina_forward")
    a = p4.action("forward")
    ids = [t.field(x).id for x in ("job_id", "ps_id", "flow_id")]
    out = []
    for i in range(n):
        te = p4runtime_pb2.TableEntry(table_id=t.id)
        for fid, v in zip(ids, (i >> 16, 0, i & 0xFFFF), strict=True):
            te.match.add(field_id=fid).exact.value = encode(v)
        te.action.action.action_id = a.id
        te.action.action.params.add(param_id=1, value=(i % 64 + 1).to_bytes(1, "big"))
        out.append(p4runtime_pb2.Entity(table_entry=te))
    return out


def bench_write(n: int, repeats: int = 3) -> None:
    """Best of ``repeats`` runs per batch size (each on a fresh emulated switch)."""
    p4 = load_p4info(DEFAULT_P4INFO)
    entities = forward_entries(n)
    print(f"== batched writes of {n} ina_forward entries to one emulated switch "
          f"(best of {repeats}) ==")
    for batch in (1, 50, 500, 2000):
        count = n if batch > 1 else min(n, 1000)
        updates = [p4runtime_pb2.Update(type=p4runtime_pb2.Update.INSERT, entity=e)
                   for e in entities[:count]]
        best_w = best_r = float("inf")
        for _ in range(repeats):
            handle = start_emulator(name="bench")
            try:
                with P4RTSession(handle.address, 1, (0, 1), label="bench") as s:
                    cfg = p4runtime_pb2.ForwardingPipelineConfig(p4_device_config=b"{}")
                    cfg.p4info.CopyFrom(p4.proto)
                    s.set_pipeline(cfg)
                    t0 = time.perf_counter()
                    s.write(updates, batch_size=batch)
                    best_w = min(best_w, time.perf_counter() - t0)
                    t1 = time.perf_counter()
                    back = s.read_state()
                    best_r = min(best_r, time.perf_counter() - t1)
                assert len(back) == count
            finally:
                handle.stop()
        print(f"  batch {batch:>5}: {count / best_w:>7.0f} entries/s written "
              f"({count} in {best_w:.2f} s); read back {count / best_r:>7.0f} entries/s")


def fat_tree_plan(k: int):
    sc = fat_tree(k)
    mark_programmable(sc, tiers=["edge", "agg", "core"])
    hosts = [h.id for h in sc.hosts()]
    # 8 jobs, 15 workers and one PS each, spread over the pods
    jobs = []
    per = 16
    for j in range(len(hosts) // per):
        members = hosts[j::len(hosts) // per][:per]
        jobs.append(Job(f"job{j}", members[1:], [members[0]], model_mb=100.0))
    sc.jobs = jobs
    sc.touch()
    sc.validate()
    g = sc.graph()
    tasks = []
    for job in sc.jobs:
        ps = job.parameter_servers[0]
        routes = []
        for w in job.workers:
            path = nx.shortest_path(g, w, ps)
            edge = path[1]
            tail = nx.shortest_path(g, edge, ps)  # one path per edge switch: merges stay consistent
            routes.append(Route(w, [w] + tail, [edge]))
        tasks.append(TaskPlan(job.id, ps, 1.0, routes))
    plan = Plan(scenario_sha256(sc), PlannerInfo("shortest-path", status="heuristic"), tasks)
    return sc, plan


def bench_fat_tree(k: int) -> None:
    from inaplanner.dataplane.entries import build_entities

    sc, plan = fat_tree_plan(k)
    print(f"== deploy a plan on a k={k} fat-tree ({len(sc.switches())} switches, "
          f"{len(sc.hosts())} hosts, {len(plan.tasks)} tasks) onto emulated switches ==")
    with tempfile.TemporaryDirectory() as tmp:
        tb = start_emulated_testbed(sc, Path(tmp) / "testbed.toml",
                                    switch_ids=[s.id for s in sc.switches()])
        try:
            t0 = time.perf_counter()
            spec = build_entities(sc, plan, tb.inventory)
            gen = time.perf_counter() - t0
            n = sum(len(v if isinstance(v, list) else getattr(v, "entities", []))
                    for v in spec.switches.values())
            print(f"  entity generation: {gen:.3f} s ({n} entities on {len(spec.switches)} switches)")
            for label, opts, fresh in (
                    ("first deploy", DeployOptions(), False),
                    ("redeploy, same plan", DeployOptions(), False),
                    ("dry run", DeployOptions(dry_run=True), False),
                    ("first deploy, --parallel 1", DeployOptions(parallel=1), True),
                    ("first deploy, no journal", DeployOptions(journal_path=False), True)):
                if fresh:
                    tb.stop()
                    tb = start_emulated_testbed(sc, Path(tmp) / "testbed.toml",
                                                switch_ids=[s.id for s in sc.switches()])
                t0 = time.perf_counter()
                report = deploy(sc, plan, tb.inventory, opts)
                dt = time.perf_counter() - t0
                assert report.ok, report.text()
                written = sum(r.diff.get("insert", 0) + r.diff.get("modify", 0)
                              + r.diff.get("delete", 0) for r in report.switches.values())
                print(f"  {label:<28}: {dt:6.2f} s ({written} updates)")
        finally:
            tb.stop()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--entries", type=int, default=4000)
    ap.add_argument("--k", type=int, default=8)
    args = ap.parse_args()
    bench_write(args.entries)
    bench_fat_tree(args.k)


if __name__ == "__main__":
    main()
