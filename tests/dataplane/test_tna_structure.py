"""The TNA program respects Tofino's structural rules that can be checked without bf-p4c.

No Tofino compiler runs here, so a small reader (C-preprocessor macro expansion, then brace
matching) takes ``inaplanner/p4/ina_tna.p4`` apart and every path through the ingress ``apply``
block is walked, with the constants the program assigns (``meta.verdict = VERDICT_...``) used to
prune paths that cannot happen. Checked (issue 17 item 4):

* no action touches more than 4 registers (a stage has 4 stateful ALUs), and registers are only
  reached through actions (so the per-action budget is the whole story);
* on every path (one pass of a packet) each register is used by at most one action or table
  apply: a register allows one access per pass;
* the stage budget written in the source (``STAGE BUDGET``) puts every register in exactly one of
  Tofino 1's 12 stages, at most 4 per stage, agrees with the ``@stage`` of the value tables, and
  every register is used in a stage after the registers its inputs and its branch depend on;
* no path that resubmits applies ``drop()``, sets ``drop_ctl`` or applies a table that can drop
  (drop_ctl bit 0 also disables resubmit), and only the first pass resubmits;
* resubmission uses the current API: ``Resubmit(resubmit_type)``, not the deprecated
  ``Resubmit()``, with the same type set in ingress and tested in the deparser.

Each check is also run on a broken copy of the program, to show that it can fail.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from inaplanner import P4_DIR

STAGES, SALUS_PER_STAGE, REGS_PER_ACTION = 12, 4, 4
TNA = P4_DIR / "ina_tna.p4"


# -- preprocessing ------------------------------------------------------------------------------
def _strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def _matching(text: str, i: int, open_c: str = "(", close_c: str = ")") -> int:
    """Index of the bracket closing the one at ``i``."""
    depth = 0
    for k in range(i, len(text)):
        if text[k] == open_c:
            depth += 1
        elif text[k] == close_c:
            depth -= 1
            if depth == 0:
                return k
    raise ValueError(f"unbalanced {open_c}{close_c}")


def _split_args(text: str) -> list[str]:
    args, depth, cur = [], 0, ""
    for ch in text:
        if ch in "({<" and ch != "<":
            depth += 1
        elif ch in ")}":
            depth -= 1
        if ch == "," and depth == 0:
            args.append(cur.strip())
            cur = ""
        else:
            cur += ch
    args.append(cur.strip())
    return args


def expand_macros(text: str, base: Path | None = None) -> str:
    """Inline ``#include "..."``, expand object-like and function-like ``#define`` macros (with
    ``##`` pasting and rescanning), drop the other directives."""
    if base is not None:
        text = re.sub(r'^\s*#include\s+"([^"]+)"',
                      lambda m: (base / m.group(1)).read_text(), text, flags=re.M)
    text = _strip_comments(text).replace("\\\n", " ")
    funcs: dict[str, tuple[list[str], str]] = {}
    objs: dict[str, str] = {}
    for m in re.finditer(r"^\s*#define\s+(\w+)(\(([^)]*)\))?[ \t]*(.*)$", text, flags=re.M):
        if m.group(2):
            funcs[m.group(1)] = ([p.strip() for p in m.group(3).split(",")], m.group(4))
        else:
            objs[m.group(1)] = m.group(4).strip()
    text = re.sub(r"^\s*#[^\n]*$", " ", text, flags=re.M)
    for _ in range(50):
        changed = False
        for name, (params, body) in funcs.items():
            for m in reversed(list(re.finditer(rf"\b{name}\s*\(", text))):
                end = _matching(text, m.end() - 1)
                args = _split_args(text[m.end():end])
                out = body
                for p, a in zip(params, args, strict=True):
                    out = re.sub(rf"\b{p}\b", a, out)
                out = re.sub(r"\s*##\s*", "", out)
                text = text[:m.start()] + " " + out + " " + text[end + 1:]
                changed = True
        for name, value in objs.items():
            if value and re.search(rf"\b{name}\b", text):
                text = re.sub(rf"\b{name}\b", value, text)
                changed = changed or value != name
        if not changed:
            return text
    raise AssertionError("macro expansion does not terminate")


# -- the program's parts -------------------------------------------------------------------------
@dataclass
class Action:
    registers: set[str]
    writes: dict[str, str]  # lhs -> rhs expression
    drops: bool


@dataclass
class Table:
    actions: list[str]
    key: list[str]
    stage: int | None
    hidden: bool


@dataclass
class Program:
    consts: dict[str, int] = field(default_factory=dict)
    registers: list[str] = field(default_factory=list)
    reg_action: dict[str, str] = field(default_factory=dict)  # RegisterAction -> Register
    actions: dict[str, Action] = field(default_factory=dict)
    tables: dict[str, Table] = field(default_factory=dict)
    apply: str = ""
    deparser: str = ""
    budget: dict[str, int] = field(default_factory=dict)  # register -> stage (from the comment)
    budget_rows: dict[int, list[str]] = field(default_factory=dict)


def _assignments(body: str) -> dict[str, str]:
    return {m.group(1): m.group(2).strip()
            for m in re.finditer(r"([\w.\[\]:]+)\s*=\s*([^;=][^;]*);", body)}


def _control_body(text: str, name: str) -> str:
    m = re.search(rf"\bcontrol\s+{name}\s*\(", text)
    assert m, f"control {name} not found"
    close = _matching(text, m.end() - 1)
    brace = text.index("{", close)
    return text[brace + 1:_matching(text, brace, "{", "}")]


def read_program(source: str, base: Path) -> Program:
    prog = Program()
    for m in re.finditer(r"\*\s*stage\s+(\d+):\s*(.*)", source):
        regs = re.findall(r"\bagg_\w+", m.group(2).split("  ")[0] if "  " in m.group(2)
                          else m.group(2))
        prog.budget_rows[int(m.group(1))] = regs
        for r in regs:
            assert r not in prog.budget, f"register {r} in two stages of the budget"
            prog.budget[r] = int(m.group(1))
    text = expand_macros(source, base)
    for m in re.finditer(r"\bconst\s+\w+(?:<\d+>)?\s+(\w+)\s*=\s*(\w+)\s*;", text):
        prog.consts[m.group(1)] = int(m.group(2), 0)
    body = _control_body(text, "InaIngress")
    prog.registers = re.findall(r"\bRegister\s*<.*?>\s*\(\s*\w+\s*\)\s*(\w+)\s*;", body)
    for m in re.finditer(r"\bRegisterAction\s*<[^(]*\(\s*(\w+)\s*\)\s*(\w+)\s*=", body):
        prog.reg_action[m.group(2)] = m.group(1)
    for m in re.finditer(r"\baction\s+(\w+)\s*\([^)]*\)\s*\{", body):
        abody = body[m.end() - 1:_matching(body, m.end() - 1, "{", "}") + 1]
        regs = {prog.reg_action[x] for x in re.findall(r"(\w+)\.execute\s*\(", abody)}
        prog.actions[m.group(1)] = Action(regs, _assignments(abody), "drop_ctl" in abody)
    prog.actions.setdefault("NoAction", Action(set(), {}, False))
    for m in re.finditer(r"((?:@\w+(?:\([^)]*\))?\s+)*)\btable\s+(\w+)\s*\{", body):
        tbody = body[m.end() - 1:_matching(body, m.end() - 1, "{", "}") + 1]
        acts_m = re.search(r"\bactions\s*=\s*\{([^}]*)\}", tbody)
        acts = re.findall(r"(\w+)\s*;", acts_m.group(1)) if acts_m else []
        default = re.search(r"default_action\s*=\s*(\w+)", tbody)
        if default and default.group(1) not in acts:
            acts.append(default.group(1))
        key_m = re.search(r"\bkey\s*=\s*\{([^}]*)\}", tbody)
        keys = re.findall(r"([\w.]+)\s*:", key_m.group(1)) if key_m else []
        stage = re.search(r"@stage\((\d+)\)", m.group(1))
        prog.tables[m.group(2)] = Table(acts, keys, int(stage.group(1)) if stage else None,
                                        "@hidden" in m.group(1))
    a = re.search(r"\bapply\s*\{", body)
    prog.apply = body[a.end():_matching(body, a.end() - 1, "{", "}")]
    prog.deparser = _control_body(text, "InaIngressDeparser")
    return prog


# -- statements and paths ------------------------------------------------------------------------
def parse_block(text: str) -> list[tuple]:
    """Statements: ("if", cond, then, else) or ("stmt", text)."""
    out: list[tuple] = []
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i].isspace():
            i += 1
        if i >= n:
            break
        if re.match(r"if\s*\(", text[i:]):
            p = text.index("(", i)
            q = _matching(text, p)
            cond = text[p + 1:q]
            then, i = _one(text, q + 1)
            els: list[tuple] = []
            m = re.match(r"\s*else\b", text[i:])
            if m:
                els, i = _one(text, i + m.end())
            out.append(("if", cond, then, els))
        elif text[i] == "{":
            q = _matching(text, i, "{", "}")
            out += parse_block(text[i + 1:q])
            i = q + 1
        else:
            q = text.index(";", i)
            out.append(("stmt", text[i:q].strip()))
            i = q + 1
    return out


def _one(text: str, i: int) -> tuple[list[tuple], int]:
    while text[i].isspace():
        i += 1
    if text[i] == "{":
        q = _matching(text, i, "{", "}")
        return parse_block(text[i + 1:q]), q + 1
    if re.match(r"if\s*\(", text[i:]):
        # an else-if: the nested if and its own else
        p = text.index("(", i)
        q = _matching(text, p)
        then, j = _one(text, q + 1)
        els: list[tuple] = []
        m = re.match(r"\s*else\b", text[j:])
        if m:
            els, j = _one(text, j + m.end())
        return [("if", text[p + 1:q], then, els)], j
    q = text.index(";", i)
    return [("stmt", text[i:q].strip())], q + 1


@dataclass
class Path_:
    env: dict[str, object]  # variable -> known value, or ("not", {values})
    dep: dict[str, int]  # variable -> latest register stage it depends on (-1: none)
    pc: int  # latest stage the path's branch conditions depend on
    uses: list[tuple[str, str, set[str]]]  # (kind, name, registers)
    problems: list[str]

    def copy(self) -> Path_:
        return Path_(dict(self.env), dict(self.dep), self.pc, list(self.uses), list(self.problems))


class Walker:
    """Every feasible path through the apply block, with the order of register uses."""

    def __init__(self, prog: Program) -> None:
        self.prog = prog

    def value(self, expr: str):
        expr = expr.strip()
        if re.fullmatch(r"\d+|0x[0-9a-fA-F]+", expr):
            return int(expr, 0)
        return self.prog.consts.get(expr)

    def _vars(self, expr: str) -> list[str]:
        return re.findall(r"\b(?:meta|hdr|ig_\w+)\.[\w.]+", expr)

    def _dep(self, path: Path_, expr: str) -> int:
        return max([path.dep.get(v, -1) for v in self._vars(expr)], default=-1)

    def cond(self, path: Path_, cond: str, want: bool) -> Path_ | None:
        """``path`` with ``cond`` assumed ``want``, or None when it contradicts what is known."""
        c = cond.strip()
        while c.startswith("(") and _matching(c, 0) == len(c) - 1:
            c = c[1:-1].strip()
        for op in ("||", "&&"):
            parts = _split_top(c, op)
            if len(parts) > 1:
                if (op == "&&") == want:  # all parts must hold as wanted
                    for part in parts:
                        path = self.cond(path, part, want)
                        if path is None:
                            return None
                    return path
                # some part fails (&&, not wanted) / holds (||, wanted): unknown which one
                if all(self.cond(path.copy(), part, want) is None for part in parts):
                    return None
                out = path.copy()
                out.pc = max(out.pc, self._dep(path, c))
                return out
        if c.startswith("!"):
            return self.cond(path, c[1:], not want)
        m = re.fullmatch(r"([\w.\[\]:]+)\s*(==|!=)\s*(\w+)", c)
        out = path.copy()
        out.pc = max(out.pc, self._dep(path, c))
        if not m:
            return out
        var, op, rhs = m.group(1), m.group(2), self.value(m.group(3))
        if rhs is None:
            return out
        equal = (op == "==") == want
        known = path.env.get(var)
        if isinstance(known, int):
            return out if (known == rhs) == equal else None
        if equal:
            if isinstance(known, tuple) and rhs in known[1]:
                return None
            out.env[var] = rhs
        else:
            out.env[var] = ("not", (known[1] if isinstance(known, tuple) else set()) | {rhs})
        return out

    def assign(self, path: Path_, lhs: str, rhs: str, stage: int = -1) -> None:
        v = self.value(rhs)
        if v is not None:
            path.env[lhs] = v
        else:
            path.env.pop(lhs, None)
        path.dep[lhs] = max(path.pc, self._dep(path, rhs), stage)

    def use_action(self, path: Path_, name: str, kind: str = "action") -> None:
        act = self.prog.actions[name]
        stage = max((self.prog.budget.get(r, -1) for r in act.registers), default=-1)
        for r in act.registers:
            inputs = max(path.pc, path.dep.get("meta.slot", -1))
            if self.prog.budget.get(r, -1) <= inputs:
                path.problems.append(f"{name} uses {r} in stage {self.prog.budget.get(r)} but "
                                     f"depends on a result of stage {inputs}")
        path.uses.append((kind, name, set(act.registers)))
        for lhs, rhs in act.writes.items():
            self.assign(path, lhs, rhs, stage if ".execute" in rhs else -1)

    def use_table(self, path: Path_, name: str) -> None:
        table = self.prog.tables[name]
        regs = set().union(*(self.prog.actions[a].registers for a in table.actions))
        key_dep = max([path.dep.get(k, -1) for k in table.key] + [path.pc])
        for r in regs:
            if self.prog.budget.get(r, -1) <= key_dep:
                path.problems.append(f"table {name} uses {r} in stage {self.prog.budget.get(r)} "
                                     f"but its key or branch depends on stage {key_dep}")
        path.uses.append(("table", name, regs))
        for a in table.actions:  # which action runs is up to the entries: results unknown
            for lhs in self.prog.actions[a].writes:
                path.env.pop(lhs, None)
                path.dep[lhs] = max(path.dep.get(lhs, -1), path.pc, 0)

    def walk(self, stmts: list[tuple], paths: list[Path_]) -> list[Path_]:
        for st in stmts:
            nxt: list[Path_] = []
            for p in paths:
                if st[0] == "if":
                    for want, body in ((True, st[2]), (False, st[3])):
                        q = self.cond(p, st[1], want)
                        if q is not None:
                            for r in self.walk(body, [q]):
                                r.pc = p.pc  # the branch's control dependency ends here
                                nxt.append(r)
                else:
                    self.stmt(p, st[1])
                    nxt.append(p)
            paths = nxt
        return paths

    def stmt(self, path: Path_, text: str) -> None:
        m = re.fullmatch(r"(\w+)\.apply\(\)", text)
        if m and m.group(1) in self.prog.tables:
            self.use_table(path, m.group(1))
            return
        m = re.fullmatch(r"(\w+)\(\)", text)
        if m and m.group(1) in self.prog.actions:
            self.use_action(path, m.group(1))
            return
        if ".execute" in text:
            path.problems.append(f"register action executed outside an action: {text}")
            ras = re.findall(r"(\w+)\.execute\s*\(", text)
            path.uses.append(("execute", ras[0], {self.prog.reg_action[r] for r in ras}))
            return
        m = re.fullmatch(r"([\w.\[\]:]+)\s*=\s*(.+)", text)
        if m:
            self.assign(path, m.group(1), m.group(2))

    def paths(self) -> list[Path_]:
        return self.walk(parse_block(self.prog.apply), [Path_({}, {}, -1, [], [])])


def _split_top(text: str, op: str) -> list[str]:
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        ch = text[i]
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif depth == 0 and text.startswith(op, i):
            parts.append(text[start:i])
            start = i + len(op)
            i += len(op)
            continue
        i += 1
    parts.append(text[start:])
    return [p.strip() for p in parts]


# -- the checks ----------------------------------------------------------------------------------
def problems(source: str) -> list[str]:
    """Every structural problem of a TNA program text (empty: none found)."""
    prog = read_program(source, TNA.parent)
    out: list[str] = []
    for name, act in prog.actions.items():
        if len(act.registers) > REGS_PER_ACTION:
            out.append(f"action {name} touches {len(act.registers)} registers "
                       f"(a stage has {SALUS_PER_STAGE} stateful ALUs)")
    # the written budget
    for r in prog.registers:
        if r not in prog.budget:
            out.append(f"register {r} is not in the STAGE BUDGET")
    for stage, regs in prog.budget_rows.items():
        if not 0 <= stage < STAGES:
            out.append(f"stage {stage} does not exist on Tofino 1 ({STAGES} stages)")
        if len(regs) > SALUS_PER_STAGE:
            out.append(f"stage {stage} holds {len(regs)} registers: {' '.join(regs)}")
    for name, table in prog.tables.items():
        for a in table.actions:
            for r in prog.actions[a].registers:
                if table.stage is not None and prog.budget.get(r) != table.stage:
                    out.append(f"table {name} is @stage({table.stage}) but {r} is budgeted in "
                               f"stage {prog.budget.get(r)}")
    # the paths
    walker = Walker(prog)
    paths = walker.paths()
    resubmit_const = None
    for p in paths:
        out += p.problems
        seen: dict[str, str] = {}
        for _kind, name, regs in p.uses:
            for r in regs:
                if r in seen:
                    out.append(f"register {r} used by {seen[r]} and {name} in one pass")
                seen[r] = name
        rtype = p.env.get("ig_dprsr_md.resubmit_type")
        if isinstance(rtype, int) and rtype != 0:
            resubmit_const = rtype
            if p.env.get("ig_intr_md.resubmit_flag") != 0:
                out.append("a path resubmits without testing that it is the first pass")
            for kind, name, _ in p.uses:
                acts = (prog.tables[name].actions if kind == "table"
                        else [name] if kind == "action" else [])
                if any(prog.actions[a].drops for a in acts):
                    out.append(f"a path that resubmits applies {name}, which can set drop_ctl "
                               f"(bit 0 disables resubmit)")
    if resubmit_const is None:
        out.append("no path resubmits")
    # the resubmit API
    if re.search(r"\bResubmit\s*\(\s*\)", prog.deparser):
        out.append("deprecated Resubmit() constructor (use Resubmit(resubmit_type))")
    m = re.search(r"\bResubmit\s*\(\s*(\w+)\s*\)\s*(\w+)\s*;", prog.deparser)
    if not m:
        out.append("no Resubmit(resubmit_type) instance in the ingress deparser")
    else:
        rtype = walker.value(m.group(1))
        if rtype != resubmit_const:
            out.append(f"Resubmit({m.group(1)}) does not match the resubmit_type ingress sets")
        guard = re.search(rf"if\s*\(\s*ig_dprsr_md\.resubmit_type\s*==\s*(\w+)\s*\)\s*\{{\s*"
                          rf"{m.group(2)}\.emit\(", prog.deparser)
        if not guard or walker.value(guard.group(1)) != rtype:
            out.append("the deparser does not emit the resubmit for that resubmit_type")
    return out


@pytest.fixture(scope="module")
def source() -> str:
    return TNA.read_text()


def test_the_tna_program_passes_every_structural_check(source):
    assert problems(source) == []


def test_the_reader_sees_the_program(source):
    """A reader that finds nothing would pass everything: look at what it found."""
    prog = read_program(source, TNA.parent)
    assert len(prog.registers) == 38 and sum(map(len, prog.budget_rows.values())) == 38
    value_tables = [t for t in prog.tables.values() if t.hidden]
    assert len(value_tables) >= 8
    assert sorted(t.stage for t in value_tables) == list(range(3, 12))
    values = {r for t in value_tables for a in t.actions for r in prog.actions[a].registers}
    assert len(values) == 32
    paths = Walker(prog).paths()
    used = {r for p in paths for _, _, regs in p.uses for r in regs}
    assert used == set(prog.registers)
    second = [p for p in paths if any(n == "slot_take_owner" for _, n, _ in p.uses)]
    assert second and all(p.env.get("meta.verdict") in (prog.consts["VERDICT_TO_PS"],
                                                         prog.consts["VERDICT_CONSUMED"])
                          for p in second)


def test_macro_expansion_pastes_and_rescans():
    text = "#define A(F, I) x_##F = I;\n#define EACH(M) M(v0, 0) M(v1, 1)\nEACH(A)\n"
    assert expand_macros(text).split() == ["x_v0", "=", "0;", "x_v1", "=", "1;"]


BROKEN = {
    # an action doing all 32 values at once (the old values_add)
    "too many registers": ("action values_add_8() { INA_TNA_ADD(v30) INA_TNA_ADD(v31) }",
                           "action values_add_8() { INA_TNA_ADD(v30) INA_TNA_ADD(v31) "
                           "INA_TNA_ADD(v00) INA_TNA_ADD(v01) INA_TNA_ADD(v02) }"),
    # reading and writing the owner in one pass (the old owner_read + owner_write)
    "register twice": ("slot_take_owner();\n", "slot_read();\n                    "
                       "slot_take_owner();\n"),
    # the old verdict CONSUMED on the resubmit path, which drops it
    "drop on resubmit": ("ig_dprsr_md.resubmit_type = INA_RESUBMIT_TAKE;",
                         "ig_dprsr_md.resubmit_type = INA_RESUBMIT_TAKE; drop();"),
    "deprecated constructor": ("Resubmit(INA_RESUBMIT_TAKE) resubmit;", "Resubmit() resubmit;"),
    "budget": ("stage 5:  agg_value_v06", "stage 5:  agg_count agg_value_v06"),
    "too early": ("INA_TNA_VALUE_TABLE(0, 3)", "INA_TNA_VALUE_TABLE(0, 2)"),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_each_check_catches_its_fault(source, case):
    old, new = BROKEN[case]
    assert old in source, case
    broken = source.replace(old, new, 1)
    if case == "budget":
        with pytest.raises(AssertionError, match="two stages"):
            problems(broken)
        return
    found = problems(broken)
    expect = {"too many registers": "touches 5 registers", "register twice": "in one pass",
              "drop on resubmit": "can set drop_ctl", "deprecated constructor": "deprecated",
              "too early": "@stage(2)"}[case]
    assert any(expect in p for p in found), found
