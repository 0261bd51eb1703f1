"""Writing a report in each format: html, pdf, csv, json, png, svg.

One plan goes to the file ``out``. For the per-plan formats (json, png, svg) several plans go to
the directory ``out`` (one ``<label>.<ext>`` each); csv always writes the directory ``out`` with
``summary.csv``, ``links.csv``, ``switches.csv`` and ``routes.csv`` (a ``plan`` column tells the
plans apart). Every file is written atomically.
"""

from __future__ import annotations

import csv
import io
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from inaplanner.errors import InaplannerError
from inaplanner.io.atomic import atomic_write_bytes, atomic_write_text
from inaplanner.io.native import dumps_pretty, plan_to_dict
from inaplanner.report.data import PlanReport, Report
from inaplanner.report.html import report_html
from inaplanner.report.svg import topology_svg

FORMATS = ("html", "pdf", "csv", "json", "png", "svg")
SUFFIX = {"html": ".html", "pdf": ".pdf", "json": ".json", "png": ".png", "svg": ".svg", "csv": ""}


def format_from_path(path: str | os.PathLike[str]) -> str | None:
    """The format an output name implies (``report.pdf`` -> ``pdf``; ``.htm`` -> html)."""
    ext = Path(path).suffix.lower().lstrip(".")
    return {"htm": "html"}.get(ext, ext) if ext in (*FORMATS, "htm") else None


def plan_svg(report: Report, p: PlanReport) -> str:
    """The standalone SVG of the topology with ``p``'s load overlay."""
    agg = {row["switch"]: (row["load"], row["capacity"]) for row in p.switch_rows()}
    return topology_svg(report.scenario, p.evaluation.link_load, agg, width=1000, standalone=True,
                        caption=f"{p.label}: objective {p.evaluation.objective:.6g} Gbps")


def csv_text(rows: Iterable[dict[str, Any]], columns: list[str]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=columns, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for row in rows:
        w.writerow({k: (" ".join(v) if isinstance(v, list) else v) for k, v in row.items()})
    return buf.getvalue()


def csv_tables(report: Report) -> dict[str, str]:
    """The CSV files by name: plan summary, every directed link, switches, routes."""
    summary, links, switches, routes = [], [], [], []
    for p in report.plans:
        ev = p.evaluation
        info = p.plan.planner
        summary.append({"plan": p.label, "planner": info.name, "status": info.status,
                        "seconds": info.seconds, "bound": p.plan.bound, "objective": ev.objective,
                        "objective_kind": ev.objective_kind, "valid": ev.valid,
                        "feasible": ev.feasible, "max_utilisation": p.max_utilisation,
                        **{f"throughput:{j}": t for j, t in ev.job_throughput.items()}})
        links += [{"plan": p.label, **row} for row in p.link_rows()]
        for row in p.switch_rows():
            switches.append({"plan": p.label, **row,
                             "pipelines_used": " ".join(str(x) for x in row["pipelines_used"])})
        routes += [{"plan": p.label, **row} for row in p.route_rows()]
    jobs = [f"throughput:{j.id}" for j in report.scenario.jobs]
    return {
        "summary.csv": csv_text(summary, ["plan", "planner", "status", "seconds", "bound",
                                          "objective", "objective_kind", "valid", "feasible",
                                          "max_utilisation", *jobs]),
        "links.csv": csv_text(links, ["plan", "link", "index", "direction", "src", "dst", "load",
                                      "capacity", "utilisation", "background", "flows"]),
        "switches.csv": csv_text(switches, ["plan", "switch", "load", "capacity", "aggregates",
                                            "pipelines_used", "pipelines"]),
        "routes.csv": csv_text(routes, ["plan", "task", "job", "ps", "worker", "rate", "path",
                                        "merge_at", "hops"]),
    }


def _safe(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", label).strip("_") or "plan"


def _targets(report: Report, out: Path, ext: str) -> list[tuple[PlanReport, Path]]:
    if len(report.plans) == 1:
        return [(report.plans[0], out)]
    out.mkdir(parents=True, exist_ok=True)
    return [(p, out / f"{_safe(p.label)}{ext}") for p in report.plans]


def export_report(report: Report, fmt: str, out: str | os.PathLike[str]) -> list[Path]:
    """Write ``report`` in ``fmt`` to ``out``; returns the files written."""
    fmt = fmt.lower()
    if fmt not in FORMATS:
        raise InaplannerError(f"unknown report format {fmt!r} (one of {', '.join(FORMATS)})")
    target = Path(out)
    try:
        if fmt == "html":
            atomic_write_text(target, report_html(report))
            return [target]
        if fmt == "pdf":
            from inaplanner.report.pdf import write_pdf

            write_pdf(report, target)
            return [target]
        if fmt == "csv":
            if target.exists() and not target.is_dir():
                raise InaplannerError(f"{target}: csv output is a directory of tables, "
                                      "but a file of that name exists")
            target.mkdir(parents=True, exist_ok=True)
            written = []
            for name, text in csv_tables(report).items():
                atomic_write_text(target / name, text)
                written.append(target / name)
            return written
        written = []
        for p, path in _targets(report, target, SUFFIX[fmt]):
            if fmt == "json":
                atomic_write_text(path, dumps_pretty(plan_to_dict(p.plan)))
            elif fmt == "svg":
                atomic_write_text(path, plan_svg(report, p))
            else:
                from inaplanner.report.pdf import svg_to_png

                atomic_write_bytes(path, svg_to_png(plan_svg(report, p)))
            written.append(path)
        return written
    except OSError as exc:
        raise InaplannerError(f"{target}: cannot write the {fmt} report: "
                              f"{exc.strerror or exc}") from None
