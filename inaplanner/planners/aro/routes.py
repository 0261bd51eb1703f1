"""ARO Algorithm 1 (section III-D): per-worker paths from the solved flow counts y.

A depth-first walk from each worker follows unfolded edges that still have y > 0, taking one unit
of each; once a flow reaches an INP (or the PS) whose path onward is already known, it reuses that
subpath, because an INP merges every flow of the task into one (lines 8-14, 17-20). The unfolded
path is then folded back onto switches: consecutive INP/OP nodes of one switch become that switch,
and the switches whose INP the path crosses are its ``merge_at`` points.
"""

from __future__ import annotations

from inaplanner.errors import PlanError
from inaplanner.model import Route, Scenario
from inaplanner.planners.aro.formulation import Flows
from inaplanner.planners.aro.graph import TaskGraph, UNode


def generate_routes(g: TaskGraph, flows: Flows) -> list[Route]:
    """Algorithm 1 for one task; raises PlanError if y does not describe a flow (a bug)."""
    remaining = [flows.y.get(g.edge_key(k), 0) for k in range(len(g.edges))]
    ps_node: UNode = ("ps", g.ps)
    known: dict[UNode, list[UNode]] = {ps_node: [ps_node]}  # R[u]: unfolded path u -> PS
    routes = []
    for s in g.workers:
        path: list[UNode] = []
        u: UNode = ("w", s)
        while u not in known:
            path.append(u)
            if u[0] == "inp":  # the INP's single output goes to its switch's OP
                u = ("op", u[1])
                continue
            for k in g.out_edges.get(u, []):
                if remaining[k] > 0:
                    remaining[k] -= 1
                    u = g.edges[k].head
                    break
            else:
                raise PlanError(f"task {g.task}: no flow leaves {u} on the way from worker {s}")
        path.extend(known[u])
        for j in range(1, len(path)):
            if path[j][0] == "inp" and path[j] not in known:
                known[path[j]] = path[j:]
        routes.append(_fold(s, path))
    return routes


def _fold(worker: str, upath: list[UNode]) -> Route:
    phys: list[str] = []
    merges: list[str] = []
    for n in upath:
        if not phys or phys[-1] != n[1]:
            phys.append(n[1])
        if n[0] == "inp":
            merges.append(n[1])
    return Route(worker, phys, merges)


def flows_from_routes(sc: Scenario, g: TaskGraph, routes: list[Route]) -> Flows | None:
    """The inverse of Algorithm 1: the flow counts y (distinct flows per unfolded edge, CONTRACTS.md
    rule 3) and INP usage x of a task's routes, e.g. a heuristic plan used as ARO's first
    incumbent. None when the routes do not fit the unfolded graph (a path outside the shortest
    up-down DAG, or one crossing an aggregator unmerged where the graph has no bypass)."""
    keys = {g.edge_key(k) for k in range(len(g.edges))}
    seen: dict[tuple[UNode, UNode], set] = {}
    x: dict[UNode, int] = {}
    for r in routes:
        if not r.path or r.path[-1] != g.ps:
            return None
        merges = set(r.merge_at)
        state: UNode = ("w", r.worker)
        flow: object = r.worker
        for u, v in zip(r.path, r.path[1:], strict=False):
            if v == g.ps:
                head: UNode = ("ps", v)
            elif v in merges:
                head = ("inp", v, sc.ingress_pipeline(u, v))
            elif v in g.aggregators and v not in g.bypass:
                return None
            else:
                head = ("cs", v)
            if (state, head) not in keys:
                return None
            seen.setdefault((state, head), set()).add(flow)
            if head[0] == "inp":
                x[head] = 1
                flow = head
                state = ("op", v)
            else:
                state = head
    return Flows(y={k: len(v) for k, v in seen.items()}, x=x)
