"""Fixtures for the emulated P4Runtime target: a running emulator and real p4runtime-shell clients.

``TEST_P4INFO`` is a small P4Info with every match kind (the INA program's own tables are all
exact), so that the target's checks of priorities, masks, prefixes and ranges are exercised.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from google.protobuf import text_format
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2
from p4runtime_sh.global_options import Options, global_options
from p4runtime_sh.p4runtime import P4RuntimeClient

from inaplanner.emulator.target import start_emulator

TEST_P4INFO = """
pkg_info { arch: "v1model" }
tables {
  preamble { id: 33554433 name: "C.ports" alias: "ports" }
  match_fields { id: 1 name: "port" bitwidth: 9 match_type: EXACT }
  match_fields { id: 2 name: "job" bitwidth: 16 match_type: EXACT }
  action_refs { id: 16777217 }
  action_refs { id: 16777218 }
  action_refs { id: 16777219 scope: DEFAULT_ONLY }
  size: 4
}
tables {
  preamble { id: 33554434 name: "C.acl" alias: "acl" }
  match_fields { id: 1 name: "addr" bitwidth: 32 match_type: TERNARY }
  match_fields { id: 2 name: "l4" bitwidth: 16 match_type: RANGE }
  match_fields { id: 3 name: "proto" bitwidth: 8 match_type: OPTIONAL }
  action_refs { id: 16777217 }
  action_refs { id: 16777218 }
  size: 64
}
tables {
  preamble { id: 33554435 name: "C.routes" alias: "routes" }
  match_fields { id: 1 name: "dst" bitwidth: 32 match_type: LPM }
  action_refs { id: 16777217 }
  action_refs { id: 16777218 scope: TABLE_ONLY }
  size: 64
}
tables {
  preamble { id: 33554436 name: "C.fixed" alias: "fixed" }
  match_fields { id: 1 name: "k" bitwidth: 8 match_type: EXACT }
  action_refs { id: 16777218 }
  const_default_action_id: 16777218
  size: 8
}
actions { preamble { id: 16777217 name: "C.fwd" alias: "fwd" }
  params { id: 1 name: "port" bitwidth: 9 } }
actions { preamble { id: 16777218 name: "C.drop" alias: "drop" } }
actions { preamble { id: 16777219 name: "C.miss" alias: "miss" }
  params { id: 1 name: "code" bitwidth: 8 } }
counters { preamble { id: 302000001 name: "C.rx" alias: "rx" } spec { unit: BOTH } size: 16 }
counters { preamble { id: 302000002 name: "C.pkts" alias: "pkts" } spec { unit: PACKETS } size: 4 }
"""

DEVICE_ID = 1


def p4info_message(text: str = TEST_P4INFO) -> p4info_pb2.P4Info:
    msg = p4info_pb2.P4Info()
    text_format.Parse(text, msg)
    return msg


@pytest.fixture
def emulator():
    handle = start_emulator(device_id=DEVICE_ID, name="s1")
    yield handle
    handle.stop()


class Clients:
    """Opens real p4runtime-shell clients against an emulator and closes them at the end."""

    def __init__(self, address: str) -> None:
        self.address = address
        self.open: list[P4RuntimeClient] = []

    def connect(self, election_low: int, device_id: int = DEVICE_ID) -> P4RuntimeClient:
        c = P4RuntimeClient(device_id, self.address, (0, election_low))
        self.open.append(c)
        return c

    def close(self, client: P4RuntimeClient) -> None:
        self.open.remove(client)
        client.tear_down()


@pytest.fixture
def clients(emulator):
    global_options.set_option(Options.canonical_bytestrings, True)
    pool = Clients(emulator.address)
    yield pool
    for c in list(pool.open):
        c.tear_down()


@pytest.fixture
def primary(clients):
    """A primary client (election id 1) on an emulator that runs TEST_P4INFO."""
    client = clients.connect(1)
    set_pipeline(client, TEST_P4INFO)
    return client


def set_pipeline(client: P4RuntimeClient, p4info_text: str, device_config: bytes = b"{}",
                 action=p4runtime_pb2.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT):
    req = p4runtime_pb2.SetForwardingPipelineConfigRequest(device_id=client.device_id,
                                                           action=action)
    req.election_id.high, req.election_id.low = client.election_id
    text_format.Parse(p4info_text, req.config.p4info)
    req.config.p4_device_config = device_config
    return client.stub.SetForwardingPipelineConfig(req)


def write(client: P4RuntimeClient, updates: list[p4runtime_pb2.Update], **fields):
    """One WriteRequest holding ``updates`` (p4runtime-shell has no batching API)."""
    req = p4runtime_pb2.WriteRequest(device_id=client.device_id, **fields)
    req.election_id.high, req.election_id.low = client.election_id
    req.updates.extend(updates)
    return client.stub.Write(req)


def update(kind: str, entity_field: str, msg) -> p4runtime_pb2.Update:
    u = p4runtime_pb2.Update(type=p4runtime_pb2.Update.Type.Value(kind))
    getattr(u.entity, entity_field).CopyFrom(msg)
    return u


def read(client: P4RuntimeClient, *entities: p4runtime_pb2.Entity) -> list[p4runtime_pb2.Entity]:
    req = p4runtime_pb2.ReadRequest(device_id=client.device_id)
    req.entities.extend(entities)
    out = []
    for resp in client.stub.Read(req):
        out.extend(resp.entities)
    return out



@pytest.fixture
def shell_context():
    """p4runtime-shell's message builders bound to TEST_P4INFO (no connection needed)."""
    import p4runtime_sh.shell as sh

    global_options.set_option(Options.canonical_bytestrings, True)
    sh.context.set_p4info(p4info_message())
    return sh


def write_p4info_file(tmp_path: Path, text: str = TEST_P4INFO) -> tuple[Path, Path]:
    p4info = tmp_path / "test.p4info.txtpb"
    p4info.write_text(text)
    dev = tmp_path / "test.json"
    dev.write_bytes(b'{"program": "test"}')
    return p4info, dev


@pytest.fixture
def rt():
    """The helpers above, for test modules (pytest's importlib mode cannot import conftest)."""
    from types import SimpleNamespace

    return SimpleNamespace(
        TEST_P4INFO=TEST_P4INFO, DEVICE_ID=DEVICE_ID, p4info_message=p4info_message,
        set_pipeline=set_pipeline, write=write, update=update, read=read,
        write_p4info_file=write_p4info_file,
    )
