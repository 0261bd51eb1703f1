"""An emulated P4Runtime target: a gRPC P4Runtime server in Python for tests and demos.

It behaves like a real target (bmv2 ``simple_switch_grpc`` through PI) where a controller can
tell the difference:

* StreamChannel arbitration (P4Runtime spec section 5, PI's ``arbitration.md``): per role the
  connected client with the highest election id is primary; every client is told the primary's
  election id with status OK (primary), ALREADY_EXISTS (backup) or NOT_FOUND (no primary); a
  duplicate election id ends the stream with INVALID_ARGUMENT and a wrong device id with
  NOT_FOUND. When the primary goes away the next highest becomes primary and all are told.
* Only the primary may Write or SetForwardingPipelineConfig (PERMISSION_DENIED otherwise).
* SetForwardingPipelineConfig: VERIFY, VERIFY_AND_SAVE, VERIFY_AND_COMMIT, COMMIT,
  RECONCILE_AND_COMMIT (only for an unchanged P4Info); a committed new pipeline starts empty.
* Every update is checked against the P4Info (:mod:`inaplanner.emulator.validate`) and
  answered per update (ALREADY_EXISTS, NOT_FOUND, INVALID_ARGUMENT, RESOURCE_EXHAUSTED ...) in
  ``grpc-status-details-bin`` with OK entries for the updates that went through; only
  CONTINUE_ON_ERROR atomicity is offered (UNIMPLEMENTED otherwise), as on bmv2.
* Read with wildcards (all tables / one table / one entry, all groups, all counters / cells).
* Counters as the P4Info declares them; :meth:`EmulatorHandle.set_port_rates` makes them grow.
* Register access is UNIMPLEMENTED, as on bmv2.
* A device config that starts like JSON must be a JSON object, and when it is a bmv2 JSON (has
  ``pipelines``) its tables must be the P4Info's; the multicast group table has a limit
  (``max_multicast_groups``).

``behaviour`` chooses how refusals look. ``"strict"`` (the default) answers as the P4Runtime spec
says: INVALID_ARGUMENT for a bad device config (nothing changes), RESOURCE_EXHAUSTED for a full
table or multicast group table, NOT_FOUND for a wrong device id at arbitration. ``"bmv2"`` answers
as ``simple_switch_grpc`` (PI) does: a refused update is UNKNOWN; a rejected VERIFY_AND_COMMIT
(UNKNOWN) leaves the switch forwarding with its old pipeline while every Read fails (UNKNOWN) and
every later pipeline push fails, until :meth:`EmulatorHandle.restart`; a wrong device id is
accepted at arbitration, reads answer FAILED_PRECONDITION "no pipeline", and a pipeline push for
it fails and stops the switch.

The server can use TLS, with client certificates required (mTLS) or not (:class:`ServerTLS`).
:meth:`EmulatorHandle.stop` ends open streams, stops the gRPC server with a short grace period and
joins its threads with timeouts, so a process serving emulators exits promptly.

Every emulator of a process is served by the process's one event loop (:mod:`inaplanner.aioloop`):
each is a ``grpc.aio`` server on its own port. Streams run on the loop itself; the other RPCs
(plain functions) run on one pool of threads shared by the process's emulators. A synchronous
``grpc.server`` keeps a thread per server that wakes five times a second: 1,280 idle emulators
(fat-tree k=32) were 1,281 threads, 10 % of a core and load average 155 on a 2-core machine;
served by the loop they are three threads and no CPU.

Use :func:`start_emulator` (port 0 picks a free port).
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import threading
import time
from collections.abc import Callable
from concurrent import futures
from dataclasses import dataclass, field

import grpc
import grpc.aio
from google.protobuf import text_format
from google.protobuf.message import DecodeError
from google.rpc import code_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

from inaplanner import aioloop
from inaplanner.dataplane.p4info import P4InfoIndex
from inaplanner.dataplane.wire import counter_entity, counter_read_request, wire_field
from inaplanner.emulator.state import DeviceState
from inaplanner.emulator.status import DETAILS_KEY, build_write_status
from inaplanner.emulator.validate import EntityError
from inaplanner.errors import InaplannerError

#: Entities per ReadResponse message (a real server also splits long answers).
READ_CHUNK = 1000

_Pipe = p4runtime_pb2.SetForwardingPipelineConfigRequest
_GetPipe = p4runtime_pb2.GetForwardingPipelineConfigRequest


def _election(msg) -> int:
    return (msg.high << 64) | msg.low


def _set_election(target, value: int) -> None:
    target.high = value >> 64
    target.low = value & ((1 << 64) - 1)


class _Outbox:
    """What a StreamChannel sends: put from any thread, awaited on the event loop."""

    def __init__(self) -> None:
        self._queue: asyncio.Queue = asyncio.Queue()

    def put(self, item: object) -> None:
        aioloop.call_soon(self._queue.put_nowait, item)

    async def get(self) -> object:
        return await self._queue.get()


@dataclass(eq=False)
class _Client:
    """One open StreamChannel."""

    out: _Outbox = field(default_factory=_Outbox)
    role: str = ""
    election_id: int | None = None
    registered: bool = False


FailPredicate = Callable[[p4runtime_pb2.Update], "bool | str"]


class _Abort(Exception):
    """A refusal made on a handler thread, sent by the event loop's handler."""

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(details)
        self.code, self.details = code, details


class _AbortContext:
    """The one thing a handler body run on a thread needs of its RPC's context."""

    def abort(self, code: grpc.StatusCode, details: str) -> None:
        raise _Abort(code, details)


BEHAVIOURS = ("strict", "bmv2")
DEFAULT_MAX_MULTICAST_GROUPS = 4096
#: what PI/bmv2 says in these cases (its real reason is only in the switch's log)
BMV2_UNEXPECTED = "Unexpected error in RPC handling"
BMV2_READ_FAILED = "Error when reading table entries from target"
BMV2_FIRST_PHASE = "Error in first phase of device update"
BMV2_ASSIGN = "Error when trying to assign device"
BMV2_NO_PIPELINE = "No forwarding pipeline config set for this device"


@dataclass(frozen=True)
class ServerTLS:
    """PEM bytes for a TLS server: its certificate chain and key; ``client_ca`` set and
    ``require_client_auth`` True make it refuse clients without a certificate from that CA."""

    cert_chain: bytes
    private_key: bytes
    client_ca: bytes | None = None
    require_client_auth: bool = False


def check_device_config(data: bytes, index: P4InfoIndex) -> str:
    """Why ``data`` is not a device config for ``index``'s program ("" when it may be).

    Structural only: a config that starts like JSON must be a JSON object, and a bmv2 JSON (one
    with ``pipelines``) must name every table of the P4Info. Other blobs (Tofino packages) are
    taken as they are."""
    head = data.lstrip()[:1]
    if head not in (b"{", b"["):
        return ""
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError) as exc:
        return f"device config is not valid JSON ({str(exc)[:80]})"
    if not isinstance(doc, dict):
        return "device config is JSON but not an object"
    pipelines = doc.get("pipelines")
    if pipelines is None:
        return ""
    names: set[str] = set()
    try:
        for pipe in pipelines:
            for t in pipe.get("tables", []):
                names.add(str(t.get("name", "")))
    except (AttributeError, TypeError):
        return "device config: 'pipelines' is not a list of pipelines with tables"
    missing = [t.name for t in index.tables.values() if t.name not in names]
    if missing:
        return f"device config has no table {missing[0]!r} of the P4Info"
    return ""


class P4RuntimeEmulator(p4runtime_pb2_grpc.P4RuntimeServicer):
    """The servicer: one device. All state changes happen under ``self.lock``."""

    def __init__(self, device_id: int, name: str, clock: Callable[[], float] = time.monotonic,
                 seed: int = 0, behaviour: str = "strict",
                 max_multicast_groups: int | None = DEFAULT_MAX_MULTICAST_GROUPS) -> None:
        if behaviour not in BEHAVIOURS:
            raise InaplannerError(f"emulated switch {name}: behaviour must be one of "
                                  f"{', '.join(BEHAVIOURS)}, got {behaviour!r}")
        self.device_id = device_id
        self.name = name
        self.behaviour = behaviour
        self.lock = threading.RLock()
        self._clock, self._seed = clock, seed
        self.max_multicast_groups = max_multicast_groups
        self.state = DeviceState(clock=clock, seed=seed, max_groups=max_multicast_groups)
        #: bmv2: a rejected commit left the pipeline failed (reads fail until a restart)
        self.failed = False
        self.fail_next_commit = False  # test hook: the next commit fails after VERIFY passed
        self.on_die: Callable[[], None] | None = None
        #: test hook: called as ``hook(rpc_name, request)`` when a Write, a Read or a
        #: SetForwardingPipelineConfig arrives, before it is handled (it may block)
        self.rpc_hook: Callable[[str, object], None] | None = None
        self.saved: tuple[p4runtime_pb2.ForwardingPipelineConfig, P4InfoIndex] | None = None
        self.clients: list[_Client] = []
        self.fail_predicate: FailPredicate | None = None
        self.fail_code = code_pb2.INTERNAL
        self.write_requests = 0

    # -- arbitration -------------------------------------------------------------------------
    def primary(self, role: str) -> _Client | None:
        candidates = [c for c in self.clients
                      if c.registered and c.role == role and c.election_id is not None]
        return max(candidates, key=lambda c: c.election_id, default=None)

    def _notify(self, client: _Client, primary: _Client | None) -> None:
        msg = p4runtime_pb2.StreamMessageResponse()
        arb = msg.arbitration
        arb.device_id = self.device_id
        if client.role:
            arb.role.name = client.role
        if primary is not None:
            _set_election(arb.election_id, primary.election_id)
            if primary is client:
                arb.status.code = code_pb2.OK
                arb.status.message = "primary"
            else:
                arb.status.code = code_pb2.ALREADY_EXISTS
                arb.status.message = "backup: another client is primary"
        else:
            arb.status.code = code_pb2.NOT_FOUND
            arb.status.message = "no primary"
        client.out.put(msg)

    def _arbitrate(self, client: _Client, update: p4runtime_pb2.MasterArbitrationUpdate):
        """Handle a MasterArbitrationUpdate; return (grpc code, message) to end the stream."""
        if update.device_id != self.device_id and self.behaviour != "bmv2":
            code = grpc.StatusCode.FAILED_PRECONDITION if client.registered else \
                grpc.StatusCode.NOT_FOUND
            return code, f"device id {update.device_id} is not this device ({self.device_id})"
        role = update.role.name
        election = _election(update.election_id) if update.HasField("election_id") else None
        with self.lock:
            if election is not None:
                for other in self.clients:
                    if other is not client and other.registered and other.role == role \
                            and other.election_id == election:
                        return grpc.StatusCode.INVALID_ARGUMENT, \
                            f"election id {election} is already used by another client"
            old_role = client.role
            before = {r: self.primary(r) for r in {role, old_role}}
            client.role, client.election_id, client.registered = role, election, True
            for r in {role, old_role}:
                now = self.primary(r)
                if now is not before[r]:
                    for other in self.clients:
                        if other.registered and other.role == r and other is not client:
                            self._notify(other, now)
            self._notify(client, self.primary(role))
        return None

    def _drop(self, client: _Client) -> None:
        with self.lock:
            if client not in self.clients:
                return
            role = client.role
            was = self.primary(role)
            self.clients.remove(client)
            now = self.primary(role)
            if client.registered and now is not was:
                for other in self.clients:
                    if other.registered and other.role == role:
                        self._notify(other, now)

    def _is_primary(self, role: str, has_election: bool, election_id: int) -> bool:
        primary = self.primary(role)
        return primary is not None and has_election and primary.election_id == election_id

    # -- RPCs ----------------------------------------------------------------------------------
    async def StreamChannel(self, request_iterator, context):  # noqa: N802 (gRPC method name)
        """Runs on the event loop (no thread held while the stream is open)."""
        client = _Client()
        with self.lock:
            self.clients.append(client)

        async def read() -> None:
            try:
                async for req in request_iterator:
                    if req.HasField("arbitration"):
                        failure = self._arbitrate(client, req.arbitration)
                        if failure is not None:
                            client.out.put(failure)
                            return
                    # packet-out, digest acks and the rest have no effect on the emulator
            except Exception:  # noqa: BLE001 - the client went away mid-stream
                pass
            finally:
                client.out.put(None)

        reader = asyncio.ensure_future(read())
        try:
            while True:
                item = await client.out.get()
                if item is None:
                    return
                if isinstance(item, tuple):
                    await context.abort(item[0], item[1])
                yield item
        finally:
            reader.cancel()
            self._drop(client)

    def Capabilities(self, request, context):  # noqa: N802
        try:
            version = importlib.metadata.version("p4runtime")
        except importlib.metadata.PackageNotFoundError:
            version = "1.4.1"
        return p4runtime_pb2.CapabilitiesResponse(p4runtime_api_version=version)

    def _check_device(self, device_id: int, context) -> None:
        if device_id != self.device_id:
            if self.behaviour == "bmv2":  # PI knows no such device: "no pipeline"
                context.abort(grpc.StatusCode.FAILED_PRECONDITION, BMV2_NO_PIPELINE)
            context.abort(grpc.StatusCode.NOT_FOUND,
                          f"device id {device_id} is not this device ({self.device_id})")

    def _die(self) -> None:
        """bmv2 after a push for a device it does not have: the process goes away."""
        if self.on_die is not None:
            threading.Thread(target=self.on_die, name=f"{self.name}-die", daemon=True).start()

    def _refuse(self, context, code: grpc.StatusCode, message: str):
        """Refuse an RPC: the given code in strict mode, UNKNOWN as bmv2 says otherwise."""
        if self.behaviour == "bmv2":
            context.abort(grpc.StatusCode.UNKNOWN, BMV2_UNEXPECTED)
        context.abort(code, message)

    def SetForwardingPipelineConfig(self, request, context):  # noqa: N802
        if self.rpc_hook is not None:
            self.rpc_hook("SetForwardingPipelineConfig", request)
        if request.device_id != self.device_id and self.behaviour == "bmv2":
            self._die()
            context.abort(grpc.StatusCode.UNKNOWN, BMV2_ASSIGN)
        self._check_device(request.device_id, context)
        with self.lock:
            if not self._is_primary(request.role, request.HasField("election_id"),
                                    _election(request.election_id)):
                context.abort(grpc.StatusCode.PERMISSION_DENIED,
                              "only the primary client may set the pipeline config")
            action = request.action
            if self.failed:
                context.abort(grpc.StatusCode.UNKNOWN, BMV2_FIRST_PHASE)
            if action == _Pipe.COMMIT:
                if self.saved is None:
                    context.abort(grpc.StatusCode.FAILED_PRECONDITION,
                                  "COMMIT without a config saved by VERIFY_AND_SAVE")
                config, index = self.saved
                self.saved = None
                self.state.commit(config, index)
                return p4runtime_pb2.SetForwardingPipelineConfigResponse()
            if action == _Pipe.UNSPECIFIED:
                context.abort(grpc.StatusCode.INVALID_ARGUMENT, "action is unspecified")
            index = self._verify(request.config, context)
            problem = check_device_config(request.config.p4_device_config, index)
            if not problem and action != _Pipe.VERIFY and self.fail_next_commit:
                self.fail_next_commit = False
                problem = "the target failed to load the device config (injected)"
            if problem:
                if self.behaviour == "bmv2" and action in (_Pipe.VERIFY_AND_COMMIT,
                                                           _Pipe.RECONCILE_AND_COMMIT):
                    self.failed = True  # the old pipeline forwards on, reads fail from now on
                    context.abort(grpc.StatusCode.UNKNOWN, BMV2_UNEXPECTED)
                self._refuse(context, grpc.StatusCode.INVALID_ARGUMENT, problem)
            if action == _Pipe.VERIFY_AND_SAVE:
                self.saved = (p4runtime_pb2.ForwardingPipelineConfig(), index)
                self.saved[0].CopyFrom(request.config)
            elif action == _Pipe.VERIFY_AND_COMMIT:
                config = p4runtime_pb2.ForwardingPipelineConfig()
                config.CopyFrom(request.config)
                self.state.commit(config, index)
            elif action == _Pipe.RECONCILE_AND_COMMIT:
                current = self.state.config
                if current is not None and current.p4info != request.config.p4info:
                    context.abort(grpc.StatusCode.UNIMPLEMENTED,
                                  "RECONCILE_AND_COMMIT with a different P4Info is not supported")
                config = p4runtime_pb2.ForwardingPipelineConfig()
                config.CopyFrom(request.config)
                self.state.commit(config, index, keep_state=current is not None)
        return p4runtime_pb2.SetForwardingPipelineConfigResponse()

    @staticmethod
    def _verify(config: p4runtime_pb2.ForwardingPipelineConfig, context) -> P4InfoIndex:
        if not config.HasField("p4info") or not len(config.p4info.tables):
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the config has no P4Info tables")
        if not config.p4_device_config:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the device config is empty")
        try:
            return P4InfoIndex(config.p4info)
        except InaplannerError as exc:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        raise AssertionError("unreachable")

    def GetForwardingPipelineConfig(self, request, context):  # noqa: N802
        self._check_device(request.device_id, context)
        with self.lock:
            reply = p4runtime_pb2.GetForwardingPipelineConfigResponse()
            current = self.state.config
            if current is None:
                return reply
            kind = request.response_type
            if current.HasField("cookie"):
                reply.config.cookie.CopyFrom(current.cookie)
            if kind in (_GetPipe.ALL, _GetPipe.P4INFO_AND_COOKIE):
                reply.config.p4info.CopyFrom(current.p4info)
            if kind in (_GetPipe.ALL, _GetPipe.DEVICE_CONFIG_AND_COOKIE):
                reply.config.p4_device_config = current.p4_device_config
            return reply

    def Write(self, request, context):  # noqa: N802
        if self.rpc_hook is not None:
            self.rpc_hook("Write", request)
        self._check_device(request.device_id, context)
        with self.lock:
            self.write_requests += 1
            if not self._is_primary(request.role, request.HasField("election_id"),
                                    _election(request.election_id)):
                context.abort(grpc.StatusCode.PERMISSION_DENIED,
                              "write from a client that is not the primary")
            if self.state.p4info is None:
                context.abort(grpc.StatusCode.FAILED_PRECONDITION, "no pipeline config is set")
            if self.failed:
                context.abort(grpc.StatusCode.UNKNOWN, BMV2_UNEXPECTED)
            if request.atomicity != p4runtime_pb2.WriteRequest.CONTINUE_ON_ERROR:
                context.abort(grpc.StatusCode.UNIMPLEMENTED,
                              "only CONTINUE_ON_ERROR atomicity is supported")
            results: list[tuple[int, str]] = []
            for update in request.updates:
                try:
                    self._injected_failure(update)
                    self.state.apply(update)
                    results.append((code_pb2.OK, ""))
                except EntityError as exc:
                    results.append(self._entity_refusal(exc))
        if all(code == code_pb2.OK for code, _ in results):
            return p4runtime_pb2.WriteResponse()
        status = build_write_status(results)
        context.set_trailing_metadata(((DETAILS_KEY, status.SerializeToString()),))
        context.set_code(grpc.StatusCode.UNKNOWN)
        context.set_details(status.message)
        return p4runtime_pb2.WriteResponse()

    def _entity_refusal(self, exc: EntityError) -> tuple[int, str]:
        """(code, message) of a refused update: bmv2 says UNKNOWN for what its driver refuses
        (a full table or multicast group table; the reason only goes to its log)."""
        if self.behaviour == "bmv2" and exc.code in (code_pb2.RESOURCE_EXHAUSTED,
                                                     code_pb2.INTERNAL, code_pb2.UNKNOWN):
            return code_pb2.UNKNOWN, "Error when adding entry to target"
        return exc.code, exc.message

    def _injected_failure(self, update: p4runtime_pb2.Update) -> None:
        if self.fail_predicate is None:
            return
        verdict = self.fail_predicate(update)
        if verdict:
            message = verdict if isinstance(verdict, str) else f"{self.name}: injected failure"
            raise EntityError(self.fail_code, message)

    async def Read(self, request, context):  # noqa: N802
        """Yields ReadResponse messages already serialized (see :func:`add_to_server`).

        A counter read (a monitor's poll) is answered on the event loop when the switch is free
        at once; any other read, or one that would wait for a Write, is made on a handler thread
        and sent from the event loop: a synchronous streaming handler whose client gives up (a
        deadline) keeps its ``grpc.aio`` handler thread blocked for good, and a monitor's late
        Reads used up every thread at fat-tree k=32."""
        try:
            # a counter read (a monitor's poll) is read from the wire once, here
            cells = counter_read_request(request) if self.rpc_hook is None else None
            chunks = self._read_now(cells) if cells is not None else None
            if chunks is None:
                chunks = await asyncio.get_running_loop().run_in_executor(
                    _handler_pool(), self._read_answer, request, cells)
        except _Abort as exc:
            await context.abort(exc.code, exc.details)
        for chunk in chunks:
            yield chunk

    def _read_now(self, cells: tuple[int, list[tuple[int, int | None]]]) -> list[bytes] | None:
        """The answer to a counter read (its device id and cells) when it can be made without
        waiting (the switch's lock free), else None. Handing each of a monitor's reads to a
        thread and back cost an emulated switch more than the read itself."""
        self._check_device(cells[0], _AbortContext())
        if not self.lock.acquire(blocking=False):
            return None
        try:
            return self._answer(None, cells[1])
        finally:
            self.lock.release()

    def _read_answer(self, raw: bytes,
                     cells: tuple[int, list[tuple[int, int | None]]] | None) -> list[bytes]:
        """The answer to a serialized ReadRequest. A request that reads counter cells by id and
        index (a monitor's poll) comes read from the wire as ``cells``
        (:func:`counter_read_request`), and its cells are written back the same way: parsing
        and building those messages with the pure-Python protobuf was most of an emulated
        switch's time under a monitor. Any other request is parsed with protobuf."""
        if cells is not None:
            self._check_device(cells[0], _AbortContext())
            with self.lock:
                return self._answer(None, cells[1])
        try:
            request = p4runtime_pb2.ReadRequest.FromString(raw)
        except DecodeError:
            raise _Abort(grpc.StatusCode.INVALID_ARGUMENT,
                         "the ReadRequest does not parse") from None
        if self.rpc_hook is not None:
            self.rpc_hook("Read", request)
        self._check_device(request.device_id, _AbortContext())
        with self.lock:
            return self._answer(request, [])

    def _answer(self, request: p4runtime_pb2.ReadRequest | None,
                cells: list[tuple[int, int | None]]) -> list[bytes]:
        """The chunks answering ``request``, or with None the counter ``cells`` read from the
        wire (under the lock)."""
        context = _AbortContext()
        if self.state.p4info is None:
            context.abort(grpc.StatusCode.FAILED_PRECONDITION,
                          BMV2_NO_PIPELINE if self.behaviour == "bmv2"
                          else "no pipeline config is set")
        if self.failed:
            context.abort(grpc.StatusCode.UNKNOWN, BMV2_READ_FAILED)
        self.state.advance()  # once a read: the cells it answers are of one instant
        found: list[bytes] = []
        try:
            if request is None:
                for counter_id, index in cells:
                    found += [counter_entity(*cell)
                              for cell in self.state.counter_values(counter_id, index)]
            else:
                for entity in request.entities:
                    found.extend(self._read_one(entity))
        except EntityError as exc:
            context.abort(_grpc_code(exc.code), exc.message)
        return [b"".join(wire_field(1, e) for e in found[start:start + READ_CHUNK])
                for start in range(0, len(found), READ_CHUNK)]

    def _read_one(self, entity: p4runtime_pb2.Entity) -> list[bytes]:
        """Serialized Entity messages answering one read entity."""
        kind = entity.WhichOneof("entity")
        st = self.state
        if kind == "table_entry":
            return [st.entity_bytes(e) for e in st.table_entries(entity.table_entry)]
        if kind == "packet_replication_engine_entry":
            pre = entity.packet_replication_engine_entry
            if pre.WhichOneof("type") == "clone_session_entry":
                raise EntityError(code_pb2.UNIMPLEMENTED, "clone sessions are not supported")
            return [wire_field(9, wire_field(1, g.SerializeToString()))
                    for g in st.group_entries(pre.multicast_group_entry)]
        if kind == "counter_entry":
            entry = entity.counter_entry
            index = entry.index.index if entry.HasField("index") else None
            return [counter_entity(*cell) for cell in st.counter_values(entry.counter_id, index)]
        if kind == "register_entry":
            raise EntityError(code_pb2.UNIMPLEMENTED,
                              "register reads are not implemented (as in bmv2's P4Runtime server)")
        raise EntityError(code_pb2.UNIMPLEMENTED, f"reading {kind} is not supported")


def add_to_server(servicer: P4RuntimeEmulator, server: grpc.Server | grpc.aio.Server) -> None:
    """Register the P4Runtime service; Read answers are sent as the bytes the servicer made."""
    pb = p4runtime_pb2
    handlers = {
        "Write": grpc.unary_unary_rpc_method_handler(
            servicer.Write, pb.WriteRequest.FromString, pb.WriteResponse.SerializeToString),
        "Read": grpc.unary_stream_rpc_method_handler(
            servicer.Read, None, None),  # bytes in (see _read_answer), bytes out
        "SetForwardingPipelineConfig": grpc.unary_unary_rpc_method_handler(
            servicer.SetForwardingPipelineConfig, pb.SetForwardingPipelineConfigRequest.FromString,
            pb.SetForwardingPipelineConfigResponse.SerializeToString),
        "GetForwardingPipelineConfig": grpc.unary_unary_rpc_method_handler(
            servicer.GetForwardingPipelineConfig, pb.GetForwardingPipelineConfigRequest.FromString,
            pb.GetForwardingPipelineConfigResponse.SerializeToString),
        "StreamChannel": grpc.stream_stream_rpc_method_handler(
            servicer.StreamChannel, pb.StreamMessageRequest.FromString,
            pb.StreamMessageResponse.SerializeToString),
        "Capabilities": grpc.unary_unary_rpc_method_handler(
            servicer.Capabilities, pb.CapabilitiesRequest.FromString,
            pb.CapabilitiesResponse.SerializeToString),
    }
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("p4.v1.P4Runtime",
                                                                          handlers),))


def _grpc_code(code: int) -> grpc.StatusCode:
    for sc in grpc.StatusCode:
        if sc.value[0] == code:
            return sc
    return grpc.StatusCode.UNKNOWN


@dataclass(frozen=True)
class EmulatorState:
    """A snapshot of what the emulated switch holds (copies; safe to keep)."""

    pipeline_set: bool
    p4info: object | None  # p4.config.v1.P4Info
    device_config: bytes
    table_entries: list[p4runtime_pb2.TableEntry]
    default_entries: list[p4runtime_pb2.TableEntry]
    multicast_groups: list[p4runtime_pb2.MulticastGroupEntry]
    primary_election_id: int | None
    clients: int
    write_requests: int

    def entries_text(self) -> list[str]:
        """Each table entry as one-line text, sorted: handy for equality in tests."""
        return sorted(text_format.MessageToString(e, as_one_line=True)
                      for e in self.table_entries + self.default_entries)


class EmulatorHandle:
    """A running emulated switch. Stop it with :meth:`stop` (or use it as a context manager)."""

    def __init__(self, server: grpc.aio.Server, servicer: P4RuntimeEmulator, host: str,
                 port: int, tls: ServerTLS | None = None) -> None:
        self._server = server
        self.servicer = servicer
        self.host = host
        self.port = port
        self.address = f"{host}:{port}"
        self.device_id = servicer.device_id
        self.name = servicer.name
        self.tls = tls
        self.stopped = threading.Event()
        servicer.on_die = self.stop

    def begin_stop(self, grace: float | None = 0.2) -> threading.Event:
        """Start stopping: end every open stream and stop the server after ``grace`` seconds;
        returns the event set once the server has stopped."""
        with self.servicer.lock:
            for client in self.servicer.clients:
                client.out.put(None)
        done = threading.Event()
        aioloop.submit(self._server.stop(grace)).add_done_callback(lambda _f: done.set())
        return done

    def finish_stop(self, done: threading.Event, timeout: float = 1.0) -> None:
        done.wait(timeout)
        self.stopped.set()

    def stop(self, grace: float | None = 0.2, timeout: float = 1.0) -> None:
        """Stop serving: a short grace period for RPCs in flight, then at most ``timeout``
        seconds waiting for the server's threads."""
        self.finish_stop(self.begin_stop(grace), timeout)

    def restart(self) -> None:
        """What a switch restart does: the same address, a blank device (no pipeline, no
        entries, no counters), every controller disconnected."""
        s = self.servicer
        with s.lock:
            for client in s.clients:
                client.out.put(None)
            s.state = DeviceState(clock=s._clock, seed=s._seed, max_groups=s.max_multicast_groups)
            s.saved = None
            s.failed = False
            s.fail_next_commit = False

    def __enter__(self) -> EmulatorHandle:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def state(self) -> EmulatorState:
        s = self.servicer
        with s.lock:
            st = s.state

            def copy(msg):
                c = type(msg)()
                c.CopyFrom(msg)
                return c

            entries = [copy(e) for tid in sorted(st.tables) for e in st.tables[tid].values()]
            defaults = [copy(st.defaults[t]) for t in sorted(st.defaults)]
            groups = [copy(st.groups[g]) for g in sorted(st.groups)]
            primary = s.primary("")
            return EmulatorState(
                pipeline_set=st.config is not None,
                p4info=copy(st.config.p4info) if st.config is not None else None,
                device_config=st.config.p4_device_config if st.config is not None else b"",
                table_entries=entries,
                default_entries=defaults,
                multicast_groups=groups,
                primary_election_id=primary.election_id if primary else None,
                clients=len(s.clients),
                write_requests=s.write_requests,
            )

    def fail_on(self, predicate: FailPredicate | None, code: int = code_pb2.INTERNAL) -> None:
        """Make the target reject every update for which ``predicate(update)`` is true.

        The update gets ``code`` (a google.rpc.Code; INTERNAL by default, what a driver failure
        looks like) and, when the predicate returns a string, that string as message. ``None``
        removes the rule.
        """
        with self.servicer.lock:
            self.servicer.fail_predicate = predicate
            self.servicer.fail_code = code

    def set_port_rates(self, rates: dict[int, tuple[float, float]], noise: float = 0.0,
                       counters: list[str] | None = None) -> None:
        """Let counter cells grow: ``rates[port] = (bytes_per_s, packets_per_s)``.

        ``counters`` names the counters to drive (fully qualified or alias); None drives every
        indirect counter of the pipeline (the INA program's per-port ingress and egress
        counters). ``noise`` in [0, 1) scales each increment by a uniform factor in
        [1 - noise, 1 + noise], so counters stay monotonic. Ports not given stop growing.
        """
        if not 0.0 <= noise < 1.0:
            raise ValueError("noise must be in [0, 1)")
        s = self.servicer
        with s.lock:
            index = s.state.p4info
            if index is None:
                raise InaplannerError(f"{self.name}: no pipeline is set, so it has no counters")
            ids = sorted(index.counters) if counters is None else \
                [index.id_of("counter", n) for n in counters]
            s.state.set_rates(ids, rates, noise)

    def counter(self, name: str, index: int) -> tuple[int, int]:
        """(bytes, packets) of one counter cell, as a Read would return them now."""
        s = self.servicer
        with s.lock:
            if s.state.p4info is None:
                raise InaplannerError(f"{self.name}: no pipeline is set")
            req = p4runtime_pb2.CounterEntry(counter_id=s.state.p4info.id_of("counter", name))
            req.index.index = index
            cell = s.state.counter_entries(req)[0]
            return cell.data.byte_count, cell.data.packet_count


_handlers: tuple[int, futures.ThreadPoolExecutor] | None = None  # (pid, pool)
_handlers_lock = threading.Lock()
#: threads that run the emulators' Write, Read and pipeline RPCs, shared by every emulator of
#: the process and started as RPCs arrive (the streams run on the event loop)
HANDLER_THREADS = 64


def _handler_pool() -> futures.ThreadPoolExecutor:
    """The shared pool (a new one in a child process after a fork: threads do not follow)."""
    global _handlers
    import os

    with _handlers_lock:
        if _handlers is None or _handlers[0] != os.getpid():
            _handlers = (os.getpid(), futures.ThreadPoolExecutor(
                max_workers=HANDLER_THREADS, thread_name_prefix="p4rt-emulator"))
        return _handlers[1]


def start_emulator(host: str = "127.0.0.1", port: int = 0, device_id: int = 1, name: str = "sw",
                   clock: Callable[[], float] = time.monotonic, seed: int = 0,
                   behaviour: str = "strict",
                   max_multicast_groups: int | None = DEFAULT_MAX_MULTICAST_GROUPS,
                   tls: ServerTLS | None = None) -> EmulatorHandle:
    """Start an emulated P4Runtime switch; ``port=0`` binds a free port (see ``.port``).
    ``behaviour`` is "strict" or "bmv2" (see the module docstring); ``tls`` serves TLS."""
    servicer = P4RuntimeEmulator(device_id, name, clock=clock, seed=seed, behaviour=behaviour,
                                 max_multicast_groups=max_multicast_groups)
    pool = _handler_pool()

    async def serve() -> tuple[grpc.aio.Server, int]:
        server = grpc.aio.server(
            migration_thread_pool=pool,
            options=[("grpc.so_reuseport", 0),
                     ("grpc.max_receive_message_length", 256 << 20),
                     ("grpc.max_send_message_length", 256 << 20)])
        add_to_server(servicer, server)
        try:
            if tls is None:
                bound = server.add_insecure_port(f"{host}:{port}")
            else:
                creds = grpc.ssl_server_credentials(
                    [(tls.private_key, tls.cert_chain)], root_certificates=tls.client_ca,
                    require_client_auth=tls.require_client_auth)
                bound = server.add_secure_port(f"{host}:{port}", creds)
        except RuntimeError:  # grpc.aio raises where grpc.server returns 0
            bound = 0
        if bound:
            await server.start()
        return server, bound

    server, bound = aioloop.submit(serve()).result()
    if bound == 0:
        raise InaplannerError(f"emulated switch {name}: cannot listen on {host}:{port}")
    return EmulatorHandle(server, servicer, host, bound, tls)
