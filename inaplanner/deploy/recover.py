"""``inaplanner deploy --recover``: finish what a killed deployment left, from its journal.

Every switch of the journal is driven to one plan, ``old`` (roll back: the pipeline and entities
it had before the deployment) or ``new`` (complete: the plan's pipeline and entities), and read
back; every worker file is put back (old) or written (new). Each step is idempotent, so a recovery
that is itself interrupted can simply be run again. The journal is deleted only when every switch
was read back equal to the chosen plan.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from p4.v1 import p4runtime_pb2

from inaplanner.deploy.journal import Journal, SwitchEntry, journal_path, read_journal
from inaplanner.deploy.p4rt import P4RTSession, ReadFailed
from inaplanner.deploy.results import LISTED
from inaplanner.deploy.state import describe_differences, diff_state, is_default_entry
from inaplanner.errors import InaplannerError
from inaplanner.progress import Progress, Tally
from inaplanner.testbed.inventory import Inventory, check_transport

TARGETS = ("old", "new")


@dataclass
class RecoverReport:
    ok: bool
    to: str
    switches: dict[str, str] = field(default_factory=dict)  # id -> outcome line
    hosts: dict[str, str] = field(default_factory=dict)
    journal: str = ""
    warnings: list[str] = field(default_factory=list)

    def text(self, listed: int | None = LISTED, more: str = "--all") -> str:
        """The verdict, the warnings, then a line per switch and host: at most ``listed`` of
        each (None: all), the failed ones first and always, the rest counted (fat-tree k=32's
        recovery was 3,280 lines). ``more`` names what lists the rest ("" says nothing)."""
        head = (f"recovered: every switch holds the {self.to} plan" if self.ok else
                f"recovery FAILED (journal kept: {self.journal}); run it again once the "
                "switches below answer")
        lines = [head] + [f"  warning: {w}" for w in self.warnings]
        for kind, outcomes in (("switch", self.switches), ("host", self.hosts)):
            items = sorted(outcomes.items(), key=lambda item: not item[1].startswith("FAILED"))
            shown = [(i, line) for n, (i, line) in enumerate(items)
                     if listed is None or n < listed or line.startswith("FAILED")]
            lines += [f"  {kind} {i}: {line}" for i, line in shown]
            if len(shown) < len(items):
                plural = "switches" if kind == "switch" else "hosts"
                lines.append(f"  ... and {len(items) - len(shown)} more {plural}"
                             + (f"; {more} lists every {kind}" if more else ""))
        return "\n".join(lines)


def _target(j: Journal, e: SwitchEntry, to: str
            ) -> tuple[p4runtime_pb2.ForwardingPipelineConfig | None, list[p4runtime_pb2.Entity]]:
    """The pipeline (None: leave the running one) and entities of plan ``to`` for one switch."""
    if to == "new":
        return j.pipeline(e.new_pipeline), e.new
    if e.old_pipeline == "same":
        return j.pipeline(e.new_pipeline), e.old
    if e.old_pipeline == "none":
        return None, e.old  # it had no pipeline: the new one stays, with the old (no) entries
    return j.pipeline(e.old_pipeline), e.old


def _runs(session: P4RTSession, cfg: p4runtime_pb2.ForwardingPipelineConfig) -> bool:
    """True when the switch already runs ``cfg`` (same cookie, or the same P4Info and device
    config when it has none)."""
    if cfg.HasField("cookie"):
        return session.get_cookie() == cfg.cookie.cookie
    running = session.get_pipeline(with_device_config=True)
    return running is not None and running.p4info == cfg.p4info and \
        running.p4_device_config == cfg.p4_device_config


def _recover_switch(j: Journal, e: SwitchEntry, inv: Inventory, to: str,
                    rpc_timeout: float) -> str:
    sw = inv.switches.get(e.id)
    if sw is None:
        raise InaplannerError(f"switch {e.id} is in the journal but not in {inv.source}")
    cfg, wanted = _target(j, e, to)
    defaults = sorted({x.table_entry.table_id for x in wanted if is_default_entry(x)})
    if to == "new" or e.old_pipeline in ("same", "none"):
        defaults = sorted(set(defaults) | set(e.default_tables))
    notes = []
    with P4RTSession(sw.p4runtime, sw.device_id, sw.election_id, label=f"switch {e.id}",
                     primary=True, timeout=rpc_timeout, connect_timeout=inv.connect_timeout,
                     tls=sw.tls) as session:
        if cfg is not None and not _runs(session, cfg):
            session.set_pipeline(cfg)
            notes.append(f"{to} pipeline pushed")
        if cfg is None and not wanted and session.get_pipeline(with_device_config=False) is None:
            j.mark(e.id, to)
            return f"holds the {to} plan (no pipeline, as before the deployment)"
        try:
            current = session.read_state(defaults)
        except ReadFailed as exc:
            raise InaplannerError(f"the switch's pipeline is in a failed state (reads fail: "
                                  f"{exc}); restart the switch, then recover again") from None
        d = diff_state(current, wanted)
        if not d.empty:
            session.write(d.updates())
            notes.append(", ".join(f"{k} {v}" for k, v in d.counts().items() if v))
        back = session.read_state(defaults)
        if not diff_state(back, wanted).empty:
            raise InaplannerError("read back differs from the journal's "
                                  f"{to} plan: {describe_differences(back, wanted)}")
    j.mark(e.id, to)
    return f"holds the {to} plan ({len(wanted)} entities" + \
        (f"; {'; '.join(notes)})" if notes else "; nothing to change)")


def recover(inventory: Inventory, to: str = "old", path: Path | None = None,
            parallel: int = 8, rpc_timeout: float = 30.0,
            on_line: Callable[[str], None] | None = None,
            write_host: Callable[[str, bytes | None], None] | None = None,
            progress: Progress | None = None) -> RecoverReport:
    """Drive every switch of the journal of ``inventory``'s testbed to plan ``to``.

    ``on_line`` gets a line per switch and host as each ends; ``progress`` the overall progress
    (switches, then worker files, done of all). ``write_host(host_id, data)`` writes (``None``:
    removes) a worker file; by default the deployer's own atomic local/SFTP writer."""
    if to not in TARGETS:
        raise InaplannerError(f"--to must be old or new, got {to!r}")
    jpath = path if path is not None else journal_path(inventory.source)
    if not jpath.exists():
        raise InaplannerError(f"{inventory.source}: no unfinished deployment (no journal "
                              f"{jpath}); nothing to recover")
    j = read_journal(jpath)
    if j.pid_alive():
        raise InaplannerError(f"{inventory.source}: the deployment that wrote {jpath} is still "
                              f"running (pid {j.pid}); stop it first")
    report = RecoverReport(True, to, journal=str(jpath))
    report.warnings = check_transport(inventory, set(j.switches) & set(inventory.switches))
    say = on_line or (lambda _line: None)
    entries = list(j.switches.values())
    overall = progress if progress is not None else Progress()
    tally = Tally(overall.span(0.0, 0.9 if j.hosts else 1.0),
                  "roll back" if to == "old" else "complete", "switches")
    tally.begin(len(entries))

    def one(e: SwitchEntry) -> None:
        try:
            report.switches[e.id] = _recover_switch(j, e, inventory, to, rpc_timeout)
        except InaplannerError as exc:
            report.ok = False
            msg = str(exc)
            for prefix in (f"switch {e.id}: ",):
                msg = msg[len(prefix):] if msg.startswith(prefix) else msg
            report.switches[e.id] = f"FAILED: {msg}"
        tally.finished(ok=not report.switches[e.id].startswith("FAILED"))
        say(f"[{e.id}] {report.switches[e.id]}")

    with ThreadPoolExecutor(max_workers=max(1, min(parallel, len(entries) or 1)),
                            thread_name_prefix="recover") as pool:
        list(pool.map(one, entries))
    report.switches = {sid: report.switches[sid] for sid in j.switches}

    writer = write_host or _default_host_writer(inventory)
    files = Tally(overall.span(0.9, 1.0), "workers", "worker files")
    files.begin(len(j.hosts))
    for h in j.hosts.values():
        if to == "old" and not h.saved:
            report.hosts[h.id] = "not written by the deployment: left as it is"
            continue
        data = h.new if to == "new" else h.old
        try:
            writer(h.id, data)
            report.hosts[h.id] = ("removed (it did not exist before)" if data is None
                                  else f"{to} configuration written ({len(data)} bytes)")
        except (InaplannerError, OSError) as exc:
            report.ok = False
            report.hosts[h.id] = f"FAILED: {exc}"
        files.finished(ok=not report.hosts[h.id].startswith("FAILED"))
        say(f"[{h.id}] {report.hosts[h.id]}")
    if report.ok:
        j.finish()
    return report


def _default_host_writer(inventory: Inventory) -> Callable[[str, bytes | None], None]:
    from inaplanner.deploy.deployer import Deployer

    d = Deployer(None, None, inventory)

    def write(hid: str, data: bytes | None) -> None:
        hinv = inventory.hosts.get(hid)
        if hinv is None:
            raise InaplannerError(f"host {hid} is in the journal but not in {inventory.source}")
        if data is not None:
            d._write_host(hinv, data)
            return
        if hinv.ssh is None:
            inventory.local_path(hinv.config_path).unlink(missing_ok=True)
        else:
            with d._connect_ssh(hinv.ssh) as s:
                try:
                    s.sftp.remove(hinv.config_path)
                except OSError:
                    pass

    return write
