"""Time the evaluator on fat-tree k=16 with 1,000 workers (issue 2). Prints figures; asserts nothing.

The plan: one job with 4 PSs; each worker's edge switch picks one up-down path to each PS (seeded),
and workers merge at their edge switch when it is programmable (20 % of switches, 4 pipelines).
"""

from __future__ import annotations

import random
import statistics
import time

import networkx as nx

from inaplanner.evaluate import evaluate, max_min_rates
from inaplanner.io.native import scenario_sha256
from inaplanner.model import Plan, PlannerInfo, Route, TaskPlan
from inaplanner.topologies import fat_tree, hosts_by_switch, mark_programmable, place_jobs


def build(k: int = 16, workers: int = 1000, tasks: int = 4, seed: int = 0):
    sc = fat_tree(k)
    mark_programmable(sc, 0.2, seed=seed, pipelines=4)
    place_jobs(sc, 1, tasks, workers, seed=seed)
    rng = random.Random(seed)
    g = sc.graph()
    edge_of = {h: s for s, hs in hosts_by_switch(sc).items() for h in hs}
    job = sc.jobs[0]
    plan_tasks = []
    for ps in job.parameter_servers:
        cache: dict[str, list[str]] = {}
        routes = []
        for w in job.workers:
            e = edge_of[w]
            if e not in cache:
                paths = [p for p in nx.all_shortest_paths(g, e, ps) if all(sc.is_switch(n) for n in p[:-1])]
                cache[e] = rng.choice(paths)
            path = [w, *cache[e]]
            merge = [e] if sc.node(e).programmable and path[-2] != e else []
            routes.append(Route(w, path, merge))
        plan_tasks.append(TaskPlan(job.id, ps, 1.0, routes))
    return sc, Plan(scenario_sha256(sc), PlannerInfo("bench"), plan_tasks)


def main() -> None:
    sc, plan = build()
    print(f"fat-tree k=16: {len(sc.hosts())} hosts, {len(sc.switches())} switches, {len(sc.links)} links; "
          f"{len(sc.jobs[0].workers)} workers x {len(plan.tasks)} PSs")
    times = []
    for _ in range(7):
        t = time.perf_counter()
        ev = evaluate(sc, plan)
        times.append(time.perf_counter() - t)
    print(f"evaluate: median {statistics.median(times) * 1000:.1f} ms, min {min(times) * 1000:.1f} ms "
          f"(valid={ev.valid}, {len(ev.aggregates)} aggregates, {len(ev.violations)} violations)")
    t = time.perf_counter()
    rates = max_min_rates(sc, plan, ev)
    print(f"max-min rates on the same routes: {(time.perf_counter() - t) * 1000:.1f} ms "
          f"(rates {sorted(set(round(r, 4) for r in rates.values()))})")


if __name__ == "__main__":
    main()
