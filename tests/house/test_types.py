"""mypy is clean on the Qt-free data packages (model, io, evaluate, views; settings in
pyproject's [tool.mypy]), run the way CI runs it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_mypy_is_clean_on_the_core_data_packages():
    done = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no issues found" in done.stdout
    checked = int(done.stdout.split("in ")[-1].split()[0])
    assert checked >= 20  # model, io, evaluate and views were all checked, not an empty list
