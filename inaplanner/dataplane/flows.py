"""The flows of one task as the data plane sees them: who goes where, who merges where.

A plan lists one path per worker and the switches where that worker's data is aggregated
(CONTRACTS.md, "What a plan means", rule 1). Walking the paths gives, per task:

* the distinct flows: each worker's own flow until its first merge, and each aggregate
  ``(switch, pipeline)`` formed by a merge (rule 1-2);
* for every switch, where each flow leaves to (the next hop on its explicit path);
* for every aggregate, its input flows and the neighbours they enter from (ingress ports);
* for every flow, the switch that aggregates it next (GRID's "node id", GRID section 3) or the PS.

This is a translation of paths into forwarding state, not a load computation: fan-ins are taken
from :func:`inaplanner.evaluate.evaluate` and checked against the walk.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from inaplanner.errors import InaplannerError
from inaplanner.model import Scenario, TaskPlan

#: A flow is ("w", worker) or ("a", switch, pipeline).
Flow = tuple


@dataclass
class TaskFlows:
    """What the routes of one task ask of the switches."""

    job: str
    ps: str
    #: switch -> {flow: next hop}
    leaves: dict[str, dict[Flow, str]] = field(default_factory=dict)
    #: aggregate -> {input flow: neighbour it enters from}
    inputs: dict[Flow, dict[Flow, str]] = field(default_factory=dict)
    #: flow -> the switch that aggregates it next, or None for the PS
    next_merge: dict[Flow, str | None] = field(default_factory=dict)
    #: each worker's path, in route order
    paths: dict[str, list[str]] = field(default_factory=dict)

    def flows(self) -> list[Flow]:
        return list(self.next_merge)


def walk_task(scenario: Scenario, tp: TaskPlan) -> TaskFlows:
    """Follow every route of ``tp``; the plan must already be valid (evaluate() found no error)."""
    out = TaskFlows(tp.job, tp.ps)
    for route in tp.routes:
        path, merges = route.path, list(route.merge_at)
        out.paths[route.worker] = list(path)
        flow: Flow = ("w", route.worker)
        out.next_merge[flow] = merges[0] if merges else None
        for i in range(1, len(path)):
            u, v = path[i - 1], path[i]
            if scenario.is_switch(u):
                known = out.leaves.setdefault(u, {}).get(flow)
                if known is not None and known != v:
                    raise InaplannerError(f"task {tp.job}/{tp.ps}: flow {_name(flow)} leaves {u} "
                                          f"toward both {known} and {v}")
                out.leaves[u][flow] = v
            if v in merges:
                agg: Flow = ("a", v, scenario.ingress_pipeline(u, v))
                out.inputs.setdefault(agg, {})[flow] = u
                later = merges[merges.index(v) + 1:]
                out.next_merge[agg] = later[0] if later else None
                flow = agg
    return out


def _name(flow: Flow) -> str:
    return flow[1] if flow[0] == "w" else f"aggregate@{flow[1]}/p{flow[2]}"


def flow_name(flow: Flow) -> str:
    """Readable name: the worker, or ``aggregate@S1/p0``."""
    return _name(flow)
