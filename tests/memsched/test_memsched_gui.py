"""Tools > Memory Sharing at a Switch: runs the memsched core off the UI thread and shows its figures."""

from __future__ import annotations

import pytest

from inaplanner.cli.memsim import BOUND
from inaplanner.memsched.simulator import simulate
from inaplanner.model import Host, Job, Link, Scenario, Switch


def star(jobs: int = 2, workers: int = 3, attach: bool = True) -> Scenario:
    nodes: list = [Switch(id="S1", programmable=True, aggregators=400), Switch(id="S2")]
    links = [Link(a="S1", b="S2", capacity=100.0, a_port=1, b_port=1)]
    port = {"S1": 2, "S2": 2}
    job_list = []
    for j in range(jobs):
        ws = [f"w{j}_{k}" for k in range(workers)]
        for h in [*ws, f"ps{j}"]:
            nodes.append(Host(id=h))
            sw = "S1" if attach else "S2"
            links.append(Link(a=h, b=sw, capacity=100.0, a_port=None, b_port=port[sw]))
            port[sw] += 1
        job_list.append(Job(id=f"job{j}", workers=ws, parameter_servers=[f"ps{j}"], model_mb=0.4,
                            layers=2, comm_comp_ratio=2.0 if j % 2 == 0 else 0.5, remaining_s=10.0))
    sc = Scenario(name="star", nodes=nodes, links=links, jobs=job_list)
    sc.validate()
    return sc


def test_runs_every_policy_and_the_floor(make_window, qtbot) -> None:
    w = make_window(star())
    assert "inaplanner.gui.memsim" not in w.plugin_errors
    w.actions_by_name["memsim"].trigger()
    dlg = w.memsim.dialog
    assert dlg is not None and dlg.switch_box.currentText() == "S1"
    dlg.iterations.setValue(1)
    assert dlg.run()
    assert dlg.running and not dlg.run_button.isEnabled()
    qtbot.waitUntil(lambda: not dlg.running, timeout=120_000)
    rows = {dlg.table.item(i, 0).text(): i for i in range(dlg.table.rowCount())}
    assert list(rows) == ["switchml", "atp", "esa", BOUND]
    cfg = dlg.config
    assert cfg is not None and cfg.n_aggregators == 400 and cfg.iterations == 1
    for policy in ("switchml", "atp", "esa"):
        i = rows[policy]
        # the figures are the core's, for the same configuration
        assert dlg.table.item(i, 1).text() == f"{simulate(cfg, policy).avg_jct_s * 1e3:.3f}"
        assert dlg.table.item(i, 7).text() == "ok"
        assert float(dlg.table.item(i, 2).text().rstrip("x")) >= 1.0  # never below the floor
    assert dlg.run_button.isEnabled() and "no policy can beat" in dlg.status.text()


def test_a_switch_without_jobs_is_refused_with_the_cause(make_window) -> None:
    w = make_window(star(attach=False))
    dlg = w.memsim.open()
    assert not dlg.run()
    assert "Cannot simulate" in dlg.status.text() and "S1" in dlg.status.text()
    assert not dlg.running and dlg.table.rowCount() == 0


def test_cancel_stops_the_children(make_window, qtbot) -> None:
    w = make_window(star(jobs=2, workers=4))
    dlg = w.memsim.open()
    dlg.iterations.setValue(50)
    dlg.memory.setValue(50.0)
    for name in ("always-preempt", "half-preempt"):
        dlg.checks[name].setChecked(True)
    assert dlg.run()
    dlg.cancel()
    assert not dlg.running and dlg._pool is None and dlg.status.text() == "Cancelled."
    assert dlg.run_button.isEnabled()
    qtbot.wait(200)
    assert dlg.table.rowCount() == 0  # nothing arrives after a cancel


@pytest.mark.parametrize("name", ["switchml", "esa"])
def test_policy_boxes_follow_the_core(make_window, name: str) -> None:
    dlg = make_window(star()).memsim.open()
    assert dlg.checks[name].isChecked()
    for box in dlg.checks.values():
        box.setChecked(False)
    assert not dlg.run() and "at least one policy" in dlg.status.text()
