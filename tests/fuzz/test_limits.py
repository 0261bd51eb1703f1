"""D10: a size limit per file type, checked before reading (so a 200 MB GraphML ends at once with
one line), configurable by environment variable; and a few real ``inaplanner`` processes on the
corpus: exit code 2, one line on stderr, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import inaplanner
from inaplanner.errors import ValidationError
from inaplanner.io.limits import MAX_INPUT_MB, max_bytes

CORPUS = Path(__file__).resolve().parents[1] / "data" / "fuzz"


def sparse(path: Path, size: int, head: bytes) -> Path:
    """A file of ``size`` bytes that takes no disk space (a hole after ``head``)."""
    with open(path, "wb") as fh:
        fh.write(head)
        fh.truncate(size)
    return path


@pytest.mark.parametrize(("name", "kind", "mb"), [
    ("huge.graphml", "graphml", 200), ("huge.gml", "gml", 100), ("huge.json", "json", 300),
    ("huge.plan.json", "json", 300), ("testbed.toml", "toml", 40), ("run.csv", "recording", 1100),
])
def test_files_over_the_limit_are_refused_before_reading(fuzzlib, tmp_path, name, kind, mb):
    path = sparse(tmp_path / name, mb * 1_000_000, b"<!-- " if kind == "graphml" else b"#")
    with pytest.raises(ValidationError) as info:
        fuzzlib.load(fuzzlib.kind_of_name(name), path)
    label = {"graphml": "GraphML", "gml": "GML", "json": "JSON", "toml": "TOML",
             "recording": "recording"}[kind]
    assert str(info.value) == (
        f"{path}: file is {mb:.1f} MB, over the {MAX_INPUT_MB[kind]:g} MB limit for {label} files "
        f"(set INAPLANNER_MAX_{kind.upper()}_MB to raise it)")


def test_the_limit_is_configurable(fuzzlib, tmp_path, monkeypatch):
    sample = tmp_path / "s.graphml"
    fuzzlib.export_scenario(fuzzlib.load_scenario(Path(inaplanner.SAMPLES) / "aro_fig1.json"), sample)
    fuzzlib.import_scenario(sample)
    monkeypatch.setenv("INAPLANNER_MAX_GRAPHML_MB", "0.001")
    assert max_bytes("graphml") == 1000 and max_bytes("gml") == MAX_INPUT_MB["gml"] * 1_000_000
    with pytest.raises(ValidationError, match="over the 0.001 MB limit for GraphML files"):
        fuzzlib.import_scenario(sample)
    monkeypatch.delenv("INAPLANNER_MAX_GRAPHML_MB")
    monkeypatch.setenv("INAPLANNER_MAX_INPUT_MB", "0.002")
    assert max_bytes("graphml") == max_bytes("toml") == 2000
    monkeypatch.setenv("INAPLANNER_MAX_INPUT_MB", "lots")
    with pytest.raises(ValidationError, match="INAPLANNER_MAX_INPUT_MB must be a number of MB"):
        fuzzlib.import_scenario(sample)


def _inaplanner(*argv: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("INAPLANNER_MAX")}
    return subprocess.run([sys.executable, "-m", "inaplanner", *argv], capture_output=True,
                          text=True, timeout=120, env=env)


def test_real_processes_end_in_one_line_with_exit_code_2(inputs, tmp_path):
    big = sparse(tmp_path / "huge.graphml", 200_000_000, b"<!-- ")
    runs = [
        (["validate", str(CORPUS / "d01_deep_nesting.json")], "d01_deep_nesting.json"),
        (["convert", str(CORPUS / "d10_entity_bomb.graphml"), str(tmp_path / "o.json")], "DTD"),
        (["validate", str(big)], "over the 64 MB limit"),
        (["evaluate", str(inputs.scenario), str(CORPUS / "d12_bound_inf.plan.json")], "bound"),
        (["deploy", str(inputs.plan), "--scenario", str(inputs.scenario), "--testbed",
          str(CORPUS / "d09_not_utf8.toml"), "--dry-run"], "not UTF-8"),
        (["monitor", "--replay", str(CORPUS / "rec_inf_rate.csv"), "--speed", "0"], "gbps"),
    ]
    for argv, words in runs:
        r = _inaplanner(*argv)
        assert r.returncode == 2, (argv, r.stderr)
        assert "Traceback" not in r.stderr and r.stderr.count("\n") == 1, r.stderr
        assert r.stderr.startswith("inaplanner: error: ") and words in r.stderr, r.stderr
    assert not (tmp_path / "o.json").exists()
