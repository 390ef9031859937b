"""The ``vreact`` command line: demo, run, experiment, report, view, diagnose, validate, schema,
cache, models."""

from __future__ import annotations

import click

from vreact.cli._cache import cache
from vreact.cli._diagnose import diagnose
from vreact.cli._models import models
from vreact.cli._report import report
from vreact.cli._run import demo, experiment, run
from vreact.cli._validate import schema, validate
from vreact.cli._view import view


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="vreact")
def cli() -> None:
    """vreact: a V-model verification layer for LLM agents."""


for command in (demo, run, experiment, report, view, diagnose, validate, schema, cache, models):
    cli.add_command(command)


def main() -> None:
    cli(prog_name="vreact")


if __name__ == "__main__":  # pragma: no cover
    main()
