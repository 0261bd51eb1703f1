"""Every scenario file format, chosen by file name: native JSON, node-link JSON, GraphML, GML.

``import_scenario(path)`` returns the scenario and notes on what was assumed (a foreign file may lack
capacities or node kinds); ``export_scenario(sc, path)`` writes by extension, atomically.
"""

from __future__ import annotations

import io as _io
import os
import re
from typing import Any

import networkx as nx

from inaplanner.errors import ValidationError
from inaplanner.io.atomic import atomic_write_bytes, atomic_write_text
from inaplanner.io.graphs import DEFAULT_CAPACITY, scenario_from_graph, to_canonical_graph
from inaplanner.io.native import SCENARIO_FORMAT, read_json, save_scenario, scenario_from_dict
from inaplanner.model import Scenario

EXTENSIONS = {".json": "json", ".graphml": "graphml", ".gml": "gml"}

_UNITS = {"": 1e-9, "k": 1e-6, "m": 1e-3, "g": 1.0, "t": 1e3}
_SPEED = re.compile(r"(\d+(?:\.\d+)?)\s*([kmgt]?)(?:b(?:it)?s?|b/s|bps)?\b", re.I)
_OC = re.compile(r"\bOC-?(\d+)\b", re.I)


def zoo_capacity(attrs: dict[str, Any]) -> float | None:
    """Topology Zoo link speed in Gbps: ``LinkSpeedRaw`` (bits/s) when present, else ``LinkLabel``
    or ``LinkSpeed``+``LinkSpeedUnits`` parsed ("10 Gbps", "2.5G", "155 Mb/s", "OC-48")."""
    raw = attrs.get("LinkSpeedRaw")
    if isinstance(raw, (int, float)) and raw > 0:
        return float(raw) / 1e9
    speed, unit = attrs.get("LinkSpeed"), attrs.get("LinkSpeedUnits")
    if speed is not None and isinstance(unit, str):
        try:
            return float(speed) * _UNITS.get(unit.strip().lower()[:1], 1.0)
        except ValueError:
            pass
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
    """Read any supported file; return the scenario and notes about assumptions made."""
    source = os.fspath(path)
    kind = kind_of(source)
    notes: list[str] = []
    if kind == "json":
        doc = read_json(source)
        if isinstance(doc, dict) and doc.get("format") == SCENARIO_FORMAT:
            return scenario_from_dict(doc, source), notes
        if isinstance(doc, dict) and "nodes" in doc and ("links" in doc or "edges" in doc) and "format" not in doc:
            try:
                edges = "links" if "links" in doc else "edges"
                g = nx.node_link_graph(doc, edges=edges)
            except Exception as exc:  # networkx raises many types on malformed input
                raise ValidationError(f"not a node-link graph: {exc}", source=source) from None
            sc = scenario_from_graph(g, source, default_capacity=default_capacity, notes=notes,
                                     name=os.path.splitext(os.path.basename(source))[0])
            return sc, notes
        raise ValidationError(
            'neither an inaplanner scenario ("format": "inaplanner-scenario") nor a node-link graph',
            "format",
            source,
        )
    if not os.path.exists(source):
        raise ValidationError("no such file", source=source)
    if kind == "graphml":
        try:
            g = nx.read_graphml(source)
        except Exception as exc:
            raise ValidationError(f"not valid GraphML: {exc}", source=source) from None
        return scenario_from_graph(g, source, default_capacity=default_capacity, notes=notes), notes
    try:
        g = nx.read_gml(source, label="id")
    except Exception as exc:
        raise ValidationError(f"not valid GML: {exc}", source=source) from None
    name = g.graph.get("name") or g.graph.get("Network") or g.graph.get("label") or os.path.splitext(os.path.basename(source))[0]
    sc = scenario_from_graph(g, source, default_capacity=default_capacity, capacity_of=zoo_capacity,
                             notes=notes, name=str(name))
    return sc, notes


def load_any(path: str | os.PathLike[str]) -> Scenario:
    return import_scenario(path)[0]


def export_scenario(sc: Scenario, path: str | os.PathLike[str]) -> None:
    """Write by extension: .json native, .graphml GraphML, .gml GML. Atomic."""
    target = os.fspath(path)
    kind = kind_of(target)
    sc.validate()
    if kind == "json":
        save_scenario(sc, target)
        return
    g = to_canonical_graph(sc)
    if kind == "graphml":
        buf = _io.BytesIO()
        nx.write_graphml(g, buf)
        atomic_write_bytes(target, buf.getvalue())
    else:
        atomic_write_text(target, "\n".join(nx.generate_gml(g)) + "\n")
