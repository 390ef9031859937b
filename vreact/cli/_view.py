"""``vreact view``."""

from __future__ import annotations

from pathlib import Path

import click

from vreact.cli._common import UserError, plugin_option
from vreact.cli._report import readable
from vreact.records import DB_NAME, Store, open_to_read
from vreact.report.html import HTML_NAME, writable, write_html


@click.command()
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--run", "run_id", type=int, default=None, help="a run id in the folder (default: latest)")
@click.option(
    "--out",
    "out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="where to write the page (default: RUN_DIR/report.html)",
)
@plugin_option
def view(run_dir: Path, run_id: int | None, out: Path | None) -> None:
    """Write a run as one offline HTML page (RUN_DIR/report.html): tables, charts, and the V of
    every attempt with each verdict at its level."""
    if not (run_dir / DB_NAME).is_file():
        raise UserError(f"{run_dir}: no {DB_NAME} here; give a folder made by 'vreact run'")
    if out is None and not writable(run_dir / HTML_NAME):
        raise UserError(f"{run_dir}: the folder cannot be written; give --out FILE for the page")
    with readable(run_dir):
        # read once: an older vreact's records are read from one migrated private copy
        store = open_to_read(run_dir / DB_NAME)
        try:
            path = _measured_page(store, run_dir, run_id, out) or write_html(run_dir, run_id, out, store)
        except OSError as e:  # the page's place, not the records
            raise UserError(f"{e.filename or out}: cannot write the page ({e.strerror or e})") from None
        finally:
            store.close()
    click.echo(str(path))


def _measured_page(store: Store, run_dir: Path, run_id: int | None, out: Path | None) -> Path | None:
    """A probe's or a replay's folder: its page, written; None for a run's."""
    from vreact.quality import measured, write_probe_html, write_replay_html
    from vreact.quality.probe_report import ProbeReport

    found = measured(store, run_id)
    if found is None:
        return None
    report, path = found[1], out or run_dir / HTML_NAME
    return (
        write_probe_html(report, path) if isinstance(report, ProbeReport) else write_replay_html(report, path)
    )
