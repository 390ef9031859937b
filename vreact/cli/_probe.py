"""``vreact probe``: what each check of a verifier set is worth on real records, without a model
(the judges, when asked for, are the only calls)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from vreact.cli._common import (
    Count,
    UserError,
    cache_dir_option,
    console,
    dataset_options,
    err,
    field_map,
    judge_model,
    plugin_option,
    show_measured,
    user_errors,
)

#: The levels a probe may check: R1 and R3 on final answers, R2 on the gold artifact's chain.
PROBE_LEVELS = ("R1", "R2", "R3")


def _classes(family: str | None) -> tuple[Any, ...]:
    """The probe classes of ``family`` (default qa); a family without them: one line."""
    from vreact.families import DEFAULT, UnknownFamily, family_of

    try:
        of = family_of(family or DEFAULT)
    except UnknownFamily as e:
        raise UserError(f"--family: {e}") from None
    classes = of.fault_classes()
    if not classes:
        raise UserError(f"--family: the {of.name} family has no probe classes (TaskFamily.fault_classes)")
    return classes


def _listing(family: str | None) -> str:
    classes = _classes(family)
    width = max(len(c.name) for c in classes)
    return "\n".join(f"{c.name:<{width}}  {c.role:<7}  {c.definition}" for c in classes)


def _names(value: str | None, known: tuple[str, ...], what: str) -> tuple[str, ...]:
    """The comma-separated names of ``--what``, each one of ``known`` (a typo: one line with the
    closest name)."""
    from vreact.spec._models import _known

    if not value:
        return known
    names = list(dict.fromkeys(v.strip() for v in value.split(",") if v.strip()))
    try:
        return tuple(_known(names, dict.fromkeys(known), what.rstrip("s")))
    except ValueError as e:
        raise UserError(f"--{what}: {e}") from None


@click.command()
@dataset_options(required=False)
@click.option("--corpus", type=click.Path(path_type=Path), default=None, help="search this corpus file")
@click.option(
    "--spec", default=None, help="L1 spec: a name or a YAML file (default: the family's, qa: musique)"
)
@click.option(
    "--verifiers",
    default=None,
    help="verifier set: a name or a YAML file (default: the family's, qa: musique)",
)
@click.option("--limit", type=click.IntRange(min=1), default=None, help="first N records only")
@click.option(
    "--faults", default=None, metavar="A,B,...", help="only these classes (default: all; see --list)"
)
@click.option(
    "--levels",
    default=None,
    metavar="R1,R3,R2",
    help="the verifiers to probe (default: R1,R3; R2 checks each record's gold chain)",
)
@click.option("--judge", default=None, metavar="PROVIDER/MODEL", help="also run the judges, on this model")
@click.option("--models", "models_file", type=click.Path(path_type=Path), default=None, help="models file")
@click.option("--base-url", default=None, help="the judge's server (when its models entry has none)")
@click.option("--no-cache", is_flag=True, help="bypass the response cache")
@cache_dir_option
@click.option("--seed", type=int, default=None, help="the judge's seed (default 0; with --judge)")
@click.option(
    "--concurrency",
    type=Count(),
    default=1,
    show_default=True,
    metavar="N",
    help="records built and artifacts checked at once (the judges' calls stay one at a time)",
)
@click.option(
    "--made",
    type=click.IntRange(0, 1000),
    default=0,
    show_default=True,
    metavar="N",
    help="also run each artifact beside the gold one on the stated and N made-up inputs, as agreement"
    " compares candidates (an R3 check 'agreement'; a family that compares candidates)",
)
@click.option(
    "--out", type=click.Path(path_type=Path), default=None, help="probe folder (default runs/probe-TIMESTAMP)"
)
@click.option("--json", "as_json", is_flag=True, help="print the tables as JSON (schemas/probe.schema.json)")
@click.option("--markdown", "as_markdown", is_flag=True, help="print the tables as Markdown")
@click.option("--list", "list_classes", is_flag=True, help="list the fault classes and exit")
@plugin_option
def probe(list_classes: bool, **options: Any) -> None:
    """Check a verifier set on typed faults built from real records (no model): each gate's
    catch rate alone and in order, its false rejections of gold and controls, what escapes;
    with --judge, the judges on what the gates passed. The folder is a run folder: 'vreact
    report' and 'vreact view' show it again."""
    if list_classes:
        click.echo(_listing(options["family"]))
        return
    _probe(**options)


def _probe(
    dataset: str | None,
    family: str | None,
    format: str | None,
    fields: str | None,
    corpus: Path | None,
    spec: str | None,
    verifiers: str | None,
    limit: int | None,
    faults: str | None,
    levels: str | None,
    judge: str | None,
    models_file: Path | None,
    base_url: str | None,
    no_cache: bool,
    cache_dir: Path | None,
    seed: int | None,
    concurrency: int,
    made: int,
    out: Path | None,
    as_json: bool,
    as_markdown: bool,
) -> None:
    import time

    from vreact.families import TaskFamily, family_of, read_selection
    from vreact.inputs import DatasetError
    from vreact.model import ModelConfigError
    from vreact.quality import Probe, ProbeMismatch, compute_probe, run_probe
    from vreact.quality.probe_report import tables
    from vreact.records import DB_NAME, RecordsError, RunDirBusy, open_to_read
    from vreact.spec import SpecError, load_roles, load_spec, load_verifiers

    if dataset is None:
        raise UserError("give --dataset PATH (the family's records; qa: a MuSiQue .jsonl file or 'sample')")
    selection = _selection(dataset, family, format, corpus, field_map(fields))
    known = _classes(selection.family)
    classes = _names(faults, tuple(c.name for c in known), "faults")
    chosen = _names(levels, PROBE_LEVELS, "levels") if levels else ("R1", "R3")
    if chosen == ("R2",):
        raise UserError("--levels: R2 checks only the gold chains; give it with R1 or R3 (R1,R3,R2)")
    if made and type(family_of(selection.family)).behaviours is TaskFamily.behaviours:
        raise UserError(f"--made: the {selection.family} family cannot compare candidates")
    if seed is not None and not judge:
        raise UserError("--seed: only the judge's calls read it; give --judge PROVIDER/MODEL too")
    errors = (
        DatasetError,
        SpecError,
        ModelConfigError,
        FileNotFoundError,
        RunDirBusy,
        RecordsError,
        ProbeMismatch,
    )
    of = family_of(selection.family)
    # a family's reader, and what it opens for the probe (qa: the corpus): one line on bad input
    with user_errors(DatasetError, FileNotFoundError, ValueError):
        tasks = read_selection(of, selection, limit)
        shared = of.shared(selection)
        if shared is not None:
            tasks = shared.place(tasks, dataset)
    with user_errors(*errors):
        spec = spec or of.spec_for(selection.record_format)
        verifiers = verifiers or of.default_verifiers
        if spec is None or verifiers is None:
            flag = "--spec" if spec is None else "--verifiers"
            raise UserError(f"{flag}: the {of.name} family has no default {flag[2:]}: give {flag} FILE")
        loaded_spec = load_spec(spec, of.name)
        loaded_verifiers = load_verifiers(verifiers)
        model = judge_model(judge, models_file, base_url, no_cache, cache_dir)
        setup = Probe(
            tasks,
            tuple(c for c in known if c.name in classes),
            loaded_spec,
            loaded_verifiers,
            load_roles(),
            judge=model,
            levels=tuple(lvl for lvl in PROBE_LEVELS if lvl in chosen),
            dataset=str(dataset),
            seed=seed or 0,
            family=of.name,
            made=made,
        )
        folder = out or Path("runs") / time.strftime("probe-%Y%m%d-%H%M%S")
        at_once = f", {concurrency} at a time" if concurrency > 1 else ""
        err.print(
            f"Probing {len(tasks)} record(s), {len(setup.classes)} class(es){at_once}, into {folder}",
            highlight=False,
        )
        start = time.monotonic()
        run_id = run_probe(setup, folder, _progress(), concurrency)
        err.print(f"done in {time.monotonic() - start:.1f} s", highlight=False)
        report = compute_probe(open_to_read(folder / DB_NAME), run_id)
    show_measured(report, tables(report), as_json, as_markdown)
    if not (as_json or as_markdown):
        console.print(f"Probe folder: [bold]{folder}[/bold]", soft_wrap=True)


def _selection(
    dataset: str,
    family: str | None,
    format: str | None,
    corpus: Path | None,
    fields: dict[str, str] | None = None,
) -> Any:
    """The flags' dataset as an experiment's (a family, one of its formats, a qa corpus), or one
    line naming the flag that is wrong."""
    from pydantic import ValidationError

    from vreact.spec import DatasetSelection
    from vreact.spec._loader import located

    given = {"family": family, "format": format, "corpus": str(corpus) if corpus else None, "fields": fields}
    try:
        return DatasetSelection.model_validate({"path": dataset, **{k: v for k, v in given.items() if v}})
    except ValidationError as e:
        error = e.errors()[0]
        raise UserError(f"--{located(error)[-1]}: {error['msg'].removeprefix('Value error, ')}") from None


def _progress() -> Any:
    """A line every 500 artifacts (the gates are fast: a probe of every class on 180 records
    checks about 2,900)."""

    def tick(done: int, total: int) -> None:
        if done % 500 == 0 or done == total:
            err.print(f"  {done}/{total} artifacts checked", highlight=False)

    return tick
