"""``inaplanner completion bash|zsh``: a shell completion script made from the argparse parser.

The script is generated from the same parser the program parses with, so it never falls behind:
subcommands (nested ones too, such as ``generate fat-tree``), each command's options, and the
values of options with fixed choices (``report --format``). Everything else (scenario and plan
files) falls back to the shell's file completion. Zsh uses the same script through its
``bashcompinit`` layer. Written here rather than taken from shtab or argcomplete: it is about a
hundred lines, adds no dependency, and costs no start-up time (argcomplete would run Python on
every Tab press).

Install::

    inaplanner completion bash > ~/.local/share/bash-completion/completions/inaplanner
    inaplanner completion zsh > "${fpath[1]}/_inaplanner"
"""

from __future__ import annotations

import argparse
import shlex
import sys
from dataclasses import dataclass, field

SHELLS = ("bash", "zsh")


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "completion",
        help="print a shell completion script (bash or zsh)",
        description="Print a completion script for SHELL on stdout. Bash: save it as "
        "~/.local/share/bash-completion/completions/inaplanner (or source it from ~/.bashrc). "
        "Zsh: save it as _inaplanner in a folder of $fpath.",
    )
    p.add_argument("shell", choices=SHELLS, metavar="SHELL", help="bash or zsh")
    p.set_defaults(func=run)


@dataclass
class Level:
    """One command level: its subcommands, options, and the choices of options that have them."""

    path: str  # "" for the root, "/generate/fat-tree" below
    commands: list[str] = field(default_factory=list)
    options: list[str] = field(default_factory=list)
    choices: dict[str, list[str]] = field(default_factory=dict)  # option -> values


def walk(parser: argparse.ArgumentParser, path: str = "") -> list[Level]:
    """Every level of ``parser``, the root first."""
    level = Level(path)
    below: list[Level] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                level.commands.append(name)
                below += walk(child, f"{path}/{name}")
            continue
        if action.help == argparse.SUPPRESS:
            continue
        level.options += action.option_strings
        if action.option_strings and action.choices is not None and action.nargs != 0:
            for opt in action.option_strings:
                level.choices[opt] = [str(c) for c in action.choices]
        elif not action.option_strings and action.choices is not None:
            level.commands += [str(c) for c in action.choices]  # a positional with fixed values
    return [level, *below]


def _words(items: list[str]) -> str:
    return shlex.quote(" ".join(items))


def bash_script(parser: argparse.ArgumentParser, prog: str = "inaplanner") -> str:
    """A bash completion function for ``parser``."""
    levels = walk(parser)
    func = "_" + prog.replace("-", "_")
    known = [f"{lv.path}" for lv in levels if lv.path]
    lines = [
        f"# bash completion for {prog} (made by '{prog} completion bash')",
        f"{func}() {{",
        '    local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}"',
        '    local path="" w i',
        "    for ((i = 1; i < COMP_CWORD; i++)); do",
        '        w="${COMP_WORDS[i]}"',
        '        case "$path/$w" in',
    ]
    if known:
        lines.append("            " + "|".join(shlex.quote(k) for k in known) + ') path="$path/$w" ;;')
    lines += ["        esac", "    done", "    local commands=\"\" options=\"\"", '    case "$path" in']
    for lv in levels:
        label = shlex.quote(lv.path) if lv.path else '""'
        lines.append(f"        {label})")
        lines.append(f"            commands={_words(lv.commands)}; options={_words(lv.options)}")
        for opt, values in lv.choices.items():
            lines.append(f'            if [[ "$prev" == {shlex.quote(opt)} ]]; then')
            lines.append(f'                COMPREPLY=($(compgen -W {_words(values)} -- "$cur")); return 0')
            lines.append("            fi")
        lines.append("            ;;")
    lines += [
        "    esac",
        '    if [[ "$cur" == -* ]]; then',
        '        COMPREPLY=($(compgen -W "$options" -- "$cur"))',
        '    elif [[ -n "$commands" ]]; then',
        '        COMPREPLY=($(compgen -W "$commands" -- "$cur"))',
        "    fi",  # nothing matched: -o default gives file names
        "    return 0",
        "}",
        f"complete -o default -F {func} {prog}",
        "",
    ]
    return "\n".join(lines)


def zsh_script(parser: argparse.ArgumentParser, prog: str = "inaplanner") -> str:
    """The bash function through zsh's ``bashcompinit`` (same completions, one generator)."""
    return (f"#compdef {prog}\n"
            "# zsh completion (made by 'inaplanner completion zsh'): the bash function, run by\n"
            "# zsh's bash-completion layer\n"
            "autoload -U +X bashcompinit && bashcompinit\n"
            + bash_script(parser, prog))


def run(args: argparse.Namespace) -> int:
    from inaplanner.cli import build_parser

    parser = build_parser()
    sys.stdout.write(bash_script(parser) if args.shell == "bash" else zsh_script(parser))
    return 0
