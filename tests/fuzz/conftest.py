"""Fixtures of the fuzz tests: the shared machinery (``fuzzlib.py``), loaded by file path because
the suite runs with ``--import-mode=importlib``."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
CORPUS = HERE.parent / "data" / "fuzz"


def _load_fuzzlib():
    name = "inaplanner_tests_fuzzlib"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, HERE / "fuzzlib.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def fuzzlib():
    return _load_fuzzlib()


@pytest.fixture(scope="session")
def seeds(fuzzlib, tmp_path_factory):
    return fuzzlib.make_seeds(tmp_path_factory.mktemp("seeds"))


@pytest.fixture(scope="session")
def inputs(fuzzlib, tmp_path_factory):
    return fuzzlib.make_inputs(tmp_path_factory.mktemp("inputs"))


def _load_deploy_fixtures():
    """The real OpenSSH server fixture of the deployment tests (one definition, used here too)."""
    name = "inaplanner_tests_deploy_conftest"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, HERE.parent / "deploy" / "conftest.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


sshd = _load_deploy_fixtures().sshd
