"""Writing a report in each format: html, pdf, csv, json, png, svg.

Where the files go:

- html and pdf: the file ``out``. The per-worker routes go where ``report.routes`` says: an
  appendix of the document, a CSV file beside it (``<out stem>.routes.csv``, the pdf default: a
  fat-tree's routes are dozens of pages nobody prints), or nowhere.
- json, png, svg (one file a plan) and csv (tables ``summary.csv``, ``links.csv``,
  ``switches.csv``, ``routes.csv``; a ``plan`` column tells the plans apart): to a directory with
  ``output_dir``, or to a ``.zip`` file ``out`` holding the same files. ``-o plan.png`` (a file
  name with the format's extension) writes that one file when there is one plan (for csv: the
  links table, every directed link of every plan) and is refused with the way out when there are
  several: a name like a file never becomes a directory (a name without an extension is one,
  as ``--output-dir``).

Every file is written atomically.
"""

from __future__ import annotations

import csv
import io
import os
import re
import zipfile
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
    """The standalone SVG of the topology with ``p``'s load overlay (at pod level when the
    network is too large to draw node by node)."""
    from inaplanner.report.fmt import num
    from inaplanner.report.svg import grouped_topology_svg
    from inaplanner.views.groups import worth_grouping

    caption = f"{p.label}: objective {num(p.evaluation.objective)} Gbps"
    if worth_grouping(report.scenario):  # a datacenter: pods and planes, named and legible
        return grouped_topology_svg(report.scenario, p.evaluation.link_load, width=1000,
                                    standalone=True, caption=caption)
    agg = {row["switch"]: (row["load"], row["capacity"]) for row in p.switch_rows()}
    return topology_svg(report.scenario, p.evaluation.link_load, agg, width=1000, standalone=True,
                        caption=caption)


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


def plan_files(report: Report, fmt: str) -> dict[str, bytes]:
    """The files of a per-plan format (json, png, svg) or of csv, by name."""
    if fmt == "csv":
        return {name: text.encode() for name, text in csv_tables(report).items()}
    out: dict[str, bytes] = {}
    for p in report.plans:
        name = f"{_safe(p.label)}{SUFFIX[fmt]}"
        if fmt == "json":
            out[name] = dumps_pretty(plan_to_dict(p.plan)).encode()
        elif fmt == "svg":
            out[name] = plan_svg(report, p).encode()
        else:
            from inaplanner.report.pdf import svg_to_png

            out[name] = svg_to_png(plan_svg(report, p))
    return out


def routes_csv(report: Report) -> str:
    rows = [{"plan": p.label, **row} for p in report.plans for row in p.route_rows()]
    return csv_text(rows, ["plan", "task", "job", "ps", "worker", "rate", "path", "merge_at", "hops"])


def routes_path(out: Path) -> Path:
    return out.with_name(out.stem + ".routes.csv")


def one_file_problem(fmt: str, out: str | os.PathLike[str] | None, output_dir: str | os.PathLike[str] | None,
                     plans: int) -> str | None:
    """Why ``-o out`` cannot hold what ``plans`` plans make in ``fmt`` (one png, svg or json per
    plan; several csv tables), or None. Known from the arguments alone, so the CLI says it before
    it loads anything (at k=64 it used to say it after 13 s of loading and drawing)."""
    fmt = fmt.lower()
    if fmt in ("html", "pdf") or output_dir is not None or out is None or plans <= 1:
        return None
    suffix = Path(out).suffix.lower()
    if not suffix or suffix == ".zip" or (fmt == "csv" and suffix == ".csv"):
        return None
    what = f"{plans} {fmt} files" if fmt != "csv" else "several csv tables"
    return f"{out}: {plans} plans make {what}: give --output-dir DIR, or -o NAME.zip for one archive"


def export_report(report: Report, fmt: str, out: str | os.PathLike[str] | None = None, *,
                  output_dir: str | os.PathLike[str] | None = None) -> list[Path]:
    """Write ``report`` in ``fmt`` to the file ``out`` or the directory ``output_dir``; returns
    the files written."""
    fmt = fmt.lower()
    if fmt not in FORMATS:
        raise InaplannerError(f"unknown report format {fmt!r} (one of {', '.join(FORMATS)})")
    if (out is None) == (output_dir is None):
        raise InaplannerError("report: give either -o FILE or --output-dir DIR")
    target = Path(output_dir if output_dir is not None else out)  # type: ignore[arg-type]
    try:
        if fmt in ("html", "pdf"):
            if output_dir is not None:
                target = target / f"report{SUFFIX[fmt]}"
                target.parent.mkdir(parents=True, exist_ok=True)
            written = [target]
            if report.routes == "csv":
                rp = routes_path(target)
                report.routes_file = rp.name
                atomic_write_text(rp, routes_csv(report))
                written.append(rp)
            if fmt == "html":
                atomic_write_text(target, report_html(report))
            else:
                from inaplanner.report.pdf import write_pdf

                write_pdf(report, target)
            return written[::-1] if len(written) > 1 else written
        problem = one_file_problem(fmt, out, output_dir, len(report.plans))
        if problem:
            raise InaplannerError(problem)
        files = plan_files(report, fmt)
        if output_dir is None and not target.suffix and (len(files) > 1 or target.is_dir()):
            output_dir = target  # a name without an extension: a directory, as it always was
        if output_dir is not None:
            if target.exists() and not target.is_dir():
                what = "tables" if fmt == "csv" else "files"
                raise InaplannerError(f"{target}: {fmt} output is a directory of {what}, "
                                      "but a file of that name exists")
            target.mkdir(parents=True, exist_ok=True)
            written = []
            for name, data in files.items():
                atomic_write_bytes(target / name, data)
                written.append(target / name)
            return written
        if target.suffix.lower() == ".zip":
            buf = io.BytesIO()
            with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
                for name, data in files.items():
                    z.writestr(name, data)
            atomic_write_bytes(target, buf.getvalue())
            return [target]
        if fmt == "csv" and target.suffix.lower() == ".csv":
            atomic_write_bytes(target, files["links.csv"])
            return [target]
        if target.suffix:
            atomic_write_bytes(target, next(iter(files.values())))
            return [target]
        atomic_write_bytes(target, next(iter(files.values())))  # one file, named without extension
        return [target]
    except OSError as exc:
        raise InaplannerError(f"{target}: cannot write the {fmt} report: "
                              f"{exc.strerror or exc}") from None
