"""The ``vreact`` command line: demo, run, experiment, probe, replay, report, view, check,
diagnose, validate, schema, cache, models, plugins.

Each command's module is imported only when that command runs (or its ``--help`` shows), so
``vreact --help`` and ``vreact validate`` load none of what ``vreact run`` needs (the runner,
the model SDKs, networkx, the report)."""

from __future__ import annotations

import warnings
from importlib import import_module
from typing import Any

import click

#: Each command: the module that defines it, and the first paragraph of its help (what
#: ``vreact --help`` lists without importing the module; tests/cli/test_cli.py checks that
#: it is the command's own).
COMMANDS: dict[str, tuple[str, str]] = {
    "cache": (
        "vreact.cli._cache",
        "The response cache: reruns of the same requests make no model calls.",
    ),
    "check": (
        "vreact.cli._check",
        "Check a run folder's records without writing them: SQLite's integrity check, the migrations, "
        "and the records' own invariants (each attempt's fields against its outcome, each rejection "
        "with its failure-index row, each ledger row with its accept, each attempt's model calls); "
        "print what is wrong by row id (exit 1), else one OK line.",
    ),
    "audit": (
        "vreact.cli._audit",
        "Check a dataset against its own gold, with no model: what the family's gates read from each "
        "record that the record's gold contradicts (code: a stated example the canonical solution "
        "fails). The gates run every example as stated either way.",
    ),
    "demo": (
        "vreact.cli._run",
        "Answer a few built-in sample questions (default N and VG+chain) on the embedded model; end "
        "with what verification did: the answers it kept, and the wrong answers it stopped, by check.",
    ),
    "diagnose": (
        "vreact.cli._diagnose",
        "Rate sampled complete trajectories of a run with an independent judge, blind to the gold "
        "answer and to the outcome (State, final-answer validation, grounding); print the table.",
    ),
    "experiment": (
        "vreact.cli._run",
        "Run an experiment file (experiments/*.yaml, or a shipped name such as 'pilot'): its tasks, "
        "configurations, models per role and attempts; print the report.",
    ),
    "models": (
        "vreact.cli._models",
        "List the llamacpp/ aliases: size, installed or not, how to install, licence.",
    ),
    "plugins": (
        "vreact.cli._plugins",
        "List the registered task families, gates, pipeline members, tools, judges' prompts and model "
        "providers, and where each came from (built in, or the plugin that registered it).",
    ),
    "probe": (
        "vreact.cli._probe",
        "Check a verifier set on typed faults built from real records (no model): each gate's catch "
        "rate alone and in order, its false rejections of gold and controls, what escapes; with "
        "--judge, the judges on what the gates passed. The folder is a run folder: 'vreact report' "
        "and 'vreact view' show it again.",
    ),
    "export": (
        "vreact.cli._export",
        "Write one table of a run's records (attempts, verdicts, calls, steps, tasks) as CSV, JSON "
        "lines or Parquet: the rows read_run gives, one per record (docs/results.md).",
    ),
    "replay": (
        "vreact.cli._replay",
        "Check a recorded run again with another verifier set, from the gate input stored with each "
        "verdict: each check's flips, and each configuration's final answers filtered post hoc "
        "(coverage, selective accuracy, silent errors) beside the run's own point. The source is read "
        "only; the replay is a folder of its own. With the run's own set, any verdict that differs "
        "names a non-deterministic gate (exit 1).",
    ),
    "report": (
        "vreact.cli._report",
        "Print a run's tables again from its records (text, --markdown or --json).",
    ),
    "rescore": (
        "vreact.cli._rescore",
        "Score a recorded run's programs by another scorer (code: HumanEval+'s inputs) into a copy of "
        "its records, with no model call, and print the run's tables under both scorers. The source "
        "is read only.",
    ),
    "run": ("vreact.cli._run", "Run each configuration on each task; print the report."),
    "schema": (
        "vreact.cli._validate",
        "Print (or write) the JSON Schemas of the declarative files and of the report.",
    ),
    "validate": (
        "vreact.cli._validate",
        "Check declarative files (experiment, models, spec, verifiers, roles); print FILE:LINE: "
        "field: message per error.",
    ),
    "view": (
        "vreact.cli._view",
        "Write a run as one offline HTML page (RUN_DIR/report.html): tables, charts, and the V of "
        "every attempt with each verdict at its level.",
    ),
}


class LazyGroup(click.Group):
    """A group whose commands are imported on first use, from :data:`COMMANDS`."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*COMMANDS, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            module, _ = COMMANDS[cmd_name]
            command = getattr(import_module(module), cmd_name)
            assert isinstance(command, click.Command)
            self.add_command(command, cmd_name)
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """click's list of commands, each shortened from its help in :data:`COMMANDS` (or from
        the command, when it was added some other way), without importing any."""
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(map(len, names))
        rows = []
        for name in names:
            if name in self.commands:
                command = self.commands[name]
            else:
                command = click.Command(name, help=COMMANDS[name][1])
            if not command.hidden:
                rows.append((name, command.get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="vreact")
def cli() -> None:
    """vreact: a V-model verification layer for LLM agents."""
    _say_notices()


def _say_notices() -> None:
    """Print each warning whose category is ``said_as_note`` (``vreact.model.Notice``: what a
    model's client chose that the user should know, said once) as one ``note:`` line on stderr;
    other warnings as before. Nothing is imported until one is."""
    shown = warnings.showwarning
    if getattr(shown, "says_notes", False):
        return

    def show(message: Warning | str, category: type[Warning], *args: Any, **kwargs: Any) -> None:
        if not getattr(category, "said_as_note", False):
            shown(message, category, *args, **kwargs)
            return
        from vreact.cli._common import err

        err.print(f"note: {message}", highlight=False, markup=False, soft_wrap=True)

    show.says_notes = True  # type: ignore[attr-defined]
    warnings.showwarning = show


def main() -> None:
    cli(prog_name="vreact")


if __name__ == "__main__":  # pragma: no cover
    main()
