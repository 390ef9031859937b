"""``vreact probe``: what a verifier set's checks are worth, measured on typed faults built from
real records (no model), and on the judges when one is given."""

from vreact.probe.faults import BY_NAME, CLASSES, FaultClass
from vreact.probe.page import write_probe_html
from vreact.probe.report import (
    ProbeReport,
    compute_probe,
    is_probe,
    markdown_probe,
    probe_run,
    render_probe,
)
from vreact.probe.run import Probe, ProbeMismatch, run_probe

__all__ = [
    "BY_NAME",
    "CLASSES",
    "FaultClass",
    "Probe",
    "ProbeMismatch",
    "ProbeReport",
    "compute_probe",
    "is_probe",
    "markdown_probe",
    "probe_run",
    "render_probe",
    "run_probe",
    "write_probe_html",
]
