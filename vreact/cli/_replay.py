"""``vreact replay``: a recorded run checked again by another verifier set, without a model."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import click

from vreact.cli._common import console, err, plugin_option, user_errors


@click.command()
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option(
    "--verifiers", default=None, metavar="NAME|FILE", help="the verifier set (default: the run's own)"
)
@click.option("--spec", default=None, metavar="NAME|FILE", help="the L1 spec (default: the run's own)")
@click.option("--run", "run_id", type=int, default=None, help="a run id in the folder (default: latest)")
@click.option(
    "--out", type=click.Path(path_type=Path), default=None, help="replay folder (default: beside RUN_DIR)"
)
@click.option("--json", "as_json", is_flag=True, help="print the tables as JSON (schemas/replay.schema.json)")
@click.option("--markdown", "as_markdown", is_flag=True, help="print the tables as Markdown")
@plugin_option
def replay(**options: Any) -> None:
    """Check a recorded run again with another verifier set, from the gate input stored with
    each verdict: each check's flips, and each configuration's final answers filtered post hoc
    (coverage, selective accuracy, silent errors) beside the run's own point. The source is read
    only; the replay is a folder of its own. With the run's own set, any verdict that differs
    names a non-deterministic gate (exit 1)."""
    _replay(**options)


def _replay(
    run_dir: Path,
    verifiers: str | None,
    spec: str | None,
    run_id: int | None,
    out: Path | None,
    as_json: bool,
    as_markdown: bool,
) -> None:
    from vreact.quality import markdown_tables, render_tables
    from vreact.quality.replay import Replay, ReplayError, compute, report, source_sets, tables, write
    from vreact.records import RecordsError, RunDirBusy
    from vreact.spec import SpecError, load_spec, load_verifiers

    with user_errors(ReplayError, SpecError, RecordsError, RunDirBusy, FileNotFoundError):
        rid, own_spec, own_verifiers = source_sets(run_dir, run_id)
        setup = Replay(
            run_dir.resolve(),
            load_spec(spec) if spec else own_spec,
            load_verifiers(verifiers) if verifiers else own_verifiers,
            rid,
        )
        result = compute(setup)
        folder = out or run_dir.parent / f"{run_dir.name}-replay-{time.strftime('%Y%m%d-%H%M%S')}"
        write(result, folder)
    r = report(result)
    if as_json:
        click.echo(json.dumps(r.model_dump(mode="json"), indent=2))
    elif as_markdown:
        click.echo(markdown_tables(tables(r)))
    else:
        for table in render_tables(tables(r)):
            console.print(table)
        console.print(f"Replay folder: [bold]{folder}[/bold]")
    if r.nondeterministic:
        err.print(f"{len(r.nondeterministic)} verdict(s) differ with the same gate and arguments: a gate is"
                  " not deterministic", highlight=False, soft_wrap=True)  # fmt: skip
        raise click.exceptions.Exit(1)
