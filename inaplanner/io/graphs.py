"""Scenario <-> flat networkx graph, shared by the GraphML, GML and node-link formats.

Graph attribute names are the scenario's field names. Values a graph format cannot hold natively
(the port->pipeline map, link background, jobs, ``x-`` keys) travel as JSON text, so a scenario written
to GraphML and read back is the same scenario, hash included. Graphs from other tools (Topology Zoo,
networkx dumps) carry none of this: every node without ``kind`` is taken as a switch and every link
without a capacity gets ``default_capacity``; what was assumed is returned as notes.
"""

from __future__ import annotations

import json
import math
from typing import Any

import networkx as nx

from inaplanner.errors import ValidationError
from inaplanner.io.limits import check_number, parse_json
from inaplanner.io.native import scenario_from_dict, scenario_to_dict

DEFAULT_CAPACITY = 10.0  # Gbps for links whose source gives no speed


def scenario_to_graph(sc_doc: dict[str, Any]) -> nx.Graph:
    """Flatten a canonical scenario document (``scenario_to_dict``) into a networkx graph."""
    g = nx.Graph()
    g.graph["format"] = sc_doc["format"]
    g.graph["name"] = sc_doc["name"]
    g.graph["jobs"] = json.dumps(sc_doc["jobs"], sort_keys=True)
    top_extra = {k: v for k, v in sc_doc.items() if k.startswith("x-")}
    if top_extra:
        g.graph["x_extra"] = json.dumps(top_extra, sort_keys=True)
    for n in sc_doc["nodes"]:
        attrs: dict[str, Any] = {}
        extra = {}
        for k, v in n.items():
            if k.startswith("x-"):  # kept whatever the value, null included
                extra[k] = v
            elif k == "id" or v is None:
                continue
            elif k == "pos":
                attrs["x"], attrs["y"] = float(v[0]), float(v[1])
            elif k == "port_pipeline":
                attrs[k] = json.dumps(v, sort_keys=True)
            else:
                attrs[k] = v
        if extra:
            attrs["x_extra"] = json.dumps(extra, sort_keys=True)
        g.add_node(n["id"], **attrs)
    for i, lk in enumerate(sc_doc["links"]):
        attrs = {"order": i, "a": lk["a"], "capacity": lk["capacity"], "background": json.dumps(lk["background"])}
        for k in ("a_port", "b_port"):
            if lk[k] is not None:
                attrs[k] = lk[k]
        extra = {k: v for k, v in lk.items() if k.startswith("x-")}
        if extra:
            attrs["x_extra"] = json.dumps(extra, sort_keys=True)
        g.add_edge(lk["a"], lk["b"], **attrs)
    return g


def _loads(value: Any, where: str, source: str) -> Any:
    """An attribute that carries JSON text, parsed with the loaders' checks (duplicate keys,
    non-finite numbers, nesting)."""
    if not isinstance(value, str):
        return value
    return parse_json(value, source, where)


def _loads_extra(value: Any, where: str, source: str) -> dict[str, Any]:
    """``x_extra``: a JSON object of ``x-`` keys only, so it can never replace a core field."""
    extra = _loads(value, where, source)
    if not isinstance(extra, dict):
        raise ValidationError(f"x_extra must be a JSON object of 'x-' keys, got "
                              f"{type(extra).__name__}", where, source)
    core = [k for k in extra if not k.startswith("x-")]
    if core:
        raise ValidationError(f"x_extra may hold only 'x-' keys, not {core[0]!r}", where, source)
    return extra


def _finite(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if isinstance(value, int):
        return abs(value) <= 2**63
    return math.isfinite(value)


def scenario_from_graph(
    g: nx.Graph,
    source: str,
    *,
    default_capacity: float = DEFAULT_CAPACITY,
    capacity_of: Any = None,
    notes: list[str] | None = None,
    name: str | None = None,
) -> Any:
    """Build a validated Scenario from a graph written by :func:`scenario_to_graph` or by another tool.

    ``capacity_of(edge_attrs) -> float | None`` may read a foreign capacity (e.g. Topology Zoo's
    LinkSpeedRaw). Parallel edges of a multigraph are merged into one link with their capacities
    summed; self loops are dropped (both noted).
    """
    notes = notes if notes is not None else []
    if not isinstance(g.graph, dict):
        raise ValidationError("graph attributes must be an object", "graph", source)
    ids = {n: str(g.nodes[n].get("label", n)) if not isinstance(n, str) else n for n in g.nodes}
    if len(set(ids.values())) != len(ids):
        ids = {n: str(n) for n in g.nodes}
        notes.append("node labels are not unique: the file's node ids are used as ids")
    nodes = []
    assumed_switch = 0
    for n, attrs in g.nodes(data=True):
        d: dict[str, Any] = {"id": ids[n]}
        kind = attrs.get("kind")
        if kind is None:
            kind = "switch"
            assumed_switch += 1
        d["kind"] = kind
        foreign: dict[str, Any] = {}  # other tools' attributes, kept as text or numbers
        for k, v in attrs.items():
            if k in _SKIP_NODE_ATTRS or k.startswith(("Longitude", "Latitude")):
                continue
            if k == "x_extra":
                d.update(_loads_extra(v, f"node {ids[n]}: x_extra", source))
            elif k in _KNOWN_SWITCH:  # on a host: refused by the scenario rules, not moved
                if k == "port_pipeline":
                    v = _loads(v, f"node {ids[n]}: {k}", source)
                elif k == "programmable" and isinstance(v, int) and v in (0, 1):  # GML: no bools
                    v = bool(v)
                d[k] = v
            else:
                foreign[str(k)] = v if _jsonable(v) else str(v)
        if foreign:
            if "x-attrs" in d:
                raise ValidationError("x-attrs is given both in x_extra and as other attributes",
                                      f"node {ids[n]}", source)
            d["x-attrs"] = foreign
        if "x" in attrs or "y" in attrs:
            for k in ("x", "y"):
                if not _finite(attrs.get(k)):
                    raise ValidationError(_number_problem(f"position {k}", attrs.get(k)),
                                          f"node {ids[n]}", source)
            d["pos"] = [float(attrs["x"]), float(attrs["y"])]
        elif _finite(attrs.get("Longitude")) and _finite(attrs.get("Latitude")):
            d["pos"] = [float(attrs["Longitude"]) * 10.0, -float(attrs["Latitude"]) * 10.0]
        nodes.append(d)
    if assumed_switch:
        notes.append(f"{assumed_switch} node(s) without a kind were taken as switches")
    links: dict[frozenset[str], dict[str, Any]] = {}
    edges = g.edges(keys=True, data=True) if g.is_multigraph() else ((u, v, 0, a) for u, v, a in g.edges(data=True))
    defaulted = merged = loops = 0
    for u, v, _key, attrs in edges:
        a, b = ids[u], ids[v]
        if a == b:
            loops += 1
            continue
        if "a" in attrs and attrs["a"] in (a, b):
            a, b = (attrs["a"], b if attrs["a"] == a else a)
        cap = attrs.get("capacity")
        if cap is None and capacity_of is not None:
            cap = capacity_of(attrs)
        if cap is None:
            cap = default_capacity
            defaulted += 1
        if not _finite(cap) or cap < 0:
            raise ValidationError(_number_problem("capacity", cap), f"link {a}-{b}", source)
        order = attrs.get("order", len(links))
        if not isinstance(order, int) or isinstance(order, bool) or not _finite(order):
            raise ValidationError(f"order must be an integer, got {_show(order)}",
                                  f"link {a}-{b}", source)
        lk: dict[str, Any] = {"a": a, "b": b, "capacity": cap}
        for k in ("a_port", "b_port"):
            if k in attrs:
                lk[k] = attrs[k]
        if "background" in attrs:
            lk["background"] = _loads(attrs["background"], f"link {a}-{b}: background", source)
        if "x_extra" in attrs:
            lk.update(_loads_extra(attrs["x_extra"], f"link {a}-{b}: x_extra", source))
        lk["_order"] = order
        pair = frozenset((a, b))
        if pair in links:
            links[pair]["capacity"] = links[pair]["capacity"] + cap
            merged += 1
        else:
            links[pair] = lk
    if defaulted:
        notes.append(f"{defaulted} link(s) without a speed got the default capacity {default_capacity} Gbps")
    if merged:
        notes.append(f"{merged} parallel link(s) were merged into one with their capacities summed")
    if loops:
        notes.append(f"{loops} self-loop(s) were dropped")
    ordered = sorted(links.values(), key=lambda lk: lk.pop("_order"))
    doc: dict[str, Any] = {
        "format": "inaplanner-scenario",
        "version": 1,
        "name": _graph_name(g, name),
        "nodes": nodes,
        "links": ordered,
        "jobs": _loads(g.graph.get("jobs", "[]"), "graph attribute jobs", source),
    }
    if "x_extra" in g.graph:
        doc.update(_loads_extra(g.graph["x_extra"], "graph attribute x_extra", source))
    return scenario_from_dict(doc, source)


_KNOWN_SWITCH = {
    "tier", "programmable", "pipelines", "port_pipeline", "aggregation_capacity",
    "aggregation_background", "aggregators", "max_fan_in", "target",
}
_SKIP_NODE_ATTRS = {"kind", "x", "y", "label", "order", "id"}


def _jsonable(v: Any) -> bool:
    if isinstance(v, str):
        return True
    try:
        check_number(v, "")
    except ValidationError:
        return False
    return isinstance(v, (int, float, bool))


def _number_problem(what: str, v: Any) -> str:
    if isinstance(v, float) and not math.isfinite(v):
        return f"{what} {v!r} is not a finite number"
    if isinstance(v, int) and not isinstance(v, bool) and abs(v) > 2**63:
        return f"{what} is out of range (an integer of {v.bit_length()} bits)"
    return f"{what} must be a number >= 0, got {_show(v)}"


def _show(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 40 else text[:40] + "..."


def _graph_name(g: nx.Graph, default: str | None) -> str:
    """The scenario name the graph carries (ours write ``name``), else ``default``, else the
    graph's ``label``; an empty name stays empty."""
    for key in ("name",):
        v = g.graph.get(key)
        if isinstance(v, str):
            return v
        if v is not None and not isinstance(v, (dict, list)):
            return str(v)
    if default:
        return default
    label = g.graph.get("label")
    return str(label) if isinstance(label, (str, int, float)) and label != "" else "imported"


def to_canonical_graph(sc: Any) -> nx.Graph:
    return scenario_to_graph(scenario_to_dict(sc))
