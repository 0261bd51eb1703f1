"""Shared machinery of the fuzz tests and ``benchmarks/fuzz_long.py`` (loaded by file path).

Seeds are valid documents of every kind a loader reads: the bundled sample scenarios in each
scenario format (native JSON, node-link JSON, GraphML, GML), a plan made by a planner, a
``testbed.toml`` and a monitoring recording (CSV and SQLite). :func:`mutate` changes their bytes
(flips, cuts, splices, and tokens known to break parsers: huge and non-finite numbers, lone
surrogates, control characters, deep nesting, duplicate keys, DTDs). :func:`check_file` runs one
file through its loader and says how it ended; anything but a clean one-line refusal or a document
that loads (and, for scenarios, round-trips through every format with the same hash) raises
:class:`Finding`.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import signal
import tempfile
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import inaplanner
from inaplanner.errors import InaplannerError
from inaplanner.io import formats as _formats
from inaplanner.io.formats import export_scenario, import_scenario
from inaplanner.io.native import load_plan, load_scenario, save_plan, scenario_sha256
from inaplanner.monitor.recording import LinkInfo, load_recording, open_recorder
from inaplanner.monitor.series import Snapshot
from inaplanner.testbed.inventory import load_inventory

#: Per-case time budget (seconds): a case that takes longer is a hang.
CASE_BUDGET = 10.0

SCENARIO_EXTS = (".json", ".nodelink.json", ".graphml", ".gml")

TOKENS: list[bytes] = [
    b"1" + b"0" * 400, b"1e999", b"-1e999", b"NaN", b"Infinity", b"INF", b"2147483648",
    b"9223372036854775808", b"-1", b"0", b"1e-320", b"\"\\ud800\"", b"\\ud800", b"\\u0000",
    b"\x00", b"\n", b"\xff\xfe", b"\xed\xa0\x80", b"[" * 3000, b"{" * 50, b"]", b"}", b",", b":",
    b'"x_extra": "{\\"nodes\\": []}"', b'"name": "dup", "name": "dup2"', b"true", b"null",
    b'"', b"'", b"<", b">", b"&", b"&lt;", b"<!DOCTYPE x [<!ENTITY a \"aa\">]>", b"&a;",
    b"<![CDATA[x]]>", b"<!-- c -->", b"[[switch]]", b"[defaults]", b"= inf", b"= nan",
    b"\"\\u0000\"", b" ", b"#", b"tick", b"rate", b"S1", b"W1", b"PS", b"order",
]


class Finding(AssertionError):
    """A loader broke the contract: a traceback, a multi-line or anonymous error, a hang, or a
    document that changed on a round trip."""


class _Hang(BaseException):
    pass


class Seed:
    """A valid document: ``kind`` (scenario | plan | testbed | recording), ``name`` (its file
    name: the extension picks the loader) and its bytes."""

    def __init__(self, kind: str, name: str, data: bytes) -> None:
        self.kind, self.name, self.data = kind, name, data

    def __repr__(self) -> str:
        return f"Seed({self.kind!r}, {self.name!r}, {len(self.data)} bytes)"


@contextlib.contextmanager
def budget(seconds: float) -> Iterator[None]:
    """Raise :class:`_Hang` in the main thread when the block runs longer than ``seconds``."""
    def on_alarm(signum: int, frame: Any) -> None:
        raise _Hang()

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _recording_bytes(tmp: Path, suffix: str) -> bytes:
    path = tmp / f"rec{suffix}"
    links = {(0, 0): LinkInfo("S1", "S2", 10.0), (0, 1): LinkInfo("S2", "S1", 10.0)}
    rec = open_recorder(path, {"scenario": "fuzz"}, links)
    for i in range(3):
        rec.write(Snapshot(float(i), 1000.0 + i, {(0, 0): 1.5 * i, (0, 1): 0.25}, ("S2",) if i else ()))
    rec.close()
    return path.read_bytes()


def testbed_text(sc: Any) -> str:
    """A valid ``testbed.toml`` for the switches of ``sc`` (loopback ports nobody listens on)."""
    lines = ['[defaults]\nknown_hosts = "known_hosts"\nconnect_timeout = 1.0\ntls = false\n']
    for i, s in enumerate(sc.switches()):
        lines.append(f'[[switch]]\nid = "{s.id}"\np4runtime = "127.0.0.1:{9 + i}"\ndevice_id = {i}\n'
                     'target = "bmv2"\nelection_id = [0, 7]\n')
    return "\n".join(lines)


def make_seeds(tmp: Path) -> list[Seed]:
    """Every seed document, each valid for its loader."""
    seeds: list[Seed] = []
    for sample in sorted(Path(inaplanner.SAMPLES).glob("*.json")):
        sc = load_scenario(sample)
        stem = sample.stem
        for ext in SCENARIO_EXTS:
            out = tmp / f"{stem}{ext}"
            if ext == ".nodelink.json":
                _formats.export_node_link(sc, out)
            else:
                export_scenario(sc, out)
            seeds.append(Seed("scenario", out.name, out.read_bytes()))
    base = load_scenario(Path(inaplanner.SAMPLES) / "aro_fig1.json")
    from inaplanner.planners import get, run_planner

    plan = run_planner(get("random"), base, {"seed": 1})
    save_plan(plan, tmp / "seed.plan.json")
    seeds.append(Seed("plan", "seed.plan.json", (tmp / "seed.plan.json").read_bytes()))
    seeds.append(Seed("testbed", "testbed.toml", testbed_text(base).encode()))
    seeds.append(Seed("recording", "rec.csv", _recording_bytes(tmp, ".csv")))
    seeds.append(Seed("recording", "rec.sqlite", _recording_bytes(tmp, ".sqlite")))
    return seeds


#: text inserted inside quoted strings: odd but valid characters (accepted documents must still
#: round-trip through every format)
CHARS = ["\u00e9", "\u00df", "\u4e2d", "\U0001d518", "\u200b", "\u2028", "&", "<", ">", "'",
         " ", "-", "_", "x", "\u00a0", "\ufeff", "\U0001f600", "\u0301", "#", "[", "]", "=",
         "\\u00e9", "\\n", "\\t", "\\u0000", "\\ud800"]
#: numbers that replace numbers: mostly valid, some at the edges of the declared ranges
NUMBERS = [b"0", b"1", b"2", b"0.5", b"3.25", b"1e3", b"100", b"65535", b"2147483647", b"-0.0",
           b"1e-7", b"123456789.123", b"1000000000", b"1000000001", b"4", b"7"]


def mutate(data: bytes, rnd: random.Random, rounds: int | None = None) -> bytes:
    """A few random byte-level edits of ``data``: half of them gentle (a number swapped for another,
    a character added inside a quoted string) so that many mutants are still valid documents,
    the others destructive (flips, tokens that break parsers, cuts, splices)."""
    buf = bytearray(data)
    for _ in range(rounds if rounds is not None else rnd.randint(1, 3)):
        n = len(buf)
        pos = rnd.randint(0, n)
        if rnd.random() < 0.5 and n:
            if rnd.random() < 0.5:  # a number -> another number
                digits = [i for i in range(n) if 48 <= buf[i] <= 57]
                if digits:
                    j = k = rnd.choice(digits)
                    while j > 0 and (48 <= buf[j - 1] <= 57 or buf[j - 1] in b".-"):
                        j -= 1
                    while k < n and (48 <= buf[k] <= 57 or buf[k] in b".eE+-"):
                        k += 1
                    buf[j:k] = rnd.choice(NUMBERS)
            else:  # a character inside a quoted string
                quotes = [i for i, c in enumerate(buf) if c == 34]
                if quotes:
                    q = rnd.choice(quotes) + 1
                    buf[q:q] = rnd.choice(CHARS).encode("utf-8", "surrogatepass")
            continue
        op = rnd.randrange(8)
        if op == 0 and n:  # flip a byte
            buf[min(pos, n - 1)] = rnd.randrange(256)
        elif op == 1:  # insert a token
            buf[pos:pos] = rnd.choice(TOKENS)
        elif op == 2 and n:  # replace a number by a token
            j = pos
            while j < n and not (48 <= buf[j] <= 57):
                j += 1
            k = j
            while k < n and (48 <= buf[k] <= 57 or buf[k] in b".eE+-"):
                k += 1
            buf[j:k] = rnd.choice(TOKENS[:12])
        elif op == 3 and n:  # delete a range
            buf[pos:pos + rnd.randint(1, 64)] = b""
        elif op == 4 and n:  # duplicate a range
            k = min(n, pos + rnd.randint(1, 200))
            buf[pos:pos] = buf[pos:k]
        elif op == 5 and n:  # truncate
            del buf[pos:]
        elif op == 6 and n:  # swap a quoted string for another one from the file
            quotes = [i for i, c in enumerate(buf) if c == 34]
            if len(quotes) >= 4:
                a, b = sorted(rnd.sample(range(len(quotes) - 1), 2))
                buf[quotes[a] + 1:quotes[a + 1]] = bytes(buf[quotes[b] + 1:quotes[b + 1]])
        else:  # change a character inside an identifier-like run
            if n:
                buf[min(pos, n - 1)] = rnd.choice(b"S1W0PS_-.x \t")
    return bytes(buf)


def load(kind: str, path: Path) -> Any:
    if kind == "scenario":
        return import_scenario(path)[0]
    if kind == "plan":
        return load_plan(path)
    if kind == "testbed":
        return load_inventory(path)
    return load_recording(path)


def roundtrip(sc: Any, tmp: Path) -> None:
    """Write ``sc`` in every format, read it back: the hash must not change."""
    want = scenario_sha256(sc)
    for ext in SCENARIO_EXTS:
        out = tmp / f"roundtrip{ext}"
        if ext == ".nodelink.json":
            _formats.export_node_link(sc, out)
        else:
            export_scenario(sc, out)
        back = import_scenario(out)[0]
        got = scenario_sha256(back)
        if got != want:
            from inaplanner.io.native import scenario_to_dict

            before, after = scenario_to_dict(sc), scenario_to_dict(back)
            diff = []
            for k in sorted(set(before) | set(after)):
                x, y = before.get(k), after.get(k)
                if isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
                    diff += [f"{k}[{i}]: {a!r:.300} -> {b!r:.300}"
                             for i, (a, b) in enumerate(zip(x, y, strict=True)) if a != b]
                elif x != y:
                    diff.append(f"{k}: {x!r:.300} -> {y!r:.300}")
            raise Finding(f"round trip through {ext} changed the scenario: {diff[:2]}")


def check_refusal(exc: BaseException, path: Path) -> None:
    text = str(exc)
    if "\n" in text or not text.strip():
        raise Finding(f"refusal is not one line: {text!r}")
    if path.name not in text:
        raise Finding(f"refusal does not name the file: {text!r}")


def check_file(kind: str, path: Path, tmp: Path, budget_s: float = CASE_BUDGET) -> str:
    """``"refused"`` or ``"accepted"`` (``"roundtripped"`` for scenarios); raise Finding else."""
    try:
        with budget(budget_s):
            try:
                obj = load(kind, path)
            except InaplannerError as exc:
                check_refusal(exc, path)
                return "refused"
            if kind == "scenario":
                roundtrip(obj, tmp)
                return "roundtripped"
            return "accepted"
    except _Hang:
        raise Finding(f"hang: over {budget_s:g} s") from None
    except Finding:
        raise
    except Exception as exc:  # noqa: BLE001 - that is the finding
        tb = traceback.format_exception(exc)
        raise Finding("traceback:\n" + "".join(tb[-6:])) from None


def run_cli(argv: list[str], budget_s: float = CASE_BUDGET) -> tuple[int, str, str]:
    """``inaplanner.cli.main(argv)`` in-process; (exit code, stdout, stderr). A traceback or a hang
    raises Finding; an error must be one line on stderr with exit code 2."""
    from inaplanner.cli import main

    out, err = io.StringIO(), io.StringIO()
    try:
        with budget(budget_s), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as exc:  # argparse
                code = int(exc.code or 0)
    except _Hang:
        raise Finding(f"hang: {' '.join(argv)} over {budget_s:g} s") from None
    except Exception as exc:  # noqa: BLE001
        tb = traceback.format_exception(exc)
        raise Finding(f"traceback from {' '.join(argv)}:\n" + "".join(tb[-6:])) from None
    e = err.getvalue()
    if "Traceback" in e:
        raise Finding(f"traceback printed by {' '.join(argv)}:\n{e}")
    if code == 2:
        errors = [ln for ln in e.splitlines() if ln.startswith("inaplanner: error:")]
        if len(errors) != 1:
            raise Finding(f"{' '.join(argv)}: exit 2 without exactly one error line: {e!r}")
    return code, out.getvalue(), e


@dataclass
class Inputs:
    """Valid companions for CLI runs: a scenario, a plan for it, a testbed file."""

    scenario: Path
    plan: Path
    testbed: Path


def make_inputs(tmp: Path) -> Inputs:
    from inaplanner.planners import get, run_planner

    sc = load_scenario(Path(inaplanner.SAMPLES) / "aro_fig1.json")
    scen = tmp / "inputs" / "scenario.json"
    scen.parent.mkdir(parents=True, exist_ok=True)
    export_scenario(sc, scen)
    plan = run_planner(get("random"), sc, {"seed": 1})
    save_plan(plan, tmp / "inputs" / "plan.json")
    tb = tmp / "inputs" / "testbed.toml"
    tb.write_text(testbed_text(sc))
    return Inputs(scen, tmp / "inputs" / "plan.json", tb)


def cli_commands(kind: str, path: Path, inputs: Inputs, tmp: Path) -> list[list[str]]:
    """The CLI commands that read a file of this kind."""
    p = str(path)
    if kind == "scenario":
        return [["validate", p], ["convert", p, str(tmp / "converted.graphml")],
                ["plan", p, "--planner", "ecmp", "-o", str(tmp / "cli_plan.json")]]
    if kind == "plan":
        return [["evaluate", str(inputs.scenario), p]]
    if kind == "testbed":
        return [["deploy", str(inputs.plan), "--scenario", str(inputs.scenario), "--testbed", p,
                 "--dry-run", "--quiet"]]
    return [["monitor", "--replay", p, "--speed", "0", "--plain"]]


def kind_of_name(name: str) -> str:
    if name.endswith(".plan.json"):
        return "plan"
    if name.endswith(".toml"):
        return "testbed"
    if name.startswith("rec") or name.endswith((".csv", ".sqlite")):
        return "recording"
    return "scenario"


def fresh_dir(root: Path) -> Path:
    return Path(tempfile.mkdtemp(dir=root))


def case_path(tmp: Path, seed: Seed, data: bytes) -> Path:
    path = tmp / seed.name
    path.write_bytes(data)
    return path


__all__ = ["CASE_BUDGET", "Finding", "Seed", "check_file", "cli_commands", "export_scenario",
           "import_scenario", "kind_of_name", "load_scenario", "make_inputs", "make_seeds",
           "mutate", "run_cli", "json", "os"]
