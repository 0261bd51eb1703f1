"""Writes the fixed fuzz corpus ``tests/data/fuzz/`` (one small file per defect of issue 16).

Run ``python tests/fuzz/make_corpus.py`` to re-create it; the files are kept in the repository so
that the tests do not depend on this script. File names start with the defect (``d01_`` ...);
``EXPECT`` below says which loader reads each one and what the one-line refusal must mention.
"""

from __future__ import annotations

import json
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[1] / "data" / "fuzz"

BIG = "1" + "0" * 400  # an integer no float can hold (D2)
BIG31 = 2**31  # one past what GML and the P4 tables hold (D17)


def scenario(**changes: object) -> dict:
    """A small valid scenario (2 switches, 3 hosts, one job)."""
    doc: dict = {
        "format": "inaplanner-scenario", "version": 1, "name": "fuzz base",
        "nodes": [
            {"id": "S1", "kind": "switch", "tier": "leaf", "programmable": True, "pos": [0.0, 0.0]},
            {"id": "S2", "kind": "switch", "tier": "spine"},
            {"id": "W1", "kind": "host"}, {"id": "W2", "kind": "host"}, {"id": "PS", "kind": "host"},
        ],
        "links": [
            {"a": "W1", "b": "S1", "capacity": 10.0}, {"a": "W2", "b": "S1", "capacity": 10.0},
            {"a": "S1", "b": "S2", "capacity": 10.0}, {"a": "S2", "b": "PS", "capacity": 10.0},
        ],
        "jobs": [{"id": "job0", "workers": ["W1", "W2"], "parameter_servers": ["PS"]}],
    }
    doc.update(changes)
    return doc


def node_link(**changes: object) -> dict:
    doc: dict = {
        "directed": False, "multigraph": False, "graph": {"name": "nl"},
        "nodes": [{"id": "S1", "kind": "switch"}, {"id": "S2", "kind": "switch"},
                  {"id": "H1", "kind": "host"}],
        "links": [{"source": "S1", "target": "S2", "capacity": 10.0},
                  {"source": "H1", "target": "S1", "capacity": 10.0}],
    }
    doc.update(changes)
    return doc


def plan(**changes: object) -> dict:
    doc: dict = {
        "format": "inaplanner-plan", "version": 1, "scenario_sha256": "0" * 64,
        "planner": {"name": "hand", "status": "heuristic", "seconds": 0.5},
        "tasks": [{"job": "job0", "ps": "PS", "rate": 1.0, "routes": [
            {"worker": "W1", "path": ["W1", "S1", "S2", "PS"], "merge_at": ["S1"]},
            {"worker": "W2", "path": ["W2", "S1", "S2", "PS"], "merge_at": ["S1"]}]}],
        "bound": 2.0,
    }
    doc.update(changes)
    return doc


def graphml(nodes: str, edges: str, head: str = "", graph_data: str = "") -> str:
    return (
        f'<?xml version="1.0" encoding="utf-8"?>\n{head}'
        '<graphml xmlns="http://graphml.graphdrawing.org/xmlns">\n'
        '<key id="kind" for="node" attr.name="kind" attr.type="string"/>\n'
        '<key id="x_extra" for="node" attr.name="x_extra" attr.type="string"/>\n'
        '<key id="gx" for="graph" attr.name="x_extra" attr.type="string"/>\n'
        '<key id="cap" for="edge" attr.name="capacity" attr.type="double"/>\n'
        '<key id="pipes" for="node" attr.name="pipelines" attr.type="long"/>\n'
        f'<graph edgedefault="undirected">{graph_data}\n{nodes}\n{edges}\n</graph>\n</graphml>\n'
    )


GML_NODES = ('graph [\n  node [ id 0 label "S1" kind "switch" pipelines {p} ]\n'
             '  node [ id 1 label "H1" kind "host" ]\n'
             '  edge [ source 1 target 0 capacity {c} ]\n]\n')

SW = '<node id="S1"><data key="kind">switch</data></node><node id="H1"><data key="kind">host</data></node>'
EDGE = '<edge source="H1" target="S1"><data key="cap">10.0</data></edge>'


def dumps(doc: object) -> str:
    return json.dumps(doc, indent=1) + "\n"


def sc_with(path: str, value: str) -> str:
    """A scenario whose JSON text carries ``value`` verbatim at ``path`` (for non-JSON-able text)."""
    marker = "__MARK__"
    doc = scenario()
    parts = path.split(".")
    obj: object = doc
    for p in parts[:-1]:
        obj = obj[int(p)] if isinstance(obj, list) else obj[p]  # type: ignore[index]
    last = parts[-1]
    if isinstance(obj, list):
        obj[int(last)] = marker
    else:
        obj[last] = marker  # type: ignore[index]
    return dumps(doc).replace(f'"{marker}"', value)


def plan_with(key: str, value: str, task: bool = False) -> str:
    marker = "__MARK__"
    doc = plan()
    (doc["tasks"][0] if task else doc)[key] = marker
    return dumps(doc).replace(f'"{marker}"', value)


FILES: dict[str, str | bytes] = {
    # D1 deeply nested JSON, native and node-link
    "d01_deep_nesting.json": "[" * 20000 + "]" * 20000,
    "d01_deep_nesting_nodelink.json": '{"nodes": [], "links": ' + "[" * 20000 + "]" * 20000 + "}",
    "d01_deep_nesting_x_key.json": sc_with("x-deep", "[" * 5000 + "]" * 5000),
    # D2 integers too large for a float
    "d02_huge_int_capacity.json": sc_with("links.0.capacity", BIG),
    "d02_huge_int_pos.json": sc_with("nodes.0.pos", f"[{BIG}, 0]"),
    "d02_huge_int_model_mb.json": sc_with("jobs.0.model_mb", BIG),
    "d02_huge_int_weight.json": sc_with("jobs.0.weight", BIG),
    "d02_huge_int_plan_seconds.plan.json": dumps(plan()).replace('"seconds": 0.5', f'"seconds": {BIG}'),
    "d02_huge_int_plan_rate.plan.json": plan_with("rate", BIG, task=True),
    "d02_huge_int_plan_bound.plan.json": plan_with("bound", BIG),
    "d02_huge_int_nodelink_pos.json": dumps(node_link(nodes=[
        {"id": "S1", "kind": "switch", "x": "__MARK__", "y": 0}, {"id": "S2", "kind": "switch"},
        {"id": "H1", "kind": "host"}])).replace('"__MARK__"', BIG),
    "d02_huge_int_nodelink_capacity.json": dumps(node_link()).replace('"capacity": 10.0', f'"capacity": {BIG}', 1),
    "d02_huge_int.gml": GML_NODES.format(p=1, c=BIG),
    # D3 non-finite floats
    "d03_pos_inf.json": sc_with("nodes.0.pos", "[1e999, 0]"),
    "d03_capacity_inf.json": sc_with("links.0.capacity", "1e999"),
    "d03_capacity_inf.graphml": graphml(SW, EDGE.replace("10.0", "INF")),
    "d03_capacity_nan.graphml": graphml(SW, EDGE.replace("10.0", "NaN")),
    # D4 lone surrogate in a node id
    "d04_lone_surrogate.json": dumps(scenario()).replace('"id": "S2"', '"id": "S\\ud800"')
    .replace('"b": "S2"', '"b": "S\\ud800"').replace('"a": "S2"', '"a": "S\\ud800"'),
    # D5 x_extra that is not a JSON object
    "d05_x_extra_list_nodelink.json": dumps(node_link(graph={"x_extra": "[1, 2]"})),
    "d05_x_extra_number_node.graphml": graphml(
        SW.replace('<data key="kind">switch</data>', '<data key="kind">switch</data><data key="x_extra">5</data>'),
        EDGE),
    # D6 parallel edges of a multigraph with a non-numeric capacity
    "d06_multigraph_capacity.json": dumps(node_link(multigraph=True, links=[
        {"source": "S1", "target": "S2", "capacity": 10.0, "key": 0},
        {"source": "S1", "target": "S2", "capacity": "fast", "key": 1},
        {"source": "H1", "target": "S1", "capacity": 10.0, "key": 0}])),
    # D7 edge order values of mixed types
    "d07_mixed_order.json": dumps(node_link(links=[
        {"source": "S1", "target": "S2", "capacity": 10.0, "order": 1},
        {"source": "H1", "target": "S1", "capacity": 10.0, "order": "b"}])),
    # D8 graph attributes that are not an object
    "d08_graph_not_object.json": '{"graph": 5, "nodes": [], "links": []}\n',
    # D9 testbed.toml not UTF-8, or deeply nested
    "d09_not_utf8.toml": b'[[switch]]\nid = "S1\xff\xfe"\np4runtime = "127.0.0.1:9559"\n',
    "d09_deep_nesting.toml": "x = " + "[" * 20000 + "]" * 20000 + "\n",
    "d09_inf_timeout.toml": "[defaults]\nconnect_timeout = inf\n",
    "d09_nan_timeout.toml": "[defaults]\nbuild_timeout = nan\n",
    "d09_nul_in_id.toml": '[[host]]\nid = "H\\u0000"\n',
    # D10 XML entity expansion and external entities
    "d10_entity_bomb.graphml": graphml(
        SW.replace(">switch<", ">&l4;<"), EDGE,
        head=('<!DOCTYPE graphml [<!ENTITY l0 "switchswitch"><!ENTITY l1 "&l0;&l0;&l0;&l0;&l0;">'
              '<!ENTITY l2 "&l1;&l1;&l1;&l1;&l1;"><!ENTITY l3 "&l2;&l2;&l2;&l2;&l2;">'
              '<!ENTITY l4 "&l3;&l3;&l3;&l3;&l3;">]>\n')),
    "d10_external_entity.graphml": graphml(
        SW.replace(">switch<", ">&ext;<"), EDGE,
        head='<!DOCTYPE graphml [<!ENTITY ext SYSTEM "file:///etc/hostname">]>\n'),
    # D11 x_extra that would replace core fields
    "d11_x_extra_core_nodelink.json": dumps(node_link(graph={"x_extra": '{"nodes": [], "links": []}'})),
    "d11_x_extra_core.graphml": graphml(
        SW, EDGE, graph_data='<data key="gx">{"nodes": [], "links": [], "name": "evil"}</data>'),
    "d11_x_extra_core_node.graphml": graphml(
        SW.replace('<data key="kind">switch</data>',
                   '<data key="kind">switch</data><data key="x_extra">{"kind": "host"}</data>'), EDGE),
    # D12 plan bound / rate out of range
    "d12_bound_inf.plan.json": plan_with("bound", "1e999"),
    "d12_bound_negative.plan.json": plan_with("bound", "-1.0"),
    "d12_rate_inf.plan.json": plan_with("rate", "1e999", task=True),
    # D13 duplicate node ids
    "d13_duplicate_node.graphml": graphml(SW + '<node id="S1"><data key="kind">host</data></node>', EDGE),
    "d13_duplicate_node_nodelink.json": dumps(node_link(nodes=[
        {"id": "S1", "kind": "switch"}, {"id": "S2", "kind": "switch"}, {"id": "H1", "kind": "host"},
        {"id": "S1", "kind": "host"}])),
    # D14 a typo'd link endpoint
    "d14_dangling_endpoint_nodelink.json": dumps(node_link(links=[
        {"source": "S1", "target": "S2", "capacity": 10.0},
        {"source": "H1", "target": "S11", "capacity": 10.0}])),
    "d14_dangling_endpoint.graphml": graphml(SW, EDGE.replace('target="S1"', 'target="S11"')),
    # D15 NUL / control characters in ids
    "d15_nul_in_id.json": dumps(scenario()).replace('"S2"', '"S\\u00002"'),
    "d15_newline_in_id_nodelink.json": dumps(node_link()).replace('"S2"', '"S\\n2"'),
    "d15_nul_in_plan_path.plan.json": dumps(plan(tasks=[{"job": "job0", "ps": "PS", "rate": 1.0, "routes": [
        {"worker": "W1", "path": ["W1", "S\x001", "S2", "PS"], "merge_at": []}]}])),
    # D16 duplicate JSON keys
    "d16_duplicate_keys.json": dumps(scenario()).replace('"name": "fuzz base"',
                                                         '"name": "fuzz base", "name": "other"'),
    "d16_duplicate_keys.plan.json": dumps(plan()).replace('"bound": 2.0', '"bound": 2.0, "bound": 9.0'),
    "d16_duplicate_keys_nodelink.json": dumps(node_link()).replace(
        '"capacity": 10.0', '"capacity": 10.0, "capacity": 99.0', 1),
    # D17 integers the written formats (GML, P4 tables) cannot hold
    "d17_pipelines_2e31.json": dumps(scenario()).replace('"programmable": true',
                                                         f'"programmable": true, "pipelines": {BIG31}'),
    "d17_port_2e31.json": sc_with("links.2.a_port", str(BIG31)),
    "d17_aggregators_2e31.json": dumps(scenario()).replace('"programmable": true',
                                                           f'"programmable": true, "aggregators": {BIG31}'),
    "d17_layers_2e31.json": sc_with("jobs.0.layers", str(BIG31)),
    "d17_pipelines_2e31.gml": GML_NODES.format(p=BIG31, c="10.0"),
    # monitor recordings
    "rec_deep_meta.csv": "# inaplanner-monitor-recording v1\n# {\"a\": " + "[" * 20000 + "]" * 20000
    + "}\nt,wall,kind,link,direction,src,dst,capacity,gbps,stale\n",
    "rec_inf_rate.csv": "# inaplanner-monitor-recording v1\n# {}\n"
    "t,wall,kind,link,direction,src,dst,capacity,gbps,stale\n"
    "0.0,0.0,tick,,,,,,,\n0.0,0.0,rate,0,0,A,B,10.0,1e999,\n",
    "rec_huge_link.csv": "# inaplanner-monitor-recording v1\n# {}\n"
    "t,wall,kind,link,direction,src,dst,capacity,gbps,stale\n"
    f"0.0,0.0,tick,,,,,,,\n0.0,0.0,rate,{BIG},0,A,B,10.0,1.0,\n",
    "rec_not_utf8.csv": b"# inaplanner-monitor-recording v1\n# {}\n\xff\xfe\n",
    "rec_garbage.sqlite": b"SQLite format 3\x00" + b"\x00\xff" * 100,
}


def main() -> None:
    CORPUS.mkdir(parents=True, exist_ok=True)
    for name, data in FILES.items():
        path = CORPUS / name
        if isinstance(data, str):
            path.write_text(data, encoding="utf-8")
        else:
            path.write_bytes(data)
    print(f"wrote {len(FILES)} files to {CORPUS}")


if __name__ == "__main__":
    main()
