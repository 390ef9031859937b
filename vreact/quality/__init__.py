"""What a verifier set is worth, without a strong model: ``vreact probe`` (typed faults built from
real records, through the gates a run builds, and the judges when one is given) and ``vreact
replay`` (a recorded run's artifacts checked again by another set)."""

from vreact.quality.page import write_probe_html, write_replay_html
from vreact.quality.probe import Probe, ProbeMismatch, run_probe
from vreact.quality.probe_report import (
    ProbeReport,
    compute_probe,
    is_probe,
)
from vreact.quality.replay import Replay, ReplayError, ReplayReport
from vreact.quality.tables import TextTable, markdown_tables, render_tables
from vreact.records import Store


def wide(report: ProbeReport | ReplayReport, tables: list[TextTable]) -> list[TextTable]:
    """The tables for a page or Markdown, where width is no limit: a probe's gains its catch rates
    class by check."""
    if not isinstance(report, ProbeReport):
        return tables
    from vreact.quality.probe_report import matrix

    return [*tables[:1], ("Catch rate alone, class by check", *matrix(report)), *tables[1:]]


def measured(
    store: Store, run_id: int | None = None
) -> tuple[str, ProbeReport | ReplayReport, list[TextTable]] | None:
    """The probe or replay a folder's run (default: its latest) holds: its kind, its report and its
    tables; None for any other run. A replay is computed again from its source, read-only."""
    from vreact.quality import probe_report, replay

    runs = dict(store.run_configs())
    chosen = run_id if run_id is not None else max(runs, default=None)
    config = runs.get(chosen) if chosen is not None else None
    if chosen is not None and is_probe(config):
        r = compute_probe(store, chosen)
        return "probe", r, probe_report.tables(r)
    setup = replay.stored(config, store.path.parent)
    if setup is None:
        return None
    rr = replay.report(replay.compute(setup, replay.judged_in(store, chosen) if chosen is not None else None))
    return "replay", rr, replay.tables(rr)


__all__ = [
    "Probe",
    "ProbeMismatch",
    "ProbeReport",
    "Replay",
    "ReplayError",
    "ReplayReport",
    "compute_probe",
    "is_probe",
    "markdown_tables",
    "measured",
    "render_tables",
    "run_probe",
    "wide",
    "write_probe_html",
    "write_replay_html",
]
