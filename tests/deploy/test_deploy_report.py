"""What a deployment prints at datacenter scale: one line of totals, one warning for all the
switches a plan crosses outside the testbed, and the switch and host lists capped (failures
first, the rest counted) unless ``--all`` asks for every line."""

from __future__ import annotations

from inaplanner.dataplane.entries import NAMED, build_entities
from inaplanner.deploy.results import LISTED, DeployReport, HostResult, SwitchResult
from inaplanner.model import Switch
from inaplanner.planners.base import run_planner
from inaplanner.planners.registry import available
from inaplanner.testbed.inventory import Inventory, SwitchInventory
from inaplanner.topologies import fat_tree, mark_programmable, place_jobs


def _report(n_switches: int, n_hosts: int, failed: tuple[int, ...] = ()) -> DeployReport:
    switches = {}
    for i in range(n_switches):
        r = SwitchResult(f"S{i}", status="failed" if i in failed else "deployed",
                         pipeline_pushed=True, diff={"insert": 10, "modify": 0, "delete": 1})
        if i in failed:
            r.step, r.error = "write", "the target rejected update #3"
        switches[r.switch] = r
    hosts = {f"H{i}": HostResult(f"H{i}", status="configured", path=f"workers/H{i}.json")
             for i in range(n_hosts)}
    return DeployReport(ok=not failed, dry_run=False, switches=switches, hosts=hosts,
                        error="switch S57: write: rejected" if failed else "", seconds=1.5)


def test_a_large_report_lists_failures_first_and_counts_the_rest():
    report = _report(300, 400, failed=(57, 299))
    lines = report.text().splitlines()
    assert lines[0] == "FAILED: switch S57: write: rejected"
    assert lines[1] == ("  300 switches: 298 deployed, 2 failed; pipeline pushed on 300; "
                        "insert 3000, delete 300; 400 hosts: 400 configured")
    switch_lines = [x for x in lines if x.startswith("  switch ")]
    # both failures are listed, and first, although they are far down the list
    assert switch_lines[0].startswith("  switch S57: failed") and "error at write" in switch_lines[0]
    assert switch_lines[1].startswith("  switch S299: failed")
    assert len(switch_lines) == LISTED
    assert f"  ... and {300 - LISTED} more switches ({300 - LISTED} deployed); --all lists " \
        "every switch" in lines
    assert sum(x.startswith("  host ") for x in lines) == LISTED
    assert f"  ... and {400 - LISTED} more hosts ({400 - LISTED} configured); --all lists " \
        "every host" in lines
    everything = report.text(listed=None).splitlines()
    assert sum(x.startswith("  switch ") for x in everything) == 300
    assert sum(x.startswith("  host ") for x in everything) == 400
    assert not any("more switches" in x or "more hosts" in x for x in everything)
    # many warnings: the first ones, and a count
    report.warnings = [f"switch S{i} reports no pipeline" for i in range(3 * LISTED)]
    lines = report.text().splitlines()
    assert sum(x.startswith("  warning: ") for x in lines) == LISTED
    assert f"  ... and {2 * LISTED} more warnings; --all lists every warning" in lines
    assert sum(x.startswith("  warning: ") for x in report.text(listed=None).splitlines()) \
        == 3 * LISTED
    # a dry run's hosts count as "dry run", whatever each would write
    report.hosts["H0"].status = "dry run: would write 1060 bytes"
    report.hosts["H1"].status = "dry run: would write 1061 bytes"
    assert report.totals().endswith("400 hosts: 2 dry run, 398 configured")
    # where --all means nothing (the GUI's log), the counts stand alone
    quiet = report.text(more="").splitlines()
    assert f"  ... and {300 - LISTED} more switches ({300 - LISTED} deployed)" in quiet
    # a small report is whole
    small = _report(5, 3).text().splitlines()
    assert small[0] == "ok" and sum(x.startswith("  switch ") for x in small) == 5
    assert not any("more" in x for x in small)


def test_switches_outside_the_testbed_are_one_warning():
    sc = fat_tree(4)
    mark_programmable(sc, 0.3, seed=1)
    place_jobs(sc, 2, 2, 6, seed=1)
    plan = run_planner(available()["random"], sc, {"seed": 0, "time_limit": 5.0})
    crossed = {n for tp in plan.tasks for r in tp.routes for n in r.path}
    programmable = [s.id for s in sc.switches() if s.programmable]
    outside = sorted(s.id for s in sc.switches()
                     if s.id in crossed and not s.programmable)
    assert len(outside) > NAMED  # the case the grouping is for
    inv = Inventory(switches={sid: SwitchInventory(sid, f"127.0.0.1:{i + 1}", 1, "bmv2")
                              for i, sid in enumerate(programmable)})
    spec = build_entities(sc, plan, inv)
    about = [w for w in spec.warnings if "by their own routing" in w or "its own routing" in w]
    assert len(about) == 1, spec.warnings
    assert about[0].startswith(f"{len(outside)} switches carry flows of the plan but are not "
                               "programmable and not in the inventory")
    named = about[0][about[0].rindex("(") + 1:-1]
    assert named.endswith(f" and {len(outside) - NAMED} more")
    assert set(named.split(" and ")[0].split(", ")) <= set(outside)
    # one switch outside: the warning names it
    inv.switches.update({sid: SwitchInventory(sid, "127.0.0.1:99", 1, "bmv2")
                         for sid in outside[1:]})
    spec = build_entities(sc, plan, inv)
    assert [w for w in spec.warnings if "own routing" in w] == [
        f"switch {outside[0]} is not programmable and not in the inventory: it must forward "
        "INA traffic by its own routing"]
    assert isinstance(sc.node(outside[0]), Switch)


def test_a_large_recovery_report_lists_failures_first_and_counts_the_rest():
    """`deploy --recover` printed a line for every switch and worker (3,280 at fat-tree k=32);
    its report now caps them as a deployment's does, the failed ones first and always."""
    from inaplanner.deploy.recover import RecoverReport

    report = RecoverReport(False, "old", journal="tb.toml.deploy-journal")
    for n in range(1280):
        report.switches[f"S{n}"] = ("FAILED: connect: refused" if n in (700, 1279)
                                    else "holds the old plan (12 entities; nothing to change)")
    for n in range(2000):
        report.hosts[f"H{n}"] = "old configuration written (640 bytes)"
    lines = report.text().splitlines()
    assert lines[0].startswith("recovery FAILED")
    assert lines[1:3] == ["  switch S700: FAILED: connect: refused",
                          "  switch S1279: FAILED: connect: refused"]
    assert sum(line.startswith("  switch ") for line in lines) == 20
    assert "  ... and 1260 more switches; --all lists every switch" in lines
    assert sum(line.startswith("  host ") for line in lines) == 20
    assert lines[-1] == "  ... and 1980 more hosts; --all lists every host"
    every = report.text(listed=None).splitlines()
    assert len(every) == 1 + 1280 + 2000
