"""``vreact report``."""

from __future__ import annotations

import json
from pathlib import Path

import click

from vreact.cli._common import UserError, console, print_report
from vreact.memory import Store
from vreact.report import compute
from vreact.runner import DB_NAME


@click.command()
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="print the report as JSON")
@click.option("--run", "run_id", type=int, default=None, help="a run id in the folder (default: latest)")
def report(run_dir: Path, as_json: bool, run_id: int | None) -> None:
    """Print a run's tables again from its records."""
    if not (run_dir / DB_NAME).is_file():
        raise UserError(f"{run_dir}: no {DB_NAME} here; give a folder made by 'vreact run'")
    if as_json:
        click.echo(json.dumps(compute(Store(run_dir / DB_NAME), run_id), indent=2))
    else:
        print_report(run_dir, run_id)
        console.print()
