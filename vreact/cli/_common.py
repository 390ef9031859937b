"""What the commands share: one-line errors and the report printout."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.console import Console
from rich.markup import escape

if TYPE_CHECKING:
    from vreact.report import Report

console = Console()
err = Console(stderr=True)


class UserError(click.ClickException):
    """A mistake the user can fix: printed as one line, exit 2."""

    exit_code = 2

    def show(self, file: object = None) -> None:
        err.print(f"[red]error:[/red] {escape(self.message)}", highlight=False, soft_wrap=True)


@contextmanager
def user_errors(*kinds: type[Exception]) -> Iterator[None]:
    """Turn the listed exception types into one-line errors without a traceback."""
    try:
        yield
    except kinds as e:
        raise UserError(str(e)) from None


def print_report(out_dir: Path, run_id: int | None = None, report: Report | None = None) -> None:
    from vreact.records import DB_NAME
    from vreact.report import compute, render

    if report is None:
        report = compute(out_dir / DB_NAME, run_id)
    for table in render(report):
        console.print(table)
    console.print(f"Run folder: [bold]{out_dir}[/bold]  (records: {out_dir / 'vreact.db'})")
    internal = sum(r.internal_errors for r in report.configs.values())
    if internal:
        db = out_dir / "vreact.db"
        console.print(
            f"[red]{internal} internal error(s)[/red]: bugs in vreact, not model failures (please report"
            f' them); see them with: sqlite3 {db} "select id, config, task_id, traceback from attempts'
            f" where crash_kind = 'internal'\"",
            highlight=False,
            soft_wrap=True,
        )
