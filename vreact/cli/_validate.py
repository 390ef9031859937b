"""``vreact validate`` and ``vreact schema``."""

from __future__ import annotations

import json
from pathlib import Path

import click

from vreact.cli._common import plugin_option


@click.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@plugin_option
def validate(files: tuple[Path, ...]) -> None:
    """Check declarative files (experiment, models, spec, verifiers, roles); print FILE:LINE:
    field: message per error.

    Each file is checked as its kind: says, after the plugins: it names are loaded; the files
    an experiment names (spec, verifiers, models_file) are not checked: list them too. Exit 0
    when all are valid, else 2."""
    from vreact.spec import validate_files

    errors = validate_files(list(files))
    for line in errors:
        click.echo(line, err=True)
    if errors:
        raise SystemExit(2)
    click.echo(f"{len(files)} file(s) valid", err=True)


def json_schemas(families: list[str] | None = None) -> dict[str, dict]:  # type: ignore[type-arg]
    """The JSON Schema of each kind of declarative file (a spec's and an experiment's with a
    branch per registered family: the built-in ones and those of plugins loaded), of ``vreact
    report --json`` (``report``) and of ``vreact report --run all --json`` (``reports``, a list
    of reports), generated from the models. ``families``: the families a branch is made for (None:
    every registered one)."""
    from pydantic import TypeAdapter

    from vreact.quality import ProbeReport, ReplayReport
    from vreact.quality.audit import AuditReport
    from vreact.report import Report
    from vreact.spec import KINDS
    from vreact.spec._schemas import family_schemas

    schemas = {kind: model.model_json_schema() for kind, model in KINDS.items()} | family_schemas(families)
    reports = TypeAdapter(list[Report]).json_schema(mode="serialization")
    return {
        **schemas,
        "report": Report.model_json_schema(mode="serialization"),
        "reports": reports,
        "probe": ProbeReport.model_json_schema(mode="serialization"),
        "replay": ReplayReport.model_json_schema(mode="serialization"),
        "audit": AuditReport.model_json_schema(mode="serialization"),
    }


@click.command()
@click.option(
    "--write",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="write one KIND.schema.json file per schema into this folder",
)
@plugin_option
def schema(write: Path | None) -> None:
    """Print (or write) the JSON Schemas of the declarative files and of the report.

    Ten schemas: the five kinds of declarative file (spec, verifiers, roles, experiment,
    models), report (vreact report --json), reports (its --run all list), probe (vreact probe
    --json), replay (vreact replay --json) and audit (vreact audit --json). A spec's and an
    experiment's have a branch per task family: the built-in ones, and with --plugin a plugin
    family's own settings."""
    from vreact.registry import load_installed

    load_installed()
    schemas = json_schemas()
    if write is None:
        click.echo(json.dumps(schemas, indent=2))
        return
    write.mkdir(parents=True, exist_ok=True)
    for kind, s in schemas.items():
        (write / f"{kind}.schema.json").write_text(json.dumps(s, indent=2) + "\n")
        click.echo(f"wrote {write / f'{kind}.schema.json'}", err=True)
