"""`inaplanner memsim` on a preset and on a scenario file; user errors are one line, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inaplanner.cli import main
from inaplanner.io.native import save_scenario
from inaplanner.model import Scenario

SMALL = ["--jobs", "2", "--workers-per-job", "2", "--iterations", "1", "--batch", "32"]


def test_preset_table(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["memsim", "dnn-ab", *SMALL, "--processes", "1"])
    out = capsys.readouterr().out
    assert rc == 0
    lines = out.splitlines()
    assert lines[0].startswith("2 jobs, 4 workers, 20161 aggregators (5.00 MB), 100 Gbps, RTT 10 us")
    rows = {line.split()[0]: line for line in lines[2:]}
    assert list(rows) == ["switchml", "atp", "esa", "unlimited-memory"]
    assert all(rows[p].endswith("ok") for p in ("switchml", "atp", "esa"))
    assert rows["esa"].split()[2] == "1.00"  # JCT relative to ESA
    # the unlimited-memory JCT is a floor: every policy's gain ceiling is at least 1
    jct = {p: float(rows[p].split()[1]) for p in rows}
    assert all(jct[p] >= jct["unlimited-memory"] for p in ("switchml", "atp", "esa"))
    ceilings = rows["unlimited-memory"].split("gain:")[1]
    assert ceilings.count("x") == 3 and "atp" in ceilings


def test_window_cap_and_no_bound(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["memsim", "dnn-a", *SMALL, "--policies", "esa", "--processes", "1", "--json"]
    assert main([*args, "--max-window-kb", "0", "--no-bound"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["config"]["max_window_bytes"] is None and doc["unlimited_memory"] is None
    assert main([*args, "--max-window-kb", "30"]) == 0
    capped = json.loads(capsys.readouterr().out)
    assert capped["config"]["max_window_bytes"] == 30_000
    assert capped["unlimited_memory"]["avg_jct_s"] <= capped["results"]["esa"]["avg_jct_s"]
    assert capped["results"]["esa"]["avg_jct_s"] != doc["results"]["esa"]["avg_jct_s"]  # the cap acts


def test_window_model_option(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["memsim", "dnn-a", *SMALL, "--policies", "atp", "--processes", "1", "--json",
            "--no-bound"]
    assert main(args) == 0
    aimd = json.loads(capsys.readouterr().out)
    assert aimd["config"]["max_window_bytes"] is None
    assert aimd["config"]["window_increase"] == "per-rtt" and aimd["config"]["loss_backoff"]
    assert main([*args, "--window", "cap60"]) == 0
    capped = json.loads(capsys.readouterr().out)
    assert capped["config"]["max_window_bytes"] == 60_000
    assert capped["config"]["window_increase"] == "per-result"
    assert not capped["config"]["loss_backoff"]
    assert capped["results"]["atp"]["avg_jct_s"] != aimd["results"]["atp"]["avg_jct_s"]


def test_preset_json_in_parallel_matches_sequential(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["memsim", "dnn-a", *SMALL, "--policies", "atp,esa", "--memory-mb", "0.5", "--json"]
    assert main([*args, "--processes", "2"]) == 0
    par = json.loads(capsys.readouterr().out)
    assert main([*args, "--processes", "1"]) == 0
    seq = json.loads(capsys.readouterr().out)
    assert par["config"]["aggregators"] == 500_000 // 248
    for name in ("atp", "esa"):
        assert par["results"][name]["avg_jct_s"] == seq["results"][name]["avg_jct_s"]
        assert par["results"][name]["ok"] is True
    assert [j["workload"] for j in par["config"]["jobs"]] == ["A", "A"]


def test_scenario_file(tmp_path: Path, star: Scenario, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "star.json"
    save_scenario(star, path)
    rc = main(["memsim", str(path), "--policies", "switchml,esa", "--iterations", "1", "--batch", "32",
               "--processes", "1", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 0
    assert doc["config"]["switch"] == "S1" and doc["config"]["aggregators"] == 1000
    assert [(j["id"], j["workers"]) for j in doc["config"]["jobs"]] == [("job0", 3), ("job1", 3)]
    assert set(doc["results"]) == {"switchml", "esa"}


@pytest.mark.parametrize("args, message", [
    (["memsim", "no-such-preset"], "not a preset"),
    (["memsim", "dnn-a", "--policies", "fifo"], "unknown policy 'fifo'"),
    (["memsim", "dnn-a", "--memory-mb", "0"], "--memory-mb"),
    (["memsim", "dnn-a", "--max-window-kb", "-1"], "--max-window-kb"),
    (["memsim", "dnn-a", "--switch", "S1"], "--switch applies to scenario files"),
])
def test_user_errors(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err


def test_scenario_refuses_preset_options(tmp_path: Path, star: Scenario,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "star.json"
    save_scenario(star, path)
    assert main(["memsim", str(path), "--jobs", "3"]) == 2
    assert "presets" in capsys.readouterr().err
