"""``inaplanner gui``: open the desktop planner (Qt is imported only when the command runs)."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "gui",
        help="open the desktop planner",
        description="Open the desktop planner on a scenario (default: the bundled sample), optionally "
        "painting a plan's loads over it. With --screenshot, render the window once to a PNG and exit.",
    )
    p.add_argument("scenario", nargs="?", default=None,
                   help='scenario file (.json, .graphml, .gml) or "sample" (the default)')
    p.add_argument("--plan", help="plan file whose evaluated loads are painted over the network")
    p.add_argument("--task", help='show only this task\'s flows, as "job/ps"')
    p.add_argument("--sweep", metavar="RESULTS",
                   help="a sweep result file (inaplanner sweep -o): its criticality overlay and table")
    p.add_argument("--open", action="append", default=[], metavar="GROUP",
                   help='open this pod, rack or plane and zoom to it (e.g. "pod 1"; repeatable)')
    p.add_argument("--replay", metavar="RECORDING",
                   help="monitor mode on a recording (inaplanner monitor --record)")
    p.add_argument("--screenshot", metavar="OUT.png", help="write a screenshot of the window and exit")
    p.add_argument("--size", default="1280x800", help="window size for the screenshot (default 1280x800)")
    p.add_argument("--theme", choices=("system", "light", "dark"), default="system", help="colours")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from inaplanner.gui.app import run

    return run(args.scenario, args.plan, args.screenshot, args.size, args.theme, args.task,
               sweep=args.sweep, open_groups=args.open, replay=args.replay)
