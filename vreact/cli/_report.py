"""``vreact report``."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

import click

from vreact.cli._common import UserError, console, plugin_option, print_report, show_measured, user_errors
from vreact.quality.replay import ReplayError
from vreact.records import DB_NAME, RecordsError, RunSummary, open_to_read, run_list
from vreact.records.store import unreadable
from vreact.report import CORRECTIONS, Report, compute, render, render_markdown, run_lines, runs_heading

ALL = "all"


class RunChoice(click.ParamType):
    """``--run``: a run id, or ``all`` for each run of the folder."""

    name = "ID|all"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int | str:
        if isinstance(value, int) or value == ALL:
            return value
        try:
            return int(value)
        except ValueError:
            self.fail(f"{value!r} is neither a run id nor {ALL!r}", param, ctx)


@click.command()
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="print the report as JSON (--run all: a list of them)")
@click.option("--markdown", "as_markdown", is_flag=True, help="print the report as Markdown tables")
@click.option(
    "--run",
    "run_id",
    type=RunChoice(),
    default=None,
    metavar="ID|all",
    help="a run id in the folder, or all (default: latest)",
)
@click.option(
    "--baseline",
    metavar="NAME",
    default=None,
    help="the configuration lifts are measured against (default: the first)",
)
@click.option(
    "--corrections",
    "only_corrections",
    is_flag=True,
    help="list each correction instead: the rejecting check, the rejected and the accepted answer, "
    "and whether the accepted answer is right by gold",
)
@click.option(
    "--predictions",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    metavar="DIR",
    help="HotpotQA and 2Wiki runs: write each configuration's predictions as the datasets' official"
    " evaluation scripts read them (DIR/CONFIG.json) instead of the tables",
)
@plugin_option
def report(run_dir: Path, predictions: Path | None = None, **options: Any) -> None:
    """Print a run's tables again from its records (text, --markdown or --json)."""
    if not (run_dir / DB_NAME).is_file():
        raise UserError(f"{run_dir}: no {DB_NAME} here; give a folder made by 'vreact run'")
    with readable(run_dir):
        if predictions is not None:
            given = [
                f
                for f, on in (
                    ("--json", options["as_json"]),
                    ("--markdown", options["as_markdown"]),
                    ("--baseline", options["baseline"]),
                    ("--corrections", options["only_corrections"]),
                )
                if on
            ]
            if given:
                raise UserError(f"--predictions writes files, not tables: it takes no {given[0]}")
            _predictions(run_dir, predictions, options["run_id"])
            return
        _report(run_dir, **options)


def _predictions(run_dir: Path, out: Path, run_id: int | str | None) -> None:
    """``--predictions DIR``: one file per configuration of the run, in the official shape."""
    from vreact.qa.formats import predictions

    if run_id == ALL:
        raise UserError("--predictions: give one run (--run ID), not all")
    store = open_to_read(run_dir / DB_NAME)
    try:
        (chosen,) = _chosen(run_dir, run_list(store), run_id)
        if chosen is None:
            raise UserError(f"{run_dir}: no run here yet")
        with user_errors(ValueError):
            made = predictions(store.db.conn, chosen)
    finally:
        store.close()
    if not made:
        raise UserError(
            f"{run_dir}: run {chosen} has no HotpotQA or 2Wiki records (--format hotpotqa, 2wiki)"
        )
    if out.exists() and not out.is_dir():
        raise UserError(f"--predictions: {out} is a file, not a folder")
    out.mkdir(parents=True, exist_ok=True)
    for config, pred in made.items():
        path = out / f"{config}.json"
        path.write_text(json.dumps(pred, indent=1, ensure_ascii=False), encoding="utf-8")
        console.print(f"{path}: {len(pred['answer'])} answer(s)", highlight=False)


@contextmanager
def readable(run_dir: Path) -> Iterator[None]:
    """Records that cannot be read, as one line each (exit 2): a file that is not this vreact's
    records (``RecordsError``), or one SQLite finds damaged on the way."""
    try:
        yield
    except (RecordsError, ReplayError) as e:
        raise UserError(str(e)) from None
    except sqlite3.DatabaseError as e:
        raise UserError(
            f"{run_dir / DB_NAME}: {unreadable(e)}; 'vreact check {run_dir}' says what is wrong;"
            " the file was left as it is"
        ) from None


def _report(
    run_dir: Path,
    as_json: bool,
    as_markdown: bool,
    run_id: int | str | None,
    baseline: str | None,
    only_corrections: bool,
) -> None:
    """``vreact report``, from records opened read-only, once (an older vreact's: one migrated
    copy for every table)."""
    with closing(open_to_read(run_dir / DB_NAME)) as store:
        runs = run_list(store)
        if _measured(store, run_id, as_json, as_markdown, baseline, only_corrections):
            return
        with user_errors(ValueError):
            reports = [compute(store, i, baseline) for i in _chosen(run_dir, runs, run_id)]
        if only_corrections:
            _corrections(reports, as_json, as_markdown, run_id == ALL)
            return
        if as_json:
            data = [r.model_dump(mode="json") for r in reports]
            click.echo(json.dumps(data if run_id == ALL else data[0], indent=2))
        elif as_markdown:
            click.echo(_markdown(runs, reports))
        else:
            print_report(run_dir, reports=reports, store=store)
            console.print()


def _measured(
    store: Any, run_id: int | str | None, as_json: bool, as_markdown: bool, baseline: str | None, listed: bool
) -> bool:
    """A probe's or a replay's folder: its tables (text, Markdown or JSON); False for a run's."""
    from vreact.quality import measured

    found = measured(store, run_id if isinstance(run_id, int) else None)
    if found is None:
        return False
    kind, report, tables = found
    if baseline or listed:
        raise UserError(f"this folder holds a {kind}: it has no {'corrections' if listed else 'baseline'}")
    show_measured(report, tables, as_json, as_markdown)
    return True


def _corrections(reports: list[Report], as_json: bool, as_markdown: bool, every: bool) -> None:
    """Each report's corrections: a table (text or Markdown), or JSON (a list per run with
    ``--run all``)."""
    if as_json:  # one run: its list; --run all: each run's, under its id
        lists = [[c.model_dump(mode="json") for c in r.corrections] for r in reports]
        data = [{"run": r.run, "corrections": c} for r, c in zip(reports, lists, strict=True)]
        click.echo(json.dumps(data if every else lists[0], indent=2))
        return
    for r in reports:
        if as_markdown:
            click.echo(render_markdown(r, (CORRECTIONS,)))
            continue
        for table in render(r, (CORRECTIONS,)):
            console.print(table)
        n = len(r.corrections)
        right = sum(c.right is True for c in r.corrections)
        finals = sum(c.final for c in r.corrections)
        console.print(
            f"run {r.run}: {n} correction{'' if n == 1 else 's'}; {finals} of the final answer,"
            f" {right} of those right by gold",
            highlight=False,
        )


def _chosen(run_dir: Path, runs: list[RunSummary], run_id: int | str | None) -> list[int | None]:
    """The runs to report: the latest (None: the folder has none yet), the one named, or all."""
    ids: list[int | None] = [r.id for r in runs]
    if run_id == ALL:
        return ids
    if run_id is None:
        return ids[-1:] or [None]
    if run_id not in ids:
        have = ", ".join(map(str, ids)) or "none yet"
        raise UserError(f"{run_dir}: no run {run_id} here (its runs: {have})")
    return [int(run_id)]


def _markdown(runs: list[RunSummary], reports: list[Report]) -> str:
    """The list of the folder's runs, then each report's Markdown tables."""
    listed = [
        runs_heading(runs),
        "",
        *(f"- {line}" for line in run_lines(runs, {r.run for r in reports})),
        "",
    ]
    return "\n".join([*(listed if runs else []), *(render_markdown(r) for r in reports)])
