"""Start-up: every command imports only what it uses (issue 12, item 6). ``--version`` and building
the parser import none of numpy, networkx, PuLP, highspy; ``validate`` imports no solver."""

from __future__ import annotations

import json
import subprocess
import sys

from inaplanner import SAMPLES

HEAVY = ("numpy", "networkx", "pulp", "highspy")
SOLVERS = ("pulp", "highspy")


def _run_python(*args: str) -> subprocess.CompletedProcess:
    run = subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    return run


def _imported_by(code: str) -> set[str]:
    """Top-level packages in sys.modules after ``code`` ran in a fresh interpreter."""
    probe = code + "\nimport json, sys\nprint(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    return set(json.loads(_run_python("-c", probe).stdout.strip().splitlines()[-1]))


def test_version_imports_no_heavy_module():
    run = _run_python("-X", "importtime", "-m", "inaplanner", "--version")
    assert run.stdout.startswith("inaplanner ")
    imported = {line.split("|")[-1].strip().split(".")[0]
                for line in run.stderr.splitlines() if line.startswith("import time:")}
    assert "inaplanner" in imported  # the probe sees our own imports
    assert not imported & set(HEAVY), imported & set(HEAVY)


def test_building_the_parser_and_help_import_no_heavy_module():
    mods = _imported_by(
        "from inaplanner.cli import build_parser\n"
        "p = build_parser()\n"
        "p.parse_args(['plan', 'x.json', '--planner', 'aro', '-o', 'p.json'])\n"
        "import contextlib, io\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        "        p.parse_args(['--help'])\n"
        "    except SystemExit:\n"
        "        pass\n"
    )
    assert not mods & set(HEAVY), mods & set(HEAVY)
    assert "PySide6" not in mods


def test_validate_imports_no_solver():
    sample = SAMPLES / "fat_tree_k4.json"
    mods = _imported_by(
        "import contextlib, io\n"
        "from inaplanner.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        f"    assert main(['validate', {str(sample)!r}]) == 0\n"
        "assert 'valid' in out.getvalue()\n"
    )
    assert not mods & set(SOLVERS), mods & set(SOLVERS)


def test_lazy_help_texts_still_list_presets_and_policies():
    run = _run_python("-m", "inaplanner", "memsim", "--help")
    assert "presets:" in run.stdout and "dnn-a" in run.stdout
    assert "policies:" in run.stdout and "esa" in run.stdout


def test_the_cli_tables_match_the_modules_they_name():
    from inaplanner import topologies
    from inaplanner.cli import report as cli_report
    from inaplanner.cli import scenario as cli_scenario
    from inaplanner.report.export import FORMATS

    assert cli_report.FORMATS == FORMATS
    for name, function in cli_scenario.TESTBEDS.items():
        assert callable(getattr(topologies, function)), name
