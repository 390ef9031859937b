"""``vreact diagnose``."""

from __future__ import annotations

from pathlib import Path

import click

from vreact.cli._common import UserError, console, plugin_option, user_errors
from vreact.diagnosis import diagnose as run_diagnosis
from vreact.experiment.models import build_models
from vreact.model import ModelConfigError
from vreact.records import DB_NAME, RecordsError, RunDirBusy
from vreact.report import compute, render


@click.command()
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--judge", "judge", required=True, help="the judge model, provider/model")
@click.option(
    "--sample", default=8, show_default=True, type=click.IntRange(min=1), help="trajectories to rate"
)
@click.option("--seed", default=0, show_default=True, help="which trajectories are sampled")
@click.option("--base-url", default=None, help="the judge's server (an OpenAI-compatible base URL)")
@plugin_option
def diagnose(run_dir: Path, judge: str, sample: int, seed: int, base_url: str | None) -> None:
    """Rate sampled complete trajectories of a run with an independent judge, blind to the gold
    answer and to the outcome (State, final-answer validation, grounding); print the table."""
    if not (run_dir / DB_NAME).is_file():
        raise UserError(f"{run_dir}: no {DB_NAME} here; give a folder made by 'vreact run'")
    with user_errors(ModelConfigError, RunDirBusy, RecordsError):
        model = build_models({"default": judge}, base_url=base_url)["default"]
        rows = run_diagnosis(run_dir, model, sample, seed)
    console.print(f"{len(rows)} trajectories rated by {model.name}")
    for table in render(compute(run_dir / DB_NAME)):
        if str(table.title).startswith("Diagnosis"):
            console.print(table)
