"""``inaplanner monitor``: a live table of the most loaded links, recording and replay."""

from __future__ import annotations

import argparse
import queue
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from inaplanner.deploy.results import LISTED
from inaplanner.errors import InaplannerError
from inaplanner.views.fmt import names

if TYPE_CHECKING:  # numpy and inaplanner.monitor are imported in the handlers (start-up time)
    import numpy as np

    from inaplanner.monitor.alerts import AlertRule
    from inaplanner.monitor.series import Snapshot

CLEAR = "\x1b[H\x1b[2J"
EMULATED_WINDOW = 2.0


def register(subparsers: argparse._SubParsersAction) -> None:
    m = subparsers.add_parser(
        "monitor",
        help="watch the load of a deployed testbed: live table of the most loaded links",
        description="Poll every switch of the testbed over P4Runtime (per-port counters) and show "
        "the most loaded links, against the plan when one is given. --record keeps the run in a "
        "CSV or SQLite file, --replay shows a recorded run. --emulate starts emulated switches, "
        "deploys PLAN on them and makes their counters follow its rates, to try monitoring "
        "without hardware.",
    )
    m.add_argument("--testbed", "-t", metavar="TOML", help="testbed.toml of the switches to poll")
    m.add_argument("--plan", "-p", metavar="PLAN", help="the deployed plan: compare with it")
    m.add_argument("--scenario", "-s", metavar="S",
                   help="scenario file (default: the one the plan names or whose hash it carries)")
    m.add_argument("--replay", metavar="FILE", help="show a recorded run instead of polling")
    m.add_argument("--record", metavar="FILE", help="record the run (.csv, or .sqlite/.db)")
    m.add_argument("--interval", type=float, default=1.0, metavar="S",
                   help="seconds between polls (default 1)")
    m.add_argument("--window", type=float, metavar="S",
                   help="average each rate over about S seconds (default: the last interval; "
                   f"with --emulate {EMULATED_WINDOW:g} s, as the emulated switches share this "
                   "process and their reading times jitter more)")
    m.add_argument("--duration", type=float, metavar="S", help="stop after S seconds")
    m.add_argument("--top", type=int, default=10, metavar="N", help="links shown (default 10)")
    m.add_argument("--threshold", type=float, default=0.9, metavar="SHARE",
                   help="alert when a link stays above this share of capacity (default 0.9)")
    m.add_argument("--deviation", type=float, default=0.2, metavar="SHARE",
                   help="alert when a link deviates from the plan by more (default 0.2)")
    m.add_argument("--hold", type=float, default=3.0, metavar="S",
                   help="how long a condition must last to alert (default 3 s)")
    m.add_argument("--emulate", action="store_true",
                   help="start emulated switches for the scenario, deploy PLAN, drive counters")
    m.add_argument("--noise", type=float, default=0.0, metavar="SHARE",
                   help="with --emulate: random noise on the counters, in [0, 1)")
    m.add_argument("--hot", action="append", default=[], metavar="SRC->DST=F",
                   help="with --emulate: multiply a link's rate by F (A-B=F for both directions)")
    m.add_argument("--speed", type=float, default=1.0, metavar="X",
                   help="with --replay: playback speed (0 = no pauses)")
    m.add_argument("--plain", action="store_true", help="never clear the screen between frames")
    m.set_defaults(func=run_monitor)


def _scenario_and_plan(args: argparse.Namespace, need_scenario: bool):
    from inaplanner.io.formats import load_any
    from inaplanner.io.native import load_plan
    from inaplanner.io.scenario_lookup import find_scenario

    plan = load_plan(args.plan) if args.plan else None
    scenario = load_any(args.scenario) if args.scenario else None
    if scenario is None and plan is not None:
        scenario = find_scenario(plan, args.plan)
    if scenario is None and need_scenario:
        raise InaplannerError("monitoring needs the scenario: give --scenario FILE (or a --plan "
                              "whose scenario lies beside it)")
    return scenario, plan


class _Screen:
    def __init__(self, plain: bool) -> None:
        self.ansi = not plain and sys.stdout.isatty()

    def show(self, text: str) -> None:
        if self.ansi:
            sys.stdout.write(CLEAR + text + "\n")
        else:
            sys.stdout.write(text + "\n\n")
        sys.stdout.flush()


READING = "reading the scenario and the plan"


def run_monitor(args: argparse.Namespace) -> int:
    if not args.interval > 0:
        raise InaplannerError("--interval must be > 0")
    if args.replay:
        return _replay(args)
    stage = [READING]  # what a Ctrl+C before the first poll stops
    try:
        return _monitor(args, stage)
    except KeyboardInterrupt:
        if stage[0] == "polling":  # (the poll loop's own Ctrl+C ends in its summary)
            raise
        # setting up takes minutes at fat-tree k=64 (emulating and deploying 5,120 switches):
        # say what was stopped rather than a bare "interrupted"; what was started is stopped
        started = args.emulate and stage[0] != READING
        print(f"inaplanner: monitor interrupted while {stage[0]}, before its first poll: "
              "nothing was polled" + ("; the emulated switches started are stopped"
                                      if started else ""), file=sys.stderr)
        return 130


def _monitor(args: argparse.Namespace, stage: list[str]) -> int:
    """The live monitor; ``stage[0]`` says what it is doing until the polls start."""
    if args.emulate:
        if not args.plan:
            raise InaplannerError("--emulate needs --plan (the plan the emulated switches follow)")
    elif not args.testbed:
        raise InaplannerError("give --testbed TOML (or --replay FILE, or --emulate --plan PLAN)")
    scenario, plan = _scenario_and_plan(args, need_scenario=True)
    planned = None
    if plan is not None:
        from inaplanner.monitor.series import planned_loads

        planned = planned_loads(scenario, plan)
    if args.emulate:
        with tempfile.TemporaryDirectory(prefix="inaplanner-emulated-") as tmp:
            tb = _start_emulated(args, scenario, plan, Path(tmp), stage)
            try:
                return _live(args, scenario, tb.inventory, planned, stage)
            finally:
                tb.stop()
    from inaplanner.deploy.journal import refuse_if_unfinished
    from inaplanner.testbed.inventory import check_against_scenario, load_inventory

    stage[0] = "reading the testbed file"
    inventory = load_inventory(args.testbed)
    refuse_if_unfinished(args.testbed, "monitor")  # switches left between plans by a killed deploy
    check_against_scenario(inventory, scenario)
    return _live(args, scenario, inventory, planned, stage)


def _start_emulated(args, scenario, plan, directory: Path, stage: list[str]):
    from inaplanner.deploy.deployer import deploy
    from inaplanner.deploy.emulated import start_emulated_testbed
    from inaplanner.monitor.drive import drive_plan, parse_hot

    hot = parse_hot(args.hot, scenario)
    if hot:
        from inaplanner.monitor.series import planned_loads

        planned = planned_loads(scenario, plan)
        for (li, d), _factor in sorted(hot.items()):
            if planned[li, d] <= 1e-9:
                lk = scenario.links[li]
                src, dst = (lk.a, lk.b) if d == 0 else (lk.b, lk.a)
                print(f"inaplanner: note: --hot {src}->{dst}: the plan sends nothing over this "
                      "link, so a factor on it changes nothing", file=sys.stderr)
    if not 0.0 <= args.noise < 1.0:
        raise InaplannerError("--noise must be in [0, 1)")
    ids = [s.id for s in scenario.switches()]
    stage[0] = f"starting {len(ids)} emulated switches"
    tb = start_emulated_testbed(scenario, directory / "testbed.toml", switch_ids=ids)
    try:
        stage[0] = f"deploying the plan on the {len(ids)} emulated switches"
        report = deploy(scenario, plan, tb.inventory)
        if not report.ok:
            raise InaplannerError("deploying the plan on the emulated switches failed:\n"
                                  + report.text())
        drive_plan(tb.handles, scenario, tb.inventory, plan, noise=args.noise, hot=hot)
    except BaseException:
        tb.stop()
        raise
    print(f"emulated {len(tb.handles)} switches on 127.0.0.1; plan deployed; counters follow "
          "its rates" + (f" (noise {args.noise:g})" if args.noise else "")
          + (f"; hot: {', '.join(args.hot)}" if args.hot else ""), file=sys.stderr)
    return tb


def reset_line(switches, args: argparse.Namespace) -> str:
    """One line naming the switches that came back blank, with the command that redeploys."""
    plan = args.plan or "PLAN"
    return (f"reset (no pipeline; restarted blank): {names(list(switches))}; redeploy with: "
            f"inaplanner deploy {plan} --testbed {args.testbed or 'TESTBED'}")


def pace(times: list[float], interval: float, switches: int) -> str | None:
    """A warning when the polls come further apart than ``interval`` (the last few, lower median
    gap over 1.5 intervals): a poll of every switch takes longer than the interval asked for, so
    each rate covers more time than the user expects. None while the pace holds. The first
    poll is left out: it opens every switch's session and fetches its P4Info (7 s of the first
    poll at fat-tree k=32 against 3.5 s for the next ones)."""
    recent = times[1:][-6:]
    gaps = sorted(b - a for a, b in zip(recent, recent[1:], strict=False))
    if len(gaps) < 2:
        return None
    typical = gaps[(len(gaps) - 1) // 2]
    if typical <= 1.5 * interval:
        return None
    return (f"a poll of the {switches} switches takes about {typical:.1f} s, longer than "
            f"--interval {interval:g} s: polls follow each other as they finish, and each rate "
            "covers that long")


def steady_pace(times: list[float]) -> float:
    """Seconds from one poll to the next, the first poll (which opens the sessions) left out
    when there are later ones to go by."""
    kept = times[1:] if len(times) > 2 else times
    return (kept[-1] - kept[0]) / (len(kept) - 1)


def _rule(args: argparse.Namespace) -> AlertRule:
    from inaplanner.monitor.alerts import AlertRule

    try:
        return AlertRule(threshold=args.threshold, deviation=args.deviation, hold_s=args.hold)
    except ValueError as exc:
        raise InaplannerError(str(exc)) from None


def _live(args, scenario, inventory, planned: np.ndarray | None, stage: list[str]) -> int:
    import numpy as np

    from inaplanner.io.native import scenario_sha256
    from inaplanner.monitor.alerts import AlertTracker
    from inaplanner.monitor.poller import Poller
    from inaplanner.monitor.recording import open_recorder
    from inaplanner.monitor.table import render_table

    window = args.window if args.window is not None else (EMULATED_WINDOW if args.emulate else 0.0)
    if window < 0:
        raise InaplannerError("--window must be >= 0")
    stage[0] = f"opening the poller of {len(inventory.switches)} switches"
    poller = Poller(scenario, inventory, interval=args.interval, window=window)
    for w in poller.warnings:
        print(f"inaplanner: warning: {w}", file=sys.stderr)
    links = poller.link_infos()
    recorder = None
    if args.record:
        meta = {"scenario": scenario.name, "scenario_sha256": scenario_sha256(scenario),
                "interval": args.interval, "window": window, "started": time.time()}
        recorder = open_recorder(args.record, meta, links)
        poller.recorder = recorder
    capacity = np.array([lk.capacity for lk in scenario.links], dtype=float)
    tracker = AlertTracker(_rule(args), capacity, planned, {k: v.name for k, v in links.items()})
    snaps: queue.Queue[Snapshot] = queue.Queue()
    poller.add_listener(snaps.put)
    screen = _Screen(args.plain)
    alerts_seen = 0
    polls = 0
    times: list[float] = []
    paced = False
    deadline = time.monotonic() + args.duration if args.duration else None
    try:
        stage[0] = "polling"  # a Ctrl+C from here on ends in the summary
        poller.start()
        while deadline is None or time.monotonic() < deadline:
            try:
                snap = snaps.get(timeout=0.25)
            except queue.Empty:
                continue
            polls += 1
            times.append(snap.t)
            note = None if paced else pace(times, args.interval, len(poller.readers))
            if note is not None:
                paced = True
                print(f"inaplanner: warning: {note}", file=sys.stderr)
            new = tracker.update(snap)
            alerts_seen += len(new)
            text = render_table(snap, links, planned, args.top, list(tracker.active.values()),
                                title="inaplanner monitor", listing=names, capacity=capacity)
            if snap.reset:
                text += "\n" + reset_line(snap.reset, args)
            screen.show(text)
    except KeyboardInterrupt:
        pass
    finally:
        poller.stop()
        if recorder is not None:
            recorder.close()
    health = poller.health()
    bad = [h for h in health.values() if h.state != "ok"]
    every = f"; a poll every {steady_pace(times):.1f} s" if len(times) > 1 else ""
    print(f"{polls} polls of {len(health)} switches; {alerts_seen} alerts{every}"
          + (f"; not answering at the end: {names([h.switch for h in bad])}" if bad else "")
          + (f"; recorded to {args.record}" if args.record else ""), file=sys.stderr)
    for h in bad[:LISTED]:  # a line each for the first 20, the rest counted
        print(f"  {h.switch} ({h.address}): {h.last_error}", file=sys.stderr)
    if len(bad) > LISTED:
        print(f"  ... and {len(bad) - LISTED} more", file=sys.stderr)
    reset = [h.switch for h in bad if h.state == "reset"]
    if reset and not args.emulate:
        print(f"  {reset_line(reset, args)}", file=sys.stderr)
    return 0


def _replay(args: argparse.Namespace) -> int:
    import numpy as np

    from inaplanner.cli.progress import cli_progress
    from inaplanner.io.native import scenario_sha256
    from inaplanner.monitor.alerts import AlertTracker
    from inaplanner.monitor.recording import LinkInfo, load_recording
    from inaplanner.monitor.table import render_table

    with cli_progress(args, "replay") as progress:  # (about 1 s a poll at fat-tree k=64)
        rec = load_recording(args.replay, progress)
    scenario, plan = _scenario_and_plan(args, need_scenario=False)
    planned = None
    if plan is not None and scenario is not None:
        from inaplanner.monitor.series import planned_loads

        if rec.meta.get("scenario_sha256") not in (None, scenario_sha256(scenario)):
            print("inaplanner: warning: the recording was made on another version of the "
                  "scenario", file=sys.stderr)
        planned = planned_loads(scenario, plan)
    links: dict[tuple[int, int], LinkInfo] = dict(rec.links)
    n_links = 1 + max((k[0] for k in links), default=-1)
    capacity = np.zeros(n_links)
    for (li, _d), info in links.items():
        capacity[li] = info.capacity
    if planned is not None and planned.shape[0] != n_links:
        planned = None
    tracker = AlertTracker(_rule(args), capacity, planned, {k: v.name for k, v in links.items()})
    screen = _Screen(args.plain)
    prev_t = None
    title = f"replay of {args.replay}"
    try:
        for snap in rec.snapshots:
            if prev_t is not None and args.speed > 0:
                time.sleep(max(0.0, (snap.t - prev_t) / args.speed))
            prev_t = snap.t
            tracker.update(snap)
            screen.show(render_table(snap, links, planned, args.top,
                                     list(tracker.active.values()), title=title, listing=names))
    except KeyboardInterrupt:
        pass
    print(f"{len(rec.snapshots)} polls replayed", file=sys.stderr)
    return 0
