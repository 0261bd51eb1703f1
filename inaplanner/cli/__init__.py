"""`inaplanner ...`: the command line.

Each area of the program adds its own subcommands through a module with a
``register(subparsers)`` function (see ``COMMAND_MODULES``); a handler is set with
``parser.set_defaults(func=handler)`` and returns the exit code. Errors of the project's own type
print as one line on stderr with exit code 2 (a traceback only with ``--debug``).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from inaplanner import __version__
from inaplanner.errors import InaplannerError

#: Modules that add subcommands. Each has ``register(subparsers) -> None``.
COMMAND_MODULES = (
    "inaplanner.cli.scenario",  # generate, validate, convert, evaluate
    "inaplanner.cli.plan",  # planners, plan, compare
    "inaplanner.cli.memsim",  # memsim
    "inaplanner.cli.deploy",  # deploy, testbed emulate, entries
    "inaplanner.cli.monitor",  # monitor
    "inaplanner.cli.report",  # report, diff
    "inaplanner.cli.gui",  # gui
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="inaplanner",
        description="Plan, check, deploy and monitor in-network aggregation. "
        "With no command, opens the desktop planner on the bundled sample.",
    )
    parser.add_argument("--version", action="version", version=f"inaplanner {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:  # an area not built yet: its commands are absent
            if exc.name and name.startswith(exc.name):
                continue
            raise
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    if not [a for a in args_list if not a.startswith("-")] and not {"-h", "--help", "--version"} & set(args_list):
        args_list = ["gui", *args_list]  # no command: open the planner on the sample
    args = parser.parse_args(args_list)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(args.func(args) or 0)
    except InaplannerError as exc:
        if args.debug:
            raise
        print(f"inaplanner: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("inaplanner: interrupted", file=sys.stderr)
        return 130
    except OSError as exc:
        if args.debug:
            raise
        print(f"inaplanner: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
