"""``vreact rescore``: a recorded run's programs scored by another scorer, with no model call."""

from __future__ import annotations

from pathlib import Path

import click

from vreact.cli._common import err, plugin_option, print_report, user_errors


@click.command()
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--scorer", required=True, metavar="NAME", help="the scorer to add (code: humanevalplus)")
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    required=True,
    help="a new or empty folder for the copy of the records",
)
@click.option("--run", "run_id", type=int, default=None, help="a run id in the folder (default: latest)")
@click.option(
    "--sandbox",
    type=click.Choice(["bwrap", "none"]),
    default=None,
    help="where the programs run (default: the run's own; none: unsandboxed, recorded so)",
)
@plugin_option
def rescore(run_dir: Path, scorer: str, out: Path, run_id: int | None, sandbox: str | None) -> None:
    """Score a recorded run's programs by another scorer (code: HumanEval+'s inputs) into a copy
    of its records, with no model call, and print the run's tables under both scorers. The source
    is read only."""
    from vreact.inputs import DatasetError
    from vreact.quality.rescore import RescoreError
    from vreact.quality.rescore import rescore as run_rescore
    from vreact.records import RecordsError
    from vreact.sandbox import SandboxUnavailable

    with user_errors(RescoreError, DatasetError, RecordsError, SandboxUnavailable):
        rid, kind = run_rescore(run_dir, scorer, out, run_id, sandbox, progress=lambda m: err.print(m))
    if kind == "none":
        err.print(
            "[yellow]the programs ran with no sandbox (--sandbox none): recorded with the scores[/yellow]"
        )
    print_report(out, rid)
