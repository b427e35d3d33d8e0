"""Reports people can open and share: a run (or a research report) as markdown, JSON or one
self-contained HTML file with clickable evidence and inline charts.

Reads plain data only (refs as dicts, the GATE's report dict, critiques, the trace summary,
research claims), so it belongs to the core and imports nothing from graph, nodes, tools or
retrieval.
"""

from refgate.report.charts import collect_charts
from refgate.report.html import render_research_html, render_run_html
from refgate.report.markdown import render_run_markdown
from refgate.report.output import (
    ReportError,
    output_format,
    write_research_report,
    write_run_report,
)
from refgate.report.run import answer_document, run_record

__all__ = [
    "ReportError",
    "collect_charts",
    "output_format",
    "render_research_html",
    "render_run_html",
    "render_run_markdown",
    "answer_document",
    "run_record",
    "write_research_report",
    "write_run_report",
]
