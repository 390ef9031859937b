"""``vreact run`` and ``vreact demo``."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
from rich.progress import Progress as Bar

from vreact.cli._common import err, print_report, user_errors
from vreact.config import Configuration
from vreact.dataset import DatasetError, Task, load_tasks, select_tasks
from vreact.model import DEFAULT_MODEL, Model, ModelConfigError, ResponseCache
from vreact.model._catalog import build_models, role_names
from vreact.runner import (
    EndpointMismatch,
    OnAttempt,
    Progress,
    RunDirBusy,
    default_out_dir,
    run_experiment,
)
from vreact.spec import (
    RunLimits,
    SpecError,
    UnknownConfiguration,
    load_experiment,
    load_models,
    load_roles,
    load_spec,
    load_verifiers,
    parse_overrides,
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
    endpoint_concurrency: int,
    attempts: int,
    seed: int,
    task_ids: str | None = None,
) -> None:
    """Load everything a run needs (bad input: one line, exit 2), run it, print the report."""
    with user_errors(*INPUT_ERRORS):
        tasks = load_tasks(dataset, None if task_ids else limit)
        if task_ids:
            ids = [i.strip() for i in task_ids.split(",") if i.strip()]
            tasks = select_tasks(tasks, task_ids=ids, limit=limit, source=dataset)
        resolved = resolve_configs(configs, experiment)
        catalog = load_models(models_file) if models_file else None
        names = role_names(model_name, _role_models(role_model), catalog, DEFAULT_MODEL)
        limits = RunLimits(
            max_retries=max_retries,
            timeout=timeout,
            call_timeout=call_timeout,
            endpoint_concurrency=endpoint_concurrency,
        )
        cache = None if no_cache else ResponseCache(cache_dir)
        _launch(
            tasks,
            resolved,
            lambda: build_models(
                names, catalog, base_url=base_url, timeout=timeout, cache=cache, policy=limits.policy()
            ),
            sorted(set(names.values())),
            out or default_out_dir(),
            spec,
            verifiers,
            dataset=str(dataset),
            attempts=attempts,
            seed=seed,
            concurrency=concurrency,
        )


INPUT_ERRORS = (
    DatasetError,
    ModelConfigError,
    SpecError,
    UnknownConfiguration,
    FileNotFoundError,
    RunDirBusy,
    EndpointMismatch,
)


def _launch(
    tasks: list[Task],
    configs: list[Configuration],
    make_models: Callable[[], dict[str, Model]],
    model_names: list[str],
    out_dir: Path,
    spec: str,
    verifiers: str,
    *,
    dataset: str,
    attempts: int,
    seed: int,
    concurrency: int,
) -> None:
    """Load the spec, verifiers and models, run (or resume) into ``out_dir``, print the report."""
    with user_errors(*INPUT_ERRORS):
        spec_m, verifiers_m, roles = load_spec(spec), load_verifiers(verifiers), load_roles()
        err.print(f"Loading model(s) {', '.join(model_names)} ...", highlight=False)
        models = make_models()
        total = sum(min(len(tasks), c.limit or len(tasks)) for c in configs) * attempts
        limited = " (some configurations on fewer: their limit)" if any(c.limit for c in configs) else ""
        err.print(
            f"{len(configs)} configuration(s) x {len(tasks)} task(s){limited} x {attempts} attempt(s)"
            f" = {total}, "
            f"{concurrency} at a time, into {out_dir}",
            highlight=False,
        )
        with _progress() as on_attempt:
            run_id = run_experiment(
                tasks,
                configs,
                models,
                out_dir,
                spec_m,
                verifiers_m,
                roles,
                dataset=dataset,
                on_attempt=on_attempt,
                attempts=attempts,
                seed=seed,
                concurrency=concurrency,
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


@contextmanager
def _progress() -> Iterator[OnAttempt]:
    """A live bar on a terminal; elsewhere (CI logs, pipes) one line per attempt. Both show
    done/total, the rate, the time left, and how many attempts answered, abstained, crashed."""
    started = time.monotonic()
    state: dict[str, Any] = {}

    def figures(p: Progress) -> str:
        fresh = p.done - p.resumed
        elapsed = time.monotonic() - started
        rate = fresh / elapsed * 60 if fresh and elapsed > 0 else 0.0
        eta = (p.total - p.done) / rate * 60 if rate else None
        left = "-" if eta is None else time.strftime("%H:%M:%S", time.gmtime(eta))
        tally = " ".join(f"{k}={p.tally.get(k, 0)}" for k in ("answer", "abstain", "crash"))
        return f"{rate:.1f}/min, ETA {left}; {tally}"

    def resuming(p: Progress) -> None:
        if p.resumed:
            err.print(f"Resuming run {p.run_id}: {p.resumed} of {p.total} attempts already done")

    if not err.is_terminal:

        def line(p: Progress) -> None:
            if p.outcome is None:
                resuming(p)
                return
            what = p.outcome.kind + (f" {p.outcome.level}" if p.outcome.level else "")
            task = p.task.id if p.task else ""
            text = f"[{p.done}/{p.total}] {p.config} {task}: {what} ({figures(p)})"
            err.print(text, highlight=False, soft_wrap=True)  # one line per attempt in a log

        yield line
        return
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[figures]}"),
    )
    with Bar(*columns, console=err) as bar:

        def update(p: Progress) -> None:
            if "id" not in state:
                state["id"] = bar.add_task("running", total=p.total, figures="")
                resuming(p)
            description = f"{p.config} {p.task.id[:24]}" if p.task else "running"
            bar.update(state["id"], completed=p.done, description=description, figures=figures(p))

        yield update


#: The defaults of vreact run's call limits are an experiment file's.
LIMITS = RunLimits()

_cache_dir = click.option(
    "--cache-dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="response cache folder (default $VREACT_CACHE_DIR or ~/.cache/vreact)",
)

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
    _cache_dir,
    click.option(
        "--max-retries",
        type=click.IntRange(min=0),
        default=LIMITS.max_retries,
        show_default=True,
        help="retries of a call on 429, 5xx, connection errors and time-outs",
    ),
    click.option(
        "--timeout",
        type=click.FloatRange(min=0.1),
        default=LIMITS.timeout,
        show_default=True,
        help="seconds for one HTTP request",
    ),
    click.option(
        "--call-timeout",
        type=click.FloatRange(min=0.0),
        default=LIMITS.call_timeout,
        show_default=True,
        help="seconds for all tries of one logical call, waits included (0: none)",
    ),
    click.option(
        "--endpoint-concurrency",
        type=click.IntRange(min=1),
        default=LIMITS.endpoint_concurrency,
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


def _with(options: list[Any]) -> Callable[[Any], Any]:
    def decorate(f: Any) -> Any:
        for option in reversed(options):
            f = option(f)
        return f

    return decorate


_with_common = _with(_common)


_attempts = [
    click.option(
        "--attempts",
        type=click.IntRange(min=1),
        default=1,
        show_default=True,
        help="attempts per task and configuration (attempt i uses seed + i); the report gives Pass@k",
    ),
    click.option("--seed", type=int, default=0, show_default=True, help="seed of the first attempt"),
    click.option(
        "--concurrency", type=click.IntRange(min=1), default=4, show_default=True, help="attempts in flight"
    ),
]


@click.command()
@click.option("--dataset", required=True, help="a MuSiQue .jsonl file, or 'sample'")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="first N tasks only")
@click.option("--task-ids", default=None, help="comma-separated task ids to run, in that order")
@_with_common
@_with(_attempts)
def run(**options: Any) -> None:
    """Run each configuration on each task; print the report.

    Rerun the same command with the same --out to resume: finished attempts are kept, and
    attempts a killed run left unfinished are run again."""
    _execute(**options)


@click.command()
@click.option(
    "--limit", type=click.IntRange(min=1), default=4, show_default=True, help="how many sample questions"
)
@_with_common
def demo(**options: Any) -> None:
    """Answer a few built-in sample questions (default N and VG) on the embedded model."""
    _execute(dataset="sample", attempts=1, seed=0, concurrency=1, **options)


@click.command()
@click.argument("file")
@click.option(
    "--set",
    "overrides",
    multiple=True,
    metavar="KEY=VALUE",
    help="override a field of the file, e.g. --set attempts=3 --set dataset.hops=[2,3]; repeatable",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help="run folder (default runs/NAME); rerun into it to resume",
)
@click.option("--configs", default=None, help="only these of the file's configurations (comma-separated)")
@_cache_dir
def experiment(
    file: str, overrides: tuple[str, ...], out: Path | None, configs: str | None, cache_dir: Path | None
) -> None:
    """Run an experiment file (experiments/*.yaml, or a shipped name such as 'pilot'):
    its tasks, configurations, models per role and attempts; print the report.

    Running it again into the same folder resumes it."""
    with user_errors(*INPUT_ERRORS):
        exp = load_experiment(file, parse_overrides(overrides))
        chosen = resolve_configs(configs, exp) if configs else exp.configurations
        d = exp.dataset
        tasks = select_tasks(
            load_tasks(d.path),
            hops=d.hops,
            answerable=d.answerable,
            task_ids=d.task_ids,
            limit=d.limit,
            source=d.path,
        )
        if not tasks:
            raise DatasetError(f"{d.path}: no task passes the experiment's dataset filter")
        catalog = load_models(exp.models_file) if exp.models_file else None
        per_role = {k: v for k, v in exp.models.items() if k != "default"}
        names = role_names(exp.models.get("default"), per_role, catalog, DEFAULT_MODEL)
        limits = exp.limits
        cache = ResponseCache(cache_dir) if exp.cache else None
    _launch(
        tasks,
        chosen,
        lambda: build_models(
            names, catalog, base_url=exp.base_url, timeout=limits.timeout, cache=cache, policy=limits.policy()
        ),
        sorted(set(names.values())),
        out or Path("runs") / exp.name,
        exp.spec,
        exp.verifiers,
        dataset=d.path,
        attempts=exp.attempts,
        seed=exp.seed,
        concurrency=exp.concurrency,
    )
