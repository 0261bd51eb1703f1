"""Shared helpers of the GRID / InArt family and their baselines (grid, inart, ina_baselines).

Paths come from :mod:`inaplanner.planners.paths` (one up-down search for every planner).

* :func:`cap_fan_in`: CONTRACTS.md rule 5 for any planner's routes: an aggregate that would merge
  more than its switch's ``max_fan_in`` distinct flows keeps the first ones and lets the others
  pass unmerged (they continue on the same path, raw).
* :func:`atp_style`: ATP-style merges on fixed paths (each flow merged at the first programmable
  switch whose aggregate continues the same way and has room for one more input).
* :func:`finish_plan`: final task rates from the shared evaluator for fixed routes and a fixed split
  of each job's model across its PSs, weighted max-min fair across jobs (progressive filling on the
  evaluator's own constraint matrix), so every returned plan is feasible by construction.

Loads are never computed here: the evaluator's ``constraint_matrix`` is the only source.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable

import numpy as np

from inaplanner.errors import PlanError
from inaplanner.evaluate import Evaluation, constraint_matrix, evaluate, progressive_filling
from inaplanner.model import Plan, PlannerInfo, Route, Scenario, Switch, Task, TaskPlan

#: the data plane's contributor bitmap when a switch declares no ``max_fan_in`` (CONTRACTS.md)
DEFAULT_FAN_IN = 32


def fan_in_limit(sw: object) -> int:
    """Most distinct flows one aggregate may merge at switch ``sw`` (rule 5; null means 32)."""
    return int(getattr(sw, "max_fan_in", None) or DEFAULT_FAN_IN)


def cap_fan_in(sc: Scenario, routes: Iterable[Route]) -> tuple[list[Route], int]:
    """One task's routes with no aggregate above its switch's fan-in limit (CONTRACTS.md rule 5).

    Walking the routes as the evaluator does (rule 1), each aggregate (switch, ingress pipeline)
    keeps its first ``max_fan_in`` distinct incoming flows; every other incoming flow stops merging
    there and after (its workers drop that switch and the later ones from ``merge_at``) and goes on
    raw on the same path. Unmerging never adds an input elsewhere, so one pass suffices. Returns
    the routes and how many flows were left unmerged."""
    out = [Route(r.worker, list(r.path), list(r.merge_at)) for r in routes]
    limits: dict[str, int] = {}
    inputs: dict[tuple[str, int], dict[object, list[tuple[int, int]]]] = {}
    for ri, r in enumerate(out):
        merges = set(r.merge_at)
        flow: object = r.worker
        for i in range(1, len(r.path) - 1):
            v = r.path[i]
            if v in merges:
                key = (v, sc.ingress_pipeline(r.path[i - 1], v))
                inputs.setdefault(key, {}).setdefault(flow, []).append((ri, i))
                flow = key
    cut: dict[int, int] = {}  # route -> first path index whose merge is dropped
    unmerged = 0
    for key, flows in inputs.items():
        if key[0] not in limits:
            limits[key[0]] = fan_in_limit(sc.node(key[0]))
        if len(flows) <= limits[key[0]]:
            continue
        for flow in list(flows)[limits[key[0]]:]:
            unmerged += 1
            for ri, i in flows[flow]:
                cut[ri] = min(cut.get(ri, i), i)
    for ri, i in cut.items():
        r = out[ri]
        after = set(r.path[i:])
        r.merge_at = [m for m in r.merge_at if m not in after]
    return out, unmerged


def atp_style(sc: Scenario, paths: Iterable[tuple[str, list[str]]]) -> list[Route]:
    """ATP-style aggregation on fixed paths (one task): each flow merges at the first programmable
    switch of its path where the aggregate (switch, ingress pipeline) either does not exist yet or
    continues on the same remaining path and has fewer than ``max_fan_in`` inputs; the aggregate
    then goes on to the PS unmerged (one level, as ATP's switch hands its result to the PS)."""
    prog = {s.id: fan_in_limit(s) for s in sc.switches() if s.programmable}
    tails: dict[tuple[str, int], list] = {}
    out = []
    for w, path in paths:
        merges: list[str] = []
        for i in range(1, len(path) - 1):
            v = path[i]
            if v not in prog:
                continue
            key = (v, sc.ingress_pipeline(path[i - 1], v))
            suffix = tuple(path[i:])
            tail = tails.get(key)
            if tail is None:
                tails[key] = [suffix, 1]
            elif tail[0] == suffix and tail[1] < prog[v]:
                tail[1] += 1
            else:
                continue
            merges = [v]
            break
        out.append(Route(w, list(path), merges))
    return out


def access_capacity(sc: Scenario, host: str, inbound: bool) -> float:
    """Sum over ``host``'s links of capacity minus background, toward the host when ``inbound``
    (a PS's ingress bandwidth B) or away from it (a worker's maximum sending rate T)."""
    total = 0.0
    for lk in sc.links_of(host):
        other = lk.other(host)
        bg = lk.background_from(other) if inbound else lk.background_from(host)
        total += max(lk.capacity - bg, 0.0)
    return total


def switch_room(sw: Switch) -> float | None:
    """Aggregation capacity left for us (C_s - background), None when unlimited (line rate)."""
    if sw.aggregation_capacity is None:
        return None
    return max(sw.aggregation_capacity - sw.aggregation_background, 0.0)


def equal_split(sc: Scenario) -> dict[Task, float]:
    """Each job's model split equally across its PSs."""
    return {Task(j.id, ps): 1.0 / len(j.parameter_servers) for j in sc.jobs for ps in j.parameter_servers}


def finish_plan(
    sc: Scenario,
    routes: dict[Task, list[Route]],
    split: dict[Task, float],
    info: PlannerInfo,
    bound: float | None = None,
) -> tuple[Plan, Evaluation]:
    """The plan with the largest rates its routes allow for the given model split.

    Task t of job j gets rate ``alpha_j * split[t] / weight_j``; the alphas are max-min fair
    (progressive filling over the evaluator's constraint matrix, columns summed per job), so the
    weighted job throughputs are balanced as CONTRACTS.md rule 5 wants and no limit is exceeded."""
    tasks = sc.tasks()
    routes = {t: cap_fan_in(sc, rs)[0] for t, rs in routes.items()}  # rule 5, whatever the planner did
    plan = Plan(
        scenario_sha256="",
        planner=info,
        tasks=[TaskPlan(t.job, t.ps, 1.0, list(routes.get(t, []))) for t in tasks],
        bound=bound,
    )
    ev = evaluate(sc, plan)
    if ev.errors:
        raise PlanError(f"{info.name}: internal error, planned routes are invalid: {ev.errors[0]}")
    a, b = constraint_matrix(ev)
    jobs = {j.id: i for i, j in enumerate(sc.jobs)}
    m = np.zeros((len(tasks), len(jobs)))
    for ti, t in enumerate(ev.tasks):
        if routes.get(t):
            m[ti, jobs[t.job]] = max(split.get(t, 0.0), 0.0) / sc.job(t.job).weight
    alpha = progressive_filling(a @ m, b, m.any(axis=0))
    rates = m @ alpha
    routed = ev  # the walk of the routes; only the rates change below
    for _ in range(8):
        for tp, r in zip(plan.tasks, rates, strict=True):
            tp.rate = float(r)
        ev = routed.at_rates(np.array([tp.rate for tp in plan.tasks]))
        if not ev.violations:
            break
        rates = rates * (1.0 - 1e-9)  # numerical safety only
    else:  # pragma: no cover - progressive filling respects A r <= b
        raise PlanError(f"{info.name}: internal error, rates break limits: {ev.violations[0]}")
    return plan, ev


def status_for(objective: float, bound: float | None, solver_status: str) -> str:
    """``optimal`` when the evaluated objective meets the proven bound, else the honest status."""
    if solver_status == "timeout":
        return "timeout"
    if bound is not None and objective >= bound * (1.0 - 1e-6) - 1e-9:
        return "optimal"
    return "heuristic"


def rng_for(seed: int, *salt: object) -> random.Random:
    """A seeded generator per purpose, independent of call order elsewhere and of the process's
    string-hash randomisation."""
    text = "|".join([str(seed), *map(str, salt)])
    return random.Random(int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big"))


def default_paths_plan(sc: Scenario, paths, split: dict[Task, float], name: str, seed: int,
                       cancel=None) -> tuple[Plan, float, dict[Task, list[Route]]]:
    """The ATP-style plan on default paths: each worker on a seeded shortest (up-down) path to the
    PS (``paths``: a :class:`~inaplanner.planners.paths.Paths`), merged at the first programmable
    switch with room (:func:`atp_style`). Cheap at any size: the plan GRID and InArt return when
    their own phases run out of time."""
    rng = rng_for(seed, name, "default-paths")
    routes: dict[Task, list[Route]] = {}
    for task in sc.tasks():
        if cancel is not None:
            cancel.check()
        pairs = []
        for n in sc.job(task.job).workers:
            p = paths.random_shortest(n, task.ps, rng)
            if p is None:
                raise PlanError(f"no {'up-down ' if paths.updown else ''}path from worker {n} to PS {task.ps}")
            pairs.append((n, p))
        routes[task] = atp_style(sc, pairs)
    plan, ev = finish_plan(sc, routes, split, PlannerInfo(name))
    return plan, ev.objective, routes


def report(progress: object, fraction: float, message: str, **kw: object) -> None:
    """Progress through the one protocol (a plain callable gets fraction and message only)."""
    update = getattr(progress, "update", None)
    if update is not None:
        update(fraction, message, **kw)
    elif callable(progress):
        progress(fraction, message)
