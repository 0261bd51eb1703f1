"""The checked-in P4Info is the contract: everything in it must exist in the P4 sources.

No P4 compiler exists on the test machines, so a small purpose-built reader (regular
expressions and brace matching, enough for the style of p4/*.p4) extracts headers, structs,
controls, tables, actions, counters and registers from the sources, and the P4Info is compared
with it in both directions, bit widths included. The TNA program must declare the same tables,
keys, actions and parameters, so that entries built by name fit both targets.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from google.protobuf import text_format
from p4.config.v1 import p4info_pb2

from inaplanner import P4_DIR
from inaplanner.dataplane.p4info import DEFAULT_P4INFO, load_p4info, object_id

#: Widths of architecture metadata the programs use as keys (v1model.p4 / tna.p4).
ARCH_FIELDS = {
    ("standard_metadata_t", "ingress_port"): 9,
    ("standard_metadata_t", "egress_port"): 9,
    ("ingress_intrinsic_metadata_t", "ingress_port"): 9,
}
UNITS = {"packets_and_bytes": "both", "PACKETS_AND_BYTES": "both", "packets": "packets",
         "PACKETS": "packets", "bytes": "bytes", "BYTES": "bytes"}


# -- a reader for p4/*.p4 ------------------------------------------------------------------------
def _inline_includes(path: Path) -> str:
    text = path.read_text()

    def sub(m: re.Match) -> str:
        return _inline_includes(path.parent / m.group(1))

    return re.sub(r'^\s*#include\s+"([^"]+)"', sub, text, flags=re.M)


def _preprocess(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r"\\\n", " ", text)  # join continued macro lines
    numbers = dict(re.findall(r"^\s*#define\s+(\w+)\s+(\d+)\s*$", text, flags=re.M))
    text = re.sub(r"^\s*#[^\n]*$", " ", text, flags=re.M)
    for name, value in numbers.items():
        text = re.sub(rf"\b{name}\b", value, text)
    return text


def _block(text: str, open_at: int) -> tuple[str, int]:
    """The text inside the braces opening at ``open_at`` and the index after the closing one."""
    assert text[open_at] == "{"
    depth = 0
    for i in range(open_at, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return text[open_at + 1:i], i + 1
    raise ValueError("unbalanced braces")


@dataclass
class Table:
    keys: list[tuple[str, str, int]]  # (P4Info name, match kind, width)
    actions: list[tuple[str, bool]]  # (action name, default only)
    const_default: str | None
    size: int | None


@dataclass
class Program:
    headers: dict[str, dict[str, int]] = field(default_factory=dict)
    structs: dict[str, dict[str, str]] = field(default_factory=dict)
    tables: dict[str, Table] = field(default_factory=dict)
    actions: dict[str, list[tuple[str, int]]] = field(default_factory=dict)
    counters: dict[str, tuple[str, int]] = field(default_factory=dict)  # (unit, size)
    registers: dict[str, tuple[int, int]] = field(default_factory=dict)  # (width, size)


def _width(program: Program, params: dict[str, str], expr: str) -> int:
    parts = expr.split(".")
    type_name = params[parts[0]]
    for member in parts[1:-1]:
        type_name = program.structs[type_name][member]
    last = parts[-1]
    if type_name in program.headers:
        return program.headers[type_name][last]
    return ARCH_FIELDS[(type_name, last)]


def read_program(path: Path) -> Program:
    text = _preprocess(_inline_includes(path))
    prog = Program()
    for m in re.finditer(r"\bheader\s+(\w+)\s*\{", text):
        body, _ = _block(text, m.end() - 1)
        prog.headers[m.group(1)] = {n: int(w) for w, n in re.findall(r"bit<(\d+)>\s+(\w+)\s*;",
                                                                      body)}
    for m in re.finditer(r"\bstruct\s+(\w+)\s*\{", text):
        body, _ = _block(text, m.end() - 1)
        prog.structs[m.group(1)] = {n: t for t, n in re.findall(r"(\w+)\s+(\w+)\s*;", body)}
    for m in re.finditer(r"\bcontrol\s+(\w+)\s*\(([^)]*)\)\s*\{", text):
        ctl = m.group(1)
        params = {}
        for p in m.group(2).split(","):
            words = p.split()
            params[words[-1]] = words[-2]
        body, _ = _block(text, m.end() - 1)
        for a in re.finditer(r"\baction\s+(\w+)\s*\(([^)]*)\)", body):
            prog.actions[f"{ctl}.{a.group(1)}"] = [
                (n, int(w)) for w, n in re.findall(r"bit<(\d+)>\s+(\w+)", a.group(2))]
        for t in re.finditer(r"(@hidden\s+(?:@\w+(?:\([^)]*\))?\s+)*)?\btable\s+(\w+)\s*\{", body):
            tbody, _ = _block(body, t.end() - 1)
            if t.group(1):  # p4c leaves @hidden tables out of the P4Info
                continue
            key_m = re.search(r"\bkey\s*=\s*\{", tbody)
            keys = []
            if key_m:
                kbody, _ = _block(tbody, key_m.end() - 1)
                for expr, kind, name in re.findall(
                        r"([\w.]+)\s*:\s*(\w+)\s*(?:@name\(\"([^\"]+)\"\))?\s*;", kbody):
                    keys.append((name or expr, kind, _width(prog, params, expr)))
            act_m = re.search(r"\bactions\s*=\s*\{", tbody)
            abody, _ = _block(tbody, act_m.end() - 1)
            acts = [(n, bool(d)) for d, n in re.findall(r"(@defaultonly\s+)?(\w+)\s*;", abody)]
            const = re.search(r"const\s+default_action\s*=\s*(\w+)\s*\(", tbody)
            size = re.search(r"\bsize\s*=\s*(\d+)\s*;", tbody)
            prog.tables[f"{ctl}.{t.group(2)}"] = Table(
                keys, acts, const.group(1) if const else None,
                int(size.group(1)) if size else None)
        for c in re.finditer(r"\bcounter\s*\(\s*(\d+)\s*,\s*CounterType\.(\w+)\s*\)\s*(\w+)\s*;",
                             body):
            prog.counters[f"{ctl}.{c.group(3)}"] = (UNITS[c.group(2)], int(c.group(1)))
        for c in re.finditer(r"\bCounter\s*<[^()]*>\s*\(\s*(\d+)\s*,\s*CounterType_t\.(\w+)\s*\)"
                             r"\s*(\w+)\s*;", body):
            prog.counters[f"{ctl}.{c.group(3)}"] = (UNITS[c.group(2)], int(c.group(1)))
        for r in re.finditer(r"\bregister\s*<\s*bit<(\d+)>\s*>\s*\(\s*(\d+)\s*\)\s*(\w+)\s*;",
                             body):
            prog.registers[f"{ctl}.{r.group(3)}"] = (int(r.group(1)), int(r.group(2)))
        for r in re.finditer(r"\bRegister\s*<\s*bit<(\d+)>\s*,\s*bit<\d+>\s*>\s*\(\s*(\d+)\s*\)"
                             r"\s*(\w+)\s*;", body):
            prog.registers[f"{ctl}.{r.group(3)}"] = (int(r.group(1)), int(r.group(2)))
    return prog


# -- the comparison -------------------------------------------------------------------------------
KIND = {p4info_pb2.MatchField.EXACT: "exact", p4info_pb2.MatchField.LPM: "lpm",
        p4info_pb2.MatchField.TERNARY: "ternary", p4info_pb2.MatchField.RANGE: "range",
        p4info_pb2.MatchField.OPTIONAL: "optional"}
UNIT = {1: "bytes", 2: "packets", 3: "both"}


def _qualified(table_name: str, action: str) -> str:
    return action if action == "NoAction" else f"{table_name.split('.')[0]}.{action}"


def compare(p4info: p4info_pb2.P4Info, prog: Program, registers: bool = True) -> list[str]:
    """Every difference between the P4Info and the program, as readable lines."""
    problems = []
    names = {a.preamble.id: a.preamble.name for a in p4info.actions}
    for a in p4info.actions:
        if a.preamble.name == "NoAction":
            continue
        src = prog.actions.get(a.preamble.name)
        if src is None:
            problems.append(f"action {a.preamble.name} not in the source")
            continue
        info = [(p.name, p.bitwidth) for p in sorted(a.params, key=lambda p: p.id)]
        if info != src:
            problems.append(f"action {a.preamble.name}: P4Info params {info} != source {src}")
    for t in p4info.tables:
        name = t.preamble.name
        src = prog.tables.get(name)
        if src is None:
            problems.append(f"table {name} not in the source")
            continue
        info_keys = [(f.name, KIND[f.match_type], f.bitwidth)
                     for f in sorted(t.match_fields, key=lambda f: f.id)]
        if info_keys != src.keys:
            problems.append(f"table {name}: P4Info keys {info_keys} != source {src.keys}")
        info_actions = sorted((names[r.id], r.scope == p4info_pb2.ActionRef.DEFAULT_ONLY)
                              for r in t.action_refs)
        src_actions = sorted((_qualified(name, a), d) for a, d in src.actions)
        if info_actions != src_actions:
            problems.append(f"table {name}: P4Info actions {info_actions} != {src_actions}")
        const = names.get(t.const_default_action_id) if t.const_default_action_id else None
        src_const = _qualified(name, src.const_default) if src.const_default else None
        if const != src_const:
            problems.append(f"table {name}: const default {const} != source {src_const}")
        if src.size is not None and t.size != src.size:
            problems.append(f"table {name}: size {t.size} != source {src.size}")
    for c in p4info.counters:
        src = prog.counters.get(c.preamble.name)
        info = (UNIT[c.spec.unit], c.size)
        if src != info:
            problems.append(f"counter {c.preamble.name}: P4Info {info} != source {src}")
    for r in p4info.registers:
        src = prog.registers.get(r.preamble.name)
        info = (r.type_spec.bitstring.bit.bitwidth, r.size)
        if src != info:
            problems.append(f"register {r.preamble.name}: P4Info {info} != source {src}")
    # the other direction: nothing in the program the P4Info forgot
    listed = {t.preamble.name for t in p4info.tables}
    problems += [f"table {n} missing from the P4Info" for n in prog.tables if n not in listed]
    listed = {c.preamble.name for c in p4info.counters}
    problems += [f"counter {n} missing from the P4Info" for n in prog.counters if n not in listed]
    listed = {r.preamble.name for r in p4info.registers}
    problems += [f"register {n} missing from the P4Info" for n in prog.registers
                 if registers and n not in listed]
    return problems


@pytest.fixture(scope="module")
def p4info() -> p4info_pb2.P4Info:
    return load_p4info().proto


@pytest.fixture(scope="module")
def v1model() -> Program:
    return read_program(P4_DIR / "ina_v1model.p4")


@pytest.fixture(scope="module")
def tna() -> Program:
    return read_program(P4_DIR / "ina_tna.p4")


def test_p4info_matches_v1model_source(p4info, v1model):
    assert compare(p4info, v1model) == []
    # the reader really saw the program (a reader that finds nothing would also "match")
    assert len(v1model.tables) == 4 and len(v1model.counters) == 2 and len(v1model.registers) == 7
    assert v1model.tables["InaIngress.ina_aggregate"].keys[3] == ("ingress_port", "exact", 9)


def test_a_changed_width_or_name_is_caught(p4info, v1model):
    wrong = p4info_pb2.P4Info()
    wrong.CopyFrom(p4info)
    wrong.tables[0].match_fields[0].bitwidth += 1
    wrong.actions[2].params[0].name = "egress"
    wrong.counters[0].size = 256
    del wrong.tables[1]
    problems = compare(wrong, v1model)
    assert any("keys" in p for p in problems)
    assert any("params" in p for p in problems)
    assert any("counter" in p for p in problems)
    assert any("missing from the P4Info" in p for p in problems)


def test_ids_follow_the_documented_scheme(p4info):
    kinds = [("table", p4info.tables), ("action", p4info.actions), ("counter", p4info.counters),
             ("register", p4info.registers)]
    for kind, objs in kinds:
        for obj in objs:
            assert obj.preamble.id == object_id(kind, obj.preamble.name), obj.preamble.name


def test_tna_program_declares_the_same_contract(p4info, tna):
    """Same tables, keys, widths, actions and counters on Tofino (registers, and the actions no
    table offers, such as v1model's values_step, differ by design)."""
    contract = p4info_pb2.P4Info()
    contract.CopyFrom(p4info)
    del contract.registers[:]
    offered = {r.id for t in contract.tables for r in t.action_refs}
    kept = [a for a in contract.actions if a.preamble.id in offered]
    del contract.actions[:]
    contract.actions.extend(kept)
    assert compare(contract, tna, registers=False) == []
    assert "InaIngress.agg_owner" in tna.registers


def test_shared_header_layout(v1model, tna):
    for prog in (v1model, tna):
        ina = prog.headers["ina_h"]
        assert sum(ina.values()) == 192  # 24 bytes, byte aligned
        assert list(ina)[:4] == ["job_id", "ps_id", "priority", "seq"]
        assert {"node_id", "flow_id", "bitmap", "fan_in", "agg_index"} <= set(ina)
        assert {"ack", "resend", "fallback", "aggregated", "reminder"} <= set(ina)
        assert list(prog.headers["ina_values_h"].values()) == [32] * 32
    shared = ("ethernet_h", "ina_h", "ina_values_h")
    assert [v1model.headers[h] for h in shared] == [tna.headers[h] for h in shared]


def test_p4info_text_parses_with_shell_options():
    """p4runtime-shell reads the file with text_format.Merge(allow_unknown_field=True)."""
    msg = p4info_pb2.P4Info()
    text_format.Merge(DEFAULT_P4INFO.read_text(), msg, allow_unknown_field=True)
    assert msg.pkg_info.arch == "v1model"
