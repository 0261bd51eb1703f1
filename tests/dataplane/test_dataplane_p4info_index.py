"""P4Info lookups and P4Runtime byte strings."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from inaplanner.dataplane import bytestrings
from inaplanner.dataplane.p4info import P4InfoIndex, load_p4info, parse_p4info_text
from inaplanner.errors import InaplannerError


def test_lookups_by_name_alias_and_pipe_prefixed_name():
    p4 = load_p4info()
    t = p4.table("InaIngress.ina_forward")
    assert p4.table("ina_forward") is t and p4.table(t.id) is t
    assert [(f.name, f.bitwidth, f.kind) for f in t.match_fields] == [
        ("job_id", 16, "exact"), ("ps_id", 8, "exact"), ("flow_id", 16, "exact")]
    assert not t.needs_priority
    assert p4.action("forward").param("port").bitwidth == 9
    assert p4.counter("tx_port_counter").unit == "both"
    assert p4.register("agg_values").size == 8192 * 32
    assert p4.name_of(t.id) == "InaIngress.ina_forward"
    # bf-p4c names: pipe.InaIngress.ina_forward -> found by its dotted suffix
    tna = parse_p4info_text(load_p4info().proto.__str__().replace('"InaIngress.',
                                                                  '"pipe.InaIngress.'))
    idx = P4InfoIndex(tna)
    assert idx.id_of("table", "InaIngress.ina_forward") == t.id
    with pytest.raises(InaplannerError, match="does not exist"):
        p4.id_of("table", "nope")
    with pytest.raises(InaplannerError, match="no parameter"):
        p4.action("forward").param("egress")


def test_ambiguous_suffix_and_bad_text():
    text = """
    tables { preamble { id: 33554433 name: "A.t" } }
    tables { preamble { id: 33554434 name: "B.t" } }
    """
    idx = P4InfoIndex(parse_p4info_text(text))
    with pytest.raises(InaplannerError, match="ambiguous"):
        idx.id_of("table", "t")
    with pytest.raises(InaplannerError, match="not a valid P4Info"):
        parse_p4info_text("tables { nonsense: 1 }", "x.txtpb")
    with pytest.raises(InaplannerError, match="cannot read P4Info"):
        load_p4info("/nonexistent/x.txtpb")


@given(st.integers(min_value=1, max_value=64), st.data())
def test_encode_decode_round_trip(width, data):
    value = data.draw(st.integers(min_value=0, max_value=(1 << width) - 1))
    enc = bytestrings.encode(value, width)
    assert bytestrings.decode(enc, width) == value
    assert enc == bytestrings.canonical(enc)
    assert len(enc) == max(1, (value.bit_length() + 7) // 8)
    padded = value.to_bytes((width + 7) // 8, "big")
    assert bytestrings.decode(padded, width) == value
    assert bytestrings.canonical(padded) == enc


def test_decode_refusals():
    assert bytestrings.decode(b"\x01\xff", 9) == 511
    for data, width in ((b"\x02\x00", 9), (b"", 8), (b"\x00\x00\x01", 9), (b"\x80", 7)):
        with pytest.raises(ValueError):
            bytestrings.decode(data, width)
    with pytest.raises(ValueError):
        bytestrings.encode(512, 9)
    with pytest.raises(ValueError):
        bytestrings.encode(-1)
