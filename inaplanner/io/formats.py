"""Every scenario file format, chosen by file name: native JSON, node-link JSON, GraphML, GML.

``import_scenario(path)`` returns the scenario and notes on what was assumed (a foreign file may lack
capacities or node kinds); ``export_scenario(sc, path)`` writes by extension, atomically.
"""

from __future__ import annotations

import io as _io
import json
import math
import os
import re
import warnings
from collections.abc import Callable
from typing import Any

import networkx as nx

from inaplanner.errors import ValidationError
from inaplanner.io.atomic import atomic_write_bytes, atomic_write_text
from inaplanner.io.graphs import DEFAULT_CAPACITY, scenario_from_graph, scenario_to_graph
from inaplanner.io.limits import MAX_DEPTH, check_xml, decode_utf8, read_bytes
from inaplanner.io.native import (
    PLAN_FORMAT,
    SCENARIO_FORMAT,
    check_writable,
    dumps_pretty,
    read_json,
    scenario_from_dict,
    writable_document,
)
from inaplanner.model import Scenario

EXTENSIONS = {".json": "json", ".graphml": "graphml", ".gml": "gml"}

_UNITS = {"": 1e-9, "k": 1e-6, "m": 1e-3, "g": 1.0, "t": 1e3}
_SPEED = re.compile(r"(\d+(?:\.\d+)?)\s*([kmgt]?)(?:b(?:it)?s?|b/s|bps)?\b", re.I)
_OC = re.compile(r"\bOC-?(\d+)\b", re.I)


def zoo_capacity(attrs: dict[str, Any]) -> float | None:
    """Topology Zoo link speed in Gbps: ``LinkSpeedRaw`` (bits/s) when present, else ``LinkLabel``
    or ``LinkSpeed``+``LinkSpeedUnits`` parsed ("10 Gbps", "2.5G", "155 Mb/s", "OC-48")."""
    raw = attrs.get("LinkSpeedRaw")
    if isinstance(raw, (int, float)) and not isinstance(raw, bool) and raw > 0:
        try:
            return float(raw) / 1e9
        except OverflowError:
            return math.inf  # refused as not finite by the loader
    speed, unit = attrs.get("LinkSpeed"), attrs.get("LinkSpeedUnits")
    if speed is not None and isinstance(unit, str):
        try:
            return float(speed) * _UNITS.get(unit.strip().lower()[:1], 1.0)
        except (ValueError, TypeError):
            pass
        except OverflowError:
            return math.inf
    label = attrs.get("LinkLabel")
    if isinstance(label, str):
        oc = _OC.search(label)
        if oc:
            return int(oc.group(1)) * 0.05184
        m = _SPEED.search(label)
        if m and m.group(2):
            return float(m.group(1)) * _UNITS[m.group(2).lower()]
    return None


def kind_of(path: str) -> str:
    ext = os.path.splitext(path)[1].lower()
    if ext not in EXTENSIONS:
        raise ValidationError(
            f"unknown file type {ext or '(none)'!r}: use .json, .graphml or .gml", source=path
        )
    return EXTENSIONS[ext]


def import_scenario(path: str | os.PathLike[str], default_capacity: float = DEFAULT_CAPACITY) -> tuple[Scenario, list[str]]:
    """Read any supported file; return the scenario and notes about assumptions made.

    Every file is size-checked first (:mod:`inaplanner.io.limits`); GraphML is parsed with DTDs
    (so entity expansion and external entities) refused; duplicate node ids and links whose ends
    are not declared nodes are errors in every graph format."""
    source = os.fspath(path)
    kind = kind_of(source)
    notes: list[str] = []
    if kind == "json":
        doc = read_json(source)
        if isinstance(doc, dict) and doc.get("format") in (SCENARIO_FORMAT, PLAN_FORMAT):
            return scenario_from_dict(doc, source, tree_checked=True), notes
        if isinstance(doc, dict) and "nodes" in doc and ("links" in doc or "edges" in doc) and "format" not in doc:
            edges = "links" if "links" in doc else "edges"
            _check_node_link(doc, edges, source)
            try:
                g = nx.node_link_graph(doc, edges=edges)
            except Exception as exc:  # networkx raises many types on malformed input
                raise ValidationError(f"not a node-link graph: {_one_line(exc)}", source=source) from None
            sc = scenario_from_graph(g, source, default_capacity=default_capacity, notes=notes,
                                     name=os.path.splitext(os.path.basename(source))[0])
            return sc, notes
        raise ValidationError(
            'neither an inaplanner scenario ("format": "inaplanner-scenario") nor a node-link graph',
            "format",
            source,
        )
    data = read_bytes(source, kind)
    if kind == "graphml":
        facts = check_xml(data, source)
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                g = nx.parse_graphml(data)
            notes.extend(f"GraphML: {w.message}" for w in caught)
        except RecursionError:
            raise ValidationError(f"nested deeper than {MAX_DEPTH} levels", source=source) from None
        except Exception as exc:
            raise ValidationError(f"not valid GraphML: {_one_line(exc)}", source=source) from None
        _check_ends(set(facts.node_ids), facts.edge_ends, source)
        return scenario_from_graph(g, source, default_capacity=default_capacity, notes=notes), notes
    text = decode_utf8(data, source)
    try:
        g = nx.parse_gml(text, label="id")
    except RecursionError:
        raise ValidationError(f"nested deeper than {MAX_DEPTH} levels", source=source) from None
    except Exception as exc:
        raise ValidationError(f"not valid GML: {_one_line(exc)}", source=source) from None
    name = g.graph.get("Network") or g.graph.get("label") or os.path.splitext(os.path.basename(source))[0]
    sc = scenario_from_graph(g, source, default_capacity=default_capacity, capacity_of=zoo_capacity,
                             notes=notes, name=str(name))
    return sc, notes


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 200 else text[:200] + "..."


def _check_node_link(doc: dict[str, Any], edges: str, source: str) -> None:
    """The node-link shape, checked before networkx builds a graph from it (networkx merges
    duplicate nodes and invents nodes for unknown link ends without a word)."""
    graph = doc.get("graph", {})
    if not isinstance(graph, dict):
        raise ValidationError("graph attributes must be an object", "graph", source)
    nodes, links = doc["nodes"], doc[edges]
    if not isinstance(nodes, list):
        raise ValidationError("must be a list of node objects", "nodes", source)
    if not isinstance(links, list):
        raise ValidationError("must be a list of link objects", edges, source)
    seen: dict[Any, int] = {}
    for i, n in enumerate(nodes):
        if not isinstance(n, dict) or "id" not in n:
            raise ValidationError("a node must be an object with an 'id'", f"nodes[{i}]", source)
        nid = n["id"]
        if not isinstance(nid, (str, int)) or isinstance(nid, bool):
            raise ValidationError(f"node id must be a string or an integer, got {type(nid).__name__}",
                                  f"nodes[{i}].id", source)
        if nid in seen:
            raise ValidationError(f"duplicate node id {nid!r} (also nodes[{seen[nid]}])",
                                  f"nodes[{i}].id", source)
        seen[nid] = i
    ends = []
    for i, lk in enumerate(links):
        if not isinstance(lk, dict) or "source" not in lk or "target" not in lk:
            raise ValidationError("a link must be an object with 'source' and 'target'",
                                  f"{edges}[{i}]", source)
        ends.append((lk["source"], lk["target"]))
    for i, (a, b) in enumerate(ends):
        for end in (a, b):
            if not isinstance(end, (str, int)) or isinstance(end, bool) or end not in seen:
                raise ValidationError(f"end {end!r} is not a declared node", f"{edges}[{i}]", source)


def _check_ends(declared: set[str], ends: list[tuple[str, str]], source: str) -> None:
    for i, (a, b) in enumerate(ends):
        for end in (a, b):
            if end not in declared:
                raise ValidationError(f"end {end!r} is not a declared node", f"edge[{i}] {a}-{b}",
                                      source)


def load_any(path: str | os.PathLike[str]) -> Scenario:
    return import_scenario(path)[0]


def export_scenario(sc: Scenario, path: str | os.PathLike[str]) -> None:
    """Write by extension: .json native, .graphml GraphML, .gml GML. Atomic."""
    export_document(writable_document(sc, os.fspath(path)), path, checked=True)


def export_document(doc: dict[str, Any], path: str | os.PathLike[str], checked: bool = False,
                    step: Callable[[], None] = lambda: None) -> None:
    """:func:`export_scenario` from a scenario's canonical document (a window's snapshot: the
    writing then needs no scenario and runs off the window's thread, 17 s of GraphML at fat-tree
    k=64). ``checked``: :func:`check_writable` has passed already. ``step()`` is called between
    the steps, before anything is written (a file job's stop point)."""
    target = os.fspath(path)
    kind = kind_of(target)
    if not checked:
        check_writable(doc, target)
    step()
    if kind == "json":
        atomic_write_text(target, dumps_pretty(doc))
        return
    g = scenario_to_graph(doc)
    step()
    if kind == "graphml":
        buf = _io.BytesIO()
        nx.write_graphml(g, buf)
        step()
        atomic_write_bytes(target, buf.getvalue())
    else:
        text = "\n".join(nx.generate_gml(g)) + "\n"
        step()
        atomic_write_text(target, text)


def export_node_link(sc: Scenario, path: str | os.PathLike[str]) -> None:
    """Write a networkx node-link JSON file (``links``), the form ``import_scenario`` reads back."""
    doc = nx.node_link_data(scenario_to_graph(writable_document(sc, os.fspath(path))), edges="links")
    atomic_write_text(path, json.dumps(doc, indent=1, sort_keys=True, ensure_ascii=False,
                                       allow_nan=False) + "\n")
