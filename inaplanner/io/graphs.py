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
            if k == "id" or v is None:
                continue
            if k.startswith("x-"):
                extra[k] = v
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
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        raise ValidationError(f"attribute is not valid JSON: {exc.msg}", where, source) from None


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


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
    ids = {n: str(g.nodes[n].get("label", n)) if not isinstance(n, str) else n for n in g.nodes}
    if len(set(ids.values())) != len(ids):
        ids = {n: str(n) for n in g.nodes}
    nodes = []
    assumed_switch = 0
    for n, attrs in g.nodes(data=True):
        d: dict[str, Any] = {"id": ids[n]}
        kind = attrs.get("kind")
        if kind is None:
            kind = "switch"
            assumed_switch += 1
        d["kind"] = kind
        for k, v in attrs.items():
            if k in _SKIP_NODE_ATTRS or k.startswith(("Longitude", "Latitude")):
                continue
            if k == "x_extra":
                d.update(_loads(v, f"node {ids[n]}: x_extra", source))
            elif kind == "switch" and k in _KNOWN_SWITCH:
                if k == "port_pipeline":
                    v = _loads(v, f"node {ids[n]}: {k}", source)
                elif k == "programmable" and v in (0, 1):  # GML has no booleans
                    v = bool(v)
                d[k] = v
            else:
                d.setdefault("x-attrs", {})[k] = v if _jsonable(v) else str(v)
        if "x" in attrs and "y" in attrs and _finite(attrs["x"]) and _finite(attrs["y"]):
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
        lk: dict[str, Any] = {"a": a, "b": b, "capacity": cap}
        for k in ("a_port", "b_port"):
            if k in attrs:
                lk[k] = attrs[k]
        if "background" in attrs:
            lk["background"] = _loads(attrs["background"], f"link {a}-{b}: background", source)
        if "x_extra" in attrs:
            lk.update(_loads(attrs["x_extra"], f"link {a}-{b}: x_extra", source))
        lk["_order"] = attrs.get("order", len(links))
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
        "name": name or str(g.graph.get("name") or g.graph.get("label") or "imported"),
        "nodes": nodes,
        "links": ordered,
        "jobs": _loads(g.graph.get("jobs", "[]"), "graph attribute jobs", source),
    }
    if "x_extra" in g.graph:
        doc.update(_loads(g.graph["x_extra"], "graph attribute x_extra", source))
    return scenario_from_dict(doc, source)


_KNOWN_SWITCH = {
    "tier", "programmable", "pipelines", "port_pipeline", "aggregation_capacity",
    "aggregation_background", "aggregators", "target",
}
_SKIP_NODE_ATTRS = {"kind", "x", "y", "label", "order", "id"}


def _jsonable(v: Any) -> bool:
    return isinstance(v, (str, int, float, bool)) and not (isinstance(v, float) and not math.isfinite(v))


def to_canonical_graph(sc: Any) -> nx.Graph:
    return scenario_to_graph(scenario_to_dict(sc))
