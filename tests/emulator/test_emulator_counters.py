"""Counters of the emulated target: reads, writes and growth at configured port rates."""

from __future__ import annotations

import pytest
from p4.v1 import p4runtime_pb2

from inaplanner.emulator.target import start_emulator
from inaplanner.errors import InaplannerError


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clocked(rt):
    clock = FakeClock()
    handle = start_emulator(name="clocked", clock=clock, seed=3)
    from p4runtime_sh.p4runtime import P4RuntimeClient

    client = P4RuntimeClient(1, handle.address, (0, 1))
    rt.set_pipeline(client, rt.TEST_P4INFO)
    yield handle, client, clock
    client.tear_down()
    handle.stop()


def read_counter(rt, client, counter_id=0, index=None):
    e = p4runtime_pb2.Entity()
    e.counter_entry.counter_id = counter_id
    if index is not None:
        e.counter_entry.index.index = index
    return [(x.counter_entry.counter_id, x.counter_entry.index.index,
             x.counter_entry.data.byte_count, x.counter_entry.data.packet_count)
            for x in rt.read(client, e)]


def test_counters_grow_with_configured_rates(clocked, rt):
    handle, client, clock = clocked
    handle.set_port_rates({3: (1250.0, 10.0), 5: (100.0, 1.0)}, counters=["rx"])
    clock.now += 2.0
    assert read_counter(rt, client, 302000001, 3) == [(302000001, 3, 2500, 20)]
    assert read_counter(rt, client, 302000001, 5) == [(302000001, 5, 200, 2)]
    assert read_counter(rt, client, 302000001, 4) == [(302000001, 4, 0, 0)]
    # the other counter was not driven
    assert all(c[2:] == (0, 0) for c in read_counter(rt, client, 302000002))
    # changing the rates keeps what was counted so far
    handle.set_port_rates({3: (0.0, 0.0)}, counters=["C.rx"])
    clock.now += 5.0
    assert handle.counter("rx", 3) == (2500, 20)
    assert handle.counter("rx", 5) == (200, 2)  # no longer driven: frozen


def test_wildcard_counter_read_and_units(clocked, rt):
    handle, client, clock = clocked
    handle.set_port_rates({1: (1000.0, 4.0)})  # every counter
    clock.now += 1.0
    cells = read_counter(rt, client)
    assert len(cells) == 16 + 4
    assert (302000001, 1, 1000, 4) in cells
    assert (302000002, 1, 0, 4) in cells  # a PACKETS counter reports no bytes


def test_noise_keeps_counters_monotonic(clocked):
    handle, _, clock = clocked
    handle.set_port_rates({2: (1000.0, 10.0)}, noise=0.5, counters=["rx"])
    last = (0, 0)
    total = 0.0
    for _ in range(50):
        clock.now += 0.1
        now = handle.counter("rx", 2)
        assert now[0] >= last[0] and now[1] >= last[1]
        last = now
        total += 100.0
    assert 0.5 * total <= last[0] <= 1.5 * total
    assert last[0] != total  # the noise did something


def test_counter_write_sets_values(clocked, rt):
    handle, client, clock = clocked
    handle.set_port_rates({2: (10.0, 1.0)}, counters=["rx"])
    clock.now += 10.0
    u = p4runtime_pb2.Update(type=p4runtime_pb2.Update.MODIFY)
    u.entity.counter_entry.counter_id = 302000001
    u.entity.counter_entry.index.index = 2
    rt.write(client, [u])  # data unset: reset to zero
    assert handle.counter("rx", 2) == (0, 0)
    clock.now += 1.0
    assert handle.counter("rx", 2) == (10, 1)
    bad = p4runtime_pb2.Update(type=p4runtime_pb2.Update.INSERT)
    bad.entity.counter_entry.counter_id = 302000001
    out_of_range = p4runtime_pb2.Update(type=p4runtime_pb2.Update.MODIFY)
    out_of_range.entity.counter_entry.counter_id = 302000001
    out_of_range.entity.counter_entry.index.index = 16
    import grpc

    from inaplanner.deploy.p4rt_errors import parse_write_error

    with pytest.raises(grpc.RpcError) as err:
        rt.write(client, [bad, out_of_range])
    msgs = [s.message for s in parse_write_error(err.value)]
    assert "only be modified" in msgs[0] and "not in 0..15" in msgs[1]


def test_rates_need_a_pipeline_and_valid_ports(emulator, primary):
    with pytest.raises(ValueError, match="outside counter"):
        emulator.set_port_rates({99: (1.0, 1.0)}, counters=["rx"])
    with pytest.raises(ValueError, match="noise"):
        emulator.set_port_rates({1: (1.0, 1.0)}, noise=1.5)
    bare = start_emulator(name="bare")
    try:
        with pytest.raises(InaplannerError, match="no pipeline"):
            bare.set_port_rates({1: (1.0, 1.0)})
    finally:
        bare.stop()
