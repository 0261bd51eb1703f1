"""Export plans for review (Qt-free except the PDF/PNG writers, which import Qt lazily).

``build_report(scenario, plans)`` evaluates the plans; ``export_report(report, fmt, out)`` writes
html, pdf, csv, json, png or svg; ``diff_plans(scenario, a, b)`` is the review diff.
"""

from inaplanner.report.data import PlanReport, Report, build_report
from inaplanner.report.diff import PlanDiff, diff_plans
from inaplanner.report.export import FORMATS, export_report
from inaplanner.report.html import report_html

__all__ = [
    "FORMATS",
    "PlanDiff",
    "PlanReport",
    "Report",
    "build_report",
    "diff_plans",
    "export_report",
    "report_html",
]
