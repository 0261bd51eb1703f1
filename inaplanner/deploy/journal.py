"""The deploy journal: what a deployment is about to change, written before its first write, so
that a deployment killed at any point (SIGKILL, power loss) can be rolled back or completed.

The journal lives beside the testbed file (``testbed.toml`` -> ``testbed.deploy-journal``). It is
one header line written atomically (temporary file, fsync, rename) followed by progress records
appended one line each (and fsynced) as switches and hosts move:

* the header names every switch with its old and new pipeline config (deduplicated by SHA-256 in
  ``pipelines``) and its old and new entity sets (serialized P4Runtime entities, base64), with the
  SHA-256 of each set, and every worker host with the path and bytes of its new configuration;
* a record ``{"switch": id, "state": ...}`` says where a switch got to (``pipeline``: pushing the
  new pipeline, ``write``: writing the new entities, ``new``: verified on the new plan,
  ``rollback``: rolling back, ``old``: verified on the old plan, ``rollback failed``,
  ``pipeline failed``: the switch's pipeline is in a failed state and must be restarted);
* a record ``{"host": id, "old": base64 | null}`` keeps a worker file's previous bytes before it
  is overwritten.

A torn last line (the process died while appending) is ignored. A deployment that ends with every
switch on one plan deletes its journal; any other end leaves it, and ``inaplanner deploy
--recover`` (:mod:`inaplanner.deploy.recover`) reads it back.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from p4.v1 import p4runtime_pb2

from inaplanner.errors import InaplannerError

FORMAT = "inaplanner-deploy-journal"
VERSION = 1
SUFFIX = ".deploy-journal"
DEPLOYED_SUFFIX = ".deployed.json"

#: switch states meaning "this switch holds exactly the old / the new plan"
ON_OLD = ("prepared", "old")
ON_NEW = ("new",)


def journal_path(testbed: str | os.PathLike[str]) -> Path:
    """Where the journal of deployments onto ``testbed`` lives."""
    p = Path(testbed)
    return p.with_name(p.stem + SUFFIX)


def deployed_path(testbed: str | os.PathLike[str]) -> Path:
    """Where the record of the last successful deployment onto ``testbed`` lives."""
    p = Path(testbed)
    return p.with_name(p.stem + DEPLOYED_SUFFIX)


def journal_path_for(source: str) -> Path | None:
    """The journal path for an inventory's ``source`` (None when it is not a file path)."""
    if not source or source.startswith("<"):
        return None
    p = Path(source)
    return journal_path(p) if p.parent.is_dir() else None


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.b64decode(text.encode("ascii"), validate=True)


def entities_sha256(entities: list[p4runtime_pb2.Entity]) -> str:
    """An order-free digest of an entity set (canonical form)."""
    from inaplanner.deploy.state import index_entities

    blobs = sorted(e.SerializeToString(deterministic=True)
                   for e in index_entities(entities).values())
    h = hashlib.sha256()
    for b in blobs:
        h.update(len(b).to_bytes(4, "big"))
        h.update(b)
    return h.hexdigest()


def _config_sha(config: p4runtime_pb2.ForwardingPipelineConfig) -> str:
    return hashlib.sha256(config.SerializeToString(deterministic=True)).hexdigest()


@dataclass
class SwitchEntry:
    """One switch of the journal."""

    id: str
    address: str
    device_id: int
    old_pipeline: str  # "none" (the switch had none), "same" (= new), or a pipeline sha256
    new_pipeline: str  # a pipeline sha256
    old: list[p4runtime_pb2.Entity]
    new: list[p4runtime_pb2.Entity]
    default_tables: list[int]
    state: str = "prepared"
    message: str = ""

    @property
    def on(self) -> str:
        """Which plan the switch holds as far as the journal knows: old, new or between."""
        if self.state in ON_OLD:
            return "old"
        if self.state in ON_NEW:
            return "new"
        return "between"


@dataclass
class HostEntry:
    id: str
    path: str
    remote: bool
    new: bytes
    old: bytes | None = None
    saved: bool = False  # the old bytes were recorded: the file may have been overwritten


@dataclass
class Journal:
    """A journal on disk. Create with :meth:`create` (deployer) or :func:`read_journal`."""

    path: Path
    testbed: str
    plan: str
    started: float
    pid: int
    switches: dict[str, SwitchEntry]
    hosts: dict[str, HostEntry]
    pipelines: dict[str, p4runtime_pb2.ForwardingPipelineConfig] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    # ---- writing -----------------------------------------------------------------------------
    @classmethod
    def create(cls, path: Path, testbed: str, plan: str, switches: list[dict[str, Any]],
               hosts: list[dict[str, Any]]) -> Journal:
        """Write the header atomically. ``switches``: dicts with id, address, device_id,
        old_config (None: none; "same": same as new), new_config, old, new, default_tables;
        ``hosts``: dicts with id, path, remote, new (bytes)."""
        pipelines: dict[str, p4runtime_pb2.ForwardingPipelineConfig] = {}

        def keep(config: p4runtime_pb2.ForwardingPipelineConfig) -> str:
            sha = _config_sha(config)
            pipelines.setdefault(sha, config)
            return sha

        j = cls(path, testbed, plan, time.time(), os.getpid(), {}, {})
        for s in switches:
            new_sha = keep(s["new_config"])
            old_cfg = s["old_config"]
            old_sha = "none" if old_cfg is None else "same" if isinstance(old_cfg, str) \
                else keep(old_cfg)
            j.switches[s["id"]] = SwitchEntry(s["id"], s["address"], s["device_id"], old_sha,
                                              new_sha, list(s["old"]), list(s["new"]),
                                              list(s["default_tables"]))
        for h in hosts:
            j.hosts[h["id"]] = HostEntry(h["id"], h["path"], h["remote"], h["new"])
        j.pipelines = pipelines
        header = {
            "format": FORMAT, "version": VERSION, "testbed": testbed, "plan": plan,
            "started": j.started, "pid": j.pid,
            "pipelines": {sha: _b64(c.SerializeToString(deterministic=True))
                          for sha, c in pipelines.items()},
            "switches": [{
                "id": e.id, "address": e.address, "device_id": e.device_id,
                "old_pipeline": e.old_pipeline, "new_pipeline": e.new_pipeline,
                "default_tables": e.default_tables,
                "old_sha256": entities_sha256(e.old), "new_sha256": entities_sha256(e.new),
                "old": [_b64(x.SerializeToString(deterministic=True)) for x in e.old],
                "new": [_b64(x.SerializeToString(deterministic=True)) for x in e.new],
            } for e in j.switches.values()],
            "hosts": [{"id": h.id, "path": h.path, "remote": h.remote, "new": _b64(h.new)}
                      for h in j.hosts.values()],
        }
        from inaplanner.io.atomic import atomic_write_bytes

        try:
            atomic_write_bytes(path, (json.dumps(header, separators=(",", ":")) + "\n")
                               .encode("utf-8"))
        except OSError as exc:
            raise InaplannerError(f"{path}: cannot write the deploy journal: "
                                  f"{exc.strerror or exc}") from None
        return j

    def _append(self, record: dict[str, Any]) -> None:
        line = (json.dumps(record, separators=(",", ":")) + "\n").encode("utf-8")
        with self._lock:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
            try:
                os.write(fd, line)
                os.fsync(fd)
            finally:
                os.close(fd)

    def mark(self, switch: str, state: str, message: str = "") -> None:
        """Record that ``switch`` reached ``state`` (see the module docstring)."""
        e = self.switches.get(switch)
        if e is None:
            return
        e.state, e.message = state, message
        rec: dict[str, Any] = {"switch": switch, "state": state}
        if message:
            rec["message"] = message
        self._append(rec)

    def save_host(self, host: str, old: bytes | None) -> None:
        """Record a worker file's previous bytes (call before overwriting it)."""
        h = self.hosts.get(host)
        if h is None:
            return
        h.old, h.saved = old, True
        self._append({"host": host, "old": None if old is None else _b64(old)})

    def finish(self) -> None:
        """Every switch is on one plan: the journal is no longer needed."""
        self.path.unlink(missing_ok=True)

    # ---- reading -----------------------------------------------------------------------------
    def pipeline(self, sha: str) -> p4runtime_pb2.ForwardingPipelineConfig | None:
        return self.pipelines.get(sha)

    def where(self) -> dict[str, list[str]]:
        """Switch ids by the plan they hold: ``{"old": [...], "new": [...], "between": [...]}``."""
        out: dict[str, list[str]] = {"old": [], "new": [], "between": []}
        for sid, e in self.switches.items():
            out[e.on].append(sid)
        return out

    def summary(self) -> str:
        """One line: which switches are on which plan, and failed pipelines."""
        w = self.where()
        parts = [f"{k} plan: {', '.join(v)}" for k, v in
                 (("old", w["old"]), ("new", w["new"])) if v]
        if w["between"]:
            parts.append(f"between plans: {', '.join(w['between'])}")
        failed = [sid for sid, e in self.switches.items() if e.state == "pipeline failed"]
        if failed:
            parts.append(f"pipeline in a failed state (restart the switch): {', '.join(failed)}")
        return "; ".join(parts) or "no switches"

    def pid_alive(self) -> bool:
        if self.pid == os.getpid():
            return False
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return _is_inaplanner(self.pid)


def _is_inaplanner(pid: int) -> bool:
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return True  # cannot tell: assume it is
    return b"inaplanner" in cmd


def read_journal(path: str | os.PathLike[str]) -> Journal:
    """Read a journal and replay its progress records; InaplannerError naming the file when it
    cannot be read."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise InaplannerError(f"{p}: cannot read the deploy journal: {exc.strerror}") from None
    lines = raw.split(b"\n")
    try:
        head = json.loads(lines[0])
        if not isinstance(head, dict) or head.get("format") != FORMAT:
            raise ValueError("not a deploy journal")
        if head.get("version") != VERSION:
            raise ValueError(f"version {head.get('version')!r} is not {VERSION}")
        pipelines = {}
        for sha, blob in head["pipelines"].items():
            cfg = p4runtime_pb2.ForwardingPipelineConfig()
            cfg.ParseFromString(_unb64(blob))
            pipelines[sha] = cfg

        def ents(items: list[str]) -> list[p4runtime_pb2.Entity]:
            out = []
            for blob in items:
                e = p4runtime_pb2.Entity()
                e.ParseFromString(_unb64(blob))
                out.append(e)
            return out

        switches = {}
        for s in head["switches"]:
            e = SwitchEntry(str(s["id"]), str(s["address"]), int(s["device_id"]),
                            str(s["old_pipeline"]), str(s["new_pipeline"]), ents(s["old"]),
                            ents(s["new"]), [int(t) for t in s["default_tables"]])
            if entities_sha256(e.old) != s["old_sha256"] or \
                    entities_sha256(e.new) != s["new_sha256"]:
                raise ValueError(f"switch {e.id}: entity set does not match its sha256")
            switches[e.id] = e
        hosts = {str(h["id"]): HostEntry(str(h["id"]), str(h["path"]), bool(h["remote"]),
                                         _unb64(h["new"])) for h in head["hosts"]}
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        raise InaplannerError(f"{p}: not a readable deploy journal: {exc}") from None
    j = Journal(p, str(head.get("testbed", "")), str(head.get("plan", "")),
                float(head.get("started", 0.0)), int(head.get("pid", 0)), switches, hosts,
                pipelines)
    for line in lines[1:]:
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            break  # a torn last line
        if not isinstance(rec, dict):
            continue
        if "switch" in rec and rec["switch"] in j.switches:
            e = j.switches[rec["switch"]]
            e.state, e.message = str(rec.get("state", "")), str(rec.get("message", ""))
        elif "host" in rec and rec["host"] in j.hosts:
            h = j.hosts[rec["host"]]
            old = rec.get("old")
            h.old, h.saved = (None if old is None else _unb64(old)), True
    return j


def refuse_if_unfinished(testbed: str | os.PathLike[str], what: str = "deploy",
                         path: Path | None = None) -> None:
    """Raise one line when ``testbed`` has an unfinished deployment journal (see the module
    docstring; ``path`` overrides where it is looked for); do nothing otherwise."""
    path = path if path is not None else journal_path(testbed)
    if not path.exists():
        return
    try:
        j = read_journal(path)
    except InaplannerError as exc:
        raise InaplannerError(f"{exc}; move it away only if every switch is known to hold one "
                              "plan") from None
    if j.pid_alive():
        raise InaplannerError(f"{testbed}: a deployment is in progress (pid {j.pid}, journal "
                              f"{path}); wait for it to end before '{what}'")
    raise InaplannerError(
        f"{testbed}: an unfinished deployment left the switches between plans ({j.summary()}); "
        f"run 'inaplanner deploy --recover --testbed {testbed} [--to old|new]' to roll back "
        "(old, the default) or complete (new)")


def write_deployed(testbed: str | os.PathLike[str], cookies: dict[str, int | None]) -> None:
    """Record, per switch, that the last deployment left a pipeline there (its cookie)."""
    from inaplanner.io.atomic import atomic_write_text

    path = deployed_path(testbed)
    try:
        atomic_write_text(path, json.dumps({"format": "inaplanner-deployed", "time": time.time(),
                                            "switches": cookies}, indent=1) + "\n")
    except OSError:
        pass  # only a hint for later warnings


def read_deployed(testbed: str | os.PathLike[str]) -> dict[str, int | None]:
    """Switches the last successful deployment left with a pipeline (empty when unknown)."""
    try:
        doc = json.loads(deployed_path(testbed).read_text(encoding="utf-8"))
        sw = doc["switches"]
        return {str(k): v for k, v in sw.items()} if isinstance(sw, dict) else {}
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        return {}
