"""Speed of the emulated P4Runtime target itself (prints figures; asserts nothing).

1. Checking and storing table entries in process (no gRPC): what the target's validation costs.
2. Batched Writes over loopback gRPC with requests serialized beforehand (so the client's own
   protobuf work is not counted), per batch size; then a wildcard Read of everything, including
   the client's parsing of the answer.

The protobuf runtime here is the pure-Python one (protobuf 3.20 has no C extension for Python
3.11), which bounds both parsing the requests and building the answers.

Run: ``/tmp/venv/bin/python benchmarks/bench_emulator.py [--entries N]``.
"""

from __future__ import annotations

import argparse
import time

import grpc
from google.protobuf.internal import api_implementation
from p4.v1 import p4runtime_pb2
from p4runtime_sh.p4runtime import P4RuntimeClient

from inaplanner.dataplane.bytestrings import encode
from inaplanner.dataplane.p4info import DEFAULT_P4INFO, load_p4info
from inaplanner.emulator.state import DeviceState
from inaplanner.emulator.target import start_emulator


def updates(n: int) -> list[p4runtime_pb2.Update]:
    p4 = load_p4info()
    t, a = p4.table("ina_forward"), p4.action("forward")
    out = []
    for i in range(n):
        u = p4runtime_pb2.Update(type=p4runtime_pb2.Update.INSERT)
        te = u.entity.table_entry
        te.table_id = t.id
        for fid, v in zip((1, 2, 3), (i >> 16, 0, i & 0xFFFF), strict=True):
            te.match.add(field_id=fid).exact.value = encode(v)
        te.action.action.action_id = a.id
        te.action.action.params.add(param_id=1, value=encode(i % 64 + 1))
        out.append(u)
    return out


def in_process(ups: list[p4runtime_pb2.Update]) -> None:
    p4 = load_p4info()
    state = DeviceState(clock=time.monotonic)
    cfg = p4runtime_pb2.ForwardingPipelineConfig()
    cfg.p4info.CopyFrom(p4.proto)
    state.commit(cfg, p4)
    t0 = time.perf_counter()
    for u in ups:
        state.apply(u)
    dt = time.perf_counter() - t0
    print(f"  check + store in process: {len(ups) / dt:8.0f} entries/s ({len(ups)} in {dt:.2f} s)")


def over_grpc(ups: list[p4runtime_pb2.Update], batch: int) -> None:
    handle = start_emulator(name="bench")
    client = P4RuntimeClient(1, handle.address, (0, 1))
    try:
        client.set_fwd_pipe_config(str(DEFAULT_P4INFO), str(DEFAULT_P4INFO))
        requests = []
        for start in range(0, len(ups), batch):
            req = p4runtime_pb2.WriteRequest(device_id=1)
            req.election_id.low = 1
            req.updates.extend(ups[start:start + batch])
            requests.append(req.SerializeToString())
        write = client.channel.unary_unary("/p4.v1.P4Runtime/Write")
        t0 = time.perf_counter()
        for data in requests:
            write(data)
        t1 = time.perf_counter()
        read = p4runtime_pb2.ReadRequest(device_id=1)
        read.entities.add().table_entry.table_id = 0
        n = sum(len(r.entities) for r in client.stub.Read(read))
        t2 = time.perf_counter()
        print(f"  batch {batch:5d}: write {len(ups) / (t1 - t0):8.0f} entries/s, "
              f"wildcard read {n / (t2 - t1):8.0f} entries/s ({n} entries)")
    except grpc.RpcError as exc:
        print(f"  batch {batch}: failed: {exc.code()} {exc.details()}")
    finally:
        client.tear_down()
        handle.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=8000)
    args = parser.parse_args()
    print(f"protobuf runtime: {api_implementation.Type()}")
    ups = updates(args.entries)
    print(f"== {args.entries} ina_forward entries ==")
    in_process(ups)
    for batch in (1, 50, 500, 2000):
        over_grpc(ups if batch > 1 else ups[:2000], batch)


if __name__ == "__main__":
    main()
