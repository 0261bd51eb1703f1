"""Scenario files have a MIME type of their own (``resources/inaplanner-mime.xml``): a shared MIME
database built from it with the real ``update-mime-database`` recognises the files the program
writes by content and ``*.ina.json`` by name, and leaves other JSON alone (checked with Qt's
QMimeDatabase in a child process, which reads the database named by ``XDG_DATA_DIRS``)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from inaplanner import RESOURCES, SAMPLES
from inaplanner.io.native import canonical_json, dumps_pretty, load_scenario, scenario_to_dict

NS = "{http://www.freedesktop.org/standards/shared-mime-info}"
TYPE = "application/x-inaplanner-scenario"


def test_the_mime_package_declares_the_scenario_type():
    root = ET.parse(RESOURCES / "inaplanner-mime.xml").getroot()
    assert root.tag == f"{NS}mime-info"
    (mt,) = root.findall(f"{NS}mime-type")
    assert mt.get("type") == TYPE
    assert mt.find(f"{NS}sub-class-of").get("type") == "application/json"
    assert [g.get("pattern") for g in mt.findall(f"{NS}glob")] == ["*.ina.json"]
    values = [m.get("value") for m in mt.iter(f"{NS}match")]
    doc = scenario_to_dict(load_scenario(SAMPLES / "leaf_spine_small.json"))
    # both forms the program writes (pretty files, canonical hashing form) carry one of the magics
    for text in (dumps_pretty(doc), canonical_json(doc)):
        assert any(v in text[:256] for v in values)


_DETECT = """
import sys
from PySide6.QtCore import QCoreApplication, QMimeDatabase
app = QCoreApplication([])
db = QMimeDatabase()
for path in sys.argv[1:]:
    data = open(path, "rb").read()
    print(db.mimeTypeForData(data).name(), db.mimeTypeForFile(path).name())
"""


@pytest.mark.skipif(shutil.which("update-mime-database") is None,
                    reason="needs shared-mime-info's update-mime-database")
def test_a_mime_database_recognises_scenarios(tmp_path: Path):
    share = tmp_path / "share"
    (share / "mime" / "packages").mkdir(parents=True)
    shutil.copy(RESOURCES / "inaplanner-mime.xml", share / "mime" / "packages")
    built = subprocess.run(["update-mime-database", str(share / "mime")], capture_output=True,
                           text=True, timeout=120)
    assert "Failed to parse" not in built.stderr + built.stdout
    assert TYPE in (share / "mime" / "types").read_text().split()

    doc = scenario_to_dict(load_scenario(SAMPLES / "leaf_spine_small.json"))
    pretty = tmp_path / "net.json"
    pretty.write_text(dumps_pretty(doc))
    named = tmp_path / "net.ina.json"
    named.write_text(canonical_json(doc))
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"format": "something-else", "nodes": []}))
    done = subprocess.run(
        [sys.executable, "-c", _DETECT, str(pretty), str(named), str(other)],
        capture_output=True, text=True, timeout=120,
        env={"XDG_DATA_DIRS": f"{share}:/usr/share", "XDG_DATA_HOME": str(tmp_path / "none"),
             "QT_QPA_PLATFORM": "offscreen", "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    by_data = [line.split()[0] for line in done.stdout.splitlines()]
    by_file = [line.split()[1] for line in done.stdout.splitlines()]
    assert by_data[:2] == [TYPE, TYPE] and by_data[2] != TYPE  # the content decides
    assert by_file[1] == TYPE  # *.ina.json by name
    assert by_file[2] == "application/json"  # other JSON is not claimed
