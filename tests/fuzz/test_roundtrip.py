"""Every accepted scenario round-trips through every format unchanged: hypothesis builds valid
scenarios with any printable text as ids and names (accents, CJK, emoji, XML and GML
metacharacters, line/paragraph separators, byte order marks), any JSON in ``x-`` keys, and numbers
across the declared ranges; each is written as native JSON, node-link JSON, GraphML and GML and read
back with the same canonical hash."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inaplanner.io.limits import bad_id_char
from inaplanner.io.native import scenario_from_dict

ids = st.text(st.characters(blacklist_categories=("Cc", "Cs"), blacklist_characters="\ufffe\uffff"),
              min_size=1, max_size=8)
finite = st.floats(min_value=0, max_value=1e9, allow_nan=False, allow_infinity=False)
json_leaf = (st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1)
             | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=6).filter(
                 lambda s: not any(0xD800 <= ord(c) <= 0xDFFF for c in s)))
json_values = st.recursive(json_leaf, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(max_size=5).filter(
                               lambda s: bad_id_char(s) is None), inner, max_size=3),
                           max_leaves=6)
extra = st.dictionaries(st.text(max_size=6).map(lambda s: "x-" + s).filter(
    lambda s: bad_id_char(s) is None), json_values, max_size=2)


@st.composite
def scenarios(draw):
    names = draw(st.lists(ids, min_size=5, max_size=5, unique=True))
    s1, s2, w1, w2, ps = names
    sw = lambda i, **kw: {"id": i, "kind": "switch", **kw}  # noqa: E731
    nodes = [
        sw(s1, tier=draw(st.sampled_from([None, "leaf", "tor"])), programmable=draw(st.booleans()),
           pipelines=draw(st.integers(1, 4)), aggregators=draw(st.none() | st.integers(0, 2**31 - 1)),
           aggregation_capacity=draw(st.none() | finite), aggregation_background=draw(finite),
           target=draw(st.sampled_from([None, "bmv2", "tofino"])),
           pos=draw(st.none() | st.lists(st.floats(-1e9, 1e9), min_size=2, max_size=2)),
           **draw(extra)),
        sw(s2, tier=None),
        {"id": w1, "kind": "host", **draw(extra)}, {"id": w2, "kind": "host"},
        {"id": ps, "kind": "host", "pos": draw(st.none() | st.lists(st.floats(-1e9, 1e9),
                                                                    min_size=2, max_size=2))},
    ]
    if nodes[0]["tier"] is None:
        nodes[0].pop("tier")
    link = lambda a, b: {"a": a, "b": b, "capacity": draw(finite),  # noqa: E731
                         "background": [draw(finite), draw(finite)], **draw(extra)}
    links = [link(w1, s1), link(s1, w2), link(s1, s2), link(ps, s2)]
    jobs = [{"id": draw(ids), "workers": [w1, w2], "parameter_servers": [ps],
             "model_mb": draw(st.floats(1e-3, 1e12)), "weight": draw(st.floats(1e-3, 1e9)),
             "layers": draw(st.none() | st.integers(1, 2**31 - 1)), **draw(extra)}]
    doc = {"format": "inaplanner-scenario", "version": 1, "name": draw(st.text(
        st.characters(blacklist_categories=("Cc", "Cs"), blacklist_characters="\ufffe\uffff"),
        max_size=10)), "nodes": nodes, "links": links, "jobs": jobs, **draw(extra)}
    return scenario_from_dict(doc)


@settings(max_examples=60, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(sc=scenarios())
def test_valid_scenarios_round_trip_through_every_format(fuzzlib, tmp_path, sc):
    fuzzlib.roundtrip(sc, tmp_path)
