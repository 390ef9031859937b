"""``vreact export``."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from vreact.cli._common import UserError, err
from vreact.cli._report import readable
from vreact.records import DB_NAME
from vreact.records.export import FORMATS, TABLES


@click.command()
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--table", type=click.Choice(TABLES), default="attempts", show_default=True, help="which table")
@click.option(
    "--format", "fmt", type=click.Choice(FORMATS), default="csv", show_default=True, help="its format"
)
@click.option("--run", "run_id", type=int, default=None, help="a run id in the folder (default: latest)")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="the file to write (default: standard output; parquet needs one)",
)
def export(run_dir: Path, table: str, fmt: str, run_id: int | None, out: Path | None) -> None:
    """Write one table of a run's records (attempts, verdicts, calls, steps, tasks) as CSV, JSON
    lines or Parquet: the rows read_run gives, one per record (docs/results.md)."""
    from vreact.records import read_run
    from vreact.records.export import write

    if not (run_dir / DB_NAME).is_file():
        raise UserError(f"{run_dir}: no {DB_NAME} here; give a folder made by 'vreact run'")
    if fmt == "parquet" and out is None:
        raise UserError("--format parquet is written to a file: give --out FILE")
    with readable(run_dir):
        records = read_run(run_dir, run_id)
    if records.run is None:
        raise UserError(f"{run_dir}: no run {run_id} here" if run_id else f"{run_dir}: no run here yet")
    try:
        n = write(records, table, fmt, out or sys.stdout)
    except ImportError as e:
        raise UserError(str(e)) from None
    except OSError as e:
        raise UserError(f"{e.filename or out}: cannot write ({e.strerror or e})") from None
    if out is not None:  # on standard error: standard output stays the table's when it is written there
        err.print(
            f"wrote {n} {table} row(s) of run {records.run.id} to {out}", highlight=False, soft_wrap=True
        )
