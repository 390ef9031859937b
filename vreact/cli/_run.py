"""``vreact run`` and ``vreact demo``."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from vreact.cli._common import err, print_report, user_errors
from vreact.controller import Outcome
from vreact.dataset import DatasetError, Task, load_tasks
from vreact.model import DEFAULT_MODEL, CallPolicy, ModelConfigError, ResponseCache
from vreact.model._catalog import build_models, role_names
from vreact.runner import OnAttempt, default_out_dir, run_experiment
from vreact.spec import (
    SpecError,
    UnknownConfiguration,
    load_models,
    load_roles,
    load_spec,
    load_verifiers,
    resolve_configs,
)


def _execute(
    *,
    dataset: str,
    configs: str,
    model_name: str | None,
    models_file: Path | None,
    base_url: str | None,
    limit: int | None,
    out: Path | None,
    spec: str,
    verifiers: str,
    experiment: str | None,
    role_model: tuple[str, ...],
    no_cache: bool,
    cache_dir: Path | None,
    max_retries: int,
    timeout: float,
    call_timeout: float,
    concurrency: int,
    task_ids: str | None = None,
) -> None:
    """Load everything a run needs (bad input: one line, exit 2), run it, print the report."""
    with user_errors(DatasetError, ModelConfigError, SpecError, UnknownConfiguration, FileNotFoundError):
        tasks = load_tasks(dataset, None if task_ids else limit)
        if task_ids:
            tasks = _select(tasks, task_ids, dataset)[:limit]
        resolved = resolve_configs(configs, experiment)
        spec_m, verifiers_m, roles = load_spec(spec), load_verifiers(verifiers), load_roles()
        catalog = load_models(models_file) if models_file else None
        names = role_names(model_name, _role_models(role_model), catalog, DEFAULT_MODEL)
        err.print(f"Loading model(s) {', '.join(sorted(set(names.values())))} ...", highlight=False)
        policy = CallPolicy(
            max_retries=max_retries, call_timeout=call_timeout or None, concurrency=concurrency
        )
        model = build_models(
            names,
            catalog,
            base_url=base_url,
            timeout=timeout,
            cache=None if no_cache else ResponseCache(cache_dir),
            policy=policy,
        )
    out_dir = out or default_out_dir()
    err.print(
        f"Running {len(resolved)} configuration(s) x {len(tasks)} task(s) into {out_dir}", highlight=False
    )
    with _progress(len(tasks) * len(resolved)) as on_attempt:
        run_id = run_experiment(
            tasks,
            resolved,
            model,
            out_dir,
            spec_m,
            verifiers_m,
            roles,
            dataset=str(dataset),
            on_attempt=on_attempt,
        )
    print_report(out_dir, run_id)


ROLES = ("planner", "executor", "judge")


def _role_models(pairs: tuple[str, ...]) -> dict[str, str]:
    """``("judge=openai/x",)`` -> ``{"judge": "openai/x"}``, refusing unknown roles."""
    out = {}
    for pair in pairs:
        role, sep, name = pair.partition("=")
        if not sep or role not in ROLES or not name:
            raise ModelConfigError(
                f"--role-model {pair!r}: expected ROLE=PROVIDER/MODEL, ROLE one of {', '.join(ROLES)}"
            )
        out[role] = name
    return out


def _select(tasks: list[Task], ids: str, dataset: str) -> list[Task]:
    """The tasks named in a comma-separated list, in that order."""
    by_id = {t.id: t for t in tasks}
    wanted = [i.strip() for i in ids.split(",") if i.strip()]
    missing = [i for i in wanted if i not in by_id]
    if missing:
        raise DatasetError(f"{dataset}: no task with id {', '.join(missing)}")
    return [by_id[i] for i in wanted]


@contextmanager
def _progress(total: int) -> Iterator[OnAttempt]:
    """A live bar on a terminal; elsewhere (CI logs, pipes) one line per attempt."""
    tally = {"answer": 0, "abstain": 0, "crash": 0}
    started = time.monotonic()

    def summary() -> str:
        return " ".join(f"{k}={v}" for k, v in tally.items())

    if not err.is_terminal:

        def line(config: str, task: Task, outcome: Outcome, done: int, total: int) -> None:
            tally[outcome.kind] += 1
            what = outcome.kind + (f" {outcome.level}" if outcome.level else "")
            err.print(
                f"[{done}/{total}] {config} {task.id}: {what} "
                f"({time.monotonic() - started:.0f}s; {summary()})",
                highlight=False,
            )

        yield line
        return
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[tally]}"),
    )
    with Progress(*columns, console=err) as progress:
        bar = progress.add_task("running", total=total, tally="")

        def update(config: str, task: Task, outcome: Outcome, done: int, total: int) -> None:
            tally[outcome.kind] += 1
            progress.update(bar, completed=done, description=f"{config} {task.id[:24]}", tally=summary())

        yield update


_common = [
    click.option("--configs", default="N,VG", show_default=True, help="comma-separated configurations"),
    click.option(
        "--model",
        "model_name",
        default=None,
        help=f"provider/model (openai/..., anthropic/..., llamacpp/NAME|FILE.gguf) or an alias of "
        f"--models  [default: {DEFAULT_MODEL}]",
    ),
    click.option(
        "--models",
        "models_file",
        type=click.Path(path_type=Path, dir_okay=False),
        default=None,
        help="models file: aliases, per-role models, base URLs, prices",
    ),
    click.option(
        "--base-url",
        default=None,
        help="the provider's server (else OPENAI_BASE_URL / ANTHROPIC_BASE_URL)",
    ),
    click.option(
        "--out", type=click.Path(path_type=Path), default=None, help="run folder (default runs/TIMESTAMP)"
    ),
    click.option("--spec", default="musique", show_default=True, help="L1 spec: a name or a YAML file"),
    click.option(
        "--verifiers", default="musique", show_default=True, help="verifier set: a name or a YAML file"
    ),
    click.option(
        "--experiment", default=None, help="configurations file (default: the shipped pilot ladder)"
    ),
    click.option("--no-cache", is_flag=True, help="bypass the response cache (see 'vreact cache path')"),
    click.option(
        "--cache-dir",
        type=click.Path(path_type=Path, file_okay=False),
        default=None,
        help="response cache folder (default $VREACT_CACHE_DIR or ~/.cache/vreact)",
    ),
    click.option(
        "--max-retries",
        type=click.IntRange(min=0),
        default=6,
        show_default=True,
        help="retries of a call on 429, 5xx, connection errors and time-outs",
    ),
    click.option(
        "--timeout",
        type=click.FloatRange(min=0.1),
        default=120.0,
        show_default=True,
        help="seconds for one HTTP request",
    ),
    click.option(
        "--call-timeout",
        type=click.FloatRange(min=0.0),
        default=600.0,
        show_default=True,
        help="seconds for all tries of one logical call, waits included (0: none)",
    ),
    click.option(
        "--concurrency",
        type=click.IntRange(min=1),
        default=4,
        show_default=True,
        help="requests in flight per endpoint",
    ),
    click.option(
        "--role-model",
        multiple=True,
        metavar="ROLE=MODEL",
        help="a model for one role (planner, executor, judge); repeatable",
    ),
]


def _with_common(f):  # type: ignore[no-untyped-def]
    for option in reversed(_common):
        f = option(f)
    return f


@click.command()
@click.option("--dataset", required=True, help="a MuSiQue .jsonl file, or 'sample'")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="first N tasks only")
@click.option("--task-ids", default=None, help="comma-separated task ids to run, in that order")
@_with_common
def run(**options: Any) -> None:
    """Run each configuration once on each task; print the accounting table."""
    _execute(**options)


@click.command()
@click.option(
    "--limit", type=click.IntRange(min=1), default=4, show_default=True, help="how many sample questions"
)
@_with_common
def demo(**options: Any) -> None:
    """Answer a few built-in sample questions (default N and VG) on the embedded model."""
    _execute(dataset="sample", **options)
