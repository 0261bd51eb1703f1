"""Monitoring against emulated P4Runtime switches (real gRPC on 127.0.0.1).

Most tests put the emulated switches and the poller on one hand-moved clock, so the rates must
come out exact; one runs in real time against the plan deployed with the real deployer and
checks the 5 % promise."""

from __future__ import annotations

import time

import numpy as np
import pytest
from p4.v1 import p4runtime_pb2

from inaplanner.deploy.p4rt import P4RTSession
from inaplanner.monitor.drive import drive_plan, parse_hot, port_rates
from inaplanner.monitor.mapping import RX, TX, link_map
from inaplanner.monitor.poller import Poller
from inaplanner.monitor.series import planned_loads

STEP = 0.25


def assert_rates(snap, planned: np.ndarray, rel: float, keys=None) -> None:
    keys = list(keys if keys is not None else snap.rates.keys())
    assert keys
    for key in keys:
        want = float(planned[key])
        got = snap.rates[key]
        if want > 0:
            assert abs(got - want) <= rel * want, f"{key}: observed {got} vs planned {want}"
        else:
            assert got == pytest.approx(0.0, abs=1e-6), key


def tick(poller, clock, seconds: float = STEP):
    clock.advance(seconds)
    return poller.poll_once()


def test_port_rates_follow_the_evaluator(clocked):
    sc, plan, _clock, _handles, inv = clocked
    loads = planned_loads(sc, plan)
    hot = parse_hot(["L2->S1=1.5"], sc)
    rates = port_rates(sc, inv, loads, hot, packet_bytes=1000.0)
    lm = link_map(sc, inv)
    for key, probes in lm.probes.items():
        want = float(loads[key]) * hot.get(key, 1.0) * 1e9 / 8
        assert probes, key  # every link has a switch end
        src, dst = lm.links[key].src, lm.links[key].dst
        for p in probes:
            assert (p.switch, p.kind) in ((src, TX), (dst, RX))
            assert rates[p.switch][p.kind][p.port] == pytest.approx((want, want / 1000.0))
    li = sc.link_index("L2", "S1")
    assert set(hot) == {(li, 0 if sc.links[li].a == "L2" else 1)}
    assert len(parse_hot(["L2-S1=2"], sc)) == 2


def test_rates_from_counters_are_exact_on_a_shared_clock(clocked):
    sc, plan, clock, handles, inv = clocked
    planned = drive_plan(handles, sc, inv, plan)
    assert planned.max() > 0
    with Poller(sc, inv, interval=STEP, clock=clock) as poller:
        first = poller.poll_once()
        assert first.rates == {} and first.stale == ()  # baselines only
        for _ in range(3):
            snap = tick(poller, clock)
            assert len(snap.rates) == 2 * len(sc.links)  # every direction measured
            assert_rates(snap, planned, 1e-6)


def test_observed_rates_follow_the_deployed_plan_within_5_percent(deployed):
    """Real time: the plan deployed by the deployer, counters with 1 % noise, a 2 s rate window
    (which keeps a late or early reading time on a busy machine from skewing the rate)."""
    sc, plan, tb = deployed
    planned = drive_plan(tb.handles, sc, tb.inventory, plan, noise=0.01)
    assert np.array_equal(planned, planned_loads(sc, plan))
    with Poller(sc, tb.inventory, interval=0.25, window=2.0) as poller:
        poller.poll_once()
        end = time.monotonic() + 2.3
        while time.monotonic() < end:
            time.sleep(0.25)
            snap = poller.poll_once()
        assert snap.stale == ()
        assert len(snap.rates) == 2 * len(sc.links)
        assert_rates(snap, planned, 0.05)


def test_open_switches_are_read_together_on_the_event_loop(deployed):
    """After the first poll opened them, a poll reads every switch at once on the event loop:
    handing each read to a pool thread and back cost the monitor more than the reads at
    fat-tree k=64. The pool only opens switches; the rates are the same."""
    from concurrent.futures import ThreadPoolExecutor

    class Counted(ThreadPoolExecutor):
        submitted = 0

        def submit(self, *args, **kwargs):
            Counted.submitted += 1
            return super().submit(*args, **kwargs)

    sc, plan, tb = deployed
    planned = drive_plan(tb.handles, sc, tb.inventory, plan)
    with Poller(sc, tb.inventory, interval=0.25, window=1.0) as poller:
        poller._pool = Counted(max_workers=4)
        poller.poll_once()
        opened = Counted.submitted
        assert opened == len(poller.readers)  # the first poll opens every switch
        end = time.monotonic() + 1.3
        while time.monotonic() < end:
            time.sleep(0.25)
            snap = poller.poll_once()
        assert Counted.submitted == opened and snap.stale == ()
        assert len(snap.rates) == 2 * len(sc.links)
        assert_rates(snap, planned, 0.1)


def test_a_switch_that_disappears_and_comes_back(clocked, clocked_switch_factory):
    sc, plan, clock, handles, inv = clocked
    planned = drive_plan(handles, sc, inv, plan)
    poller = Poller(sc, inv, interval=STEP, clock=clock, backoff_base=1.0, backoff_max=4.0)
    try:
        poller.poll_once()
        assert_rates(tick(poller, clock), planned, 1e-6)

        old = handles.pop("S1")
        port = old.port
        old.stop()
        snap = tick(poller, clock)
        assert snap.stale == ("S1",)
        health = poller.health()["S1"]
        assert health.state == "stale" and "refused" in health.last_error
        assert health.next_try == pytest.approx(clock() + 1.0)  # first backoff step
        snap = tick(poller, clock)
        assert snap.stale == ("S1",)
        # the others keep being polled; S1's links are still seen from the leaves' rx counters
        assert len(snap.rates) == 2 * len(sc.links)
        assert_rates(snap, planned, 1e-6)
        clock.advance(1.0)
        poller.poll_once()  # retried, refused again: the backoff doubles
        assert poller.health()["S1"].failures == 2
        assert poller.health()["S1"].next_try == pytest.approx(clock() + 2.0)

        # S1 comes back on the same address with fresh counters
        handles["S1"] = clocked_switch_factory("S1", clock, port)
        drive_plan(handles, sc, inv, plan)
        snap = tick(poller, clock, 1.0)
        assert snap.stale == ("S1",)  # still waiting out its backoff
        snap = tick(poller, clock, 1.0)
        assert snap.stale == () and poller.health()["S1"].state == "ok"
        s1_tx = ("S1", TX, inv.port_of("S1", "L1", sc))
        assert s1_tx in poller.tracker.last  # a new baseline, no rate from it yet
        assert_rates(snap, planned, 1e-6)  # (measured at L1 meanwhile)
        snap = tick(poller, clock)
        assert_rates(snap, planned, 1e-6)
    finally:
        poller.stop()


def test_counter_reset_skips_one_interval_only(clocked):
    sc, plan, clock, handles, inv = clocked
    planned = drive_plan(handles, sc, inv, plan)
    li = sc.link_index("L1", "H1")
    key = (li, 0 if sc.links[li].a == "L1" else 1)  # L1 -> H1: measured only at L1 (tx)
    port = inv.port_of("L1", "H1", sc)
    with Poller(sc, inv, interval=STEP, clock=clock) as poller:
        poller.poll_once()
        assert_rates(tick(poller, clock), planned, 1e-6, [key])
        assert_rates(tick(poller, clock), planned, 1e-6, [key])
        # zero L1's tx counter cell (what a pipeline push or a counter clear does)
        with P4RTSession(inv.switch("L1").p4runtime, 1, (0, 9), label="L1") as s:
            index = handles["L1"].servicer.state.p4info
            ce = p4runtime_pb2.CounterEntry(counter_id=index.id_of("counter", "tx_port_counter"))
            ce.index.index = port
            ce.data.byte_count = 0
            ce.data.packet_count = 0
            s.write([p4runtime_pb2.Update(type=p4runtime_pb2.Update.MODIFY,
                                          entity=p4runtime_pb2.Entity(counter_entry=ce))])
        snap = tick(poller, clock)  # the cell now holds less than at the last reading
        assert key not in snap.rates  # no made-up rate across the reset
        assert snap.stale == ()
        assert_rates(tick(poller, clock), planned, 1e-6, [key])


def test_background_thread_and_unreachable_switch(leafspine, tmp_path):
    """A testbed whose switches are all down: the thread keeps polling, never raises."""
    from inaplanner.deploy.emulated import start_emulated_testbed

    sc, _plan = leafspine
    tb = start_emulated_testbed(sc, tmp_path / "t.toml", write=False)
    tb.stop()  # every address now refuses connections
    seen = []
    poller = Poller(sc, tb.inventory, interval=0.05, backoff_base=0.02, backoff_max=0.05)
    poller.add_listener(seen.append)
    poller.start()
    try:
        end = time.monotonic() + 3
        while len(seen) < 4 and time.monotonic() < end:
            time.sleep(0.02)
    finally:
        poller.stop()
    assert not poller.running
    assert len(seen) >= 4
    assert all(s.rates == {} for s in seen)
    assert set(seen[-1].stale) == set(tb.inventory.switches)
    assert "refused" in poller.health()["L1"].last_error


def test_a_restarted_blank_switch_is_reset_at_the_next_poll(deployed):
    from inaplanner.deploy.deployer import deploy
    from inaplanner.views.monitor import MonitorModel

    sc, plan, tb = deployed
    with Poller(sc, tb.inventory, interval=0.2) as poller:
        poller.poll_once()
        snap = poller.poll_once()
        assert snap.reset == () and snap.stale == () and snap.rates
        tb.handles["L1"].restart()  # same address, blank: no pipeline, no entries
        snap = poller.poll_once()
        assert snap.reset == ("L1",) and snap.stale == ()
        health = poller.health()["L1"]
        assert health.state == "reset" and "no pipeline" in health.last_error
        assert "inaplanner deploy PLAN --testbed" in health.last_error
        model = MonitorModel(sc)
        model.add(snap)
        assert model.switch_states() == {"L1": "reset (no pipeline)"}
        assert model.redeploy_hint("plan.json", "tb.toml") == \
            "inaplanner deploy plan.json --testbed tb.toml"
        snap = poller.poll_once()  # asked again at the next poll, not after a backoff
        assert snap.reset == ("L1",) and poller.health()["L1"].next_try == 0.0
        assert deploy(sc, plan, tb.inventory).ok  # the one-command redeploy
        poller.poll_once()
        snap = poller.poll_once()
        assert snap.reset == () and snap.stale == ()
        assert poller.health()["L1"].state == "ok"


def test_a_late_answer_is_tolerated_and_the_deadline_follows_latency(deployed):
    sc, _plan, tb = deployed
    delay = {"s": 0.0}

    def slow(rpc, _req):
        if rpc == "Read":
            time.sleep(delay["s"])

    tb.handles["L1"].servicer.rpc_hook = slow
    try:
        with Poller(sc, tb.inventory, interval=0.3, rpc_timeout=0.3) as poller:
            poller.poll_once()
            poller.poll_once()
            assert poller.health()["L1"].state == "ok"
            delay["s"] = 0.6  # a loaded machine: slower than the deadline
            snap = poller.poll_once()
            assert "L1" not in snap.stale and poller.health()["L1"].state == "ok"
            assert poller.readers["L1"].deadline() > 0.6  # learnt from the late answer
            for _ in range(3):
                snap = poller.poll_once()
                assert "L1" not in snap.stale and poller.health()["L1"].state == "ok"
            delay["s"] = 3.0  # really hanging: the second late answer in a row marks it stale
            poller.poll_once()
            snap = poller.poll_once()
            assert "L1" in snap.stale and poller.health()["L1"].state == "stale"
    finally:
        delay["s"] = 0.0
        tb.handles["L1"].servicer.rpc_hook = None


def test_the_command_line_names_reset_switches_with_the_redeploy_command():
    import argparse

    from inaplanner.cli.monitor import reset_line

    args = argparse.Namespace(plan="plan.json", testbed="tb.toml", emulate=False)
    assert reset_line(("L1", "S2"), args) == (
        "reset (no pipeline; restarted blank): L1, S2; redeploy with: "
        "inaplanner deploy plan.json --testbed tb.toml")


def test_a_snapshots_arrays_are_its_rates(clocked):
    """The poller hands the alerts, the tables and the overlay its rates as arrays too: the same
    links, in the same order, with the same Gbps, whether every link is measured or some are
    not (a switch down: links seen from one end only, host links not at all)."""
    sc, plan, clock, handles, inv = clocked
    drive_plan(handles, sc, inv, plan)
    with Poller(sc, inv, interval=STEP, clock=clock, backoff_base=10.0) as poller:
        poller.poll_once()
        full = tick(poller, clock)
        handles["L1"].stop()
        part = tick(poller, clock)
    assert part.stale == ("L1",) and 0 < len(part.rates) < len(full.rates)
    for snap in (full, part):
        li, d, gbps = snap.measured
        assert list(zip(li.tolist(), d.tolist(), strict=True)) == list(snap.rates)
        assert gbps.tolist() == list(snap.rates.values())
        loads = snap.loads(len(sc.links))
        assert int(np.isfinite(loads).sum()) == len(snap.rates)
        assert all(loads[k] == v for k, v in snap.rates.items())


def test_an_answer_in_another_order_is_matched_cell_by_cell():
    """A switch may answer its cells in another order, leave some out, repeat one (the last
    counts) or add cells not asked for (left out): each reading goes to its own cell."""
    from inaplanner.dataplane.wire import CounterCells
    from inaplanner.monitor.poller import SwitchReader
    from inaplanner.testbed.inventory import SwitchInventory

    inv = SwitchInventory(id="S1", p4runtime="127.0.0.1:1", device_id=1, target="bmv2", ports={})
    reader = SwitchReader(inv, {TX: {1, 2, 3}, RX: {2}}, 1.0, 1.0)
    reader.cells = np.array([10, 11, 12, 13])  # tx 1, tx 2, tx 3, rx 2
    reader.counter_ids = {TX: 7, RX: 8}
    answer = CounterCells.of([(8, 2, 400, 4), (7, 3, 300, 3), (7, 9, 900, 9), (5, 1, 1, 1),
                              (7, 1, 100, 1), (7, 3, 333, 33)])
    got = reader.finish(answer, 1.0, 3.0, 0.1)
    assert got.t == 2.0
    assert dict(zip(got.cells.tolist(), zip(got.nbytes.tolist(), got.packets.tolist(),
                                            strict=True), strict=True)) == \
        {13: (400, 4), 12: (333, 33), 10: (100, 1)}
