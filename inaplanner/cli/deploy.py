"""``inaplanner deploy`` and ``inaplanner testbed emulate``."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from pathlib import Path

from inaplanner.errors import InaplannerError


def register(subparsers: argparse._SubParsersAction) -> None:
    d = subparsers.add_parser(
        "deploy",
        help="install a plan on a testbed: build over SSH, P4Runtime install, verify, rollback",
        description="Deploy PLAN onto the switches and workers listed in the testbed file: build "
        "the P4 program on each switch's build host over SSH, check its P4Info against the "
        "contract, push the pipeline, write only the entries that differ, read them back; push "
        "each worker's configuration. Any failure rolls every switch back to what it had; so do "
        "Ctrl-C, SIGTERM and SIGHUP. Before the first write a journal is written beside the "
        "testbed file; if the deployment is killed, 'inaplanner deploy --recover --testbed TOML "
        "[--to old|new]' puts every switch on one plan. "
        "Unknown SSH host keys are refused: add them with 'inaplanner testbed trust'.",
    )
    d.add_argument("plan", metavar="PLAN", nargs="?", help="plan file (JSON)")
    d.add_argument("--testbed", "-t", required=True, metavar="TOML", help="testbed.toml")
    d.add_argument("--scenario", "-s", metavar="S",
                   help="scenario file (default: the one the plan names or whose hash it carries, "
                   "in the plan's folder)")
    d.add_argument("--dry-run", action="store_true",
                   help="show what would change on each switch; change nothing")
    d.add_argument("--log", metavar="FILE", help="append a detailed log to FILE")
    d.add_argument("--batch", type=int, default=500, metavar="N", help="updates per WriteRequest")
    d.add_argument("--parallel", type=int, default=8, metavar="N", help="switches at once")
    d.add_argument("--quiet", "-q", action="store_true", help="print only the final report")
    d.verbose_help = ("besides the progress bar and the failures, every step of every switch on "
                      "stderr, and more log output (-v: info, -vv: debug)")
    d.add_argument("--all", action="store_true", dest="list_all",
                   help="list every switch and host in the report (and, with --dry-run, every "
                   "change); by default 20 of each, failures first, and the rest counted")
    d.add_argument("--recover", action="store_true",
                   help="finish a deployment that was killed: drive every switch in the testbed's "
                   "deploy journal to one plan (no PLAN needed)")
    d.add_argument("--to", choices=("old", "new"), default="old",
                   help="with --recover: roll back to the old plan (default) or complete the new")
    d.set_defaults(func=run_deploy)

    en = subparsers.add_parser(
        "entries",
        help="print the table entries, multicast groups and worker configs a plan needs",
        description="Show what 'deploy' would install for PLAN: per switch its P4Runtime "
        "entities (by name), per worker its configuration. With --testbed, front-panel ports "
        "and the switch list come from the testbed file.",
    )
    en.add_argument("plan", metavar="PLAN")
    en.add_argument("--scenario", "-s", metavar="S", help="scenario file (as for deploy)")
    en.add_argument("--testbed", "-t", metavar="TOML", help="testbed.toml (optional)")
    en.add_argument("--json", action="store_true", help="JSON instead of text")
    en.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    en.set_defaults(func=run_entries)

    tb = subparsers.add_parser("testbed", help="testbed helpers: emulate switches, trust host keys")
    tsub = tb.add_subparsers(dest="testbed_command", metavar="COMMAND", required=True)
    em = tsub.add_parser(
        "emulate",
        help="run emulated P4Runtime switches for a scenario and write the matching testbed.toml",
        description="Start one emulated P4Runtime switch per programmable switch of SCENARIO on "
        "127.0.0.1 and write a testbed file for them (worker configurations go to workers/ "
        "beside it). Runs until Ctrl-C.",
    )
    em.add_argument("scenario", metavar="SCENARIO")
    em.add_argument("-o", "--output", default="testbed.toml", metavar="TOML")
    em.add_argument("--base-port", type=int, default=0, metavar="PORT",
                    help="first listening port (default: free ports)")
    em.add_argument("--plan", metavar="PLAN",
                    help="deploy this plan on the emulated switches (all switches are emulated) and "
                    "make their port counters follow its link loads, so `inaplanner monitor` shows "
                    "traffic")
    em.add_argument("--noise", type=float, default=0.0, metavar="SHARE",
                    help="with --plan: random noise on the counted rates (e.g. 0.02)")
    em.add_argument("--tls-dir", metavar="DIR",
                    help="serve P4Runtime over mutual TLS: make a throw-away CA, server and client "
                    "certificates in DIR and name them in the testbed file")
    em.add_argument("--behaviour", choices=("strict", "bmv2"), default="strict",
                    help="how the emulated switches refuse: as the P4Runtime spec says (strict) "
                    "or as bmv2's simple_switch_grpc does (UNKNOWN codes, a rejected device "
                    "config leaves reads failing, a wrong device id fails at the push)")
    em.set_defaults(func=run_emulate)

    tr = tsub.add_parser(
        "trust",
        help="record a build host's or worker's SSH host key in the project's known_hosts",
        description="Fetch the SSH host key of each switch build host and worker host in the "
        "testbed file that is not yet known, show its fingerprint and, after you confirm (or "
        "with --yes), record it in the known_hosts file named by the testbed file.",
    )
    tr.add_argument("testbed", metavar="TOML")
    tr.add_argument("--yes", action="store_true", help="accept every shown key without asking")
    tr.add_argument("--replace-changed", action="store_true",
                    help="replace a recorded key that changed (after checking the new fingerprint "
                    "out of band); without it a changed key is refused with exit code 2")
    tr.set_defaults(func=run_trust)


def _load_inputs(args: argparse.Namespace, need_testbed: bool = True):
    from inaplanner.io.formats import load_any
    from inaplanner.io.native import load_plan, scenario_sha256
    from inaplanner.io.scenario_lookup import find_scenario
    from inaplanner.testbed.inventory import load_inventory

    plan = load_plan(args.plan)
    if args.scenario:
        scenario = load_any(args.scenario)
    else:
        scenario = find_scenario(plan, args.plan)
        if scenario is None:
            raise InaplannerError(
                f"{args.plan}: cannot tell which scenario this plan is for (no 'x-scenario' key "
                "and no scenario with its scenario_sha256 beside it); give --scenario FILE")
    if scenario_sha256(scenario) != plan.scenario_sha256:
        raise InaplannerError(
            f"{args.plan}: the plan was made for another scenario (scenario_sha256 differs); "
            "refusing to deploy it")
    inventory = load_inventory(args.testbed) if (need_testbed or args.testbed) else None
    return scenario, plan, inventory


def run_deploy(args: argparse.Namespace) -> int:
    if args.recover:
        return _run_recover(args)
    if not args.plan:
        raise InaplannerError("give PLAN (or --recover to finish a killed deployment)")
    from inaplanner.cli.progress import TerminalProgress, progress_mode
    from inaplanner.deploy.deployer import Deployer, DeployOptions
    from inaplanner.deploy.results import LISTED
    from inaplanner.progress import Progress, ProgressEvent

    scenario, plan, inventory = _load_inputs(args)
    # The run's overall progress (prepare, apply, workers, rollback: switches done of all) is one
    # bar on a terminal, a line a second otherwise; each switch's own steps are a row of the
    # GUI's board and of the --log file. On stderr, besides the bar: warnings and failures as they
    # happen, and with -v every step of every switch.
    progress = Progress()
    view = TerminalProgress(progress, sys.stderr, mode=progress_mode(args), label="deploy")
    every_step = bool(getattr(args, "verbose", 0))

    def show(p: ProgressEvent) -> None:
        if not p.node or p.state == "progress":
            return  # the overall progress is the bar's; a switch's write batches are its row's
        if p.state == "output":
            if every_step:
                view.say(f"  [{p.node}] | {p.message}")
        elif every_step or p.state == "failed":
            view.say(f"[{p.node}] {p.phase}: {p.state}" + (f" — {p.message}" if p.message else ""))
        elif p.state == "info" and p.message.startswith("warning"):
            view.say(f"[{p.node}] {p.message}")

    progress.subscribe(show)
    options = DeployOptions(dry_run=args.dry_run, batch_size=max(1, args.batch),
                            parallel=max(1, args.parallel),
                            log_path=Path(args.log) if args.log else None,
                            plan_label=str(args.plan))
    deployer = Deployer(scenario, plan, inventory, options, progress=progress)
    interrupts = [0]

    def say(text: str) -> None:
        view.say(text, always=True)

    def on_signal(signum: int) -> None:
        """SIGINT, SIGTERM, SIGHUP: the first cancels through the Progress's token and every
        switch written is rolled back; while that runs, further ones are ignored with a message,
        except a third Ctrl-C, which aborts and says which switch holds which plan (the deploy
        journal then allows --recover)."""
        name = signal.Signals(signum).name
        if not progress.cancelled:
            progress.cancel()
            say(f"inaplanner: {name}: cancelling; every switch written so far is rolled back "
                "to the old plan")
            return
        if signum != signal.SIGINT:
            say(f"inaplanner: {name} ignored: the rollback is running")
            return
        interrupts[0] += 1
        if interrupts[0] == 1:
            say("inaplanner: Ctrl-C ignored: the rollback is running and ends with every "
                "switch on the old plan; Ctrl-C once more aborts it and leaves them split")
            return
        say(f"inaplanner: aborted during the rollback: {deployer.plan_status()}; run "
            f"'inaplanner deploy --recover --testbed {args.testbed} [--to old|new]'")
        os._exit(130)

    restore = _on_signals((signal.SIGINT, signal.SIGTERM, signal.SIGHUP), on_signal)
    try:
        with view:
            report = deployer.run()
    finally:
        restore()
    print(report.text(details=args.dry_run, listed=None if args.list_all else LISTED))
    return 0 if report.ok else 1


def _run_recover(args: argparse.Namespace) -> int:
    from inaplanner.cli.progress import TerminalProgress, progress_mode
    from inaplanner.deploy.recover import recover
    from inaplanner.deploy.results import LISTED
    from inaplanner.progress import Progress
    from inaplanner.testbed.inventory import load_inventory

    inventory = load_inventory(args.testbed)
    progress = Progress()  # as a deployment's: one bar, failures above it, -v every switch
    view = TerminalProgress(progress, sys.stderr, mode=progress_mode(args), label="recover")
    every = bool(getattr(args, "verbose", 0))

    def say(text: str) -> None:
        if every or "FAILED" in text:
            view.say(text)

    # a recovery is idempotent: a signal only stops it; running it again finishes the job
    with view:
        report = recover(inventory, args.to, parallel=max(1, args.parallel), on_line=say,
                         progress=progress)
    print(report.text(listed=None if args.list_all else LISTED))
    return 0 if report.ok else 1


def run_entries(args: argparse.Namespace) -> int:
    from inaplanner.dataplane.entries import build_entities
    from inaplanner.io.atomic import atomic_write_text
    from inaplanner.testbed.inventory import check_against_scenario

    scenario, plan, inventory = _load_inputs(args, need_testbed=False)
    if inventory is not None:
        check_against_scenario(inventory, scenario)
    spec = build_entities(scenario, plan, inventory)
    text = spec.to_json() if args.json else spec.to_text()
    if args.output:
        atomic_write_text(args.output, text)
        print(f"wrote {args.output}")
    else:
        sys.stdout.write(text)
    return 0


def run_emulate(args: argparse.Namespace) -> int:
    """Start the emulators, deploy ``--plan`` on them, then serve until a signal.

    One handler for SIGINT, SIGTERM and SIGHUP covers every stage. While the switches start, it
    stops the start before the next switch; while the plan is deployed, it cancels the
    deployment, which rolls back what it wrote (a second Ctrl-C stops at once). Either way the
    emulators started are stopped and the exit code is 130 with a line saying where the run was.
    Once the switches serve, a signal is the way to stop them: exit code 0."""
    from inaplanner.cli.progress import TerminalProgress, progress_mode
    from inaplanner.deploy.emulated import emulated_switch_ids, start_emulated_testbed
    from inaplanner.errors import Cancelled
    from inaplanner.io.formats import load_any
    from inaplanner.io.native import load_plan
    from inaplanner.progress import Progress

    scenario = load_any(args.scenario)
    plan = load_plan(args.plan) if args.plan else None
    ids = [s.id for s in scenario.switches()] if plan is not None else None
    tls: dict = {}
    if args.tls_dir:
        from inaplanner.emulator.pki import make_pki

        pki = make_pki(Path(args.tls_dir))
        tls = {"server_tls": pki.server_tls(), "client_tls": pki.client_tls()}
    stage = ["starting the emulated switches"]
    stop = threading.Event()
    progress = Progress()  # the start, then the deployment: every switch of k=32 takes a minute

    def on_signal(signum: int) -> None:
        if stop.is_set() and stage[0].startswith("deploying"):
            raise KeyboardInterrupt  # the second: no rollback needed, the switches are stopped
        stop.set()
        progress.cancel()

    def check() -> None:
        if stop.is_set():
            raise Cancelled("interrupted")

    restore = _on_signals((signal.SIGINT, signal.SIGTERM, signal.SIGHUP), on_signal)
    tb = None
    try:
        n = len(ids if ids is not None else emulated_switch_ids(scenario))
        started = [0]

        def next_switch() -> None:
            check()
            progress.update(started[0] / max(n, 1), f"{started[0]}/{n} switches", phase="start")
            started[0] += 1

        with TerminalProgress(progress, sys.stderr, mode=progress_mode(args), label="emulate"):
            tb = start_emulated_testbed(scenario, args.output, base_port=args.base_port,
                                        switch_ids=ids, behaviour=args.behaviour,
                                        check=next_switch, **tls)
        check()
        if plan is not None:
            from inaplanner.deploy.deployer import deploy
            from inaplanner.monitor.drive import drive_plan

            stage[0] = f"deploying {args.plan}"
            progress = Progress()
            if stop.is_set():
                progress.cancel()
            with TerminalProgress(progress, sys.stderr, mode=progress_mode(args), label="deploy"):
                report = deploy(scenario, plan, tb.inventory, progress=progress)
            check()
            if not report.ok:
                raise InaplannerError("deploying the plan on the emulated switches failed:\n"
                                      + report.text(more=""))
            drive_plan(tb.handles, scenario, tb.inventory, plan, noise=args.noise)
            print(f"deployed {args.plan}; port counters follow its link loads")
        for sid, h in tb.handles.items():
            print(f"switch {sid}: P4Runtime on {h.address} (device id {h.device_id})")
        print(f"wrote {args.output}; deploy with: inaplanner deploy PLAN --testbed {args.output}")
        stage[0] = "running"
        print("running; Ctrl-C to stop", flush=True)
        while not stop.wait(3600):
            pass
    except (Cancelled, KeyboardInterrupt):
        if stage[0] != "running":  # a start interrupted has stopped what it started
            what = "those started are stopped" if tb is None else \
                "the deployment is cancelled and the emulated switches are stopped"
            _say(f"inaplanner: testbed emulate interrupted while {stage[0]}: {what}")
            _stop_and_exit(tb, 130)
    except BaseException:
        restore()
        if tb is not None:
            tb.stop(grace=0.2, timeout=0.5)
        raise
    _say("stopping")
    _stop_and_exit(tb, 0)
    return 0  # not reached


def _stop_and_exit(tb, code: int) -> None:
    """Stop the emulators and leave at once. Everything is stopped and nothing is left to save;
    the interpreter's own teardown (gRPC, protobuf, numpy modules) takes over a second on a
    loaded machine, and a stop within a second of Ctrl-C or SIGTERM is what scripts and tests
    rely on."""
    if tb is not None:
        tb.stop(grace=0.2, timeout=0.5)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def _say(text: str) -> None:
    """A line to stderr that never fails (the terminal may be gone after SIGHUP)."""
    try:
        print(text, file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


def _on_signals(signums, handler):
    """Call ``handler(signum)`` on each of ``signums`` (main thread only); returns a function
    that puts the previous handlers back."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = {}
    for signum in signums:
        previous[signum] = signal.signal(signum, lambda n, _frame: handler(n))

    def restore() -> None:
        for signum, old in previous.items():
            signal.signal(signum, old)

    return restore


def run_trust(args: argparse.Namespace) -> int:
    from inaplanner.deploy import ssh
    from inaplanner.testbed.inventory import load_inventory

    inv = load_inventory(args.testbed)
    if inv.known_hosts is None:
        raise InaplannerError(f"{args.testbed}: no known_hosts file is named")
    targets = [sw.ssh for sw in inv.switches.values() if sw.ssh is not None]
    targets += [h.ssh for h in inv.hosts.values() if h.ssh is not None]
    config = ssh.load_ssh_config()
    done: set[str] = set()
    recorded = 0
    changed: list[str] = []  # hosts whose key differs from the recorded one (issue 16, D18)
    for target in targets:
        rt = ssh.resolve_target(target, config)
        if rt.known_hosts_name in done:
            continue
        done.add(rt.known_hosts_name)
        replace = False
        try:
            with ssh.connect(rt, config=config):
                print(f"{rt.label}: {rt.known_hosts_name} already known")
                continue
        except ssh.HostKeyUnknown:
            pass
        except ssh.HostKeyMismatch:
            if not args.replace_changed:
                changed.append(rt.known_hosts_name)
                continue
            replace = True
        except ssh.AuthFailed:
            print(f"{rt.label}: {rt.known_hosts_name} host key already known (login refused: "
                  "check the key file)")
            continue
        except ssh.SSHError as exc:
            print(f"{exc}", file=sys.stderr)
            continue
        info = ssh.scan_host_key(rt, config)
        print(f"{rt.label}: {info.name} offers {info.key_type} key {info.fingerprint}"
              + (" (CHANGED: replaces the recorded key)" if replace else ""))
        if not args.yes:
            answer = input("  trust this key and record it? [y/N] ").strip().lower()
            if answer not in ("y", "yes"):
                print("  not recorded")
                continue
        ssh.record_host_key(inv.known_hosts, info, replace=replace)
        recorded += 1
        print(f"  recorded in {inv.known_hosts}")
    print(f"{recorded} key(s) recorded")
    if changed:
        raise InaplannerError(
            f"{args.testbed}: the host key of {', '.join(changed)} CHANGED since it was recorded "
            f"in {inv.known_hosts}; nothing recorded for it (the host was reinstalled, or someone "
            "is in between): check the new fingerprint out of band, then run 'inaplanner testbed "
            f"trust {args.testbed} --replace-changed'")
    return 0
