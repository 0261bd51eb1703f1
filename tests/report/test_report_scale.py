"""Reports at datacenter scale: a few pages per plan, routes beside the PDF, the topology at pod
level, and ``-o FILE`` that always writes that file (never a directory named like a file)."""

from __future__ import annotations

import subprocess
import zipfile

import pytest

from inaplanner.cli import main
from inaplanner.io.native import save_plan, save_scenario
from inaplanner.planners import get, run_planner
from inaplanner.topologies import fat_tree, mark_programmable, place_jobs

PLANNERS = ("random", "aggtree", "ecmp", "atp")


@pytest.fixture(scope="module")
def ft8(tmp_path_factory):
    d = tmp_path_factory.mktemp("ft8")
    sc = fat_tree(8)
    mark_programmable(sc, 0.2, seed=1)
    place_jobs(sc, jobs=2, tasks_per_job=2, workers_per_job=50, seed=1)
    sc.validate()
    save_scenario(sc, d / "ft.json")
    paths = []
    for name in PLANNERS:
        plan = run_planner(get(name), sc, {"time_limit": 20})
        save_plan(plan, d / f"{name}.json")
        paths.append(str(d / f"{name}.json"))
    return d, sc, paths


def pages(path) -> int:
    out = subprocess.run(["pdfinfo", str(path)], capture_output=True, text=True, check=True).stdout
    return int(next(line.split()[-1] for line in out.splitlines() if line.startswith("Pages:")))


def test_the_pdf_of_four_plans_on_a_fat_tree_k8_is_at_most_ten_pages(ft8, tmp_path, capsys):
    d, sc, plans = ft8
    out = tmp_path / "rev.pdf"
    assert main(["report", *plans, "-s", str(d / "ft.json"), "-o", str(out)]) == 0
    assert pages(out) <= 10
    # the routes went to a CSV file beside it, one row a worker and plan
    routes = (tmp_path / "rev.routes.csv").read_text().splitlines()
    assert routes[0].startswith("plan,task")
    assert len(routes) - 1 == 4 * sum(len(j.workers) * len(j.parameter_servers) for j in sc.jobs)
    text = subprocess.run(["pdftotext", str(out), "-"], capture_output=True, text=True).stdout
    assert "rev.routes.csv" in text  # the report says where the routes are
    # with the routes as an appendix, they are in the document
    out2 = tmp_path / "full.pdf"
    assert main(["report", *plans[:1], "-s", str(d / "ft.json"), "-o", str(out2), "--routes",
                 "appendix"]) == 0
    assert "Appendix: routes" in subprocess.run(["pdftotext", str(out2), "-"], capture_output=True,
                                                text=True).stdout


def test_png_svg_csv_to_a_file_name_write_that_file(ft8, tmp_path, capsys):
    d, _sc, plans = ft8
    for fmt in ("png", "svg", "json"):
        out = tmp_path / f"one.{fmt}"
        assert main(["report", plans[0], "-s", str(d / "ft.json"), "-o", str(out)]) == 0
        assert out.is_file() and out.stat().st_size > 100
    assert (tmp_path / "one.png").read_bytes().startswith(b"\x89PNG")
    out = tmp_path / "links.csv"
    assert main(["report", *plans, "-s", str(d / "ft.json"), "-o", str(out)]) == 0
    assert out.is_file() and out.read_text().startswith("plan,link")
    # several plans to one file name: refused, naming the way out; nothing is created
    assert main(["report", *plans, "-s", str(d / "ft.json"), "-o", str(tmp_path / "rev.png")]) == 2
    err = capsys.readouterr().err
    assert "--output-dir" in err and ".zip" in err and err.count("\n") == 1
    assert not (tmp_path / "rev.png").exists()
    # a .zip holds one file per plan; --output-dir writes them into a directory
    assert main(["report", *plans, "-s", str(d / "ft.json"), "-o", str(tmp_path / "rev.zip"),
                 "-f", "png"]) == 0
    with zipfile.ZipFile(tmp_path / "rev.zip") as z:
        assert sorted(z.namelist()) == sorted(f"{p}.png" for p in PLANNERS)
    assert main(["report", *plans, "-s", str(d / "ft.json"), "--output-dir", str(tmp_path / "pngs"),
                 "-f", "svg"]) == 0
    assert sorted(p.name for p in (tmp_path / "pngs").iterdir()) == sorted(f"{p}.svg" for p in PLANNERS)


def test_the_topology_of_a_large_network_is_drawn_at_pod_level(ft8):
    from inaplanner.evaluate import evaluate
    from inaplanner.io.native import load_plan
    from inaplanner.report.svg import grouped_topology_svg

    _d, sc, plans = ft8
    ev = evaluate(sc, load_plan(plans[0]))
    svg = grouped_topology_svg(sc, ev.link_load)
    for i in range(1, 9):
        assert f">pod {i}<" in svg
    assert ">plane 1<" in svg
    assert svg.count("<rect") < 40  # boxes, not 208 nodes


def test_pods_too_narrow_for_their_names_are_numbered_and_no_label_leaves_the_picture():
    """Fat-tree k=16 on a 200 px picture is what k=64 is on a page: 16 pods too narrow for "pod 7"
    or "7". Their numbers go under the row, the first and then every second; the bundle labels (busiest
    hot spots first) stay inside the picture, where k=64's first label was cut at the left edge."""
    import re

    import numpy as np

    from inaplanner.report.svg import grouped_topology_svg
    from inaplanner.topologies import fat_tree

    sc = fat_tree(16)
    loads = np.zeros((len(sc.links), 2))
    rng = np.random.default_rng(1)
    loads[:, 0] = rng.uniform(0, 1, len(sc.links)) * np.array([lk.capacity for lk in sc.links])
    width = 200.0
    svg = grouped_topology_svg(sc, loads, width=width)
    texts = re.findall(r'<text x="([\d.]+)" y="([\d.]+)"[^>]*>(?:<title>([^<]*)</title>)?([^<]*)</text>', svg)
    pods = [(float(x), body) for x, _y, title, body in texts if title.startswith("pod ")]
    assert [b for _x, b in pods] == ["1", "4", "6", "8", "10", "12", "14", "16"]
    assert all(b - a >= 0.6 * 9 * 2 + 4 for (a, _), (b, _) in zip(pods, pods[1:], strict=False))
    assert ">bundle labels: busiest link / mean<" in svg
    height = float(re.search(r'<svg[^>]* height="([\d.]+)"', svg).group(1))
    assert max(float(y) for _x, y, _t, _b in texts) <= height - 2  # the legend's rows fit too
    labels = [(float(x), body) for x, _y, _t, body in texts if body.endswith(" %")]
    assert labels
    for x, body in labels:
        half = 0.6 * 8.0 * len(body) / 2
        assert 2 <= x - half and x + half <= width - 2
    # with room for every name, the boxes carry them and nothing is numbered
    wide = grouped_topology_svg(sc, loads, width=1600.0)
    assert '<title>pod 7</title>7</text>' not in wide
