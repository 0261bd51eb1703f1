"""One-click deployment of a plan onto a testbed: build, check, install, verify — or roll back.

Per switch, in two phases:

* **prepare** (changes no switch): SSH to the build host, upload ``p4/``, run the build under a
  deadline, fetch the P4Info and device config (or take local artifacts when the switch has no
  build host); check the P4Info against the contract (:mod:`inaplanner.deploy.p4info_check`);
  become primary over P4Runtime; snapshot what the switch runs and holds (pipeline config and
  every entity the deployment may touch).
* **apply**: push the pipeline (VERIFY_AND_COMMIT) unless the switch already runs the same one
  (same cookie); diff what it holds against what the plan needs; write only the difference in
  batches; read back and compare.

Then every worker gets its configuration file (atomic write over SFTP, or a local file).

Any failure or a cancel, on any switch or worker, rolls *every* switch touched back to its
snapshot (pipeline config, then entities, then a read-back check) and restores every worker file
written. A dry run does only the read-only part of prepare (no build, no arbitration) and reports
the diff against what each switch holds now.

Progress goes through the one protocol, :mod:`inaplanner.progress`: a :class:`Progress` (or a
listener of its events) gets one :class:`ProgressEvent` per switch and step (``node``, ``phase``
= the step, ``state``), possibly from worker threads (a GUI must hand it to its own thread);
``cancel`` (a :class:`CancelToken`, or any ``() -> bool``; default: the Progress's token) is
polled between steps and batches.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, is_dataclass
from pathlib import Path
from typing import Any

import paramiko
from google.protobuf import text_format
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from inaplanner import P4_DIR
from inaplanner.deploy import ssh as sshmod
from inaplanner.deploy.device_config import (
    check_device_config,
    config_cookie,
    pack_tofino_config,
)
from inaplanner.deploy.journal import Journal, journal_path_for, refuse_if_unfinished
from inaplanner.deploy.p4info_check import P4InfoMismatch, check_p4info, translate_entity
from inaplanner.deploy.p4rt import (
    DEFAULT_BATCH,
    P4RTSession,
    PipelineRejected,
    ReadFailed,
    describe_entity,
)
from inaplanner.deploy.results import (
    DeployError,
    DeployReport,
    HostResult,
    SwitchResult,
)
from inaplanner.deploy.state import (
    StateDiff,
    describe_differences,
    diff_state,
    index_entities,
    is_default_entry,
)
from inaplanner.errors import Cancelled, InaplannerError
from inaplanner.fdlimit import ensure_open_files
from inaplanner.progress import CancelToken, Progress, ProgressEvent, Tally
from inaplanner.testbed.inventory import (
    HostInventory,
    Inventory,
    SwitchInventory,
    check_against_scenario,
    check_transport,
)

CONTRACT_P4INFO = P4_DIR / "ina_v1model.p4info.txtpb"

#: Steps, in order, as reported to the progress callback.
STEPS = ("build", "p4info", "connect", "snapshot", "pipeline", "write", "verify", "rollback")
P4_SOURCE_SUFFIXES = (".p4", ".p4info.txtpb", ".h", ".sh")


#: where a deploy reports: the one :class:`Progress`, or a listener of its events
ProgressCallback = Progress | Callable[[ProgressEvent], None]


@dataclass
class DeployOptions:
    dry_run: bool = False
    batch_size: int = DEFAULT_BATCH
    parallel: int = 8  # switches prepared / applied at once
    p4_dir: Path = P4_DIR
    contract_p4info: Path = CONTRACT_P4INFO
    log_path: Path | None = None
    ssh_config: paramiko.SSHConfig | None = None  # None: ~/.ssh/config
    use_system_known_hosts: bool = True
    rpc_timeout: float = 30.0
    #: the deploy journal (see :mod:`inaplanner.deploy.journal`): None = beside the testbed file
    #: (no journal when the inventory has no file); False = none at all
    journal_path: Path | None | bool = None
    plan_label: str = ""  # what the journal calls the plan (e.g. its file)


# ---------------------------------------------------------------------------------------------
# what the plan needs


@dataclass
class Desired:
    """Per switch: P4Runtime entities (contract ids, deterministic order); per host: file bytes."""

    switches: dict[str, list[p4runtime_pb2.Entity]]
    hosts: dict[str, bytes]
    warnings: list[str] = field(default_factory=list)


def config_bytes(cfg: Any) -> bytes:
    """A worker configuration as file bytes (JSON for structured values)."""
    if isinstance(cfg, bytes):
        return cfg
    if isinstance(cfg, str):
        return cfg.encode("utf-8")
    for attr in ("to_json", "dumps"):
        fn = getattr(cfg, attr, None)
        if callable(fn):
            out = fn()
            return out.encode("utf-8") if isinstance(out, str) else out
    for attr in ("to_dict", "as_dict"):
        fn = getattr(cfg, attr, None)
        if callable(fn):
            cfg = fn()
            break
    if is_dataclass(cfg) and not isinstance(cfg, type):
        cfg = asdict(cfg)
    return (json.dumps(cfg, indent=2, sort_keys=True) + "\n").encode("utf-8")


def desired_from_spec(spec: Any) -> Desired:
    """What :func:`inaplanner.dataplane.entries.build_entities`' DeploymentSpec asks for."""
    return Desired(
        switches={sid: list(sw.entities) for sid, sw in spec.switches.items()},
        hosts={hid: config_bytes(cfg) for hid, cfg in spec.workers.items()},
        warnings=list(getattr(spec, "warnings", [])),
    )


# ---------------------------------------------------------------------------------------------
# the run


class _Log:
    """Thread-safe timestamped log lines to a file (optional) and the progress callback."""

    def __init__(self, path: Path | None, progress: ProgressCallback | None) -> None:
        self.lock = threading.Lock()
        if isinstance(progress, Progress):
            self.progress = progress
        else:
            self.progress = Progress()
            if progress is not None:
                self.progress.subscribe(progress)
        self.fh = open(path, "a", encoding="utf-8") if path else None  # noqa: SIM115
        self.t0 = time.monotonic()

    def write(self, text: str) -> None:
        if self.fh is None:
            return
        stamp = time.strftime("%Y-%m-%d %H:%M:%S")
        with self.lock:
            for line in text.splitlines() or [""]:
                self.fh.write(f"{stamp} {line}\n")
            self.fh.flush()

    def event(self, node: str, step: str, state: str, message: str = "",
              fraction: float | None = None) -> None:
        self.write(f"[{node}] {step} {state}" + (f": {message}" if message else ""))
        try:
            self.progress.update(fraction, message, phase=step, node=node, state=state)
        except Exception as exc:  # noqa: BLE001 - a broken listener must not break the run
            self.write(f"progress callback failed: {exc!r}")

    def close(self) -> None:
        if self.fh is not None:
            self.fh.close()
            self.fh = None


@dataclass
class _Artifacts:
    p4info: p4info_pb2.P4Info
    device_config: bytes


@dataclass
class _SwitchRun:
    inv: SwitchInventory
    wanted: list[p4runtime_pb2.Entity]
    result: SwitchResult
    session: P4RTSession | None = None
    config: p4runtime_pb2.ForwardingPipelineConfig | None = None
    ids: dict[int, int] = field(default_factory=dict)
    same_pipeline: bool = False
    original_pipeline: p4runtime_pb2.ForwardingPipelineConfig | None = None
    original_entities: list[p4runtime_pb2.Entity] = field(default_factory=list)
    default_tables: list[int] = field(default_factory=list)
    touched: bool = False
    failed_state: bool = False  # a rejected commit left the switch unable to answer reads


class Deployer:
    """Runs one deployment. Use :func:`deploy` unless you need the object."""

    def __init__(self, scenario: Any, plan: Any, inventory: Inventory,
                 options: DeployOptions | None = None, progress: ProgressCallback | None = None,
                 cancel: CancelToken | Callable[[], bool] | None = None,
                 desired: Desired | None = None) -> None:
        self.scenario = scenario
        self.plan = plan
        self.inv = inventory
        self.opt = options or DeployOptions()
        if cancel is None and isinstance(progress, Progress):
            cancel = progress.token
        self._cancel_flag = cancel
        self._abort = threading.Event()  # set on the first failure: other switches stop early
        self.log = _Log(self.opt.log_path, progress)
        self._desired = desired
        self._ssh_config = self.opt.ssh_config
        self._build_lock = threading.Lock()
        self._builds: dict[tuple, tuple[threading.Event, list]] = {}
        self._saved_hosts: dict[str, bytes | None] = {}
        self.journal: Journal | None = None
        self._runs: dict[str, _SwitchRun] = {}

    # ---- helpers -------------------------------------------------------------------------------

    def cancelled(self) -> bool:
        flag = self._cancel_flag
        if flag is None:
            return False
        return bool(flag())

    def _stop_requested(self) -> bool:
        return self.cancelled() or self._abort.is_set()

    def _check(self, node: str, step: str) -> None:
        if self.cancelled():
            raise Cancelled(f"{node}: cancelled before {step}")
        if self._abort.is_set():
            raise _Aborted()

    # ---- journal -------------------------------------------------------------------------------

    def _journal_file(self) -> Path | None:
        jp = self.opt.journal_path
        if jp is False:
            return None
        if jp is None or jp is True:
            return journal_path_for(self.inv.source)
        return Path(jp)

    def _open_journal(self, runs: dict[str, _SwitchRun], desired: Desired) -> None:
        """Write the journal before the first write to any switch (prepare is over)."""
        path = self._journal_file()
        if path is None:
            return
        switches = [dict(id=sid, address=r.inv.p4runtime, device_id=r.inv.device_id,
                         old_config="same" if r.same_pipeline else r.original_pipeline,
                         new_config=r.config, old=r.original_entities, new=r.wanted,
                         default_tables=r.default_tables) for sid, r in runs.items()]
        hosts = [dict(id=hid, path=h.config_path, remote=h.ssh is not None, new=data)
                 for hid, data in desired.hosts.items()
                 if (h := self._host_inv(hid)) is not None]
        self.journal = Journal.create(path, self.inv.source, self.opt.plan_label, switches, hosts)
        self.log.write(f"journal written: {path}")

    def _jmark(self, sid: str, state: str, message: str = "") -> None:
        if self.journal is not None:
            self.journal.mark(sid, state, message)

    def _close_journal(self, runs: dict[str, _SwitchRun], report: DeployReport) -> None:
        """Delete the journal when every switch holds one plan; else keep it and say how to
        recover. After a successful deployment, record what each switch now runs."""
        j = self.journal
        if report.ok and not self.opt.dry_run and self._journal_file() is not None:
            from inaplanner.deploy.journal import write_deployed

            write_deployed(self.inv.source, {sid: (r.config.cookie.cookie if r.config else None)
                                             for sid, r in runs.items()})
        if j is None:
            return
        split = [sid for sid, r in runs.items()
                 if r.touched and r.result.status not in ("deployed", "rolled back")]
        if report.ok or not split:
            j.finish()
            self.journal = None
            return
        report.ok = False
        note = (f"switches left between plans ({j.summary()}); journal {j.path}; run "
                f"'inaplanner deploy --recover --testbed {self.inv.source} [--to old|new]'")
        report.warnings.append(note)
        self.log.write(note)

    def _warn_no_pipeline(self, r: _SwitchRun) -> str:
        """A switch without a pipeline that the last deployment left with one: the device_id
        may be wrong (bmv2 answers reads for an unknown device with "no pipeline")."""
        from inaplanner.deploy.journal import read_deployed

        if self._journal_file() is None or r.inv.id not in read_deployed(self.inv.source):
            return ""
        note = (f"switch {r.inv.id} reports no pipeline but the last deployment installed one: "
                f"device_id {r.inv.device_id} in {self.inv.source} may be wrong (or the switch "
                "was restarted)")
        self.log.event(r.inv.id, "snapshot", "info", f"warning: {note}")
        report = getattr(self, "_report", None)
        if report is not None and note not in report.warnings:
            report.warnings.append(note)
        return note

    def plan_status(self) -> str:
        """One line: which switches hold which plan now (for an abort message)."""
        if self.journal is None:
            return "no switch was written yet: every switch holds the old plan"
        return self.journal.summary()

    def _ssh_cfg(self) -> paramiko.SSHConfig:
        if self._ssh_config is None:
            self._ssh_config = sshmod.load_ssh_config()
        return self._ssh_config

    def _connect_ssh(self, target: Any) -> sshmod.Session:
        return sshmod.connect(target, config=self._ssh_cfg(),
                              use_system_known_hosts=self.opt.use_system_known_hosts)

    def desired(self) -> Desired:
        if self._desired is None:
            from inaplanner.dataplane.entries import build_entities

            self._desired = desired_from_spec(build_entities(self.scenario, self.plan, self.inv))
        return self._desired

    def _contract(self) -> p4info_pb2.P4Info:
        from inaplanner.dataplane.p4info import parse_p4info_text

        try:
            text = self.opt.contract_p4info.read_text(encoding="utf-8")
        except OSError as exc:
            raise InaplannerError(f"{self.opt.contract_p4info}: cannot read the P4Info contract: "
                                  f"{exc.strerror}") from None
        return parse_p4info_text(text, str(self.opt.contract_p4info))

    # ---- entry point ---------------------------------------------------------------------------

    def run(self) -> DeployReport:
        t0 = time.monotonic()
        self.log.write(f"deploy{' (dry run)' if self.opt.dry_run else ''}: testbed "
                      f"{self.inv.source}")
        try:
            jpath = self._journal_file()
            if jpath is not None:
                refuse_if_unfinished(self.inv.source, path=jpath)
            check_against_scenario(self.inv, self.scenario)
            desired = self.desired()
            check_against_scenario(self.inv, self.scenario, required=set(desired.switches))
            transport_warnings = check_transport(self.inv, set(desired.switches))
            if not self.opt.dry_run:  # a session (a connection) to every switch until the end
                ensure_open_files(len(desired.switches),
                                  f"deploying {len(desired.switches)} switches")
            contract = self._contract()
        except BaseException as exc:
            self.log.write(f"refused: {exc}")
            self.log.close()
            raise
        runs = {sid: _SwitchRun(self.inv.switch(sid), ents, SwitchResult(sid, "not touched"))
                for sid, ents in desired.switches.items()}
        self._runs = runs
        hosts = {hid: HostResult(hid, "not touched",
                                 self.inv.hosts[hid].config_path if hid in self.inv.hosts else "")
                 for hid in desired.hosts}
        report = DeployReport(True, self.opt.dry_run, {s: r.result for s, r in runs.items()}, hosts,
                              log_path=str(self.opt.log_path or ""))
        report.warnings = list(desired.warnings) + transport_warnings
        self._report = report
        for w in report.warnings:
            self.log.event("plan", "entries", "info", f"warning: {w}")
        try:
            progress = self.log.progress
            if self.opt.dry_run:
                self._each(list(runs.values()), lambda r: self._dry_run_switch(r, contract),
                           Tally(progress, "dry run", "switches"))
                self._dry_run_hosts(desired, hosts)
            else:
                # the overall bar: switches prepared, then switches applied, then worker files
                # (a stage's share of the bar is about its share of the time on the emulated
                # fat-trees; a worker file is one small write)
                share = 0.45 if desired.hosts else 0.5
                self._each(list(runs.values()), lambda r: self._prepare(r, contract),
                           Tally(progress.span(0.0, share), "prepare", "switches"))
                self._open_journal(runs, desired)
                self._each(list(runs.values()), self._apply,
                           Tally(progress.span(share, 2 * share), "apply", "switches"))
                self._each(list(desired.hosts.items()),
                           lambda item: self._push_host(item[0], item[1], hosts[item[0]]),
                           Tally(progress.span(2 * share, 1.0), "workers", "worker files"))
        except BaseException as exc:  # noqa: BLE001 - roll back on anything, then report/raise
            report.ok = False
            report.error = _first_error(exc)
            if not self.opt.dry_run:
                self._rollback_all(runs, hosts)
            if not isinstance(exc, (InaplannerError, _Aborted, _StepFailed)):
                self._close(runs)
                self.log.write(f"unexpected error: {exc!r}")
                self.log.close()
                raise
        finally:
            self._close(runs)
            report.seconds = time.monotonic() - t0
            self._close_journal(runs, report)
        self.log.write(report.text(details=self.opt.dry_run, listed=None))
        self.log.close()
        return report

    def _each(self, items: list[Any], fn: Callable[[Any], None], stage: Tally) -> None:
        """Run ``fn`` for every item (switch run or host), ``parallel`` at a time; the first
        failure stops the rest (they stop at their next step or batch) and is raised after all
        have returned. ``stage`` counts the items that finished, for the overall progress."""
        errors: list[BaseException] = []
        lock = threading.Lock()
        stage.begin(len(items))

        def one(r: Any) -> None:
            try:
                fn(r)
            except BaseException as exc:  # noqa: BLE001
                if not isinstance(exc, _Aborted):
                    with lock:
                        errors.append(exc)
                self._abort.set()
                stage.finished(ok=False, stopped=isinstance(exc, _Aborted) or _is_cancel(exc))
            else:
                stage.finished(ok=True)

        if self.opt.parallel <= 1 or len(items) <= 1:
            for r in items:
                one(r)
                if errors:
                    break
        else:
            with ThreadPoolExecutor(max_workers=self.opt.parallel,
                                    thread_name_prefix="deploy") as pool:
                list(pool.map(one, items))
        if errors:
            real = [e for e in errors if not _is_cancel(e)]
            raise (real or errors)[0]

    def _step(self, r: _SwitchRun, step: str, fn: Callable[[], Any]) -> Any:
        sid = r.inv.id
        try:
            self._check(sid, step)
            r.result.step = step
            self.log.event(sid, step, "start")
            out = fn()
        except Cancelled as exc:
            if not self.cancelled():  # stopped because another switch failed
                raise _Aborted() from exc
            r.result.error = "cancelled"
            self.log.event(sid, step, "failed", "cancelled")
            raise _StepFailed(DeployError(f"switch {sid}", step, "cancelled"), cancelled=True) from exc
        except _Aborted:
            raise
        except InaplannerError as exc:
            cause = _strip_label(str(exc), sid)
            r.result.error = cause
            r.result.status = "failed"
            self.log.event(sid, step, "failed", cause)
            raise _StepFailed(DeployError(f"switch {sid}", step, cause)) from exc
        except Exception as exc:  # noqa: BLE001 - report any other failure with its step
            cause = f"{type(exc).__name__}: {exc}"
            r.result.error = cause
            r.result.status = "failed"
            self.log.event(sid, step, "failed", cause)
            raise _StepFailed(DeployError(f"switch {sid}", step, cause)) from exc
        self.log.event(sid, step, "done", out if isinstance(out, str) else "")
        return out

    # ---- prepare -------------------------------------------------------------------------------

    def _prepare(self, r: _SwitchRun, contract: p4info_pb2.P4Info) -> None:
        art = self._step(r, "build", lambda: self._artifacts(r.inv))
        def p4info_step() -> dict[int, int]:
            ids = check_p4info(contract, art.p4info, f"switch {r.inv.id}")
            check_device_config(r.inv.target, art.device_config, art.p4info,
                                program_name=r.inv.program_name)
            return ids

        r.ids = self._step(r, "p4info", p4info_step)
        r.wanted = [translate_entity(e, r.ids) for e in r.wanted]
        r.default_tables = sorted({e.table_entry.table_id for e in r.wanted if is_default_entry(e)})
        cfg = p4runtime_pb2.ForwardingPipelineConfig()
        cfg.p4info.CopyFrom(art.p4info)
        cfg.p4_device_config = art.device_config
        cfg.cookie.cookie = config_cookie(art.p4info.SerializeToString(deterministic=True),
                                          art.device_config)
        r.config = cfg

        def connect() -> str:
            r.session = P4RTSession(r.inv.p4runtime, r.inv.device_id, r.inv.election_id,
                                    label=f"switch {r.inv.id}", primary=True,
                                    timeout=self.opt.rpc_timeout,
                                    connect_timeout=self.inv.connect_timeout, tls=r.inv.tls)
            return f"primary on {r.inv.p4runtime}"

        self._step(r, "connect", connect)

        def snapshot() -> str:
            assert r.session is not None and r.config is not None
            # Same cookie: the switch runs this very pipeline and keeps it; otherwise keep the
            # whole running config (P4Info and device config) to put it back on a rollback.
            r.same_pipeline = r.session.get_cookie() == r.config.cookie.cookie
            if not r.same_pipeline:
                r.original_pipeline = r.session.get_pipeline(with_device_config=True)
                if r.original_pipeline is None:
                    r.original_entities = []
                    self._warn_no_pipeline(r)
                    return "no pipeline yet"
            try:
                r.original_entities = r.session.read_state(r.default_tables)
            except ReadFailed as exc:
                raise InaplannerError(_failed_state(exc)) from None
            return (("same pipeline, " if r.same_pipeline else "")
                    + f"{len(r.original_entities)} entities")

        self._step(r, "snapshot", snapshot)

    def _artifacts(self, sw: SwitchInventory) -> _Artifacts:
        if sw.ssh is None:
            return self._local_artifacts(sw)
        key = (sw.ssh.host, sw.ssh.port, sw.ssh.user, sw.workdir, sw.render_build_command(),
               sw.p4info_path, sw.device_config_path, sw.context_json_path, sw.target,
               sw.program_name)
        with self._build_lock:
            slot = self._builds.get(key)
            owner = slot is None
            if owner:
                slot = (threading.Event(), [])
                self._builds[key] = slot
        event, box = slot
        if not owner:  # another switch builds the same thing on the same host: share it
            while not event.wait(0.1):
                if self._stop_requested():
                    raise _Aborted() if not self.cancelled() else Cancelled("cancelled")
            if isinstance(box[0], (Cancelled, _Aborted)):
                raise _Aborted() if not self.cancelled() else Cancelled("cancelled")
            if isinstance(box[0], BaseException):
                raise InaplannerError(f"the shared build failed: {box[0]}")
            return box[0]
        try:
            art = self._remote_build(sw)
            box.append(art)
            return art
        except BaseException as exc:
            box.append(exc)
            raise
        finally:
            event.set()

    def _local_artifacts(self, sw: SwitchInventory) -> _Artifacts:
        from inaplanner.dataplane.p4info import parse_p4info_text

        def read(rel: str) -> bytes:
            path = self.inv.local_path(rel)
            try:
                return path.read_bytes()
            except OSError as exc:
                raise InaplannerError(f"cannot read artifact {path}: {exc.strerror}") from None

        p4info = parse_p4info_text(read(sw.p4info_path).decode("utf-8"),
                                   str(self.inv.local_path(sw.p4info_path)))
        device = read(sw.device_config_path)
        if sw.target == "tofino":
            device = pack_tofino_config(sw.program_name, device, read(sw.context_json_path))
        return _Artifacts(p4info, device)

    def _remote_build(self, sw: SwitchInventory) -> _Artifacts:
        from inaplanner.dataplane.p4info import parse_p4info_text

        assert sw.ssh is not None
        sid = sw.id
        with self._connect_ssh(sw.ssh) as s:
            self.log.event(sid, "build", "info", f"connected to {s.target.known_hosts_name}")
            written = s.upload_tree(self.opt.p4_dir, sw.workdir,
                                    include=lambda p: p.name.endswith(P4_SOURCE_SUFFIXES))
            self.log.event(sid, "build", "info", f"uploaded {len(written)} files to {sw.workdir}")
            command = sw.render_build_command()
            self.log.event(sid, "build", "info", f"$ {command}")
            s.run(command, cwd=sw.workdir, timeout=sw.build_timeout,
                  on_line=lambda line: self.log.event(sid, "build", "output", line),
                  cancel=self._stop_requested, what="build")
            join = _remote_join(sw.workdir)
            p4info_text = s.read_file(join(sw.p4info_path)).decode("utf-8", "replace")
            p4info = parse_p4info_text(p4info_text, f"{sw.ssh.host}:{join(sw.p4info_path)}")
            device = s.read_file(join(sw.device_config_path))
            if sw.target == "tofino":
                device = pack_tofino_config(sw.program_name, device,
                                            s.read_file(join(sw.context_json_path)))
        return _Artifacts(p4info, device)

    # ---- apply ---------------------------------------------------------------------------------

    def _apply(self, r: _SwitchRun) -> None:
        assert r.session is not None and r.config is not None
        session = r.session

        def pipeline() -> str:
            if r.same_pipeline:
                return "unchanged (same cookie), entries kept"
            r.touched = True
            self._jmark(r.inv.id, "pipeline")
            try:
                session.set_pipeline(r.config)
            except PipelineRejected as exc:
                if exc.phase == "verify":  # the switch checked it and changed nothing
                    r.touched = False
                    self._jmark(r.inv.id, "prepared")
                    raise InaplannerError(f"the switch refused the device config at VERIFY "
                                          f"(nothing changed): {exc}") from None
                try:  # a failed commit: can the switch still answer?
                    session.read_state(r.default_tables)
                except ReadFailed as read_exc:
                    if read_exc.code == "FAILED_PRECONDITION" and r.original_pipeline is None:
                        r.touched = False  # it had no pipeline and still has none
                        self._jmark(r.inv.id, "prepared")
                        raise exc from None
                    r.failed_state = True
                    msg = _failed_state(read_exc, after_push=True)
                    self._jmark(r.inv.id, "pipeline failed", msg)
                    raise InaplannerError(f"{exc}; {msg}") from None
                raise
            r.result.pipeline_pushed = True
            return "VERIFY then VERIFY_AND_COMMIT done"

        self._step(r, "pipeline", pipeline)

        def write() -> str:
            current = session.read_state(r.default_tables) if r.result.pipeline_pushed \
                else r.original_entities
            d = diff_state(current, r.wanted)
            r.result.diff = d.counts()
            updates = d.updates()
            if not updates:
                return "nothing to change"
            r.touched = True
            self._jmark(r.inv.id, "write")

            def on_batch(done: int, total: int) -> None:
                r.result.written = done
                self.log.event(r.inv.id, "write", "progress", f"{done}/{total}", done / total)

            session.write(updates, self.opt.batch_size, cancel=self._stop_requested_or_raise,
                          on_batch=on_batch,
                          describe=lambda e: describe_entity(e, _index(r.config)))
            return f"{len(updates)} updates ({', '.join(f'{k} {v}' for k, v in d.counts().items())})"

        self._step(r, "write", write)

        def verify() -> str:
            back = session.read_state(r.default_tables)
            if not diff_state(back, r.wanted).empty:
                raise InaplannerError("read back differs from what was written: "
                                      + describe_differences(back, r.wanted))
            return f"{len(back)} entities read back equal"

        self._step(r, "verify", verify)
        if r.touched:
            self._jmark(r.inv.id, "new")
        r.result.status = "deployed" if r.touched else "unchanged"

    def _stop_requested_or_raise(self) -> bool:
        if self._abort.is_set() and not self.cancelled():
            raise _Aborted()
        return self.cancelled()

    # ---- rollback ------------------------------------------------------------------------------

    def _rollback_all(self, runs: dict[str, _SwitchRun], hosts: dict[str, HostResult]) -> None:
        self._restore_hosts(hosts)
        touched = [r for r in runs.values() if r.touched]
        if not touched:
            return
        stage = Tally(self.log.progress, "rollback", "switches")
        stage.begin(len(touched))

        def one(r: _SwitchRun) -> None:
            try:
                self._rollback(r)
            finally:
                stage.finished(ok=r.result.status != "rollback failed")

        with ThreadPoolExecutor(max_workers=max(1, self.opt.parallel),
                                thread_name_prefix="rollback") as pool:
            list(pool.map(one, touched))

    def _rollback(self, r: _SwitchRun) -> None:
        sid = r.inv.id
        self.log.event(sid, "rollback", "start")
        if r.failed_state:
            r.result.rollback = ("NOT POSSIBLE: the switch's pipeline is in a failed state; "
                                 "restart it, then run 'inaplanner deploy --recover'")
            r.result.status = "rollback failed"
            self.log.event(sid, "rollback", "failed", r.result.rollback)
            return
        self._jmark(sid, "rollback")
        try:
            session = r.session
            if session is None:
                raise InaplannerError("no P4Runtime session")
            notes = []
            if r.result.pipeline_pushed and r.original_pipeline is not None:
                session.set_pipeline(r.original_pipeline)
                notes.append("previous pipeline restored")
            elif r.result.pipeline_pushed:
                notes.append("new pipeline kept (the switch had none before)")
            current = session.read_state(r.default_tables)
            d = diff_state(current, r.original_entities)
            if not d.empty:
                session.write(d.updates(), self.opt.batch_size)
            back = session.read_state(r.default_tables)
            if not diff_state(back, r.original_entities).empty:
                raise InaplannerError("after rollback the switch still differs: "
                                      + describe_differences(back, r.original_entities))
            notes.append(f"{len(r.original_entities)} entities as before")
            r.result.rollback = ", ".join(notes)
            r.result.status = "rolled back"
            self._jmark(sid, "old")
            self.log.event(sid, "rollback", "done", r.result.rollback)
        except Exception as exc:  # noqa: BLE001 - report, keep rolling back the others
            r.result.rollback = f"FAILED: {_strip_label(str(exc), sid)}"
            r.result.status = "rollback failed"
            self._jmark(sid, "rollback failed", r.result.rollback)
            self.log.event(sid, "rollback", "failed", r.result.rollback)

    # ---- workers -------------------------------------------------------------------------------

    def _host_inv(self, hid: str) -> HostInventory | None:
        return self.inv.hosts.get(hid)

    def _push_host(self, hid: str, data: bytes, res: HostResult) -> None:
        hinv = self._host_inv(hid)
        if hinv is None:
            res.status = "skipped (not in the testbed file)"
            self.log.event(hid, "config", "skipped", "no [[host]] entry")
            return
        res.path = hinv.config_path
        if self.cancelled():
            raise Cancelled(f"host {hid}: cancelled before its configuration")
        if self._abort.is_set():
            raise _Aborted()
        self.log.event(hid, "config", "start", hinv.config_path)
        try:
            old = self._write_host(hinv, data)
        except InaplannerError as exc:
            res.status, res.error = "failed", _strip_label(str(exc), f"host {hid}")
            self.log.event(hid, "config", "failed", res.error)
            raise DeployError(f"host {hid}", "config", res.error) from exc
        with self._build_lock:
            self._saved_hosts[hid] = old
        res.status = "configured" if old != data else "unchanged"
        self.log.event(hid, "config", "done", f"{len(data)} bytes")

    def _write_host(self, hinv: HostInventory, data: bytes) -> bytes | None:
        """Write the file atomically; return what was there before (None: nothing)."""
        if hinv.ssh is None:
            from inaplanner.io.atomic import atomic_write_bytes

            path = self.inv.local_path(hinv.config_path)
            old = path.read_bytes() if path.is_file() else None
            if self.journal is not None:
                self.journal.save_host(hinv.id, old)
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(path, data)
            return old
        with self._connect_ssh(hinv.ssh) as s:
            try:
                old: bytes | None = s.read_file(hinv.config_path)
            except sshmod.RemoteFileError:
                old = None
            if self.journal is not None:
                self.journal.save_host(hinv.id, old)
            s.write_file_atomic(hinv.config_path, data)
            return old

    def _restore_hosts(self, hosts: dict[str, HostResult]) -> None:
        for hid, old in self._saved_hosts.items():
            hinv = self._host_inv(hid)
            if hinv is None:
                continue
            try:
                if hinv.ssh is None:
                    path = self.inv.local_path(hinv.config_path)
                    if old is None:
                        path.unlink(missing_ok=True)
                    else:
                        from inaplanner.io.atomic import atomic_write_bytes

                        atomic_write_bytes(path, old)
                else:
                    with self._connect_ssh(hinv.ssh) as s:
                        if old is None:
                            s.sftp.remove(hinv.config_path)
                        else:
                            s.write_file_atomic(hinv.config_path, old)
                hosts[hid].status = "restored"
                self.log.event(hid, "rollback", "done", "previous configuration restored")
            except (InaplannerError, OSError) as exc:
                hosts[hid].status = "restore failed"
                hosts[hid].error = str(exc)
                self.log.event(hid, "rollback", "failed", str(exc))

    # ---- dry run -------------------------------------------------------------------------------

    def _dry_run_switch(self, r: _SwitchRun, contract: p4info_pb2.P4Info) -> None:
        def look() -> str:
            with P4RTSession(r.inv.p4runtime, r.inv.device_id, r.inv.election_id,
                             label=f"switch {r.inv.id}", primary=False,
                             timeout=self.opt.rpc_timeout,
                             connect_timeout=self.inv.connect_timeout, tls=r.inv.tls) as session:
                running = session.get_pipeline(with_device_config=False)
                wanted = r.wanted
                current: list[p4runtime_pb2.Entity] = []
                if running is None:
                    r.result.pipeline_change = "install"
                    note = self._warn_no_pipeline(r)
                    if note:
                        r.result.pipeline_change += f" (warning: {note})"
                else:
                    try:
                        ids = check_p4info(contract, running.p4info, f"switch {r.inv.id}")
                    except P4InfoMismatch as exc:
                        r.result.pipeline_change = f"replace ({exc.problems[0]})"
                        defaults = []
                    else:
                        wanted = [translate_entity(e, ids) for e in r.wanted]
                        defaults = sorted({e.table_entry.table_id for e in wanted
                                           if is_default_entry(e)})
                    try:
                        current = session.read_state(defaults)
                    except ReadFailed as exc:
                        raise InaplannerError(_failed_state(exc)) from None
                index = _index(running if running is not None else _contract_config(contract))
            d: StateDiff = diff_state([] if r.result.pipeline_change else current, wanted)
            if r.result.pipeline_change and current:
                d.delete = list(index_entities(current).values())
            r.result.diff = d.counts()
            r.result.changes = _change_lines(d, index)
            r.result.status = "dry run"
            return ", ".join(f"{k} {v}" for k, v in r.result.diff.items())

        self._step(r, "snapshot", look)

    def _dry_run_hosts(self, desired: Desired, hosts: dict[str, HostResult]) -> None:
        for hid, data in desired.hosts.items():
            hinv = self._host_inv(hid)
            res = hosts[hid]
            if hinv is None:
                res.status = "skipped (not in the testbed file)"
                continue
            res.path = hinv.config_path
            res.status = f"dry run: would write {len(data)} bytes"

    def _close(self, runs: dict[str, _SwitchRun]) -> None:
        for r in runs.values():
            if r.session is not None:
                r.session.close()
                r.session = None


class _Aborted(Exception):
    """Another switch failed: stop this one quietly (it is rolled back with the rest)."""


class _StepFailed(InaplannerError):
    def __init__(self, error: DeployError, cancelled: bool = False) -> None:
        self.error = error
        self.cancelled = cancelled
        super().__init__(str(error))


def _is_cancel(exc: BaseException) -> bool:
    return isinstance(exc, Cancelled) or bool(getattr(exc, "cancelled", False))


def _first_error(exc: BaseException) -> str:
    if isinstance(exc, _StepFailed):
        return str(exc.error)
    return str(exc) or type(exc).__name__


def _failed_state(exc: ReadFailed, after_push: bool = False) -> str:
    """One line for a switch that runs a pipeline but cannot read its tables (bmv2 after a
    rejected device config): it must be restarted; it is not empty."""
    why = "after the rejected push " if after_push else ""
    return (f"the switch's pipeline is in a failed state {why}(it still forwards but every table "
            f"read fails: {_strip_label(str(exc), '').split('Read failed: ')[-1]}); restart the "
            "switch (its P4Runtime server) before deploying again")


def _strip_label(message: str, sid: str) -> str:
    for prefix in (f"switch {sid}: ", f"{sid}: "):
        if message.startswith(prefix):
            return message[len(prefix):]
    return message


def _remote_join(workdir: str) -> Callable[[str], str]:
    import posixpath

    return lambda rel: rel if rel.startswith("/") else posixpath.join(workdir, rel)


def _index(config: p4runtime_pb2.ForwardingPipelineConfig | None):
    from inaplanner.dataplane.p4info import P4InfoIndex

    if config is None:
        return None
    try:
        return P4InfoIndex(config.p4info)
    except InaplannerError:
        return None


def _contract_config(contract: p4info_pb2.P4Info) -> p4runtime_pb2.ForwardingPipelineConfig:
    cfg = p4runtime_pb2.ForwardingPipelineConfig()
    cfg.p4info.CopyFrom(contract)
    return cfg


def _change_lines(d: StateDiff, index: Any) -> list[str]:
    lines = [f"- {describe_entity(e, index)}" for e in d.delete]
    lines += [f"~ {describe_entity(e, index)}" for e in d.modify]
    lines += [f"+ {describe_entity(e, index)}" for e in d.insert]
    return lines


def deploy(scenario: Any, plan: Any, inventory: Inventory, options: DeployOptions | None = None,
           progress: ProgressCallback | None = None,
           cancel: CancelToken | Callable[[], bool] | None = None,
           desired: Desired | None = None) -> DeployReport:
    """Deploy ``plan`` (or with ``options.dry_run``, show what would change). Never raises for a
    failed step: the report says which switch, step and cause, and what was rolled back. Raises
    :class:`InaplannerError` only when the inputs are wrong (inventory vs scenario)."""
    return Deployer(scenario, plan, inventory, options, progress, cancel, desired).run()


def entities_text(entities: Sequence[p4runtime_pb2.Entity]) -> list[str]:
    """Sorted one-line texts of canonical entities (for tests and dumps)."""
    return sorted(text_format.MessageToString(e, as_one_line=True)
                  for e in index_entities(entities).values())
