"""``vreact audit``: a dataset checked against its own gold, with no model."""

from __future__ import annotations

from typing import Any

import click

from vreact.cli._common import UserError, console, dataset_options, err, field_map, plugin_option, user_errors


@click.command()
@dataset_options(required=True)
@click.option("--limit", type=click.IntRange(min=1), default=None, help="first N records only")
@click.option("--json", "as_json", is_flag=True, help="print the audit as JSON (schemas/audit.schema.json)")
@click.option("--markdown", "as_markdown", is_flag=True, help="print the audit as Markdown")
@plugin_option
def audit(**options: Any) -> None:
    """Check a dataset against its own gold, with no model: what the family's gates read from
    each record that the record's gold contradicts (code: a stated example the canonical solution
    fails). The gates run every example as stated either way.

    Code runs each canonical solution on its prompt's examples in the sandbox. The audit says
    where the dataset is wrong; it changes nothing a gate runs. Exit 0 whatever it finds."""
    _audit(**options)


def _audit(
    dataset: str,
    family: str | None,
    format: str | None,
    fields: str | None,
    limit: int | None,
    as_json: bool,
    as_markdown: bool,
) -> None:
    from vreact.cli._probe import _selection
    from vreact.families import family_of, provides, read_selection
    from vreact.inputs import DatasetError
    from vreact.quality import audit as audited
    from vreact.quality import markdown_tables, render_tables
    from vreact.sandbox import SandboxUnavailable

    selection = _selection(dataset, family, format, None, field_map(fields))
    of = family_of(selection.family)
    if not provides(of, "audit"):
        raise UserError(f"--family: the {of.name} family has no dataset audit")
    with user_errors(DatasetError, FileNotFoundError, ValueError, SandboxUnavailable):
        tasks = read_selection(of, selection, limit)
        err.print(f"Auditing {len(tasks)} record(s) of {dataset} ...", highlight=False, soft_wrap=True)
        report = audited.audit(of, tasks, dataset, _progress())
    if as_json:
        click.echo(report.model_dump_json(indent=2))
        return
    if as_markdown:
        click.echo(markdown_tables(audited.tables(report)))
        return
    for line in report.reading:
        console.print(line, highlight=False, markup=False, soft_wrap=True)
    for table in render_tables(audited.tables(report)):
        console.print(table)


def _progress() -> Any:
    def tick(done: int, total: int) -> None:
        if done % 50 == 0 or done == total:
            err.print(f"  {done}/{total} audited", highlight=False)

    return tick
