"""The layer rules of issue 12, as code: import-linter's contracts in pyproject.toml hold on the
real package, fail on a deliberate ``import inaplanner.gui`` in the report, and every core module
imports with Qt hidden."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import inaplanner

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = Path(inaplanner.__file__).resolve().parent
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"
QT = ("PySide6", "pyqtgraph", "shiboken6")


def _contracts() -> dict[str, dict]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    return {c["id"]: c for c in config["contracts"]}


def _lint(cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"], cwd=cwd, capture_output=True, text=True, timeout=300,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(cwd)},
    )


def test_contracts_hold_on_the_package():
    done = _lint(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    for contract in _contracts().values():
        assert f"{contract['name']} KEPT" in done.stdout


def test_every_core_module_is_under_the_contracts():
    """A new top-level module is core unless it is ``gui``: it must be listed in the Qt and GUI
    contracts, or the rules would silently not cover it."""
    top = {
        f"inaplanner.{p.stem if p.is_file() else p.name}"
        for p in PACKAGE.iterdir()
        if (p.is_file() and p.suffix == ".py" and p.stem != "__init__")
        or (p.is_dir() and (p / "__init__.py").exists())
    }
    core = top - {"inaplanner.gui"}
    contracts = _contracts()
    for cid in ("qt-only-in-gui", "core-never-imports-gui"):
        assert set(contracts[cid]["source_modules"]) == core, cid
    assert set(contracts["qt-only-in-gui"]["forbidden_modules"]) == set(QT)


def test_a_gui_import_in_the_report_breaks_the_contract(tmp_path):
    """Copy the package, add ``import inaplanner.gui`` to ``report/``: lint-imports fails and names
    the contract and the offending module."""
    shutil.copytree(PACKAGE, tmp_path / "inaplanner", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    stray = tmp_path / "inaplanner" / "report" / "stray.py"
    stray.write_text('"""A deliberate layer violation."""\n\nimport inaplanner.gui  # noqa: F401\n')
    done = _lint(tmp_path)
    assert done.returncode != 0
    assert "The core never imports inaplanner.gui BROKEN" in done.stdout
    assert "inaplanner.report.stray -> inaplanner.gui" in done.stdout
    # the copy is what was analysed (the checkout's own package is clean)
    assert _lint(ROOT).returncode == 0


def test_a_qt_import_in_a_core_package_breaks_the_contract(tmp_path):
    shutil.copytree(PACKAGE, tmp_path / "inaplanner", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "inaplanner" / "evaluate" / "stray.py").write_text("import pyqtgraph  # noqa: F401\n")
    done = _lint(tmp_path)
    assert done.returncode != 0
    assert "Qt (PySide6, pyqtgraph, shiboken6) is imported only by inaplanner.gui BROKEN" in done.stdout


_BLOCK_QT = """
import importlib, pkgutil, sys

class NoQt:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {qt!r}:
            raise ImportError(f"Qt is hidden in this process: {{name}}")
        return None

sys.meta_path.insert(0, NoQt())
import inaplanner
names = sorted(m.name for m in pkgutil.walk_packages(inaplanner.__path__, "inaplanner."))
core = [n for n in names if not (n == "inaplanner.gui" or n.startswith("inaplanner.gui."))
        and n not in ("inaplanner.cli.gui", "inaplanner.__main__")]  # __main__ runs the CLI
for name in core:
    importlib.import_module(name)
leaked = sorted(m for m in sys.modules if m.split(".")[0] in {qt!r})
assert not leaked, leaked
print(len(core))
"""


def test_every_core_module_imports_without_qt():
    """Each module outside ``inaplanner/gui`` (and the ``gui`` command) imports in a process where
    any import of PySide6, pyqtgraph or shiboken6 raises ImportError: a stray Qt import fails here."""
    done = subprocess.run([sys.executable, "-c", _BLOCK_QT.format(qt=QT)], capture_output=True,
                          text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.split()[-1]) > 100  # every module was imported, not a handful


def test_the_blocker_catches_a_stray_qt_import(tmp_path):
    """The same check fails on a copy of the package with one Qt import in the evaluator."""
    shutil.copytree(PACKAGE, tmp_path / "inaplanner", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "inaplanner" / "evaluate" / "stray.py").write_text("import PySide6.QtCore  # noqa\n")
    done = subprocess.run([sys.executable, "-c", _BLOCK_QT.format(qt=QT)], capture_output=True,
                          text=True, timeout=300, cwd=tmp_path, env={"PYTHONPATH": str(tmp_path)})
    assert done.returncode != 0
    assert "Qt is hidden in this process: PySide6" in done.stderr
    assert "inaplanner/evaluate/stray.py" in done.stderr


def _gui_modules() -> dict[str, Path]:
    gui = PACKAGE / "gui"
    return {
        "inaplanner." + ".".join(p.relative_to(PACKAGE).with_suffix("").parts).removesuffix(".__init__"): p
        for p in gui.rglob("*.py")
    }


def _imports(path: Path, name: str) -> set[str]:
    """Modules ``path`` (module ``name``) imports, anywhere in the file, resolved to absolute names."""
    tree = ast.parse(path.read_text())
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            found.add(mod)
            found.update(f"{mod}.{a.name}" for a in node.names)
    return found


def _has_code(path: Path) -> bool:
    """More than a docstring (and ``from __future__``)."""
    body = ast.parse(path.read_text()).body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    return any(not (isinstance(n, ast.ImportFrom) and n.module == "__future__") for n in body)


def test_every_gui_module_with_code_imports_qt():
    """``gui/`` holds widgets, scenes and Qt plumbing only: a module there that imports no Qt
    belongs in the core (``inaplanner.views``); package markers hold a docstring only."""
    without_qt = [
        name for name, path in _gui_modules().items()
        if _has_code(path) and not any(m.split(".")[0] in QT for m in _imports(path, name))
    ]
    assert without_qt == []


def test_no_import_cycle_inside_the_gui():
    """The graph of gui modules importing gui modules (any import, also inside functions) is acyclic."""
    modules = _gui_modules()
    graph = {
        name: {m for m in _imports(path, name) if m in modules and m != name}
        for name, path in modules.items()
    }
    # a submodule import also runs its package's __init__; that edge is implicit, not a cycle
    colour: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, stack: list[str]) -> None:
        colour[node] = 1
        for nxt in sorted(graph[node]):
            if colour.get(nxt) == 1:
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in colour:
                visit(nxt, [*stack, nxt])
        colour[node] = 2

    for start in sorted(graph):
        if start not in colour:
            visit(start, [start])
    assert cycles == []
