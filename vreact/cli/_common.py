"""What the commands share: one-line errors and the report printout."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click
from rich.console import Console

from vreact.memory import Store
from vreact.report import compute, render

console = Console()
err = Console(stderr=True)


class UserError(click.ClickException):
    """A mistake the user can fix: printed as one line, exit 2."""

    exit_code = 2

    def show(self, file: object = None) -> None:
        err.print(f"[red]error:[/red] {self.message}", highlight=False, soft_wrap=True)


@contextmanager
def user_errors(*kinds: type[Exception]) -> Iterator[None]:
    """Turn the listed exception types into one-line errors without a traceback."""
    try:
        yield
    except kinds as e:
        raise UserError(str(e)) from None


def print_report(out_dir: Path, run_id: int | None = None) -> None:
    store = Store(out_dir / "vreact.db")
    for table in render(compute(store, run_id)):
        console.print(table)
    console.print(f"Run folder: [bold]{out_dir}[/bold]  (records: {out_dir / 'vreact.db'})")
