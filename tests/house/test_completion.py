"""``inaplanner completion bash|zsh``: scripts generated from the argparse parser."""

from __future__ import annotations

import argparse
import shutil
import subprocess

import pytest

from inaplanner.cli import build_parser, main
from inaplanner.cli.completion import walk


def _script(shell: str, capsys) -> str:
    assert main(["completion", shell]) == 0
    return capsys.readouterr().out


def test_bash_script_names_every_subcommand(capsys):
    script = _script("bash", capsys)
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert {"plan", "compare", "memsim", "validate", "deploy", "completion"} <= set(sub.choices)
    root = next(line for line in script.splitlines() if line.strip().startswith("commands='generate"))
    for name in sub.choices:
        assert f" {name}" in root or f"'{name}" in root, name
    assert "complete -o default -F _inaplanner inaplanner" in script
    assert "/generate/fat-tree" in script  # nested commands too


def test_levels_carry_options_and_choices():
    levels = {lv.path: lv for lv in walk(build_parser())}
    assert "--planner" in levels["/plan"].options and "-q" in levels["/plan"].options
    assert levels["/report"].choices["--format"] == ["html", "pdf", "csv", "json", "png", "svg"]
    assert set(levels[""].choices["--log-level"]) >= {"DEBUG", "INFO", "WARNING"}


def _complete(script: str, words: list[str]) -> list[str]:
    program = (script + "\nCOMP_WORDS=(" + " ".join(f"'{w}'" for w in words) + ")\n"
               "COMP_CWORD=$((${#COMP_WORDS[@]} - 1))\n_inaplanner\n"
               'printf "%s\\n" "${COMPREPLY[@]}"\n')
    run = subprocess.run(["bash", "--norc", "-c", program], capture_output=True, text=True, timeout=30)
    assert run.returncode == 0, run.stderr
    return [w for w in run.stdout.splitlines() if w]


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_bash_completes_commands_options_and_choices(capsys):
    script = _script("bash", capsys)
    assert _complete(script, ["inaplanner", "pl"]) == ["planners", "plan"]
    assert _complete(script, ["inaplanner", "generate", "fa"]) == ["fat-tree"]
    assert _complete(script, ["inaplanner", "-q", "memsim", "--pol"]) == ["--policies"]
    assert _complete(script, ["inaplanner", "report", "--format", "p"]) == ["pdf", "png"]
    assert _complete(script, ["inaplanner", "plan", "sc"]) == []  # files: the shell's default


def test_zsh_script_uses_the_same_completions(capsys):
    script = _script("zsh", capsys)
    assert script.startswith("#compdef inaplanner")
    assert "bashcompinit" in script and "_inaplanner()" in script
