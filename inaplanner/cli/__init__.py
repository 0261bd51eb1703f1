"""`inaplanner ...`: the command line.

Each area of the program adds its own subcommands through a module with a
``register(subparsers)`` function (see ``COMMAND_MODULES``); a handler is set with
``parser.set_defaults(func=handler)`` and returns the exit code. Errors of the project's own type
print as one line on stderr with exit code 2 (a traceback only with ``--debug``).

Start-up stays cheap: the command modules import only the standard library and the project's
light modules at the top; numpy, networkx, the evaluator, the planners and the solvers are imported
inside the handlers, so ``inaplanner --version`` or ``inaplanner validate`` never load a solver
(``tests/house/test_startup.py``, ``benchmarks/bench_startup.py``).

Root flags: ``-q/--quiet`` (no progress, only errors), ``-v`` (repeatable: INFO, then DEBUG) and
``--log-level LEVEL`` configure :mod:`logging` (one handler, on stderr). They are accepted before
the command and after it (``inaplanner -q plan ...`` and ``inaplanner plan ... -q``).
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Callable, Sequence

from inaplanner import __version__
from inaplanner.errors import Cancelled, InaplannerError

#: Modules that add subcommands. Each has ``register(subparsers) -> None``.
COMMAND_MODULES = (
    "inaplanner.cli.scenario",  # generate, validate, convert, evaluate
    "inaplanner.cli.plan",  # planners, plan, compare
    "inaplanner.cli.memsim",  # memsim
    "inaplanner.cli.deploy",  # deploy, testbed emulate, entries
    "inaplanner.cli.monitor",  # monitor
    "inaplanner.cli.report",  # report, diff
    "inaplanner.cli.sweep",  # sweep
    "inaplanner.cli.gui",  # gui
    "inaplanner.cli.completion",  # completion
)

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose long help texts can be filled in only when help is shown
    (``parser.fill_help = fn``), so registering a command never imports what the text lists."""

    fill_help: Callable[[argparse.ArgumentParser], None] | None = None

    def format_help(self) -> str:
        fill, self.fill_help = self.fill_help, None
        if fill is not None:
            fill(self)
        return super().format_help()


def _root_flags(parser: argparse.ArgumentParser, default: object) -> None:
    """``-q``, ``-v``, ``--log-level`` on ``parser``; on subcommands ``default`` is SUPPRESS so an
    absent flag does not overwrite the one given before the command."""
    have = parser._option_string_actions
    if default is argparse.SUPPRESS and "--quiet" in have:  # a command's own --quiet (deploy)
        have["--quiet"].default = argparse.SUPPRESS  # must not undo ``inaplanner -q COMMAND``
    if "-q" not in have and "--quiet" not in have:
        parser.add_argument("-q", "--quiet", action="store_true", default=default,
                            help="no progress output; only errors on stderr")
    if "-v" not in have and "--verbose" not in have:
        parser.add_argument("-v", "--verbose", action="count", default=default,
                            help=getattr(parser, "verbose_help",
                                         "more log output on stderr (-v: info, -vv: debug)"))
    if "--log-level" not in have:
        parser.add_argument("--log-level", metavar="LEVEL", default=default, type=str.upper,
                            choices=LOG_LEVELS, help="log level: " + ", ".join(LOG_LEVELS))


def _add_root_flags_to_commands(parser: argparse.ArgumentParser) -> None:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):
                _root_flags(child, argparse.SUPPRESS)
                _add_root_flags_to_commands(child)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="inaplanner",
        description="Plan, check, deploy and monitor in-network aggregation. "
        "With no command, opens the desktop planner on the bundled sample.",
    )
    parser.add_argument("--version", action="version", version=f"inaplanner {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    _root_flags(parser, None)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:  # an area not built yet: its commands are absent
            if exc.name and name.startswith(exc.name):
                continue
            raise
        module.register(sub)
    _add_root_flags_to_commands(parser)
    return parser


class _StderrHandler(logging.Handler):
    """Writes to whatever ``sys.stderr`` is at the time (tests swap it)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(self.format(record) + "\n")
        except Exception:  # noqa: BLE001 - logging must never break the command
            self.handleError(record)


_handler: logging.Handler | None = None


def log_level(args: argparse.Namespace) -> int:
    """The level the root flags ask for: ``--log-level``, else ``-q`` (ERROR), else WARNING less
    one step per ``-v``."""
    if getattr(args, "log_level", None):
        return int(getattr(logging, args.log_level))
    if getattr(args, "quiet", None):
        return logging.ERROR
    verbose = getattr(args, "verbose", None) or 0
    return max(logging.DEBUG, logging.WARNING - 10 * verbose)


def configure_logging(level: int) -> None:
    """One stderr handler on the root logger; inaplanner's loggers at ``level``, other libraries'
    at WARNING unless ``level`` is DEBUG."""
    global _handler
    root = logging.getLogger()
    if _handler is not None:
        root.removeHandler(_handler)
    _handler = _StderrHandler()
    _handler.setFormatter(logging.Formatter("inaplanner: %(levelname)s: %(name)s: %(message)s"))
    root.addHandler(_handler)
    root.setLevel(min(level, logging.WARNING) if level <= logging.DEBUG else max(level, logging.WARNING))
    logging.getLogger("inaplanner").setLevel(level)


def _words(args: list[str]) -> list[str]:
    """The arguments that are not options nor an option's value (``--log-level INFO``)."""
    words, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a == "--log-level":
            skip = True
        elif not a.startswith("-"):
            words.append(a)
    return words


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list == ["--version"]:  # the cheapest answer: no parser, no command modules
        print(f"inaplanner {__version__}")
        return 0
    parser = build_parser()
    flags_only = {"-h", "--help", "--version"}
    if not _words(args_list) and not flags_only & set(args_list):
        args_list = ["gui", *args_list]  # no command: open the planner on the sample
    args = parser.parse_args(args_list)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    configure_logging(log_level(args))
    try:
        return int(args.func(args) or 0)
    except Cancelled:
        print("inaplanner: cancelled", file=sys.stderr)
        return 130
    except InaplannerError as exc:
        if args.debug:
            raise
        print(f"inaplanner: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("inaplanner: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `inaplanner ... | head`: the reader left; say nothing, as cat does
        import os

        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except OSError:
            pass
        return 141
    except OSError as exc:
        if args.debug:
            raise
        print(f"inaplanner: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
