"""``inaplanner monitor``: emulated demo run with recording, replay, and user errors."""

from __future__ import annotations

import re

import pytest

from inaplanner.cli import main
from inaplanner.io.native import save_plan, save_scenario
from inaplanner.monitor.recording import load_recording
from inaplanner.monitor.series import planned_loads


def test_emulated_run_records_and_replays(leafspine, tmp_path, capsys):
    sc, plan = leafspine
    save_scenario(sc, tmp_path / "sc.json")
    save_plan(plan, tmp_path / "plan.json")
    rec = tmp_path / "run.csv"
    code = main(["monitor", "--emulate", "--plan", str(tmp_path / "plan.json"),
                 "--interval", "0.25", "--window", "2", "--duration", "2.6",
                 "--hot", "L2->S1=1.4", "--hold", "0.3", "--plain", "--record", str(rec)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "inaplanner monitor" in out and "vs plan" in out
    assert re.search(r"^L2->S1 .* \+(39\.\d|40\.\d)%$", out, re.M)
    assert "ALERT deviation: L2->S1 deviates from plan" in out
    assert "polls of 4 switches" in err and "recorded to" in err
    run = load_recording(rec)
    assert len(run.snapshots) >= 3
    li = sc.link_index("L2", "S1")
    key = (li, 0 if sc.links[li].a == "L2" else 1)
    _, values = run.series(key)
    want = 1.4 * float(planned_loads(sc, plan)[key])
    assert want > 0 and abs(values[-1] - want) <= 0.05 * want  # over the last 2 s

    code = main(["monitor", "--replay", str(rec), "--speed", "0", "--plain", "--plan",
                 str(tmp_path / "plan.json"), "--top", "3"])
    out, err = capsys.readouterr()
    assert code == 0
    assert out.count("replay of") == len(run.snapshots)
    assert f"{len(run.snapshots)} polls replayed" in err


def test_monitor_user_errors(tmp_path, capsys):
    assert main(["monitor"]) == 2
    assert "give --testbed" in capsys.readouterr().err
    assert main(["monitor", "--replay", str(tmp_path / "none.csv")]) == 2
    assert "no such recording" in capsys.readouterr().err
    assert main(["monitor", "--emulate"]) == 2
    assert "--emulate needs --plan" in capsys.readouterr().err


def test_monitor_a_testbed_file(deployed, capsys):
    """The path a real testbed takes: the switches named by testbed.toml, the plan beside."""
    from inaplanner.monitor.drive import drive_plan

    sc, plan, tb = deployed
    drive_plan(tb.handles, sc, tb.inventory, plan)
    folder = tb.path.parent
    save_scenario(sc, folder / "scenario.json")
    save_plan(plan, folder / "plan.json")
    code = main(["monitor", "--testbed", str(tb.path), "--plan", str(folder / "plan.json"),
                 "--interval", "0.25", "--duration", "0.8", "--plain", "--top", "4"])
    out, err = capsys.readouterr()
    assert code == 0, err
    frames = [f for f in out.split("\n\n") if f.strip()]
    assert len(frames) >= 2
    last = frames[-1].splitlines()
    assert f"{2 * len(sc.links)} directed links measured" in last[0]
    assert len([ln for ln in last if "->" in ln]) == 4
    assert "polls of 4 switches; 0 alerts" in err  # (an alert needs 3 s by default)


def test_polls_slower_than_the_interval_are_said_once_they_settle():
    """At fat-tree k=32 a poll of 1,280 emulated switches took 8-12 s against --interval 1:
    the monitor says so (once), rather than let each rate silently cover ten times the
    interval asked for."""
    from inaplanner.cli.monitor import pace

    assert pace([0.0, 1.0, 2.0, 3.1, 4.0], 1.0, 80) is None  # on time
    assert pace([0.0, 9.8], 1.0, 1280) is None  # one gap says nothing yet
    assert pace([0.0, 1.0, 1.2, 11.0], 1.0, 80) is None  # the median gap still holds
    note = pace([0.0, 9.0, 19.0, 28.5, 40.0, 50.0, 60.0], 1.0, 1280)
    assert note is not None and note.startswith(
        "a poll of the 1280 switches takes about 10.0 s, longer than --interval 1 s")
    assert pace([0.0, 2.0, 4.0, 6.0], 2.0, 10) is None  # as asked, whatever the interval
    # the first poll opens every session: its gap neither raises the warning nor sizes it
    assert pace([0.3, 7.4, 8.3, 9.2], 1.0, 1280) is None
    note = pace([0.3, 7.4, 10.9, 14.4, 18.0], 1.0, 1280)
    assert note is not None and "takes about 3.5 s" in note
    from inaplanner.cli.monitor import steady_pace

    assert steady_pace([0.3, 7.4, 10.9, 14.4]) == pytest.approx(3.5)
    assert steady_pace([0.0, 2.0]) == 2.0


def test_many_switches_not_answering_are_named_a_few_and_counted():
    """At fat-tree k=32 a monitor started before the plan was on every switch printed one line
    of 5,000 characters naming 1,000 switches reset, and a line for each of them."""
    import argparse

    from inaplanner.cli.monitor import reset_line
    from inaplanner.monitor.series import Snapshot
    from inaplanner.monitor.table import render_table
    from inaplanner.views.fmt import names

    switches = [f"A{n // 16}_{n % 16}" for n in range(1000)]
    line = reset_line(switches, argparse.Namespace(plan="aro.json", testbed="tb.toml"))
    assert "A0_11 and 988 more; redeploy with: inaplanner deploy aro.json" in line
    text = render_table(Snapshot(1.0, 0.0, {}, tuple(switches)), {}, listing=names)
    assert "not answering: A0_0, A0_1," in text and "and 988 more" in text
    assert max(len(x) for x in text.splitlines()) < 200


def test_ctrl_c_while_setting_up_says_what_it_stopped(leafspine, tmp_path, capsys, monkeypatch):
    """A Ctrl+C before the first poll (emulating and deploying k=64 takes minutes) says what it
    stopped, and the emulated switches started are stopped; one during the polls still ends in
    the run's summary."""
    from inaplanner.deploy import deployer, emulated

    sc, plan = leafspine
    save_scenario(sc, tmp_path / "sc.json")
    save_plan(plan, tmp_path / "plan.json")
    started = []
    real_start = emulated.start_emulated_testbed

    def start(*args, **kwargs):
        tb = real_start(*args, **kwargs)
        started.append(tb)
        return tb

    def ctrl_c(*_args, **_kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(emulated, "start_emulated_testbed", start)
    monkeypatch.setattr(deployer, "deploy", ctrl_c)
    code = main(["monitor", "--emulate", "--plan", str(tmp_path / "plan.json"), "--plain"])
    err = capsys.readouterr().err
    assert code == 130
    assert ("inaplanner: monitor interrupted while deploying the plan on the 4 emulated "
            "switches, before its first poll: nothing was polled; the emulated switches "
            "started are stopped") in err
    assert len(started) == 1 and all(h.stopped.is_set() for h in started[0].handles.values())

    monkeypatch.undo()
    from inaplanner.monitor import poller

    real_stop = poller.Poller.stop
    calls = []

    def stop(self):  # the loop's Ctrl+C: the poller is stopped and the summary printed
        calls.append(1)
        return real_stop(self)

    monkeypatch.setattr(poller.Poller, "stop", stop)
    monkeypatch.setattr("inaplanner.monitor.table.render_table", ctrl_c)  # at the first poll
    code = main(["monitor", "--emulate", "--plan", str(tmp_path / "plan.json"), "--plain",
                 "--interval", "0.25"])
    err = capsys.readouterr().err
    assert code == 0 and calls and "polls of 4 switches" in err and "interrupted" not in err
