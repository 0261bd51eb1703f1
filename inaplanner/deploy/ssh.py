"""SSH to build hosts and workers (paramiko): connect safely, upload, build, fetch, write atomically.

Host keys: an unknown host key is refused (never AutoAddPolicy). The only way to trust a new host is
the explicit pair :func:`scan_host_key` (shows the key and its SHA256 fingerprint) and
:func:`record_host_key` (writes it into the project's known_hosts file) — a user decision.

Remote commands run in a pty under the remote ``timeout`` (GNU coreutils) *and* a local overall
deadline. ``exec_command``'s own timeout is only a read timeout, so the loop in :meth:`Session.run`
checks the deadline and the cancel flag itself; on either it kills the remote process group (the
command prints its pid first) and closes the channel (the pty hangs up what is left).
"""

from __future__ import annotations

import errno
import posixpath
import secrets
import shlex
import socket
import stat
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import paramiko

from inaplanner.errors import Cancelled, InaplannerError
from inaplanner.progress import CancelToken
from inaplanner.testbed.inventory import SSHTarget

LineCallback = Callable[[str], None]

PID_MARKER = "__INAPLANNER_PID__"
LAST_LINES = 20
DEFAULT_SSH_CONFIG = Path("~/.ssh/config")


# ---------------------------------------------------------------------------------------------
# errors


class SSHError(InaplannerError):
    """A failed SSH step; the message names the target and the cause."""

    cause = "ssh error"

    def __init__(self, label: str, detail: str) -> None:
        self.label = label
        self.detail = detail
        super().__init__(f"{label}: {self.cause}: {detail}" if label else f"{self.cause}: {detail}")


class ConnectionRefused(SSHError):
    cause = "connection refused"


class ConnectionFailed(SSHError):
    cause = "cannot connect"


class AuthFailed(SSHError):
    cause = "authentication failed"


class HostKeyUnknown(SSHError):
    """The server's key is in no known_hosts file. ``key``/``fingerprint`` let a UI ask the user."""

    cause = "host key unknown"

    def __init__(self, label: str, detail: str, name: str = "", key: paramiko.PKey | None = None):
        self.name = name
        self.key = key
        self.fingerprint = key.fingerprint if key is not None else ""
        super().__init__(label, detail)


class HostKeyMismatch(SSHError):
    cause = "host key mismatch"


class RemoteCommandFailed(SSHError):
    """A remote command exited non-zero, timed out or was cancelled; ``last_lines`` is its tail."""

    cause = "remote command failed"

    def __init__(self, label: str, detail: str, exit_status: int | None = None,
                 last_lines: Iterable[str] = ()) -> None:
        self.exit_status = exit_status
        self.last_lines = list(last_lines)
        tail = "\n".join(self.last_lines)
        super().__init__(label, detail + (f"; last lines:\n{tail}" if tail else "; no output"))


class RemoteTimeout(RemoteCommandFailed):
    cause = "remote command timed out"


class RemoteFileError(SSHError):
    cause = "remote file error"


# ---------------------------------------------------------------------------------------------
# ~/.ssh/config


@dataclass(frozen=True)
class ResolvedTarget:
    """An :class:`SSHTarget` with ``~/.ssh/config`` applied: what ``connect()`` is given."""

    hostname: str
    port: int
    user: str
    key_files: tuple[Path, ...]
    use_agent: bool
    proxy_command: str | None
    known_hosts: Path | None
    connect_timeout: float
    label: str

    @property
    def known_hosts_name(self) -> str:
        """The name of this host in a known_hosts file (OpenSSH's ``[host]:port`` for port != 22)."""
        return self.hostname if self.port == 22 else f"[{self.hostname}]:{self.port}"


def load_ssh_config(path: Path | None = None) -> paramiko.SSHConfig:
    p = (path or DEFAULT_SSH_CONFIG).expanduser()
    if not p.is_file():
        return paramiko.SSHConfig()
    try:
        return paramiko.SSHConfig.from_path(str(p))
    except (OSError, paramiko.SSHException) as exc:
        raise InaplannerError(f"{p}: cannot read the SSH config: {exc}") from None


def resolve_target(target: SSHTarget, config: paramiko.SSHConfig | None = None) -> ResolvedTarget:
    """Apply ``~/.ssh/config`` the way OpenSSH does: values in the inventory win; the config's
    ``HostName``, ``Port``, ``User``, ``IdentityFile`` and ``ProxyCommand`` fill the gaps."""
    cfg = (config if config is not None else load_ssh_config()).lookup(target.host)
    hostname = cfg.get("hostname", target.host)
    port = target.port
    if port is None:
        try:
            port = int(cfg.get("port", 22))
        except ValueError:
            raise InaplannerError(
                f"{target.label}: ~/.ssh/config gives a bad Port for {target.host!r}"
            ) from None
    user = target.user or cfg.get("user") or _local_user()
    if target.key is not None:
        key_files: tuple[Path, ...] = (target.key,)
        use_agent = False
    else:
        key_files = tuple(Path(p).expanduser() for p in cfg.get("identityfile", []))
        key_files = tuple(p for p in key_files if p.is_file())
        use_agent = True
    proxy = cfg.get("proxycommand")
    if proxy and proxy.lower() == "none":
        proxy = None
    return ResolvedTarget(
        hostname=hostname, port=port, user=user, key_files=key_files, use_agent=use_agent,
        proxy_command=proxy, known_hosts=target.known_hosts,
        connect_timeout=target.connect_timeout, label=target.label or target.describe(),
    )


def _local_user() -> str:
    import getpass

    return getpass.getuser()


# ---------------------------------------------------------------------------------------------
# host keys


class _RefuseUnknownHost(paramiko.RejectPolicy):
    """Like paramiko's RejectPolicy, but keeps the key so the error can show its fingerprint."""

    def __init__(self, label: str) -> None:
        self.label = label

    def missing_host_key(self, client: paramiko.SSHClient, hostname: str, key: paramiko.PKey) -> None:
        raise HostKeyUnknown(
            self.label,
            f"{hostname} offered {key.get_name()} key {key.fingerprint}, which is in no known_hosts "
            "file; check the fingerprint and accept it explicitly (inaplanner records it in the "
            "project's known_hosts)",
            name=hostname, key=key,
        )


@dataclass(frozen=True)
class HostKeyInfo:
    name: str  # as written in known_hosts, e.g. "[10.0.0.1]:2222"
    key_type: str
    fingerprint: str  # SHA256:...
    key: paramiko.PKey = field(compare=False)

    def known_hosts_line(self) -> str:
        return f"{self.name} {self.key.get_name()} {self.key.get_base64()}"


def _open_socket(rt: ResolvedTarget) -> socket.socket | paramiko.ProxyCommand:
    if rt.proxy_command:
        cmd = rt.proxy_command.replace("%h", rt.hostname).replace("%p", str(rt.port))
        cmd = cmd.replace("%r", rt.user)
        return paramiko.ProxyCommand(cmd)
    try:
        return socket.create_connection((rt.hostname, rt.port), timeout=rt.connect_timeout)
    except ConnectionRefusedError:
        raise ConnectionRefused(rt.label, f"{rt.hostname}:{rt.port} (is sshd running?)") from None
    except socket.gaierror as exc:
        raise ConnectionFailed(rt.label, f"unknown host {rt.hostname!r} ({exc.strerror})") from None
    except TimeoutError:
        raise ConnectionFailed(
            rt.label, f"{rt.hostname}:{rt.port} did not answer in {rt.connect_timeout:g} s"
        ) from None
    except OSError as exc:
        if exc.errno == errno.ECONNREFUSED:
            raise ConnectionRefused(rt.label, f"{rt.hostname}:{rt.port}") from None
        raise ConnectionFailed(rt.label, f"{rt.hostname}:{rt.port}: {exc.strerror or exc}") from None


def scan_host_key(target: SSHTarget | ResolvedTarget,
                  config: paramiko.SSHConfig | None = None) -> HostKeyInfo:
    """Fetch the host key the server offers, without logging in and without trusting it."""
    rt = target if isinstance(target, ResolvedTarget) else resolve_target(target, config)
    sock = _open_socket(rt)
    transport = paramiko.Transport(sock)
    try:
        transport.start_client(timeout=rt.connect_timeout)
        key = transport.get_remote_server_key()
    except (paramiko.SSHException, EOFError, OSError) as exc:
        raise ConnectionFailed(rt.label, f"SSH handshake failed: {exc}") from None
    finally:
        transport.close()
    return HostKeyInfo(rt.known_hosts_name, key.get_name(), key.fingerprint, key)


def record_host_key(known_hosts: Path, info: HostKeyInfo, replace: bool = False) -> None:
    """Trust a host key: add it to the project's known_hosts file (atomic rewrite).

    This is the one trust-on-first-use path and must follow a user's explicit decision. A host already
    listed with a different key of the same type is refused unless ``replace``.
    """
    from inaplanner.io.atomic import atomic_write_text

    known_hosts = known_hosts.expanduser()
    keys = paramiko.HostKeys()
    lines: list[str] = []
    if known_hosts.is_file():
        keys.load(str(known_hosts))
        lines = known_hosts.read_text(encoding="utf-8").splitlines()
    existing = keys.lookup(info.name)
    if existing is not None and info.key.get_name() in existing:
        if existing[info.key.get_name()] == info.key:
            return
        if not replace:
            raise HostKeyMismatch(
                info.name,
                f"{known_hosts} already holds a different {info.key.get_name()} key for this host",
            )
        lines = [ln for ln in lines if not _line_is(ln, info.name, info.key.get_name())]
    lines.append(info.known_hosts_line())
    known_hosts.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(known_hosts, "\n".join(lines) + "\n")


def _line_is(line: str, name: str, key_type: str) -> bool:
    parts = line.split()
    return len(parts) >= 3 and name in parts[0].split(",") and parts[1] == key_type


# ---------------------------------------------------------------------------------------------
# sessions


@dataclass
class RunResult:
    exit_status: int
    lines: list[str]


def _load_key(path: Path, label: str) -> paramiko.PKey:
    if not path.is_file():
        raise AuthFailed(label, f"key file {path} does not exist")
    try:
        return paramiko.PKey.from_path(path)
    except TypeError:  # cryptography: "Password was not given but private key is encrypted"
        raise AuthFailed(
            label, f"key file {path} is encrypted; load it into ssh-agent (passwords are not stored)"
        ) from None
    except (ValueError, paramiko.SSHException, OSError) as exc:
        raise AuthFailed(label, f"cannot read key file {path}: {exc}") from None


def connect(target: SSHTarget | ResolvedTarget, config: paramiko.SSHConfig | None = None,
            use_system_known_hosts: bool = True) -> Session:
    """Log in; errors are :class:`ConnectionRefused`, :class:`AuthFailed`,
    :class:`HostKeyUnknown`, :class:`HostKeyMismatch` or :class:`ConnectionFailed`."""
    rt = target if isinstance(target, ResolvedTarget) else resolve_target(target, config)
    client = paramiko.SSHClient()
    if use_system_known_hosts:
        try:
            client.load_system_host_keys()
        except OSError:
            pass
    if rt.known_hosts is not None and rt.known_hosts.expanduser().is_file():
        try:
            client.get_host_keys().load(str(rt.known_hosts.expanduser()))
        except (OSError, paramiko.SSHException) as exc:
            raise InaplannerError(f"{rt.known_hosts}: cannot read known_hosts: {exc}") from None
    client.set_missing_host_key_policy(_RefuseUnknownHost(rt.label))
    pkey = _load_key(rt.key_files[0], rt.label) if rt.key_files and not rt.use_agent else None
    key_filenames = [str(p) for p in rt.key_files] if rt.use_agent else None
    sock = _open_socket(rt)
    try:
        client.connect(
            rt.hostname, port=rt.port, username=rt.user, pkey=pkey, key_filename=key_filenames,
            allow_agent=rt.use_agent, look_for_keys=rt.use_agent, timeout=rt.connect_timeout,
            banner_timeout=rt.connect_timeout, auth_timeout=rt.connect_timeout, sock=sock,
        )
    except HostKeyUnknown:
        client.close()
        raise
    except paramiko.BadHostKeyException as exc:
        client.close()
        raise HostKeyMismatch(
            rt.label,
            f"{rt.known_hosts_name} offered {exc.key.get_name()} key {exc.key.fingerprint} but "
            f"known_hosts has {exc.expected_key.fingerprint}; the host was reinstalled or someone is "
            "in between — check, then replace the recorded key",
        ) from None
    except paramiko.AuthenticationException as exc:
        client.close()
        how = f"key {rt.key_files[0]}" if pkey is not None else "ssh-agent / default keys"
        raise AuthFailed(rt.label, f"{rt.user}@{rt.known_hosts_name} refused {how} ({exc})") from None
    except paramiko.SSHException as exc:
        client.close()
        if "No authentication methods available" in str(exc):
            raise AuthFailed(rt.label, f"{rt.user}@{rt.known_hosts_name}: no key file given and no "
                             "key in ssh-agent") from None
        raise ConnectionFailed(rt.label, f"SSH handshake with {rt.known_hosts_name} failed: {exc}") from None
    except (EOFError, OSError) as exc:
        client.close()
        raise ConnectionFailed(rt.label, f"{rt.known_hosts_name}: {exc}") from None
    return Session(client, rt)


class Session:
    """A logged-in SSH connection: run commands, move files. Close it (or use ``with``)."""

    def __init__(self, client: paramiko.SSHClient, target: ResolvedTarget) -> None:
        self.client = client
        self.target = target
        self._sftp: paramiko.SFTPClient | None = None

    @property
    def label(self) -> str:
        return self.target.label

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._sftp is not None:
            try:
                self._sftp.close()
            except OSError:
                pass
            self._sftp = None
        self.client.close()

    @property
    def sftp(self) -> paramiko.SFTPClient:
        if self._sftp is None:
            try:
                self._sftp = self.client.open_sftp()
            except (paramiko.SSHException, OSError) as exc:
                raise RemoteFileError(self.label, f"cannot open SFTP: {exc}") from None
        return self._sftp

    # ---- files ---------------------------------------------------------------------------------

    def makedirs(self, remote_dir: str) -> None:
        """``mkdir -p`` over SFTP (relative paths start at the login directory)."""
        if remote_dir in ("", ".", "/"):
            return
        parts = remote_dir.split("/")
        path = "/" if remote_dir.startswith("/") else ""
        for part in parts:
            if not part:
                continue
            path = posixpath.join(path, part) if path else part
            try:
                st = self.sftp.stat(path)
                if not stat.S_ISDIR(st.st_mode or 0):
                    raise RemoteFileError(self.label, f"{path} exists and is not a directory")
            except FileNotFoundError:
                try:
                    self.sftp.mkdir(path)
                except OSError as exc:
                    try:  # created meanwhile by another session (parallel uploads)?
                        if stat.S_ISDIR(self.sftp.stat(path).st_mode or 0):
                            continue
                    except OSError:
                        pass
                    raise RemoteFileError(self.label, f"cannot create {path}: {exc}") from None

    def upload_tree(self, local_dir: Path, remote_dir: str,
                    include: Callable[[Path], bool] | None = None) -> list[str]:
        """Copy the files under ``local_dir`` (recursively) into ``remote_dir``; returns the remote
        paths written, in sorted order."""
        written: list[str] = []
        self.makedirs(remote_dir)
        for path in sorted(local_dir.rglob("*")):
            if not path.is_file() or (include is not None and not include(path)):
                continue
            rel = path.relative_to(local_dir).as_posix()
            remote = posixpath.join(remote_dir, rel)
            self.makedirs(posixpath.dirname(remote))
            try:
                self.sftp.put(str(path), remote)
            except OSError as exc:
                raise RemoteFileError(self.label, f"cannot upload {path} to {remote}: {exc}") from None
            written.append(remote)
        return written

    def read_file(self, remote_path: str, max_bytes: int = 512 * 1024 * 1024) -> bytes:
        try:
            with self.sftp.open(remote_path, "rb") as fh:
                size = fh.stat().st_size or 0
                if size > max_bytes:
                    raise RemoteFileError(self.label, f"{remote_path} is {size} bytes, too large")
                fh.prefetch(size)
                return fh.read()
        except FileNotFoundError:
            raise RemoteFileError(self.label, f"{remote_path} does not exist") from None
        except OSError as exc:
            raise RemoteFileError(self.label, f"cannot read {remote_path}: {exc}") from None

    def write_file_atomic(self, remote_path: str, data: bytes, mode: int = 0o644) -> None:
        """Upload to a temporary name beside the target, then ``posix-rename`` it into place: a
        reader sees the old file or the new one, never half of it."""
        directory = posixpath.dirname(remote_path)
        self.makedirs(directory)
        tmp = posixpath.join(directory, f".{posixpath.basename(remote_path)}.tmp-{secrets.token_hex(4)}")
        try:
            with self.sftp.open(tmp, "wb") as fh:
                fh.set_pipelined(True)
                fh.write(data)
            self.sftp.chmod(tmp, mode)
            self.sftp.posix_rename(tmp, remote_path)
        except (OSError, paramiko.SSHException) as exc:
            try:
                self.sftp.remove(tmp)
            except OSError:
                pass
            raise RemoteFileError(self.label, f"cannot write {remote_path}: {exc}") from None

    # ---- commands ------------------------------------------------------------------------------

    def run(self, command: str, *, cwd: str | None = None, timeout: float,
            on_line: LineCallback | None = None, cancel: CancelToken | Callable[[], bool] | None = None,
            what: str = "remote command") -> RunResult:
        """Run ``command`` (a shell command line) with an overall deadline of ``timeout`` seconds.

        Output (stdout and stderr, merged by the pty) is streamed line by line to ``on_line``.
        Raises :class:`RemoteCommandFailed` on a non-zero exit, :class:`RemoteTimeout` past the
        deadline, :class:`~inaplanner.errors.Cancelled` when ``cancel()`` turns true; in the last two
        cases the remote process group is killed first.
        """
        secs = max(1, int(timeout + 0.999))
        inner = f"cd -- {shlex.quote(cwd)} || exit 97; {command}" if cwd else command
        script = (
            f'echo "{PID_MARKER} $$"; '
            "command -v timeout >/dev/null 2>&1 || "
            "{ echo \"inaplanner: the remote host has no 'timeout' command (GNU coreutils)\"; "
            "exit 127; }; "
            f"exec timeout -k 5 {secs} sh -c {shlex.quote(inner)}"
        )
        transport = self.client.get_transport()
        if transport is None or not transport.is_active():
            raise ConnectionFailed(self.label, "the SSH connection is closed")
        try:
            chan = transport.open_session(timeout=self.target.connect_timeout)
            chan.get_pty(term="dumb", width=200, height=50)
            chan.exec_command("sh -c " + shlex.quote(script))
        except (paramiko.SSHException, OSError) as exc:
            raise ConnectionFailed(self.label, f"cannot start {what}: {exc}") from None
        chan.settimeout(0.1)
        deadline = time.monotonic() + timeout + 3.0  # the remote timeout fires first
        tail: deque[str] = deque(maxlen=LAST_LINES)
        lines: list[str] = []
        buf = b""
        pid: int | None = None

        def emit(raw: bytes) -> None:
            nonlocal pid
            text = raw.decode("utf-8", "replace").rstrip("\r")
            if pid is None and text.startswith(PID_MARKER):
                try:
                    pid = int(text.split()[1])
                except (IndexError, ValueError):
                    pass
                return
            lines.append(text)
            tail.append(text)
            if on_line is not None:
                on_line(text)

        try:
            while True:
                if cancel is not None and cancel():
                    self._kill(pid)
                    raise Cancelled(f"{self.label}: {what} cancelled")
                if time.monotonic() > deadline:
                    self._kill(pid)
                    raise RemoteTimeout(self.label, f"{what} ran past {timeout:g} s and was killed",
                                        None, tail)
                try:
                    data = chan.recv(65536)
                except TimeoutError:
                    continue
                except (paramiko.SSHException, OSError) as exc:
                    raise ConnectionFailed(self.label, f"{what}: connection lost: {exc}") from None
                if not data:
                    break
                buf += data
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    emit(line)
            if buf:
                emit(buf)
            while not chan.exit_status_ready():
                if time.monotonic() > deadline:
                    raise RemoteTimeout(self.label, f"{what} did not report its exit status", None, tail)
                time.sleep(0.02)
            status = chan.recv_exit_status()
        finally:
            chan.close()
        if status == 124:
            raise RemoteTimeout(self.label, f"{what} ran past {timeout:g} s (remote timeout)",
                                status, tail)
        if status != 0:
            raise RemoteCommandFailed(self.label, f"{what} exited with status {status}", status, tail)
        return RunResult(status, lines)

    def _kill(self, pid: int | None) -> None:
        """Kill the remote command's process group: TERM, then KILL what is left after 2 s."""
        if pid is None:
            return
        cmd = (f"kill -TERM -- -{pid} 2>/dev/null; i=0; while [ $i -lt 20 ] && "
               f"kill -0 -- -{pid} 2>/dev/null; do sleep 0.1; i=$((i+1)); done; "
               f"kill -KILL -- -{pid} 2>/dev/null; true")
        transport = self.client.get_transport()
        if transport is None or not transport.is_active():
            return
        try:
            chan = transport.open_session(timeout=self.target.connect_timeout)
            chan.exec_command(cmd)
            chan.recv_exit_status()
            chan.close()
        except (paramiko.SSHException, OSError):
            pass
