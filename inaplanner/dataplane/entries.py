"""From a plan to the data plane: the table entries, multicast groups and worker configurations.

:func:`build_entities` is a pure function of the scenario, the plan, the testbed inventory and
the P4Info contract. For each task (job, PS) it installs, on every switch of the plan's paths
(``p4/ina_v1model.p4`` explains the tables):

* ``ina_forward``  (job_id, ps_id, flow_id) -> forward(port): each flow leaves each switch on
  the next hop of its explicit path (GRID section 3 step 3, ARO III-D "explicit routing").
* ``ina_aggregate`` (job_id, ps_id, node_id, ingress_port) -> aggregate(...) or relabel(...):
  only at the switch and pipeline where the plan merges the flow (GRID's node id; ARO's
  per-pipeline INPs); fan-in from :func:`inaplanner.evaluate.evaluate`.
* ``ina_fallback`` (job_id, ps_id) -> forward(port): the way to the PS for partial results and
  retransmissions (ESA 5.1, 5.3), along the plan's paths with the fewest hops left.
* ``ina_result`` (job_id, ps_id) -> multicast(group) and the multicast group: the PS's result
  goes back to the workers down a tree of the paths' reverse links (GRID step 5).

Numbering (stable for a given scenario): switch node ids are 1 + the switch's index in the
scenario (0 names the PS); job ids 1 + the job's index; ps_id the PS's index in its job;
multicast group ids 1 + the task's index in ``scenario.tasks()``; flow ids per task: the workers
in job order, then the aggregates by (switch node id, pipeline).
"""

from __future__ import annotations

import zlib
from collections import deque
from typing import Any

from inaplanner.dataplane.flows import Flow, TaskFlows, flow_name, walk_task
from inaplanner.dataplane.p4info import P4InfoIndex, load_p4info
from inaplanner.dataplane.spec import (
    AggregatorPool,
    DeploymentSpec,
    MulticastGroupSpec,
    SwitchEntities,
    TableEntrySpec,
    WorkerConfig,
    WorkerTask,
)
from inaplanner.errors import InaplannerError
from inaplanner.evaluate import evaluate, fan_in_limit, fan_in_message
from inaplanner.model import Plan, Scenario, Switch, Task

NODE_PS = 0
FORWARD = "InaIngress.ina_forward"
AGGREGATE = "InaIngress.ina_aggregate"
FALLBACK = "InaIngress.ina_fallback"
RESULT = "InaIngress.ina_result"
#: Installation order: results and fallbacks first, aggregation last (so that nothing is
#: aggregated before the way onward exists).
TABLE_ORDER = (RESULT, FALLBACK, FORWARD, AGGREGATE)
#: switches named in one warning before "and N more"
NAMED = 8


def build_entities(scenario: Scenario, plan: Plan, inventory: Any = None,
                   p4info: P4InfoIndex | None = None) -> DeploymentSpec:
    """Per switch the P4Runtime entities, per worker its configuration (deterministic).

    ``inventory`` (``inaplanner.testbed.inventory.Inventory`` or None) gives the switches to
    configure, their targets, device ids and front-panel ports; without it every switch the
    plan uses is configured with the scenario's port numbers.
    """
    p4 = p4info or load_p4info()
    ev = evaluate(scenario, plan)
    if ev.errors:
        more = f" (and {len(ev.errors) - 1} more)" if len(ev.errors) > 1 else ""
        raise InaplannerError(f"the plan cannot be deployed: {ev.errors[0]}{more}")
    warnings = [f"the plan breaks {'a capacity' if v.is_capacity else 'a rule'}: {v}"
                for v in ev.violations]
    b = _Builder(scenario, inventory, p4, warnings)
    for task_index, task in enumerate(scenario.tasks()):
        tp = plan.task_plan(task.job, task.ps)
        if tp is None or not tp.routes:
            continue
        if tp.rate <= 0:  # it owns none of the model (CONTRACTS: a PS's share is its rate / the sum)
            warnings.append(f"{task}: rate 0, so it carries none of the job's model: its "
                            f"{len(tp.routes)} routes are not installed")
            continue
        fan_in = {(a.switch, a.pipeline): a.inputs for a in ev.aggregates if a.task == task}
        b.add_task(task_index, tp, walk_task(scenario, tp), fan_in)
    return b.finish()


class _Builder:
    def __init__(self, sc: Scenario, inventory: Any, p4: P4InfoIndex, warnings: list[str]):
        self.sc = sc
        self.inv = inventory
        self.p4 = p4
        self.warnings = warnings
        self.node_ids = {s.id: i + 1 for i, s in enumerate(sc.switches())}
        self.job_ids = {j.id: i + 1 for i, j in enumerate(sc.jobs)}
        self._check_widths()
        self.entries: dict[str, list[TableEntrySpec]] = {}
        self.groups: dict[str, list[MulticastGroupSpec]] = {}
        self.pending_aggs: list[dict] = []  # aggregate entries waiting for their pool
        self.workers: dict[str, WorkerConfig] = {}
        self.touched: set[str] = set()
        self.priorities = _priorities(sc)

    # -- numbering and ports -------------------------------------------------------------------
    def _check_widths(self) -> None:
        agg = self.p4.action("InaIngress.aggregate")
        self.bitmap_bits = agg.param("next_bitmap").bitwidth
        self.port_bits = self.p4.action("InaIngress.forward").param("port").bitwidth
        limits = [("switch node id", len(self.node_ids), agg.param("next_node_id").bitwidth),
                  ("job id", len(self.job_ids), self.p4.table(FORWARD).field("job_id").bitwidth)]
        for what, count, bits in limits:
            if count >= 1 << bits:
                raise InaplannerError(f"{count} {what}s do not fit the data plane's {bits} bits")
        ps_bits = self.p4.table(FORWARD).field("ps_id").bitwidth
        for j in self.sc.jobs:
            if len(j.parameter_servers) > 1 << ps_bits:
                raise InaplannerError(f"job {j.id}: {len(j.parameter_servers)} PSs do not fit "
                                      f"the data plane's {ps_bits}-bit ps_id")

    def port(self, switch: str, neighbour: str) -> int:
        if self.inv is not None and switch in self.inv.switches:
            port = self.inv.port_of(switch, neighbour, self.sc)
        else:
            link = self.sc.link_between(switch, neighbour)
            port = link.port_at(switch) if link is not None else None
            if port is None:
                raise InaplannerError(f"switch {switch}: no port number toward {neighbour} "
                                      "in the scenario")
        if not 0 <= port < 1 << self.port_bits:
            raise InaplannerError(f"switch {switch}: port {port} toward {neighbour} does not fit "
                                  f"the data plane's {self.port_bits}-bit ports")
        return int(port)

    def _add(self, switch: str, spec: TableEntrySpec) -> None:
        self.touched.add(switch)
        self.entries.setdefault(switch, []).append(spec)

    # -- one task ------------------------------------------------------------------------------
    def add_task(self, task_index: int, tp, flows: TaskFlows,
                 fan_in: dict[tuple[str, int], int]) -> None:
        task = Task(tp.job, tp.ps)
        job = self.sc.job(tp.job)
        key = (("job_id", self.job_ids[tp.job]), ("ps_id", job.parameter_servers.index(tp.ps)))
        # flow ids: workers in job order, then aggregates by (node id, pipeline)
        order = [("w", w) for w in job.workers if ("w", w) in flows.next_merge]
        order += sorted((f for f in flows.next_merge if f[0] == "a"),
                        key=lambda f: (self.node_ids[f[1]], f[2]))
        flow_id = {f: i + 1 for i, f in enumerate(order)}
        # fan-in (from the evaluator) and each input's bit at its aggregate
        bit: dict[Flow, int] = {}
        for agg, inputs in flows.inputs.items():
            n = fan_in.get((agg[1], agg[2]))
            if n != len(inputs):
                raise InaplannerError(f"task {task}: {flow_name(agg)} merges {len(inputs)} flows "
                                      f"but the evaluator counts {n}")
            # second line behind the evaluator's rule 5, in its words: the switch's max_fan_in,
            # and never more than the program's bitmap is wide
            limit = fan_in_limit(self.sc, agg[1])
            if n > limit:
                raise InaplannerError(fan_in_message(task, agg[1], agg[2], n, limit))
            if n > self.bitmap_bits:
                raise InaplannerError(fan_in_message(
                    task, agg[1], agg[2], n, self.bitmap_bits,
                    f"the installed program's width; the switch's max_fan_in is {limit}"))
            for pos, f in enumerate(sorted(inputs, key=flow_id.__getitem__)):
                bit[f] = 1 << pos

        def node_of(f: Flow) -> int:
            m = flows.next_merge[f]
            return NODE_PS if m is None else self.node_ids[m]

        # forwarding along the explicit paths
        for switch, leaving in flows.leaves.items():
            for f, nxt in leaving.items():
                self._add(switch, TableEntrySpec(
                    FORWARD, (*key, ("flow_id", flow_id[f])), "InaIngress.forward",
                    (("port", self.port(switch, nxt)),),
                    note=f"{task} {flow_name(f)} -> {nxt}"))
        # aggregation where the plan merges (entries finished once the pools are known)
        for agg, inputs in flows.inputs.items():
            switch, pipeline = agg[1], agg[2]
            params = (("out_flow_id", flow_id[agg]), ("next_node_id", node_of(agg)),
                      ("next_bitmap", bit.get(agg, 0)))
            for nb in sorted(set(inputs.values()), key=lambda n: self.port(switch, n)):
                match = (*key, ("node_id", self.node_ids[switch]),
                         ("ingress_port", self.port(switch, nb)))
                self.pending_aggs.append({
                    "switch": switch, "pipeline": pipeline, "match": match, "params": params,
                    "fan_in": len(inputs), "task": str(task),
                    "note": f"{task} {flow_name(agg)} from {nb}, fan-in {len(inputs)}"})
        # the way to the PS for partial results: fewest hops left along the plan's paths
        best: dict[str, tuple[int, int, str]] = {}
        for r, path in enumerate(flows.paths.values()):
            for i, node in enumerate(path[:-1]):
                if self.sc.is_switch(node):
                    cand = (len(path) - 1 - i, r, path[i + 1])
                    best[node] = min(best.get(node, cand), cand)
        for switch in sorted(best, key=self.node_ids.__getitem__):
            nxt = best[switch][2]
            self._add(switch, TableEntrySpec(FALLBACK, key, "InaIngress.forward",
                                             (("port", self.port(switch, nxt)),),
                                             note=f"{task} to the PS via {nxt}"))
        # results back to the workers: a tree over the reversed path links
        group_id = task_index + 1
        for switch, children in self._result_tree(tp.ps, flows).items():
            replicas = tuple(sorted((self.port(switch, c), 0) for c in children))
            self.touched.add(switch)
            self.groups.setdefault(switch, []).append(MulticastGroupSpec(
                group_id, replicas, note=f"{task} results to {', '.join(children)}"))
            self._add(switch, TableEntrySpec(RESULT, key, "InaIngress.multicast",
                                             (("group", group_id),),
                                             note=f"{task} results down the tree"))
        # the workers' side
        for f in order:
            if f[0] != "w":
                continue
            worker = f[1]
            m = flows.next_merge[f]
            prio, frac, why = self.priorities.get(tp.job, ([], None, ""))
            self.workers.setdefault(worker, WorkerConfig(worker, [], scenario=self.sc.name))
            self.workers[worker].tasks.append(WorkerTask(
                job=tp.job, ps=tp.ps, job_id=key[0][1], ps_id=key[1][1], flow_id=flow_id[f],
                node_id=node_of(f), aggregation_node=m or tp.ps, bitmap=bit.get(f, 0),
                rate_gbps=float(tp.rate), first_hop=flows.paths[worker][1],
                priority_per_layer=list(prio), priority_frac_bits=frac, priority_note=why))

    def _result_tree(self, ps: str, flows: TaskFlows) -> dict[str, list[str]]:
        """Switch -> children in a BFS tree from the PS over the reversed path links."""
        down: dict[str, set[str]] = {}
        for path in flows.paths.values():
            for u, v in zip(path, path[1:], strict=False):
                down.setdefault(v, set()).add(u)
        rank = {n.id: i for i, n in enumerate(self.sc.nodes)}
        seen = {ps}
        children: dict[str, list[str]] = {}
        queue = deque([ps])
        while queue:
            node = queue.popleft()
            for nxt in sorted(down.get(node, ()), key=rank.__getitem__):
                if nxt in seen:
                    continue
                seen.add(nxt)
                if self.sc.is_switch(node):
                    children.setdefault(node, []).append(nxt)
                queue.append(nxt)
        return children

    # -- pools, switches, result -----------------------------------------------------------------
    def _target(self, switch: str) -> str:
        if self.inv is not None and switch in self.inv.switches:
            return self.inv.switches[switch].target
        node = self.sc.node(switch)
        return (node.target if isinstance(node, Switch) else None) or "bmv2"

    def _pools(self) -> dict[tuple[str, int], AggregatorPool]:
        slots = self.p4.register("InaIngress.agg_owner").size
        by_pool: dict[tuple[str, int], list[dict]] = {}
        for a in self.pending_aggs:
            if a["fan_in"] > 1:  # a relabel (fan-in 1) holds no aggregator
                by_pool.setdefault((a["switch"], a["pipeline"]), []).append(a)
        pools = {}
        for (switch, pipeline), aggs in sorted(by_pool.items(),
                                               key=lambda kv: (self.node_ids[kv[0][0]], kv[0][1])):
            sw = self.sc.node(switch)
            assert isinstance(sw, Switch)
            if self._target(switch) == "tofino":  # registers are per hardware pipeline
                block, base = slots, 0
            else:  # bmv2 has one pipeline: the scenario's pipelines share its registers
                block = slots // max(1, sw.pipelines)
                base = pipeline * block
            size = _pow2_floor(min(block, sw.aggregators or block))
            config = repr((base, size, sorted((a["task"], a["match"], a["params"], a["fan_in"])
                                              for a in aggs)))
            epoch = 1 + zlib.crc32(config.encode()) % 255
            names = tuple(sorted({a["task"] for a in aggs}))
            pools[(switch, pipeline)] = AggregatorPool(pipeline, base, size, epoch, names)
        return pools

    def finish(self) -> DeploymentSpec:
        pools = self._pools()
        for a in self.pending_aggs:
            out_flow, next_node, next_bitmap = (v for _, v in a["params"])
            if a["fan_in"] == 1:
                spec = TableEntrySpec(AGGREGATE, a["match"], "InaIngress.relabel", a["params"],
                                      note=a["note"])
            else:
                pool = pools[(a["switch"], a["pipeline"])]
                spec = TableEntrySpec(AGGREGATE, a["match"], "InaIngress.aggregate", (
                    ("fan_in", a["fan_in"]), ("agg_base", pool.base), ("agg_mask", pool.size - 1),
                    ("epoch", pool.epoch), ("out_flow_id", out_flow), ("next_node_id", next_node),
                    ("next_bitmap", next_bitmap)), note=a["note"])
            self._add(a["switch"], spec)
        configure = self._switches_to_configure()
        switches = {}
        for sid in configure:
            entries = sorted(self.entries.get(sid, []), key=_entry_order)
            groups = sorted(self.groups.get(sid, []), key=lambda g: g.group_id)
            inv = self.inv.switches.get(sid) if self.inv is not None else None
            switches[sid] = SwitchEntities(
                switch=sid, node_id=self.node_ids[sid], target=self._target(sid),
                device_id=inv.device_id if inv is not None else None,
                pools=[p for (s, _), p in pools.items() if s == sid],
                multicast_groups=groups, table_entries=entries, p4info=self.p4)
        workers = {h.id: self.workers[h.id] for h in self.sc.hosts() if h.id in self.workers}
        return DeploymentSpec(switches, workers, dict(self.node_ids), dict(self.job_ids),
                              self.warnings)

    def _switches_to_configure(self) -> list[str]:
        ordered = [s.id for s in self.sc.switches()]
        if self.inv is None:
            return [s for s in ordered if s in self.touched]
        unknown = sorted(set(self.inv.switches) - set(ordered))
        if unknown:
            raise InaplannerError(f"testbed inventory: switch {unknown[0]!r} is not in the "
                                  f"scenario {self.sc.name!r}")
        outside = []
        for sid in ordered:
            if sid in self.touched and sid not in self.inv.switches:
                node = self.sc.node(sid)
                if isinstance(node, Switch) and node.programmable:
                    raise InaplannerError(f"switch {sid} carries flows of the plan but is not in "
                                          "the testbed inventory")
                outside.append(sid)
        if len(outside) == 1:
            self.warnings.append(f"switch {outside[0]} is not programmable and not in the "
                                 "inventory: it must forward INA traffic by its own routing")
        elif outside:  # one line, however many (fat-tree k=16: 187 of them)
            named = ", ".join(outside[:NAMED]) + (
                f" and {len(outside) - NAMED} more" if len(outside) > NAMED else "")
            self.warnings.append(f"{len(outside)} switches carry flows of the plan but are not "
                                 "programmable and not in the inventory: they must forward INA "
                                 f"traffic by their own routing ({named})")
        return [s for s in ordered if s in self.inv.switches]


def _entry_order(e: TableEntrySpec) -> tuple:
    return (TABLE_ORDER.index(e.table), tuple(v for _, v in e.match))


def _pow2_floor(n: int) -> int:
    if n < 1:
        raise InaplannerError(f"an aggregator pool needs at least 1 slot, got {n}")
    return 1 << (n.bit_length() - 1)


def _priorities(sc: Scenario) -> dict[str, tuple[list[int], int | None, str]]:
    """ESA priorities per job and layer (ESA Eq. 1, 8-bit fixed point, one scale for all jobs)."""
    from inaplanner.memsched.priority import choose_frac_bits, priority, quantise

    values: dict[str, list[float]] = {}
    out: dict[str, tuple[list[int], int | None, str]] = {}
    for j in sc.jobs:
        if j.layers and j.comm_comp_ratio and j.remaining_s:
            values[j.id] = [priority(layer, j.layers, j.comm_comp_ratio, j.remaining_s)
                            for layer in range(1, j.layers + 1)]
        else:
            out[j.id] = ([], None, "job lacks layers/comm_comp_ratio/remaining_s for ESA Eq. 1")
    if values:
        frac = choose_frac_bits(v for vs in values.values() for v in vs)
        for jid, vs in values.items():
            out[jid] = ([quantise(v, frac) for v in vs], frac, "")
    return out
