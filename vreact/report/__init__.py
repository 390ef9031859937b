"""Reports of a run from its records: the typed report (compute), its statistics, the tables
(terminal, Markdown) and the HTML page (vreact.report.html)."""

from vreact.report.compute import compute, config_order, corrections, success
from vreact.report.model import ConfigReport, HopsReport, Report
from vreact.report.tables import (
    CORRECTIONS,
    TABLES,
    all_zero,
    id_ranges,
    provenance_lines,
    reading_lines,
    render,
    render_markdown,
    run_lines,
    runs_heading,
    sandbox_line,
    tables,
    zero_tables,
)

__all__ = [
    "CORRECTIONS",
    "TABLES",
    "ConfigReport",
    "HopsReport",
    "Report",
    "all_zero",
    "compute",
    "config_order",
    "corrections",
    "id_ranges",
    "provenance_lines",
    "reading_lines",
    "render",
    "render_markdown",
    "run_lines",
    "runs_heading",
    "sandbox_line",
    "success",
    "tables",
    "zero_tables",
]
