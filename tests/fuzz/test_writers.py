"""D15/D17 on the writing side: a scenario edited in memory (the desktop planner's document does not
go through a loader) is checked like a loaded one before any writer runs, so no format ever gets a
file it cannot read back (a NUL in an id would be invalid XML; 2^31 pipelines unreadable GML)."""

from __future__ import annotations

import pytest

from inaplanner.errors import ValidationError
from inaplanner.io.formats import export_node_link, export_scenario
from inaplanner.io.native import save_scenario
from inaplanner.topologies import leaf_spine


@pytest.mark.parametrize("ext", [".json", ".graphml", ".gml", ".nodelink.json"])
@pytest.mark.parametrize(("change", "why"), [
    (lambda sc: setattr(sc, "name", "a\x00b"), "name: 'a\\x00b' holds the control character U+0000"),
    (lambda sc: setattr(sc.switches()[0], "pipelines", 2**31),
     "nodes[0].pipelines: 2147483648 is greater than the maximum of 2147483647"),
    (lambda sc: setattr(sc.links[0], "capacity", 1e300),
     "links[0].capacity: 1e+300 is greater than the maximum of 1000000000.0"),
])
def test_writers_refuse_what_no_loader_would_accept(tmp_path, ext, change, why):
    sc = leaf_spine(2, 1, 2)
    change(sc)
    target = tmp_path / f"out{ext}"
    write = export_node_link if ext == ".nodelink.json" else export_scenario
    with pytest.raises(ValidationError) as info:
        write(sc, target)
    assert str(info.value) == f"{target}: {why}"
    assert list(tmp_path.iterdir()) == []
    if ext == ".json":
        with pytest.raises(ValidationError):
            save_scenario(sc, target)
