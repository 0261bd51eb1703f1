"""The program as users install it (issue 12, item 7): build a wheel, install it into a fresh venv
outside the checkout, and run it from a folder outside the checkout.

The dependencies are not downloaded again: the new venv gets the wheel with ``--no-deps`` and a
``.pth`` line naming this venv's site-packages, so numpy, PuLP, HiGHS, Qt... resolve from there.
That ``.pth`` only adds a folder to ``sys.path``: the ``.pth`` files inside it (among them the
checkout's editable finder) are not run, and the new venv's own site-packages comes first, so
``inaplanner`` is the installed wheel (checked: ``inaplanner.__file__`` is inside the new venv).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def _run(cmd: list[str], cwd: Path, env: dict[str, str], timeout: float = 300) -> str:
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{cmd}\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, dict[str, str], Path]:
    """(the new venv's bin folder, an environment for it, a work folder outside the checkout)."""
    base = tmp_path_factory.mktemp("wheel")
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(base / "home"),
        "QT_QPA_PLATFORM": "offscreen",
        "XDG_CONFIG_HOME": str(base / "config"),
        "XDG_STATE_HOME": str(base / "state"),
        "INAPLANNER_RECOVERY_DIR": str(base / "recovery"),
    }
    # build from a clean copy of the sources: nothing is written into the checkout, and no stale
    # build/ folder of an earlier build can slip old modules into the wheel
    src = base / "src"
    shutil.copytree(ROOT, src, symlinks=True, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".*_cache", ".hypothesis",
        "tests", "benchmarks"))
    dist = base / "dist"
    # the build runs as the developer would (their pip cache and index settings)
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(src)],
         cwd=base, env=dict(os.environ), timeout=600)
    wheel = next(dist.glob("inaplanner-*.whl"))
    venv = base / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=base, env=env)
    py = venv / "bin" / "python"
    _run([sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-deps",
          "--no-index", str(wheel)], cwd=base, env=env)
    site = Path(_run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                     cwd=base, env=env).strip())
    (site / "zz_project_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env["PATH"] = f"{venv / 'bin'}:{env['PATH']}"
    work = base / "work"
    work.mkdir()
    return venv / "bin", env, work


def test_the_installed_package_is_the_wheel(installed):
    bindir, env, work = installed
    out = _run([str(bindir / "python"), "-c",
                "import inaplanner, sys; print(inaplanner.__file__); print(inaplanner.SAMPLES);"
                "print(inaplanner.P4_DIR); print(inaplanner.RESOURCES); print(inaplanner.__version__);"
                "print(any('__editable__' in m for m in sys.modules))"], cwd=work, env=env)
    file, samples, p4, resources, version, editable = out.split("\n")[:6]
    venv = bindir.parent
    for path in (file, samples, p4, resources):
        assert Path(path).is_relative_to(venv), path
        assert not Path(path).resolve().is_relative_to(ROOT), path
    assert editable == "False"
    assert version == _run([sys.executable, "-c", "import inaplanner; print(inaplanner.__version__)"],
                           cwd=work, env=os.environ.copy()).strip()
    assert (Path(samples) / "leaf_spine_small.json").is_file()
    assert sorted(p.name for p in Path(p4).glob("*.p4info.txtpb"))
    assert (Path(resources) / "inaplanner.svg").is_file()
    assert (Path(resources) / "inaplanner.desktop").is_file()
    assert (Path(resources) / "inaplanner-mime.xml").is_file()
    assert (Path(file).parent / "py.typed").is_file()
    metadata = _run([str(bindir / "python"), "-c",
                     "import importlib.metadata as m; d = m.distribution('inaplanner');"
                     "print(d.metadata['License'] or d.metadata['License-Expression']);"
                     "print(any(str(f).endswith('LICENSE') for f in d.files))"], cwd=work, env=env)
    assert metadata.split() == ["Apache-2.0", "True"]


def test_commands_run_from_the_wheel(installed):
    bindir, env, work = installed
    exe = str(bindir / "inaplanner")
    # the bundled sample is readable
    out = _run([exe, "validate", str(Path(_sample_dir(bindir, env, work)) / "leaf_spine_small.json")],
               cwd=work, env=env)
    assert "leaf_spine_small" in out or "ok" in out.lower()
    _run([exe, "generate", "leaf-spine", "--leaves", "2", "--spines", "2", "--hosts-per-leaf", "3",
          "--jobs", "1", "--workers-per-job", "4", "--seed", "3", "-o", "net.json"], cwd=work, env=env)
    scenario = json.loads((work / "net.json").read_text())
    assert len(scenario["jobs"]) == 1 and len(scenario["links"]) > 4
    _run([exe, "plan", "net.json", "--planner", "grid", "--time-limit", "20", "-o", "plan.json", "-q"],
         cwd=work, env=env)
    plan = json.loads((work / "plan.json").read_text())
    assert plan["planner"]["name"] == "grid" and plan["tasks"] and plan["planner"]["solver"].startswith("HiGHS")
    _run([exe, "report", "plan.json", "-s", "net.json", "--format", "html", "-o", "report.html", "-q"],
         cwd=work, env=env)
    html = (work / "report.html").read_text()
    assert html.lstrip().lower().startswith("<!doctype html") and "<svg" in html
    entries = _run([exe, "entries", "plan.json", "-s", "net.json"], cwd=work, env=env)
    # the entries are named from the P4Info bundled in the wheel
    p4info = next(bindir.parent.glob("lib/python*/site-packages/inaplanner/p4/*.p4info.txtpb"))
    tables = [line.split('"')[1].split(".")[-1] for line in p4info.read_text().splitlines()
              if line.strip().startswith("name:") and "Ingress" in line and "." in line]
    assert tables and any(t in entries for t in tables), entries[:500]
    shot = work / "shot.png"
    _run([exe, "gui", "net.json", "--plan", "plan.json", "--screenshot", str(shot),
          "--size", "800x600"], cwd=work, env=env)
    head = shot.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    assert int.from_bytes(head[16:20], "big") >= 800 and int.from_bytes(head[20:24], "big") >= 600
    # the icons are found in the installed package (a missing one would be an empty icon)
    icons = _run([str(bindir / "python"), "-c",
                  "from PySide6.QtWidgets import QApplication; app = QApplication([]);"
                  "from inaplanner.gui.theme import icon, icon_path;"
                  "names = ['inaplanner', 'open', 'save', 'undo', 'host', 'switch'];"
                  "print(all(not icon(n).isNull() for n in names));"
                  "print(icon_path('open'))"], cwd=work, env=env)
    found, path = icons.split()[:2]
    assert found == "True" and Path(path).is_relative_to(bindir.parent)


def _sample_dir(bindir: Path, env: dict[str, str], work: Path) -> str:
    return _run([str(bindir / "python"), "-c", "import inaplanner; print(inaplanner.SAMPLES)"],
                cwd=work, env=env).strip()
