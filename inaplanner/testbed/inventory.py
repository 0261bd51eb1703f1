"""The testbed inventory, ``testbed.toml``: how to reach every switch and worker of a scenario.

Shape (every relative local path is taken from the directory of the file; ``~`` is expanded)::

    [defaults]
    ssh_user = "ina"              # any per-switch/per-host SSH or build field may be given here
    ssh_key = "~/.ssh/id_ed25519" # absent = ssh-agent (and OpenSSH's default identity files)
    known_hosts = "known_hosts"   # the project's known_hosts (host keys accepted by the user)
    connect_timeout = 10.0
    build_timeout = 900.0

    [[switch]]
    id = "S1"                     # the scenario's switch id
    p4runtime = "10.0.0.1:9559"
    device_id = 1
    election_id = [0, 1]          # [high, low]
    target = "bmv2"               # or "tofino"
    ssh_host = "10.0.0.1"         # absent = no build host: artifact paths are local files
    ssh_port = 22
    workdir = "inaplanner-build"  # remote; relative = from the login directory
    build_command = "p4c-bm2-ss --arch v1model -o {device_config} --p4runtime-files {p4info} {program}"
    p4info_path = "build/ina_v1model.p4info.txtpb"     # relative to workdir
    device_config_path = "build/ina_v1model.json"      # relative to workdir
    [switch.ports]                # neighbour node id -> front-panel port
    W1 = 1
    S3 = 2

    [[host]]
    id = "W1"
    ssh_host = "10.0.1.1"         # absent = the worker configuration is written locally
    config_path = "inaplanner-worker.json"

Secrets are never stored: a ``password`` (or ``passphrase``) key anywhere is refused. SSH keys come
from files or the agent. ``~/.ssh/config`` is honoured when connecting (see
:func:`inaplanner.deploy.ssh.resolve_target`).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inaplanner.errors import ValidationError

TARGETS = ("bmv2", "tofino")
FORBIDDEN_KEYS = ("password", "passphrase", "passwd")
DEFAULT_CONNECT_TIMEOUT = 10.0
DEFAULT_BUILD_TIMEOUT = 900.0
#: the longest timeout accepted (seconds, 30 days): finite, and small enough for socket timeouts
MAX_SECONDS = 2_592_000.0
#: not the lowest id, so that a controller started with the P4Runtime default (0, 1) does not
#: silently take a switch from us (arbitration: the highest election id is primary)
DEFAULT_ELECTION_ID = (0, 1000)
DEFAULT_WORKDIR = "inaplanner-build"
DEFAULT_HOST_CONFIG_PATH = "inaplanner-worker.json"

#: Per target: P4 program, build command template, artifact paths (relative to the workdir).
#: Placeholders: {workdir} {program} {program_name} {p4info} {device_config} {context_json} {target}
TARGET_DEFAULTS: dict[str, dict[str, str]] = {
    "bmv2": {
        "program": "ina_v1model.p4",
        "build_command": (
            "mkdir -p build && p4c-bm2-ss --std p4-16 --arch v1model -o {device_config} "
            "--p4runtime-files {p4info} {program}"
        ),
        "p4info_path": "build/ina_v1model.p4info.txtpb",
        "device_config_path": "build/ina_v1model.json",
        "context_json_path": "",
    },
    "tofino": {
        "program": "ina_tna.p4",
        "build_command": (
            "bf-p4c --std p4-16 --target tofino --arch tna -o build "
            "--p4runtime-files {p4info} --p4runtime-force-std-externs {program}"
        ),
        "p4info_path": "build/ina_tna.p4info.txtpb",
        "device_config_path": "build/pipe/tofino.bin",
        "context_json_path": "build/pipe/context.json",
    },
}

_SWITCH_KEYS = {
    "id", "p4runtime", "device_id", "election_id", "target", "ssh_host", "ssh_port", "ssh_user",
    "ssh_key", "workdir", "build_command", "program", "program_name", "p4info_path",
    "device_config_path", "context_json_path", "build_timeout", "ports",
}
_HOST_KEYS = {"id", "ssh_host", "ssh_port", "ssh_user", "ssh_key", "config_path"}
_DEFAULT_KEYS = {
    "ssh_user", "ssh_key", "ssh_port", "known_hosts", "connect_timeout", "build_timeout",
    "workdir", "build_command", "config_path",
}
_TOP_KEYS = {"defaults", "switch", "host"}
#: P4Runtime transport security, per switch or in [defaults] (see :class:`TLSSettings`)
_TLS_KEYS = {"tls", "ca_cert", "client_cert", "client_key", "server_name"}
_SWITCH_KEYS |= _TLS_KEYS
_DEFAULT_KEYS |= _TLS_KEYS


@dataclass(frozen=True)
class SSHTarget:
    """Where and how to log in. ``None`` fields are filled from ``~/.ssh/config``, then defaults."""

    host: str
    port: int | None = None
    user: str | None = None
    key: Path | None = None  # None = ssh-agent (and OpenSSH's default identity files)
    known_hosts: Path | None = None  # the project's known_hosts file
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    label: str = ""  # e.g. "switch S1", used in messages

    def describe(self) -> str:
        who = f"{self.user}@" if self.user else ""
        port = f":{self.port}" if self.port else ""
        return f"{who}{self.host}{port}"


@dataclass(frozen=True)
class TLSSettings:
    """How the P4Runtime channel of a switch is secured (``testbed.toml``: ``tls``, ``ca_cert``,
    ``client_cert``, ``client_key``, ``server_name``, per switch or in ``[defaults]``).

    ``enabled`` False is plaintext, allowed only when the file says ``tls = false`` (or for the
    emulated testbed). With TLS, ``ca_cert`` (PEM) verifies the switch (absent: the system's
    roots); ``client_cert`` and ``client_key`` (PEM paths, never the key itself) authenticate us
    to a switch that requires client certificates (mTLS); ``server_name`` is the name the
    switch's certificate must carry when it differs from the address's host."""

    enabled: bool
    ca_cert: Path | None = None
    client_cert: Path | None = None
    client_key: Path | None = None
    server_name: str | None = None


PLAINTEXT = TLSSettings(False)


@dataclass
class SwitchInventory:
    """One programmable switch: its P4Runtime endpoint, build host and port map."""

    id: str
    p4runtime: str
    device_id: int
    target: str
    election_id: tuple[int, int] = DEFAULT_ELECTION_ID
    ssh: SSHTarget | None = None  # None: no build host, artifact paths are local files
    workdir: str = DEFAULT_WORKDIR
    build_command: str = ""
    program: str = ""
    program_name: str = ""
    p4info_path: str = ""
    device_config_path: str = ""
    context_json_path: str = ""  # tofino only
    build_timeout: float = DEFAULT_BUILD_TIMEOUT
    ports: dict[str, int] = field(default_factory=dict)
    #: None: the testbed file does not say (refused by :func:`check_transport`)
    tls: TLSSettings | None = PLAINTEXT

    @property
    def p4runtime_host(self) -> str:
        return split_address(self.p4runtime)[0]

    @property
    def p4runtime_port(self) -> int:
        return split_address(self.p4runtime)[1]

    def render_build_command(self) -> str:
        """The build command with its placeholders filled in."""
        return self.build_command.format(
            workdir=self.workdir,
            program=self.program,
            program_name=self.program_name,
            p4info=self.p4info_path,
            device_config=self.device_config_path,
            context_json=self.context_json_path,
            target=self.target,
        )


@dataclass
class HostInventory:
    """One worker (or PS) host: where its configuration file goes."""

    id: str
    ssh: SSHTarget | None  # None: the configuration is written to a local file
    config_path: str = DEFAULT_HOST_CONFIG_PATH


@dataclass
class Inventory:
    switches: dict[str, SwitchInventory] = field(default_factory=dict)
    hosts: dict[str, HostInventory] = field(default_factory=dict)
    source: str = "<testbed>"
    known_hosts: Path | None = None
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    base_dir: Path = field(default_factory=Path.cwd)

    def switch(self, switch_id: str) -> SwitchInventory:
        try:
            return self.switches[switch_id]
        except KeyError:
            raise ValidationError(
                f"switch {switch_id!r} is not in the testbed inventory", "switch", self.source
            ) from None

    def local_path(self, path: str) -> Path:
        """A local artifact path as written in the file, resolved from the file's directory."""
        p = Path(path).expanduser()
        return p if p.is_absolute() else self.base_dir / p

    def port_of(self, switch_id: str, neighbour: str, scenario: Any = None) -> int:
        """Front-panel port of ``switch_id`` toward ``neighbour``: the inventory's map, else the
        scenario's port number of that link."""
        sw = self.switches.get(switch_id)
        if sw is not None and neighbour in sw.ports:
            return sw.ports[neighbour]
        if scenario is not None:
            link = scenario.link_between(switch_id, neighbour)
            if link is not None:
                port = link.port_at(switch_id)
                if port is not None:
                    return int(port)
        raise ValidationError(
            f"no port toward {neighbour!r} (neither in [switch.ports] nor in the scenario)",
            f"switch {switch_id!r}.ports",
            self.source,
        )


# ---------------------------------------------------------------------------------------------
# reading


def split_address(address: str) -> tuple[str, int]:
    """``"host:port"`` or ``"[v6]:port"`` -> (host, port); ValueError when malformed."""
    m = re.fullmatch(r"\[([^\]]+)\]:(\d+)|([^:\[\]\s]+):(\d+)", address.strip())
    if not m:
        raise ValueError(f"expected 'host:port', got {address!r}")
    host = m.group(1) or m.group(3)
    port = int(m.group(2) or m.group(4))
    if not 0 < port < 65536:
        raise ValueError(f"port {port} out of range 1..65535")
    return host, port


def load_inventory(path: str | Path) -> Inventory:
    """Read and validate a ``testbed.toml``; ValidationError naming the file, entry and field."""
    from inaplanner.io.limits import decode_utf8, read_bytes

    p = Path(path)
    source = str(p)
    text = decode_utf8(read_bytes(p, "toml"), source)  # size limit, UTF-8 only
    return parse_inventory(text, source=source, base_dir=p.resolve().parent)


def parse_inventory(text: str, source: str = "<testbed>", base_dir: Path | None = None) -> Inventory:
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValidationError(f"not valid TOML: {exc}", "", source) from None
    except RecursionError:
        from inaplanner.io.limits import MAX_DEPTH

        raise ValidationError(f"nested deeper than {MAX_DEPTH} levels", "", source) from None
    _check_toml_values(doc, source)
    return inventory_from_dict(doc, source=source, base_dir=base_dir or Path.cwd())


#: fields whose text may hold tabs and line breaks (a multi-line shell command)
_MULTILINE_FIELDS = ("build_command",)


def _check_toml_values(doc: dict[str, Any], source: str) -> None:
    """Parsing hardening (issue 16): nesting, finite numbers (TOML allows ``inf`` and ``nan``),
    64-bit integers, and no control characters in keys or text (ids, addresses, paths), except
    tabs and line breaks in a multi-line build command."""
    from inaplanner.io.limits import bad_id_char, check_tree

    check_tree(doc, "", source)
    stack: list[tuple[Any, str, str]] = [(doc, "", "")]
    while stack:
        value, where, key = stack.pop()
        if isinstance(value, dict):
            for k, v in value.items():
                ch = bad_id_char(k)
                if ch is not None:
                    raise ValidationError(f"key {k!r} holds the control character U+{ord(ch):04X}",
                                          where or "(top)", source)
                stack.append((v, f"{where}.{k}" if where else k, k))
        elif isinstance(value, list):
            stack.extend((v, f"{where}[{i}]", key) for i, v in enumerate(value))
        elif isinstance(value, str):
            text = value.replace("\t", " ").replace("\n", " ").replace("\r", " ") \
                if key in _MULTILINE_FIELDS else value
            ch = bad_id_char(text)
            if ch is not None:
                raise ValidationError(f"{value!r} holds the control character U+{ord(ch):04X}",
                                      where, source)


def _find_secret(obj: Any, where: str) -> str | None:
    if isinstance(obj, dict):
        for k, v in obj.items():
            if str(k).lower() in FORBIDDEN_KEYS:
                return f"{where}.{k}" if where else str(k)
            found = _find_secret(v, f"{where}.{k}" if where else str(k))
            if found:
                return found
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            found = _find_secret(v, f"{where}[{i}]")
            if found:
                return found
    return None


class _Fields:
    """Typed access to one TOML table, with errors naming the file, the entry and the field."""

    def __init__(self, table: dict[str, Any], defaults: dict[str, Any], where: str, source: str):
        self.table, self.defaults, self.where, self.source = table, defaults, where, source

    def fail(self, key: str, why: str) -> ValidationError:
        return ValidationError(why, f"{self.where}, field {key!r}" if key else self.where, self.source)

    def raw(self, key: str, use_default: bool = True) -> Any:
        if key in self.table:
            return self.table[key]
        return self.defaults.get(key) if use_default else None

    def string(self, key: str, required: bool = False, default: str | None = None,
               use_default: bool = True) -> str | None:
        v = self.raw(key, use_default)
        if v is None:
            if required:
                raise self.fail(key, "missing (required)")
            return default
        if not isinstance(v, str) or (required and not v.strip()):
            raise self.fail(key, f"must be a non-empty string, got {v!r}")
        return v

    def integer(self, key: str, lo: int, hi: int, required: bool = False,
                default: int | None = None) -> int | None:
        v = self.raw(key)
        if v is None:
            if required:
                raise self.fail(key, "missing (required)")
            return default
        if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi:
            raise self.fail(key, f"must be an integer in {lo}..{hi}, got {v!r}")
        return v

    def number(self, key: str, default: float) -> float:
        v = self.raw(key)
        if v is None:
            return default
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not 0 < v <= MAX_SECONDS:
            raise self.fail(key, f"must be a number > 0 and at most {MAX_SECONDS:g}, got {v!r}")
        return float(v)


def _local(path: str | None, base_dir: Path) -> Path | None:
    if path is None:
        return None
    p = Path(path).expanduser()
    return p if p.is_absolute() else (base_dir / p)


def _ssh_target(f: _Fields, label: str, base_dir: Path, known_hosts: Path | None,
                connect_timeout: float) -> SSHTarget | None:
    host = f.string("ssh_host", use_default=False)
    if host is None:
        for key in ("ssh_port", "ssh_user", "ssh_key"):
            if key in f.table:
                raise f.fail(key, "given without ssh_host")
        return None
    if not host.strip() or any(c.isspace() for c in host):
        raise f.fail("ssh_host", f"must be a host name or address, got {host!r}")
    return SSHTarget(
        host=host,
        port=f.integer("ssh_port", 1, 65535),
        user=f.string("ssh_user"),
        key=_local(f.string("ssh_key"), base_dir),
        known_hosts=known_hosts,
        connect_timeout=connect_timeout,
        label=label,
    )


def inventory_from_dict(doc: dict[str, Any], source: str = "<testbed>",
                        base_dir: Path | None = None) -> Inventory:
    """Build an :class:`Inventory` from the parsed TOML document, checking every field."""
    base = base_dir or Path.cwd()
    secret = _find_secret(doc, "")
    if secret:
        raise ValidationError(
            "passwords are never stored in the testbed file; use a key file (ssh_key) or ssh-agent",
            secret,
            source,
        )
    for key in doc:
        if key not in _TOP_KEYS:
            raise ValidationError(f"unknown key {key!r} (expected defaults, switch, host)", key, source)
    defaults = doc.get("defaults", {})
    if not isinstance(defaults, dict):
        raise ValidationError("must be a table [defaults]", "defaults", source)
    for key in defaults:
        if key not in _DEFAULT_KEYS:
            raise ValidationError(
                f"unknown key {key!r} (known: {', '.join(sorted(_DEFAULT_KEYS))})", "defaults", source
            )
    dfl = _Fields(defaults, {}, "defaults", source)
    known_hosts = _local(dfl.string("known_hosts"), base) or (base / "known_hosts")
    connect_timeout = dfl.number("connect_timeout", DEFAULT_CONNECT_TIMEOUT)
    build_timeout = dfl.number("build_timeout", DEFAULT_BUILD_TIMEOUT)
    inv = Inventory(source=source, known_hosts=known_hosts, connect_timeout=connect_timeout,
                    base_dir=base)

    switches = doc.get("switch", [])
    if not isinstance(switches, list):
        raise ValidationError("must be an array of tables [[switch]]", "switch", source)
    p4rt_seen: dict[tuple[str, int, int], str] = {}
    for i, table in enumerate(switches):
        sw = _switch_from_table(table, i, defaults, source, base, known_hosts, connect_timeout,
                                build_timeout)
        if sw.id in inv.switches:
            raise ValidationError(f"duplicate switch id {sw.id!r}", f"switch[{i}] {sw.id!r}", source)
        key = (sw.p4runtime_host, sw.p4runtime_port, sw.device_id)
        if key in p4rt_seen:
            raise ValidationError(
                f"same P4Runtime address and device_id as switch {p4rt_seen[key]!r}",
                f"switch {sw.id!r}, field 'p4runtime'", source,
            )
        p4rt_seen[key] = sw.id
        inv.switches[sw.id] = sw

    hosts = doc.get("host", [])
    if not isinstance(hosts, list):
        raise ValidationError("must be an array of tables [[host]]", "host", source)
    for i, table in enumerate(hosts):
        if not isinstance(table, dict):
            raise ValidationError("must be a table", f"host[{i}]", source)
        hid = table.get("id")
        where = f"host {hid!r}" if isinstance(hid, str) and hid else f"host[{i}]"
        f = _Fields(table, defaults, where, source)
        for key in table:
            if key not in _HOST_KEYS:
                raise f.fail(key, f"unknown field (known: {', '.join(sorted(_HOST_KEYS))})")
        hid = f.string("id", required=True, use_default=False)
        assert hid is not None
        if hid in inv.hosts:
            raise ValidationError(f"duplicate host id {hid!r}", where, source)
        ssh = _ssh_target(f, f"host {hid}", base, known_hosts, connect_timeout)
        config_path = f.string("config_path", default=DEFAULT_HOST_CONFIG_PATH)
        assert config_path is not None
        inv.hosts[hid] = HostInventory(id=hid, ssh=ssh, config_path=config_path)
    return inv


def _switch_from_table(table: Any, i: int, defaults: dict[str, Any], source: str, base: Path,
                       known_hosts: Path | None, connect_timeout: float,
                       build_timeout: float) -> SwitchInventory:
    if not isinstance(table, dict):
        raise ValidationError("must be a table", f"switch[{i}]", source)
    sid = table.get("id")
    where = f"switch {sid!r}" if isinstance(sid, str) and sid else f"switch[{i}]"
    f = _Fields(table, defaults, where, source)
    for key in table:
        if key not in _SWITCH_KEYS:
            raise f.fail(key, f"unknown field (known: {', '.join(sorted(_SWITCH_KEYS))})")
    sid = f.string("id", required=True, use_default=False)
    p4rt = f.string("p4runtime", required=True, use_default=False)
    assert sid is not None and p4rt is not None
    try:
        split_address(p4rt)
    except ValueError as exc:
        raise f.fail("p4runtime", str(exc)) from None
    device_id = f.integer("device_id", 0, 2**64 - 1, required=True)
    assert device_id is not None
    target = f.string("target", required=True, use_default=False)
    if target not in TARGETS:
        raise f.fail("target", f"must be one of {', '.join(TARGETS)}, got {target!r}")
    election = table.get("election_id", list(DEFAULT_ELECTION_ID))
    if (
        not isinstance(election, list)
        or len(election) != 2
        or not all(isinstance(x, int) and not isinstance(x, bool) and 0 <= x < 2**64
                   for x in election)
    ):
        raise f.fail("election_id", f"must be [high, low], two integers in 0..2^64-1, got {election!r}")
    if election == [0, 0]:
        raise f.fail("election_id", "must not be [0, 0] (that id cannot become primary)")
    tdef = TARGET_DEFAULTS[target]
    ssh = _ssh_target(f, f"switch {sid}", base, known_hosts, connect_timeout)
    program = f.string("program", default=tdef["program"], use_default=False) or tdef["program"]
    sw = SwitchInventory(
        id=sid,
        p4runtime=p4rt,
        device_id=device_id,
        target=target,
        election_id=(election[0], election[1]),
        ssh=ssh,
        workdir=f.string("workdir", default=DEFAULT_WORKDIR) or DEFAULT_WORKDIR,
        build_command=f.string("build_command", default=tdef["build_command"]) or "",
        program=program,
        program_name=f.string("program_name", default=Path(program).stem, use_default=False)
        or Path(program).stem,
        p4info_path=f.string("p4info_path", default=tdef["p4info_path"], use_default=False) or "",
        device_config_path=f.string("device_config_path", default=tdef["device_config_path"],
                                    use_default=False) or "",
        context_json_path=f.string("context_json_path", default=tdef["context_json_path"],
                                   use_default=False) or "",
        build_timeout=f.number("build_timeout", build_timeout),
    )
    sw.tls = _tls_settings(f, base)
    if target == "tofino" and not sw.context_json_path:
        raise f.fail("context_json_path", "required for target tofino (the compiler's context.json)")
    if ssh is not None:
        try:
            sw.render_build_command()
        except (KeyError, IndexError, ValueError) as exc:
            raise f.fail("build_command", f"bad placeholder {exc} (known: {{workdir}} {{program}} "
                         "{program_name} {p4info} {device_config} {context_json} {target})") from None
    ports = table.get("ports", {})
    if not isinstance(ports, dict):
        raise f.fail("ports", "must be a table [switch.ports] of neighbour id = port number")
    seen: dict[int, str] = {}
    for neighbour, port in ports.items():
        if not isinstance(port, int) or isinstance(port, bool) or not 0 <= port < 2**32:
            raise f.fail(f"ports.{neighbour}", f"must be a port number >= 0, got {port!r}")
        if port in seen:
            raise f.fail(f"ports.{neighbour}", f"port {port} is also used toward {seen[port]!r}")
        seen[port] = neighbour
        sw.ports[str(neighbour)] = port
    return sw


# ---------------------------------------------------------------------------------------------
# P4Runtime transport security


def _tls_settings(f: _Fields, base: Path) -> TLSSettings | None:
    """The ``tls`` fields of one switch (its table, then ``[defaults]``)."""
    tls = f.raw("tls")
    if tls is not None and not isinstance(tls, bool):
        raise f.fail("tls", f"must be true or false, got {tls!r}")
    paths: dict[str, Path | None] = {}
    for key in ("ca_cert", "client_cert", "client_key"):
        v = f.string(key)
        if v is not None and ("-----BEGIN" in v or "\n" in v):
            raise f.fail(key, "must be the path of a PEM file, not its contents (keys are never "
                         "stored in the testbed file)")
        paths[key] = _local(v, base)
    server_name = f.string("server_name")
    given = [k for k in ("ca_cert", "client_cert", "client_key", "server_name")
             if f.raw(k) is not None]
    if tls is None:
        if given:
            raise f.fail(given[0], "given without tls = true")
        return None
    if not tls:
        own = [k for k in given if k in f.table]  # [defaults] may hold them for other switches
        if own:
            raise f.fail(own[0], "given with tls = false (plaintext)")
        return PLAINTEXT
    if (paths["client_cert"] is None) != (paths["client_key"] is None):
        missing = "client_key" if paths["client_key"] is None else "client_cert"
        raise f.fail(missing, "client_cert and client_key go together (mutual TLS)")
    return TLSSettings(True, paths["ca_cert"], paths["client_cert"], paths["client_key"],
                       server_name)


LOOPBACK_HOSTS = ("localhost", "::1")


def is_loopback(host: str) -> bool:
    return host in LOOPBACK_HOSTS or host.startswith("127.")


def check_transport(inv: Inventory, switch_ids: Any = None) -> list[str]:
    """Refuse a switch whose file does not say how to talk to it (no ``tls`` field); return a
    warning per switch reached in plaintext on a non-loopback address."""
    warnings = []
    for sid in sorted(switch_ids if switch_ids is not None else inv.switches):
        sw = inv.switches.get(sid)
        if sw is None:
            continue
        if sw.tls is None:
            raise ValidationError(
                "no 'tls' setting: P4Runtime would run in plaintext; set tls = true (with "
                "ca_cert, and client_cert/client_key for mutual TLS) or tls = false to allow "
                "plaintext", f"switch {sid!r}, field 'tls'", inv.source)
        if not sw.tls.enabled and not is_loopback(sw.p4runtime_host):
            warnings.append(f"switch {sid}: P4Runtime to {sw.p4runtime} is plaintext (tls = "
                            "false): anyone on the path can read and change what is written")
    return warnings


# ---------------------------------------------------------------------------------------------
# checks against a scenario


def check_against_scenario(inv: Inventory, scenario: Any, required: set[str] | None = None) -> None:
    """Refuse an inventory that does not fit ``scenario``: unknown switch or host ids, ports toward
    nodes that are not neighbours, two neighbours on one front-panel port, and (``required``) switches
    the plan needs that the inventory lacks."""
    for sid, sw in inv.switches.items():
        where = f"switch {sid!r}"
        if not scenario.has_node(sid):
            raise ValidationError("no such node in the scenario", where + ", field 'id'", inv.source)
        if not scenario.is_switch(sid):
            raise ValidationError("is a host in the scenario, not a switch", where + ", field 'id'",
                                  inv.source)
        neighbours = set(scenario.neighbours(sid))
        for neighbour in sw.ports:
            if neighbour not in neighbours:
                raise ValidationError(
                    f"{neighbour!r} is not a neighbour of {sid!r} in the scenario "
                    f"(neighbours: {', '.join(sorted(neighbours)) or 'none'})",
                    f"{where}, field 'ports.{neighbour}'", inv.source,
                )
        used: dict[int, str] = {}
        for neighbour in sorted(neighbours):
            try:
                port = inv.port_of(sid, neighbour, scenario)
            except ValidationError:
                continue
            if port in used:
                raise ValidationError(
                    f"port {port} leads to both {used[port]!r} and {neighbour!r}",
                    f"{where}, field 'ports'", inv.source,
                )
            used[port] = neighbour
    for hid in inv.hosts:
        if not scenario.has_node(hid) or scenario.is_switch(hid):
            raise ValidationError("no such host in the scenario", f"host {hid!r}, field 'id'",
                                  inv.source)
    for sid in sorted(required or ()):
        if sid not in inv.switches:
            raise ValidationError(
                "the plan uses this switch but the testbed file has no [[switch]] for it",
                f"switch {sid!r}", inv.source,
            )


# ---------------------------------------------------------------------------------------------
# writing


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _toml_key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else _toml_str(key)


def _toml_str(s: str) -> str:
    out = ['"']
    for ch in s:
        code = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\u{code:04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, str):
        return _toml_str(v)
    if isinstance(v, Path):
        return _toml_str(str(v))
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise TypeError(f"cannot write {type(v).__name__} to TOML")


def _ssh_fields(ssh: SSHTarget | None) -> list[tuple[str, Any]]:
    if ssh is None:
        return []
    rows: list[tuple[str, Any]] = [("ssh_host", ssh.host)]
    if ssh.port is not None:
        rows.append(("ssh_port", ssh.port))
    if ssh.user is not None:
        rows.append(("ssh_user", ssh.user))
    if ssh.key is not None:
        rows.append(("ssh_key", str(ssh.key)))
    return rows


def _tls_fields(tls: TLSSettings | None) -> list[tuple[str, Any]]:
    if tls is None:
        return []
    rows: list[tuple[str, Any]] = [("tls", tls.enabled)]
    for key in ("ca_cert", "client_cert", "client_key", "server_name"):
        v = getattr(tls, key)
        if v is not None:
            rows.append((key, str(v)))
    return rows


def dump_inventory(inv: Inventory, header: str = "") -> str:
    """The inventory as ``testbed.toml`` text; :func:`parse_inventory` reads it back equal."""
    lines: list[str] = []
    if header:
        lines += [f"# {line}".rstrip() for line in header.splitlines()] + [""]
    lines.append("[defaults]")
    if inv.known_hosts is not None:
        lines.append(f"known_hosts = {_toml_value(str(inv.known_hosts))}")
    lines.append(f"connect_timeout = {_toml_value(float(inv.connect_timeout))}")
    for sw in inv.switches.values():
        tdef = TARGET_DEFAULTS[sw.target]
        lines += ["", "[[switch]]"]
        rows: list[tuple[str, Any]] = [
            ("id", sw.id), ("p4runtime", sw.p4runtime), ("device_id", sw.device_id),
            ("election_id", list(sw.election_id)), ("target", sw.target),
        ]
        rows += _ssh_fields(sw.ssh)
        if sw.ssh is not None:
            rows += [("workdir", sw.workdir), ("program", sw.program)]
        rows += [
            ("program_name", sw.program_name), ("p4info_path", sw.p4info_path),
            ("device_config_path", sw.device_config_path),
        ]
        if sw.context_json_path or sw.target == "tofino":
            rows.append(("context_json_path", sw.context_json_path))
        rows += _tls_fields(sw.tls)
        if sw.ssh is not None:
            if sw.build_command != tdef["build_command"]:
                rows.append(("build_command", sw.build_command))
            rows.append(("build_timeout", float(sw.build_timeout)))
        lines += [f"{k} = {_toml_value(v)}" for k, v in rows]
        if sw.ports:
            lines.append("[switch.ports]")
            lines += [f"{_toml_key(n)} = {p}" for n, p in sw.ports.items()]
    for host in inv.hosts.values():
        lines += ["", "[[host]]", f"id = {_toml_value(host.id)}"]
        lines += [f"{k} = {_toml_value(v)}" for k, v in _ssh_fields(host.ssh)]
        lines.append(f"config_path = {_toml_value(host.config_path)}")
    return "\n".join(lines) + "\n"


def save_inventory(inv: Inventory, path: str | Path, header: str = "") -> None:
    """Write ``testbed.toml`` atomically."""
    from inaplanner.io.atomic import atomic_write_text

    atomic_write_text(Path(path), dump_inventory(inv, header))
