"""``vreact report``."""

from __future__ import annotations

import json
from pathlib import Path

import click

from vreact.cli._common import UserError, console, print_report, user_errors
from vreact.records import DB_NAME, Store
from vreact.report import compute, render_markdown


@click.command()
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="print the report as JSON")
@click.option("--markdown", "as_markdown", is_flag=True, help="print the report as Markdown tables")
@click.option("--run", "run_id", type=int, default=None, help="a run id in the folder (default: latest)")
@click.option(
    "--baseline", default=None, help="the configuration lifts are measured against (default: the first)"
)
def report(run_dir: Path, as_json: bool, as_markdown: bool, run_id: int | None, baseline: str | None) -> None:
    """Print a run's tables again from its records (text, --markdown or --json)."""
    if not (run_dir / DB_NAME).is_file():
        raise UserError(f"{run_dir}: no {DB_NAME} here; give a folder made by 'vreact run'")
    with user_errors(ValueError):
        data = compute(Store(run_dir / DB_NAME), run_id, baseline)
    if as_json:
        click.echo(json.dumps(data.model_dump(mode="json"), indent=2))
    elif as_markdown:
        click.echo(render_markdown(data))
    else:
        print_report(run_dir, report=data)
        console.print()
