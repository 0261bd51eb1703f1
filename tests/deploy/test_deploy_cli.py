"""The command line: ``inaplanner testbed emulate`` (a real subprocess, stopped with Ctrl-C) and
``inaplanner deploy`` onto it, dry run first."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time

import networkx as nx

from inaplanner.cli import main
from inaplanner.io.native import save_plan, save_scenario, scenario_sha256
from inaplanner.model import Job, Plan, PlannerInfo, Route, TaskPlan
from inaplanner.testbed.inventory import load_inventory
from inaplanner.topologies import leaf_spine, mark_programmable


def small_case():
    sc = leaf_spine(2, 1, 2)
    mark_programmable(sc)  # the leaves
    sc.jobs = [Job("j0", ["H1", "H2", "H3"], ["H4"], model_mb=10.0)]
    sc.touch()
    sc.validate()
    g = sc.graph()
    routes = []
    for w in ("H1", "H2", "H3"):
        leaf = next(iter(g.neighbors(w)))
        path = [w] + nx.shortest_path(g, leaf, "H4")
        routes.append(Route(w, path, [leaf]))
    plan = Plan(scenario_sha256(sc), PlannerInfo("hand", status="heuristic"),
                [TaskPlan("j0", "H4", 1.0, routes)])
    return sc, plan


def test_emulate_then_deploy_from_the_command_line(tmp_path, capsys):
    sc, plan = small_case()
    sc_path, plan_path, tb_path = tmp_path / "sc.json", tmp_path / "plan.json", tmp_path / "tb.toml"
    save_scenario(sc, sc_path)
    save_plan(plan, plan_path)
    proc = subprocess.Popen(
        [sys.executable, "-m", "inaplanner", "testbed", "emulate", str(sc_path), "-o", str(tb_path)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        lines = []
        deadline = time.monotonic() + 90  # a margin for a loaded machine
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            if line.startswith("running"):
                break
        assert any(line.startswith("running") for line in lines), (lines, proc.stderr.read())
        inv = load_inventory(tb_path)
        assert sorted(inv.switches) == ["L1", "L2"]  # the programmable switches
        assert inv.switches["L1"].ports == {"H1": 1, "H2": 2, "S1": 3}
        assert all(sw.ssh is None for sw in inv.switches.values())

        code = main(["deploy", str(plan_path), "--testbed", str(tb_path), "--dry-run"])
        out, err = capsys.readouterr()
        assert code == 0 and out.startswith("dry run: ok")
        # stderr, not a terminal: the run's overall progress as lines, no step of any switch
        assert "inaplanner: deploy: 100% dry run: 2/2 switches [" in err, err
        assert "[L1]" not in err and len(err.splitlines()) <= 4, err
        assert "switch L1: dry run; pipeline: install; insert" in out
        assert "+ table InaIngress." in out
        assert not (tmp_path / "workers").exists()

        log = tmp_path / "deploy.log"
        code = main(["deploy", str(plan_path), "--testbed", str(tb_path), "--log", str(log), "-q"])
        out = capsys.readouterr().out
        assert code == 0 and out.startswith("ok"), out
        assert "switch L1: deployed; pipeline pushed; insert" in out
        cfg = json.loads((tmp_path / "workers" / "H1.json").read_text())
        assert cfg["host"] == "H1" and cfg["tasks"][0]["job"] == "j0"
        assert "[L2] verify done" in log.read_text()

        code = main(["deploy", str(plan_path), "--testbed", str(tb_path), "-v"])
        out, err = capsys.readouterr()
        assert code == 0 and "switch L1: unchanged; unchanged" in out
        # -v: every step of every switch as well
        assert "[L1] snapshot: done — same pipeline" in err and "[L2] verify: done" in err, err
        assert "apply: 2/2 switches" in err
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            assert proc.wait(60) == 0, proc.stderr.read()  # exits within ~1 s; margin for load
        finally:
            if proc.poll() is None:
                proc.kill()


def test_deploy_refuses_a_plan_for_another_scenario(tmp_path, capsys):
    sc, plan = small_case()
    plan.scenario_sha256 = "0" * 64
    save_scenario(sc, tmp_path / "sc.json")
    save_plan(plan, tmp_path / "plan.json")
    (tmp_path / "tb.toml").write_text("")
    code = main(["deploy", str(tmp_path / "plan.json"), "--testbed", str(tmp_path / "tb.toml"),
                 "--scenario", str(tmp_path / "sc.json")])
    assert code == 2
    assert "made for another scenario" in capsys.readouterr().err
    code = main(["deploy", str(tmp_path / "plan.json"), "--testbed", str(tmp_path / "tb.toml")])
    assert code == 2 and "give --scenario FILE" in capsys.readouterr().err


def test_entries_command_prints_the_spec(tmp_path, capsys):
    sc, plan = small_case()
    save_scenario(sc, tmp_path / "sc.json")
    save_plan(plan, tmp_path / "plan.json")  # the scenario is found by its hash
    assert main(["entries", str(tmp_path / "plan.json")]) == 0
    out = capsys.readouterr().out
    first, rest = out.split("\n", 1)
    assert rest.startswith("switch L1 (node id ") and "ina_forward" in out
    assert "worker H1: j0/H4" in out
    assert main(["entries", str(tmp_path / "plan.json"), "--json", "-o",
                 str(tmp_path / "e.json")]) == 0
    doc = json.loads((tmp_path / "e.json").read_text())
    assert doc["format"] == "inaplanner-entries" and "L1" in doc["switches"]
    # the first line counts what the text lists (30,000 lines at k=64)
    sw = doc["switches"].values()
    assert first == (f"# {len(doc['switches'])} switches: {sum(len(s['table_entries']) for s in sw)} table "
                     f"entries, {sum(len(s['multicast_groups']) for s in sw)} multicast groups, "
                     f"{sum(len(s['aggregator_pools']) for s in sw)} aggregator pools; 3 workers, 3 worker-task configurations")
    assert out.count("\n  ") == sum(len(s["table_entries"]) + len(s["multicast_groups"]) + len(s["aggregator_pools"]) for s in sw)


def test_a_task_at_rate_0_gets_no_entries(tmp_path, capsys):
    """A task at rate 0 owns none of the model (an optimal ARO plan can have one): its routes
    are not installed, and a warning says so (at k=64: 1,000 worker configurations at 0 Gbps)."""
    sc, plan = small_case()
    save_scenario(sc, tmp_path / "sc.json")
    plan.tasks[0].rate = 0.0
    save_plan(plan, tmp_path / "plan.json")
    assert main(["entries", str(tmp_path / "plan.json"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["workers"] == {} and all(not s["table_entries"] for s in doc["switches"].values())
    assert doc["warnings"] == ["j0/H4: rate 0, so it carries none of the job's model: its 3 routes are not installed"]


def test_bad_testbed_file_is_one_line(tmp_path, capsys):
    sc, plan = small_case()
    save_scenario(sc, tmp_path / "sc.json")
    save_plan(plan, tmp_path / "plan.json")
    (tmp_path / "tb.toml").write_text('[[switch]]\nid = "L1"\npassword = "x"\n')
    code = main(["deploy", str(tmp_path / "plan.json"), "--testbed", str(tmp_path / "tb.toml")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert "tb.toml: switch[0].password: passwords are never stored" in err


def test_trust_records_unknown_host_keys_only_when_told(sshd, tmp_path, capsys, monkeypatch):
    tb = tmp_path / "tb.toml"
    tb.write_text(
        '[defaults]\nknown_hosts = "kh"\n'
        f'[[switch]]\nid = "L1"\np4runtime = "127.0.0.1:1"\ndevice_id = 1\ntarget = "bmv2"\n'
        f'ssh_host = "127.0.0.1"\nssh_port = {sshd.port}\nssh_user = "{sshd.user}"\n'
        f'ssh_key = "{sshd.client_key}"\n'
        f'[[host]]\nid = "H1"\nssh_host = "127.0.0.1"\nssh_port = {sshd.port}\n'
        f'ssh_key = "{sshd.client_key}"\n'
    )
    monkeypatch.setattr("builtins.input", lambda prompt: "n")
    assert main(["testbed", "trust", str(tb)]) == 0
    out = capsys.readouterr().out
    assert f"[127.0.0.1]:{sshd.port} offers ssh-ed25519 key SHA256:" in out
    assert "not recorded" in out and not (tmp_path / "kh").exists()
    assert main(["testbed", "trust", str(tb), "--yes"]) == 0
    out = capsys.readouterr().out
    assert "1 key(s) recorded" in out  # one host serves both entries
    assert (tmp_path / "kh").read_text().split()[:2] == [f"[127.0.0.1]:{sshd.port}", "ssh-ed25519"]
    assert main(["testbed", "trust", str(tb)]) == 0
    assert "already known" in capsys.readouterr().out


def _limits(pid: int) -> tuple[int, int]:
    with open(f"/proc/{pid}/limits", encoding="utf-8") as fh:
        line = next(x for x in fh if x.startswith("Max open files"))
    soft, hard = line.split()[3:5]
    return int(soft), int(hard)


def _ft8_and_plan(tmp_path):
    """Fat-tree k=8 (80 switches, 16 programmable) with one small job, and its ``random`` plan."""
    sc_path, plan_path = tmp_path / "ft8.json", tmp_path / "plan.json"
    assert main(["generate", "fat-tree", "--k", "8", "--programmable", "0.2", "--jobs", "1",
                 "--tasks-per-job", "1", "--workers-per-job", "8", "--seed", "1",
                 "-o", str(sc_path)]) == 0
    assert main(["plan", str(sc_path), "--planner", "random", "-o", str(plan_path), "-q"]) == 0
    return sc_path, plan_path


def test_a_low_open_files_limit_is_raised_for_many_switches(tmp_path):
    """Most Linux systems start a process with a soft limit of 1,024 open files; fat-tree k=16's
    320 switches, emulated and deployed in one process, then failed with "Too many open files".
    Here a soft limit of 200 against fat-tree k=8's 80 switches (each: a listening socket and
    both ends of the deployment's connection, in this process) is raised to the hard limit and
    the plan is deployed on every switch."""
    import resource

    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    sc_path, plan_path = _ft8_and_plan(tmp_path)
    tb_path = tmp_path / "tb.toml"
    proc = subprocess.Popen(
        [sys.executable, "-m", "inaplanner", "testbed", "emulate", str(sc_path), "--plan",
         str(plan_path), "-o", str(tb_path), "-q"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (200, hard)),
    )
    try:
        out = []
        for line in proc.stdout:
            out.append(line)
            if line.startswith("running"):
                break
        assert out and out[-1].startswith("running"), ("".join(out), proc.stderr.read())
        assert any(line.startswith("deployed ") for line in out)
        assert sum(line.startswith("switch ") for line in out) == 80
        assert _limits(proc.pid)[0] > 200
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(60)
        finally:
            if proc.poll() is None:
                proc.kill()


def test_too_low_a_hard_limit_is_one_clear_line_before_anything_starts():
    code = (
        "import resource\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (100, 100))\n"
        "from inaplanner.errors import InaplannerError\n"
        "from inaplanner.fdlimit import ensure_open_files\n"
        "ensure_open_files(10, 'a few')\n"
        "try:\n"
        "    ensure_open_files(1000, 'deploying 500 switches')\n"
        "except InaplannerError as exc:\n"
        "    print(exc)\n"
        "print(resource.getrlimit(resource.RLIMIT_NOFILE))\n"
        # the connections switches emulated here will accept count against what comes later
        "from inaplanner.fdlimit import reserve\n"
        "release = reserve(60)\n"
        "try:\n"
        "    ensure_open_files(10, 'deploying 5 switches')\n"
        "except InaplannerError as exc:\n"
        "    print(exc)\n"
        "release()\n"
        "release()\n"
        "ensure_open_files(10, 'deploying 5 switches')\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    first, limits, reserved = run.stdout.splitlines()
    assert first.startswith("deploying 500 switches needs about 10")
    assert "may open at most 100 (the hard limit, ulimit -Hn)" in first
    assert limits == "(100, 100)"
    assert reserved.startswith("deploying 5 switches needs about 1")  # 10 + 60 + 64 + open


def _emulate_until(tmp_path, marker: str):
    """``testbed emulate`` of fat-tree k=8 with a plan (80 switches, every one emulated) in a
    real subprocess; returns it once a stderr line contains ``marker``, and the lines so far."""
    sc_path, plan_path = _ft8_and_plan(tmp_path)
    proc = subprocess.Popen(
        [sys.executable, "-m", "inaplanner", "testbed", "emulate", str(sc_path), "--plan",
         str(plan_path), "-o", str(tmp_path / "tb.toml")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stderr] + [lines.put("")],
                     daemon=True).start()
    seen = []
    deadline = time.monotonic() + 90  # a margin for a loaded machine
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=max(deadline - time.monotonic(), 0.01))
        except queue.Empty:
            break
        seen.append(line)
        if marker in line:
            # the reader thread keeps draining stderr; hand the rest over as the process ends
            proc.rest = lines  # type: ignore[attr-defined]
            return proc, seen
        if not line:
            break
    proc.kill()
    raise AssertionError(f"no {marker!r} on stderr: {''.join(seen)}")


def _interrupt(proc) -> tuple[int, str, str]:
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(60)  # exits within ~1 s; margin for load
    finally:
        if proc.poll() is None:
            proc.kill()
    rest = []
    while (line := proc.rest.get(timeout=10)):
        rest.append(line)
    return proc.returncode, proc.stdout.read(), "".join(rest)


def test_ctrl_c_while_the_switches_start_stops_those_started_and_exits_130(tmp_path):
    """Before, Ctrl-C during the start or the deployment of ``--plan`` ended with exit code 0
    and only "stopping", as if the emulators had served and been stopped."""
    proc, _ = _emulate_until(tmp_path, "emulate:   0% start: 0/80 switches")
    code, out, err = _interrupt(proc)
    assert code == 130, (out, err)
    assert err.splitlines()[-1] == ("inaplanner: testbed emulate interrupted while starting the "
                                    "emulated switches: those started are stopped"), err
    assert out == "" and not (tmp_path / "tb.toml").exists()  # the file is written once all run


def test_ctrl_c_while_the_plan_is_deployed_cancels_it_and_exits_130(tmp_path):
    proc, _ = _emulate_until(tmp_path, "deploy:")
    code, out, err = _interrupt(proc)
    assert code == 130, (out, err)
    assert err.splitlines()[-1] == (
        "inaplanner: testbed emulate interrupted while deploying " + str(tmp_path / "plan.json")
        + ": the deployment is cancelled and the emulated switches are stopped"), err
    assert "stopped" in err.splitlines()[-2]  # the deployment's last line: switches stopped
    assert "deployed" not in out and "running" not in out, out
