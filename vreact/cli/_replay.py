"""``vreact replay``: a recorded run checked again by another verifier set, without a model."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import click

from vreact.cli._common import (
    cache_dir_option,
    console,
    err,
    judge_model,
    plugin_option,
    show_measured,
    user_errors,
)


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
@click.option(
    "--judge",
    default=None,
    metavar="PROVIDER/MODEL",
    help="also run the set's R1 and R3 judges, on this model, where every gate passed",
)
@click.option("--models", "models_file", type=click.Path(path_type=Path), default=None, help="models file")
@click.option("--base-url", default=None, help="the judge's server (when its models entry has none)")
@click.option("--no-cache", is_flag=True, help="bypass the response cache")
@cache_dir_option
@click.option(
    "--examples",
    type=click.Choice(["as-run", "stated"]),
    default="as-run",
    show_default=True,
    help="code: the examples an entry point's program is checked with, those it ran with or those"
    " its prompt states",
)
@click.option("--json", "as_json", is_flag=True, help="print the tables as JSON (schemas/replay.schema.json)")
@click.option("--markdown", "as_markdown", is_flag=True, help="print the tables as Markdown")
@plugin_option
def replay(**options: Any) -> None:
    """Check a recorded run again with another verifier set, from the gate input stored with
    each verdict: each check's flips, and each configuration's final answers filtered post hoc
    (coverage, selective accuracy, silent errors) beside the run's own point. The source is read
    only; the replay is a folder of its own. With the run's own set, any verdict that differs
    names a non-deterministic gate (exit 1).

    With --examples stated (code), each entry point's program is checked with the examples its
    prompt states, as the parser reads them now; each answer the set rejects is listed with its
    verdict under each scorer the run records."""
    _replay(**options)


def _replay(
    run_dir: Path,
    verifiers: str | None,
    spec: str | None,
    run_id: int | None,
    out: Path | None,
    judge: str | None,
    models_file: Path | None,
    base_url: str | None,
    no_cache: bool,
    cache_dir: Path | None,
    examples: str,
    as_json: bool,
    as_markdown: bool,
) -> None:
    from vreact.model import ModelConfigError
    from vreact.quality.replay import (
        Replay,
        ReplayError,
        compute,
        judged_in,
        report,
        source_sets,
        tables,
        write,
    )
    from vreact.records import DB_NAME, RecordsError, RunDirBusy, open_to_read
    from vreact.spec import SpecError, load_roles, load_spec, load_verifiers

    errors = (ReplayError, SpecError, RecordsError, RunDirBusy, FileNotFoundError, ModelConfigError)
    with user_errors(*errors):
        model = judge_model(judge, models_file, base_url, no_cache, cache_dir)  # refused flags first
        rid, own_spec, own_verifiers = source_sets(run_dir, run_id)
        setup = Replay(
            run_dir,
            load_spec(spec) if spec else own_spec,
            load_verifiers(verifiers) if verifiers else own_verifiers,
            rid,
            judge,
            "stated" if examples == "stated" else None,
        )
        result = compute(setup)
        folder = out or run_dir.parent / f"{run_dir.name}-replay-{time.strftime('%Y%m%d-%H%M%S')}"
        replay_id = write(result, folder, model, load_roles())
        if model is not None:  # the judges' decisions join the gates'
            store = open_to_read(folder / DB_NAME)
            try:
                result = compute(setup, judged_in(store, replay_id))
            finally:
                store.close()
    r = report(result)
    show_measured(r, tables(r), as_json, as_markdown)
    if not (as_json or as_markdown):
        console.print(f"Replay folder: [bold]{folder}[/bold]", soft_wrap=True)
    if r.nondeterministic:
        err.print(f"{len(r.nondeterministic)} verdict(s) differ with the same gate and arguments: a gate is"
                  " not deterministic", highlight=False, soft_wrap=True)  # fmt: skip
        raise click.exceptions.Exit(1)
