"""The native scenario and plan JSON of CONTRACTS.md: strict loading, canonical writing, atomic save.

Loading checks the JSON Schema in ``inaplanner/schemas/`` first, then the model's own rules; any
breach is one :class:`ValidationError` naming the file, the element and the cause, and nothing is
returned half-built. Writing is canonical (sorted keys, every field explicit, defaults filled in, switch
ports numbered), so the same scenario always gives the same bytes and ``scenario_sha256``.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import re
from functools import cache
from importlib import resources
from typing import Any

import fastjsonschema
import jsonschema

from inaplanner.errors import ValidationError
from inaplanner.io.atomic import atomic_write_text
from inaplanner.io.limits import (
    check_id,
    check_tree,
    collection_paused,
    decode_utf8,
    parse_json,
    read_bytes,
)
from inaplanner.model import Host, Job, Link, Plan, PlannerInfo, Route, Scenario, Switch, TaskPlan

SCENARIO_FORMAT = "inaplanner-scenario"
PLAN_FORMAT = "inaplanner-plan"


def swapped_file(doc: Any, want: str) -> ValidationError | None:
    """The error for a plan given where a scenario goes, or the other way round (``evaluate``
    takes SCENARIO PLAN, the plan commands PLAN --scenario S: easy to mix up); None otherwise."""
    have = doc.get("format") if isinstance(doc, dict) else None
    if want == PLAN_FORMAT and have == SCENARIO_FORMAT:
        return ValidationError("this is a scenario, not a plan: give it as the scenario (--scenario S; "
                               "evaluate takes SCENARIO PLAN)", "format")
    if want == SCENARIO_FORMAT and have == PLAN_FORMAT:
        return ValidationError("this is a plan, not a scenario: give the scenario file here (evaluate takes "
                               "SCENARIO PLAN; the plan commands take PLAN --scenario S)", "format")
    return None


# ---- schema -------------------------------------------------------------------------------------


@cache
def _schema(name: str) -> dict[str, Any]:
    """A bundled JSON Schema, read once (treat it as read-only: the validators share it)."""
    text = resources.files("inaplanner.schemas").joinpath(f"{name}.schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


@cache
def _validator(name: str) -> jsonschema.protocols.Validator:
    schema = _schema(name)
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema)


@cache
def _fast(name: str) -> Any:
    """A compiled validator: about 20x faster than jsonschema on large documents (fat-tree k=32)."""
    return fastjsonschema.compile(copy.deepcopy(_schema(name)))  # a copy: the compiler may annotate it


def json_path(parts: Any) -> str:
    """``['nodes', 3, 'pipelines']`` -> ``nodes[3].pipelines``."""
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "(document)"


def check_schema(doc: Any, name: str) -> None:
    """Raise one ValidationError for the most relevant schema breach of ``doc``.

    The compiled validator decides; only a refused document goes through jsonschema, whose error
    paths word the message."""
    try:
        _fast(name)(doc)
        return
    except fastjsonschema.JsonSchemaException:
        pass
    errors = list(_validator(name).iter_errors(doc))
    if not errors:
        return
    err = min(errors, key=lambda e: (-len(e.absolute_path), str(e.message)))
    err = jsonschema.exceptions.best_match([err]) or err
    msg = err.message
    if err.validator == "additionalProperties" and isinstance(err.instance, dict):
        allowed = set(err.schema.get("properties", {}))
        extra = sorted(k for k in err.instance if k not in allowed and not str(k).startswith("x-"))
        msg = f"unknown key {extra[0]!r}" if extra else msg
    raise ValidationError(msg, json_path(err.absolute_path))


# ---- scenario <-> dict --------------------------------------------------------------------------

_SWITCH_ONLY = ("tier", "programmable", "pipelines", "port_pipeline", "aggregation_capacity",
                "aggregation_background", "aggregators", "max_fan_in", "target")


@cache
def _known(kind: str) -> frozenset[str]:
    """The keys the scenario schema names for a node, link, job or (``""``) the document."""
    schema = _schema("scenario")
    return frozenset((schema["$defs"][kind] if kind else schema)["properties"])


def _extra(d: dict[str, Any], kind: str | None = None) -> dict[str, Any]:
    """The "x-" keys of an object. With ``kind``, a scenario-schema-checked node, link, job or
    document: only keys the schema does not name can be such keys (one set difference instead of
    a test per key: 0.25 s of a fat-tree k=64 file)."""
    if kind is not None:
        rest = d.keys() - _known(kind)
        if not rest:
            return {}
    return {k: v for k, v in d.items() if k.startswith("x-")}


def _pos(value: Any) -> tuple[float, float] | None:
    return None if value is None else (float(value[0]), float(value[1]))


def _pair(value: Any) -> tuple[float, float]:
    """A link's background (two numbers: the schema holds it to that), (0, 0) when absent."""
    return (0.0, 0.0) if value is None else (float(value[0]), float(value[1]))


def _float_or_none(value: Any) -> float | None:
    return None if value is None else float(value)


def number_ports(nodes: dict[str, bool], links: list[Link]) -> None:
    """CONTRACTS.md: missing switch ports are numbered in link order with the lowest free number
    (from 1) on that switch. ``nodes`` maps id -> is_switch. Edits ``links`` in place."""
    used: dict[str, set[int]] = {}
    missing = False
    for link in links:
        for end, port in ((link.a, link.a_port), (link.b, link.b_port)):
            if port is not None:
                used.setdefault(end, set()).add(port)
            elif nodes.get(end, False):
                missing = True
    if not missing:  # a saved file has every switch port numbered
        return
    nxt: dict[str, int] = {}
    for link in links:
        for attr, end in (("a_port", link.a), ("b_port", link.b)):
            if getattr(link, attr) is None and nodes.get(end, False):
                taken = used.setdefault(end, set())
                n = nxt.get(end, 1)
                while n in taken:
                    n += 1
                setattr(link, attr, n)
                taken.add(n)
                nxt[end] = n + 1


_PORT_KEY = re.compile(r"0|[1-9][0-9]{0,9}")


def _check_scenario_text(doc: dict[str, Any]) -> None:
    """Ids are printable (no control characters: they go to GraphML, GML and terminals) and
    port_pipeline keys are plain port numbers ("01" and "1" would silently become one port)."""
    check_id(doc.get("name"), "name")
    for i, d in enumerate(doc["nodes"]):
        check_id(d["id"], f"nodes[{i}].id")
        for key in d.get("port_pipeline") or {}:
            if not _PORT_KEY.fullmatch(key):
                raise ValidationError(f"port {key!r} is not a port number (digits, no leading "
                                      "zeros)", f"nodes[{i}].port_pipeline")
    for i, d in enumerate(doc["links"]):
        check_id(d["a"], f"links[{i}].a")
        check_id(d["b"], f"links[{i}].b")
    for i, d in enumerate(doc.get("jobs", [])):
        check_id(d["id"], f"jobs[{i}].id")
        for key in ("workers", "parameter_servers"):
            for k, m in enumerate(d[key]):
                check_id(m, f"jobs[{i}].{key}[{k}]")


def _check_plan_text(doc: dict[str, Any]) -> None:
    check_id(doc["planner"]["name"], "planner.name")
    for i, t in enumerate(doc["tasks"]):
        check_id(t["job"], f"tasks[{i}].job")
        check_id(t["ps"], f"tasks[{i}].ps")
        for r, route in enumerate(t["routes"]):
            at = f"tasks[{i}].routes[{r}]"
            check_id(route["worker"], f"{at}.worker")
            for key in ("path", "merge_at"):
                for k, node in enumerate(route.get(key, [])):
                    check_id(node, f"{at}.{key}[{k}]")


def scenario_from_dict(doc: Any, source: str = "", *, tree_checked: bool = False) -> Scenario:
    """Build and validate a Scenario from a parsed native document. ``tree_checked``: ``doc`` comes
    from :func:`read_json` / :func:`~inaplanner.io.limits.parse_json`, which have walked it with
    :func:`~inaplanner.io.limits.check_tree` already (a second walk cost 1 s on a fat-tree k=64)."""
    with collection_paused():
        return _scenario_from_dict(doc, source, tree_checked)


def _scenario_from_dict(doc: Any, source: str, tree_checked: bool) -> Scenario:
    try:
        swapped = swapped_file(doc, SCENARIO_FORMAT)
        if swapped is not None:
            raise swapped
        if not tree_checked:
            check_tree(doc)
        check_schema(doc, "scenario")
        _check_scenario_text(doc)
        nodes: list[Host | Switch] = []
        for i, d in enumerate(doc["nodes"]):
            if d["kind"] == "host":
                bad = [k for k in _SWITCH_ONLY if k in d]
                if bad:
                    raise ValidationError(
                        f"host {d['id']!r}: {bad[0]!r} applies only to switches", f"nodes[{i}].{bad[0]}"
                    )
                nodes.append(Host(d["id"], _pos(d.get("pos")), _extra(d, "node")))
            else:
                pp = d.get("port_pipeline")
                nodes.append(
                    Switch(
                        id=d["id"],
                        tier=d.get("tier"),
                        programmable=d.get("programmable", False),
                        pipelines=d.get("pipelines", 1),
                        port_pipeline=None if pp is None else {int(k): v for k, v in pp.items()},
                        aggregation_capacity=_float_or_none(d.get("aggregation_capacity")),
                        aggregation_background=float(d.get("aggregation_background", 0.0)),
                        aggregators=d.get("aggregators"),
                        max_fan_in=d.get("max_fan_in"),
                        target=d.get("target"),
                        pos=_pos(d.get("pos")),
                        extra=_extra(d, "node"),
                    )
                )
        links = [
            Link(
                a=d["a"],
                b=d["b"],
                capacity=float(d["capacity"]),
                a_port=d.get("a_port"),
                b_port=d.get("b_port"),
                background=_pair(d.get("background")),
                extra=_extra(d, "link"),
            )
            for d in doc["links"]
        ]
        number_ports({n.id: isinstance(n, Switch) for n in nodes}, links)
        jobs = [
            Job(
                id=d["id"],
                workers=list(d["workers"]),
                parameter_servers=list(d["parameter_servers"]),
                model_mb=float(d.get("model_mb", 100.0)),
                weight=float(d.get("weight", 1.0)),
                layers=d.get("layers"),
                comm_comp_ratio=_float_or_none(d.get("comm_comp_ratio")),
                remaining_s=_float_or_none(d.get("remaining_s")),
                extra=_extra(d, "job"),
            )
            for d in doc.get("jobs", [])
        ]
        sc = Scenario(doc.get("name", "scenario"), nodes, links, jobs, _extra(doc, ""))
        sc.validate()
        return sc
    except ValidationError as exc:
        raise (exc.with_source(source) if source else exc) from None


def scenario_to_dict(sc: Scenario) -> dict[str, Any]:
    """The canonical document: every field explicit, so equal scenarios give equal documents."""
    nodes = []
    for n in sc.nodes:
        if isinstance(n, Switch):
            d: dict[str, Any] = {
                "id": n.id,
                "kind": "switch",
                "tier": n.tier,
                "programmable": bool(n.programmable),
                "pipelines": int(n.pipelines),
                "port_pipeline": None
                if n.port_pipeline is None
                else {str(k): int(v) for k, v in sorted(n.port_pipeline.items())},
                "aggregation_capacity": _float_or_none(n.aggregation_capacity),
                "aggregation_background": float(n.aggregation_background),
                "aggregators": n.aggregators,
                "target": n.target,
            }
            if n.max_fan_in is not None:  # written only when set: null (32) keeps older hashes
                d["max_fan_in"] = int(n.max_fan_in)
        else:
            d = {"id": n.id, "kind": "host"}
        if n.pos is not None:
            d["pos"] = [float(n.pos[0]), float(n.pos[1])]
        d.update(n.extra)
        nodes.append(d)
    links = []
    for lk in sc.links:
        d = {
            "a": lk.a,
            "b": lk.b,
            "a_port": lk.a_port,
            "b_port": lk.b_port,
            "capacity": float(lk.capacity),
            "background": [float(lk.background[0]), float(lk.background[1])],
        }
        d.update(lk.extra)
        links.append(d)
    jobs = []
    for j in sc.jobs:
        d = {
            "id": j.id,
            "workers": list(j.workers),
            "parameter_servers": list(j.parameter_servers),
            "model_mb": float(j.model_mb),
            "weight": float(j.weight),
            "layers": j.layers,
            "comm_comp_ratio": _float_or_none(j.comm_comp_ratio),
            "remaining_s": _float_or_none(j.remaining_s),
        }
        d.update(j.extra)
        jobs.append(d)
    doc: dict[str, Any] = {
        "format": SCENARIO_FORMAT,
        "version": 1,
        "name": sc.name,
        "nodes": nodes,
        "links": links,
        "jobs": jobs,
    }
    doc.update(sc.extra)
    return doc


def canonical_json(doc: Any) -> str:
    """Sorted keys, no insignificant white space, UTF-8 text: the bytes the hash is taken of."""
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def scenario_sha256(sc: Scenario) -> str:
    """sha256 (hex) of the scenario's canonical JSON (CONTRACTS.md, plan ``scenario_sha256``)."""
    return document_sha256(scenario_to_dict(sc))


def document_sha256(doc: dict[str, Any]) -> str:
    """:func:`scenario_sha256` of the scenario whose canonical document is ``doc``."""
    return hashlib.sha256(canonical_json(doc).encode("utf-8")).hexdigest()


def dumps_pretty(doc: Any) -> str:
    """The file form: canonical key order, indented for people and diffs."""
    return json.dumps(doc, sort_keys=True, indent=1, ensure_ascii=False, allow_nan=False) + "\n"


# ---- plan <-> dict ------------------------------------------------------------------------------


def plan_from_dict(doc: Any, source: str = "") -> Plan:
    try:
        swapped = swapped_file(doc, PLAN_FORMAT)
        if swapped is not None:
            raise swapped
        check_tree(doc)
        check_schema(doc, "plan")
        _check_plan_text(doc)
        p = doc["planner"]
        info = PlannerInfo(
            name=p["name"],
            params=dict(p.get("params", {})),
            seed=p.get("seed"),
            solver=p.get("solver"),
            seconds=float(p.get("seconds", 0.0)),
            status=p["status"],
        )
        tasks = []
        for t in doc["tasks"]:
            routes = [Route(r["worker"], list(r["path"]), list(r.get("merge_at", []))) for r in t["routes"]]
            tasks.append(TaskPlan(t["job"], t["ps"], float(t["rate"]), routes))
        bound = doc.get("bound")
        return Plan(doc["scenario_sha256"], info, tasks, None if bound is None else float(bound), _extra(doc))
    except ValidationError as exc:
        raise (exc.with_source(source) if source else exc) from None


def plan_to_dict(plan: Plan) -> dict[str, Any]:
    info = plan.planner
    doc: dict[str, Any] = {
        "format": PLAN_FORMAT,
        "version": 1,
        "scenario_sha256": plan.scenario_sha256,
        "planner": {
            "name": info.name,
            "params": info.params,
            "seed": info.seed,
            "solver": info.solver,
            "seconds": float(info.seconds),
            "status": info.status,
        },
        "tasks": [
            {
                "job": t.job,
                "ps": t.ps,
                "rate": float(t.rate),
                "routes": [{"worker": r.worker, "path": list(r.path), "merge_at": list(r.merge_at)} for r in t.routes],
            }
            for t in plan.tasks
        ],
    }
    if plan.bound is not None:
        doc["bound"] = float(plan.bound)
    doc.update(plan.extra)
    return doc


# ---- files --------------------------------------------------------------------------------------


def read_json(path: str | os.PathLike[str]) -> Any:
    """Parse a JSON file; a missing/unreadable/oversized file or bad JSON (duplicate keys,
    non-finite numbers, deep nesting included) is one ValidationError naming the file."""
    source = os.fspath(path)
    return parse_json(decode_utf8(read_bytes(source, "json"), source), source)


def load_scenario(path: str | os.PathLike[str]) -> Scenario:
    return scenario_from_dict(read_json(path), os.fspath(path), tree_checked=True)


def writable_document(sc: Scenario, target: str = "") -> dict[str, Any]:
    """The canonical document of ``sc``, checked as a loader would check it (finite numbers within
    the schema's ranges, printable ids, valid Unicode), so no writer produces a file that cannot be
    read back (e.g. a NUL in an id would make invalid XML)."""
    try:
        sc.validate()
    except ValidationError as exc:
        raise (exc.with_source(target) if target else exc) from None
    return check_writable(scenario_to_dict(sc), target)


def check_writable(doc: dict[str, Any], target: str = "") -> dict[str, Any]:
    """The checks of :func:`writable_document` that need only the document (``doc`` itself back):
    a window saves a snapshot of its scenario, whose rules its every edit has checked, and runs
    these off its thread (3.4 s of schema alone at fat-tree k=64)."""
    try:
        check_tree(doc)
        check_schema(doc, "scenario")
        _check_scenario_text(doc)
    except ValidationError as exc:
        raise (exc.with_source(target) if target else exc) from None
    return doc


def save_scenario(sc: Scenario, path: str | os.PathLike[str]) -> None:
    atomic_write_text(path, dumps_pretty(writable_document(sc, os.fspath(path))))


def load_plan(path: str | os.PathLike[str]) -> Plan:
    return plan_from_dict(read_json(path), os.fspath(path))


def save_plan(plan: Plan, path: str | os.PathLike[str]) -> None:
    atomic_write_text(path, dumps_pretty(plan_to_dict(plan)))


def loads_scenario(text: str, source: str = "<text>") -> Scenario:
    return scenario_from_dict(parse_json(text, source), source, tree_checked=True)


def copy_scenario(sc: Scenario) -> Scenario:
    """A deep, independent copy (through the canonical document)."""
    return scenario_from_dict(json.loads(canonical_json(scenario_to_dict(sc))))
