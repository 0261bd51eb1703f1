"""Port -> link mapping through the testbed's port map, and the terminal table."""

from __future__ import annotations

import numpy as np

from inaplanner.monitor.mapping import RX, TX, Probe, link_map
from inaplanner.monitor.recording import LinkInfo
from inaplanner.monitor.series import Snapshot
from inaplanner.monitor.table import render_table, top_rows
from inaplanner.testbed.inventory import parse_inventory


def test_probes_follow_the_inventory_port_map(leafspine):
    sc, _plan = leafspine
    inv = parse_inventory(
        '[[switch]]\nid = "L1"\np4runtime = "127.0.0.1:1"\ndevice_id = 1\ntarget = "bmv2"\n'
        '[switch.ports]\nH1 = 40\nS1 = 41\n'
        '[[switch]]\nid = "S1"\np4runtime = "127.0.0.1:2"\ndevice_id = 1\ntarget = "bmv2"\n'
    )
    lm = link_map(sc, inv)
    li = sc.link_index("H1", "L1")
    up = (li, 0 if sc.links[li].a == "H1" else 1)
    assert lm.probes[up] == [Probe("L1", RX, 40)]  # the file's front-panel port, not the scenario's
    assert lm.probes[(li, 1 - up[1])] == [Probe("L1", TX, 40)]
    ls = sc.link_index("L1", "S1")
    d = 0 if sc.links[ls].a == "L1" else 1
    s1_port = sc.links[ls].port_at("S1")  # S1 has no map: the scenario's port number
    assert lm.probes[(ls, d)] == [Probe("L1", TX, 41), Probe("S1", RX, s1_port)]
    assert lm.probes[(ls, 1 - d)] == [Probe("S1", TX, s1_port), Probe("L1", RX, 41)]
    # links of switches not in the file are not measured
    assert {dl.name for dl in lm.unmeasured()} >= {"H4->L2", "L2->S2"}
    # the ports the file does not name keep the scenario's numbers (H2 2, H3 3, S2 5)
    assert lm.switch_ports()["L1"] == {TX: {2, 3, 5, 40, 41}, RX: {2, 3, 5, 40, 41}}


def test_top_rows_and_table():
    links = {(0, 0): LinkInfo("A", "B", 10.0), (0, 1): LinkInfo("B", "A", 10.0),
             (1, 0): LinkInfo("B", "C", 1.0)}
    planned = np.array([[5.0, 0.0], [1.0, 0.0]])
    snap = Snapshot(2.0, 0.0, {(0, 0): 6.0, (0, 1): 0.5, (1, 0): 0.95}, ("S9",))
    rows = top_rows(snap, links, planned, n=2)
    assert [r["link"] for r in rows] == ["B->C", "A->B"]
    assert rows[1]["deviation"] == 0.2
    text = render_table(snap, links, planned, n=3)
    assert "not answering: S9" in text
    assert "A->B" in text and "+20.0%" in text and "new" in text  # B->A carries unplanned traffic
