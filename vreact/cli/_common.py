"""What the commands share: one-line errors and the report printout."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from shlex import quote
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console
from rich.markup import escape

if TYPE_CHECKING:
    from vreact.records import Store
    from vreact.report import Report

console = Console()
err = Console(stderr=True)


class UserError(click.ClickException):
    """A mistake the user can fix: printed as one line, exit 2."""

    exit_code = 2

    def show(self, file: object = None) -> None:
        err.print(f"[red]error:[/red] {escape(self.message)}", highlight=False, soft_wrap=True)


class Stopped(UserError):
    """A run that could not go on for a reason outside vreact (its storage failed): one line,
    exit 1; the same command resumes it."""

    exit_code = 1


@contextmanager
def user_errors(*kinds: type[Exception]) -> Iterator[None]:
    """Turn the listed exception types into one-line errors without a traceback."""
    try:
        yield
    except kinds as e:
        raise UserError(str(e)) from None


def print_report(
    out_dir: Path,
    run_id: int | None = None,
    reports: list[Report] | None = None,
    omit_zero: bool = False,
    store: Store | None = None,
) -> None:
    """The tables of one run (the latest by default) or of ``reports``, under the list of the
    folder's runs; then the folder's path, and the internal errors when there are some. With
    ``omit_zero`` (the demo's), a table whose figures are all zero is left out, and one line
    names those left out and the command that prints every table. ``store``: the folder's
    records already open (else they are opened here, each read on its own): an older vreact's
    are read from a migrated copy, made again at each open."""
    from vreact.records import DB_NAME, crash_kinds, run_list
    from vreact.report import (
        TABLES,
        compute,
        provenance_lines,
        reading_lines,
        render,
        run_lines,
        runs_heading,
        sandbox_line,
        zero_tables,
    )

    db = out_dir / DB_NAME
    records: Store | Path = store if store is not None else db
    if reports is None:
        reports = [compute(records, run_id)]
    runs = run_list(records)
    if runs:
        console.print(runs_heading(runs), highlight=False, markup=False)
        for line in run_lines(runs, {r.run for r in reports}):
            console.print(f"  {line}", highlight=False, markup=False, soft_wrap=True)
        console.print()
    for report in reports:
        said = sandbox_line(report)
        if said:
            style = "bold red" if report.sandbox == "none" else ""
            console.print(said, style=style, highlight=False, markup=False, soft_wrap=True)
        for line in reading_lines(report.reading):
            console.print(line, highlight=False, markup=False, soft_wrap=True)
        made = provenance_lines(report)
        warn = report.provenance is not None and (report.provenance.several or report.provenance.dirty)
        for i, line in enumerate(made):
            style = "yellow" if warn and i == 0 else ""
            console.print(line, style=style, highlight=False, markup=False, soft_wrap=True)
        if made:
            console.print()
        left_out = zero_tables(report) if omit_zero else []
        for table in render(report, tuple(t for t in TABLES if t not in left_out)):
            console.print(table)
        if left_out:
            names = ", ".join(short_title(t.title) for t in left_out)
            again = f"vreact report {quote(str(out_dir))}" + _run_flag(runs, report.run)
            console.print(
                f"Left out, all zero: {names} ({again} prints every table)",
                highlight=False,
                markup=False,
                soft_wrap=True,
            )
        crashes = crash_kinds(records, report.run) if report.run is not None else []
        if crashes:
            console.print(f"Crashes of run {report.run}:", highlight=False, markup=False)
            for c in crashes:
                console.print(f"  {c.line()}", highlight=False, markup=False, soft_wrap=True)
    console.print(f"Run folder: [bold]{out_dir}[/bold]  (records: {db})", soft_wrap=True)
    internal = sum(r.internal_errors for report in reports for r in report.configs.values())
    if internal:
        console.print(
            f"[red]{internal} internal error(s)[/red]: bugs in vreact, not model failures (please report"
            f' them); see them with: sqlite3 {db} "select id, config, task_id, traceback from attempts'
            f" where crash_kind = 'internal'\"",
            highlight=False,
            soft_wrap=True,
        )


def short_title(title: str) -> str:
    """A table's title up to its first parenthesis or colon: "Pass@1 and Pass@k", "Loop guards"."""
    for mark in (" (", ":"):
        title = title.split(mark, 1)[0]
    return title


def _run_flag(runs: list[Any], run_id: int | None) -> str:
    """`` --run ID`` where the folder's latest run is another (a command shows the latest)."""
    return f" --run {run_id}" if runs and run_id is not None and runs[-1].id != run_id else ""


def next_commands(
    out_dir: Path, run_id: int | None, corrections: bool, more: tuple[str, ...] = ()
) -> list[str]:
    """The commands to look further into a run just made (its folder as given, quoted for a
    shell where it needs to be): its page, and its corrections when a configuration was verified
    (else its tables again); then ``more``."""
    from vreact.records import DB_NAME, run_list

    runs = run_list(out_dir / DB_NAME)
    where = quote(str(out_dir)) + _run_flag(runs, run_id)
    commands = [f"vreact view {where}   (a page of every attempt: its steps, verdicts and retries)"]
    if corrections:
        commands.append(
            f"vreact report {where} --corrections   (each correction: what a check rejected, what was"
            " accepted in its place)"
        )
    else:
        commands.append(f"vreact report {where}   (these tables again; --markdown or --json)")
    commands += more
    return [("next: " if i == 0 else "      ") + c for i, c in enumerate(commands)]


def _load_plugins(ctx: click.Context, param: click.Parameter, modules: tuple[str, ...]) -> None:
    """Before anything reads a file: every installed plugin (entry points), then ``--plugin``'s."""
    from vreact.registry import PluginError, load_entry_points, load_plugin

    try:
        load_entry_points()
        for module in modules:
            load_plugin(module, Path.cwd())
    except PluginError as e:
        raise UserError(str(e)) from None


def dataset_options(required: bool) -> Callable[[Any], Any]:
    """``--dataset``, ``--family`` and ``--format``: a file of a task family's records, as ``run``
    and ``probe`` take it."""
    options = [
        click.option(
            "--dataset",
            required=required,  # no default: click takes a given one, even None, as the value
            help="a file of the family's records (qa: MuSiQue .jsonl by default, or 'sample')",
        ),
        click.option(
            "--family",
            default=None,
            help="the task family of its records (default qa; 'vreact plugins' lists them)",
        ),
        click.option(
            "--format",
            default=None,
            help="the format of its records (default: the family's first; qa: musique, hotpotqa, 2wiki,"
            " jsonl)",
        ),
        click.option(
            "--fields",
            default=None,
            metavar="PART=FIELD,...",
            help="--format jsonl: the record's field for each part that is not named so, e.g."
            " question=q,answer=gold (docs/datasets.md)",
        ),
    ]

    def apply(f: Any) -> Any:
        for option in reversed(options):
            f = option(f)
        return f

    return apply


def field_map(text: str | None) -> dict[str, str] | None:
    """``--fields question=q,answer=gold`` as a field map; one line on a malformed pair."""
    if not text:
        return None
    out = {}
    for pair in text.split(","):
        part, sep, name = (x.strip() for x in pair.partition("="))
        if not sep or not part or not name:
            raise UserError(f"--fields: {pair.strip()!r} is not PART=FIELD (e.g. question=q,answer=gold)")
        out[part] = name
    return out


class Count(click.ParamType):
    """How many at a time (``probe --concurrency N``): a whole number from 1 to a run's bound on
    its attempts in flight (``vreact.spec.MAX_CONCURRENCY``, read only when a value is given, so
    ``--help`` loads no pydantic). Anything else is one line naming the flag, exit 2, as every
    other refusal of a user's value is (click's own is a usage block of four lines), before the
    command has made anything."""

    name = "integer"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        from vreact.spec import MAX_CONCURRENCY

        if isinstance(value, int) and not isinstance(value, bool):
            n: int | None = value
        else:
            try:
                n = int(str(value).strip())
            except ValueError:
                n = None
        if n is None or not 1 <= n <= MAX_CONCURRENCY:
            flag = param.opts[0] if param is not None and param.opts else "value"
            shown = str(value) if str(value).strip() else repr(str(value))
            raise UserError(f"{flag}: {shown} is not a whole number from 1 to {MAX_CONCURRENCY}")
        return n


#: ``--cache-dir DIR`` on every command that reads the response cache or may call a model.
cache_dir_option = click.option(
    "--cache-dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="the response cache's folder (default: $VREACT_CACHE_DIR, else ~/.cache/vreact)",
)


#: ``--plugin MODULE`` (repeatable) on every command that reads declarative files, and on every
#: command that may meet a plugin's name in a run's records (a replay's verifier set naming its
#: gate, a run of its task family): a name read back must be registered to be read as it was
#: meant (report, view, rescore, diagnose). Export and check read rows and never a name's meaning.
plugin_option = click.option(
    "--plugin",
    "plugins",
    multiple=True,
    metavar="MODULE",
    expose_value=False,
    is_eager=True,
    callback=_load_plugins,
    help="a module (or .py file) registering your own gates and pipeline members; repeatable "
    "(installed packages in the entry-point group vreact.plugins load by themselves)",
)


def show_measured(report: Any, tables: list[Any], as_json: bool, as_markdown: bool) -> None:
    """A probe's or a replay's report: JSON, Markdown, or its tables on the terminal."""
    import json

    from vreact.quality import markdown_tables, render_tables, wide

    if as_json:
        click.echo(json.dumps(report.model_dump(mode="json"), indent=2))
    elif as_markdown:
        click.echo(markdown_tables(wide(report, tables)))
    else:
        for table in render_tables(tables):
            console.print(table)


def judge_model(
    judge: str | None, models_file: Path | None, base_url: str | None, no_cache: bool, cache_dir: Path | None
) -> Any:
    """The model ``--judge`` names (``probe``, ``replay``), behind the retry layer and the response
    cache, as a run makes it; None without ``--judge``. The flags that only shape the judge's
    model are refused without it: accepted, they would do nothing."""
    if judge is None:
        given = {
            "--models": models_file,
            "--base-url": base_url,
            "--no-cache": no_cache,
            "--cache-dir": cache_dir,
        }
        unread = [flag for flag, value in given.items() if value]
        if unread:
            raise UserError(
                f"{', '.join(unread)}: only the judge's model reads it; give --judge PROVIDER/MODEL too"
            )
        return None
    from vreact.experiment.models import build_models
    from vreact.model import ResponseCache
    from vreact.spec import RunLimits, load_models

    catalog = load_models(models_file) if models_file else None
    limits = RunLimits()
    cache = None if no_cache else ResponseCache(cache_dir)
    made = build_models(
        {"judge": judge},
        catalog,
        base_url=base_url,
        timeout=limits.timeout,
        cache=cache,
        policy=limits.policy(),
    )
    return made["judge"]
