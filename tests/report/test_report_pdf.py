"""The PDF report through Qt: page count and text, checked with poppler's pdfinfo / pdftotext."""

from __future__ import annotations

import re
import subprocess
import unicodedata

from inaplanner.evaluate import evaluate
from inaplanner.report import build_report
from inaplanner.report.fmt import num
from inaplanner.report.pdf import write_pdf


def pdf_pages(path) -> int:
    out = subprocess.run(["pdfinfo", str(path)], capture_output=True, text=True, check=True).stdout
    return int(re.search(r"^Pages:\s+(\d+)", out, re.M).group(1))


def pdf_text(path) -> str:
    out = subprocess.run(["pdftotext", "-layout", str(path), "-"], capture_output=True, text=True,
                         check=True).stdout
    return unicodedata.normalize("NFKC", out)  # Qt writes ligatures ("ﬀ")


def test_one_plan_pdf_has_three_pages_and_the_objective(grid, gplan, grid_rate, tmp_path):
    out = tmp_path / "r.pdf"
    result = write_pdf(build_report(grid, [("grid", gplan)]), out)
    # page 1 scenario; then planner and result side by side, the drawing, links and switches side
    # by side; the routes in an appendix on a page of its own
    assert result.pages in (3, 4)
    assert pdf_pages(out) == result.pages
    text = pdf_text(out)
    ev = evaluate(grid, gplan)
    assert num(ev.objective) == "2.71828"
    assert re.search(r"objective\s+2\.71828 Gbps \(SJST\)", text)
    assert "Ten most loaded links" in text and "Aggregation per switch" in text
    assert "W4 → S1 → S2 → S3 → PS" in text


def test_two_plans_pdf_page_count_matches_layout(grid, gplan, splan, tmp_path):
    out = tmp_path / "r2.pdf"
    result = write_pdf(build_report(grid, [("grid", gplan), ("shortest", splan)]), out)
    assert pdf_pages(out) == result.pages
    # scenario and comparison, then at least two pages per plan
    assert result.pages >= 5
    text = pdf_text(out)
    assert "Comparison" in text and "Differences from grid" in text
    assert num(evaluate(grid, splan).objective) in text
