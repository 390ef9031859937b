"""``vreact run``, ``vreact demo`` and ``vreact experiment``: each resolves an experiment (from
its flags or its file) and runs it."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource
from pydantic import ValidationError
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
from rich.progress import Progress as Bar

from vreact.cli._common import (
    Stopped,
    cache_dir_option,
    console,
    dataset_options,
    err,
    field_map,
    next_commands,
    plugin_option,
    print_report,
    user_errors,
)
from vreact.cli._servers import Given, Loc, check_servers
from vreact.config import CALL_ROLES
from vreact.experiment import (
    OnAttempt,
    Plan,
    PlanTooLarge,
    Progress,
    ResolvedExperiment,
    RunMismatch,
    RunStopped,
    Stop,
    default_out_dir,
    plan,
    ready_to_run_code,
    resolve,
    run_experiment,
)
from vreact.experiment.ray_backend import ClusterUnavailable
from vreact.families import Task, family_of, read_selection, reading_of, select
from vreact.inputs import DatasetError
from vreact.model import DEFAULT_MODEL, ModelConfigError, refused_by
from vreact.records import RecordsError, RunDirBusy, StorageFault, io_cause, io_error
from vreact.report import reading_lines
from vreact.sandbox import SandboxUnavailable
from vreact.spec import (
    Experiment,
    RunLimits,
    SpecError,
    UnknownConfiguration,
    load_experiment,
    only_configs,
    parse_overrides,
    resolve_configs,
    warn,
)
from vreact.spec._builtin import experiment_file
from vreact.spec._loader import field_line, located

INPUT_ERRORS = (
    ClusterUnavailable,
    SandboxUnavailable,
    PlanTooLarge,
    DatasetError,
    ModelConfigError,
    SpecError,
    UnknownConfiguration,
    FileNotFoundError,
    RunDirBusy,
    RunMismatch,
    RecordsError,
)


def _execute(
    out: Path | None,
    cache_dir: Path | None,
    cache_only: bool = False,
    omit_zero: bool = False,
    dry_run: bool = False,
    more: tuple[str, ...] = (),
    **flags: Any,
) -> None:
    """``vreact run`` and ``demo``: the experiment of the flags, on the tasks ``vreact run``
    selects (bad input: one line, exit 2); run it and print the report, what verification did
    and the commands to look further (``omit_zero``, the demo's: only the tables with a figure
    that is not zero; ``more``: further commands)."""
    with user_errors(*INPUT_ERRORS):
        exp = experiment_of_flags(**flags)
        tasks = run_tasks(exp)
    given = Given(at=_flag, named=_flag)
    _launch(exp, out or default_out_dir(), cache_dir, tasks, cache_only, omit_zero, dry_run, given, more)


def experiment_of_flags(
    *,
    dataset: str,
    configs: str,
    family: str | None = None,
    format: str | None = None,
    fields: str | None = None,
    experiment: str | None,
    limit: int | None,
    task_ids: str | None = None,
    role_model: tuple[str, ...] = (),
    model_name: str | None = None,
    models_file: Path | None = None,
    no_cache: bool = False,
    backend: str | None = None,
    ray_address: str | None = None,
    **settings: Any,
) -> Experiment:
    """The Experiment that ``vreact run``'s flags describe. ``settings`` are the flags named as
    the Experiment's fields (base_url, spec, verifiers, attempts, seed, concurrency) or as its
    limits' (max_retries, timeout, call_timeout, endpoint_concurrency)."""
    ids = [i.strip() for i in task_ids.split(",") if i.strip()] if task_ids else None
    # a flag left at its default sets nothing (a setting is refused where no model reads it)
    given = {k: settings.pop(k) for k in RunLimits.model_fields if k in settings}
    limits = {k: v for k, v in given.items() if v != LIMITS_OF[k]}
    settings = {k: v for k, v in settings.items() if v is not None}
    models = {"default": model_name} if model_name else {}
    data = {
        "name": "run",
        "dataset": {
            "path": str(dataset),
            "task_ids": ids or None,
            "limit": limit,
            **({"family": family} if family else {}),
            **({"format": format} if format else {}),
            **({"fields": field_map(fields)} if fields else {}),
        },
        "configurations": resolve_configs(configs, experiment),
        "models": {**models, **_role_models(role_model)},
        "models_file": str(models_file) if models_file else None,
        "cache": not no_cache,
        "limits": limits,
        "runner": _runner(backend, ray_address),
        **settings,
    }
    try:
        exp = Experiment.model_validate(data)
    except ValidationError as e:  # e.g. --configs N,N: names repeat
        raise SpecError([_flag_error(x) for x in e.errors()]) from None
    for loc, msg in exp.ignored_settings():
        warn(f"{_flag(loc)}: {msg}")
    return exp


def _flag_error(error: Any) -> str:
    return f"{_flag(located(error))}: {error['msg'].removeprefix('Value error, ')}"


def _flag(loc: tuple[Any, ...]) -> str:
    """The flag that gave the field at ``loc``."""
    if loc[:1] == ("configurations",):
        return "--configs"
    if loc[:1] == ("runner",):
        return {"address": "--ray-address"}.get(str(loc[-1]), "--backend")
    if loc[:1] == ("models",) and len(loc) > 1:
        return "--model" if loc[1:] == ("default",) else f"--role-model {loc[1]}"
    return "--" + str(loc[-1]).replace("_", "-") if loc else "the flags"


def run_tasks(exp: Experiment) -> list[Task]:
    """The tasks of ``vreact run``: the first ``--limit`` records of the file (a pair cut by
    the limit keeps its first member only), or the ``--task-ids`` in their order."""
    d = exp.dataset
    family = family_of(d.family)
    if not d.task_ids:
        return read_selection(family, d, d.limit)
    return select(read_selection(family, d), d.task_ids, d.limit, d.path)


def _launch(
    exp: Experiment,
    out_dir: Path,
    cache_dir: Path | None,
    tasks: list[Task] | None = None,
    cache_only: bool = False,
    omit_zero: bool = False,
    dry_run: bool = False,
    given: Given | None = None,
    more: tuple[str, ...] = (),
) -> None:
    """Resolve ``exp`` (its files, tasks and models), run or resume it into ``out_dir``; print
    the report (``omit_zero``: only its tables with a figure that is not zero), what
    verification did, and the commands to look further (then ``more``). With ``dry_run``, print
    what it would start and make nothing. Before any model is made, a model at a server without
    its API key, or a server where nothing answers, refuses the run in one line (exit 2; ``given``
    says where its fields were given; nothing is made). Ctrl-C stops it (exit 130); a server that
    stops answering stops it after the report (exit 1); either way the same command resumes it."""
    given = given or Given(at=_flag, named=_flag)
    # a remote Ray cluster's workers call the servers from elsewhere; --cache-only calls none
    connect = not cache_only and not (exp.runner.backend == "ray" and exp.runner.address)

    def check_then_announce(names: list[str]) -> None:  # resolve calls it before any model is made
        check_servers(exp, names, given, connect)
        _loading(names)

    with user_errors(*INPUT_ERRORS):
        if dry_run:
            _dry_run(plan(exp, tasks), out_dir)
            return
        ready_to_run_code(exp.dataset.family, exp.sandbox)  # before its models load
        try:
            resolved = resolve(
                exp, tasks=tasks, cache_dir=cache_dir, announce=check_then_announce, cache_only=cache_only
            )
            err.print(_plan(resolved, out_dir), highlight=False, soft_wrap=True)
            for line in reading_lines(reading_of(family_of(exp.dataset.family), resolved.tasks)):
                err.print(line, highlight=False, markup=False, soft_wrap=True)
            for model in exp.unseeded():  # never refused: the seed numbers the attempts too
                why = refused_by(model, "seed")
                note = f"note: {model} is sent no seed ({why}): its replies are not reproducible by seed"
                err.print(note, highlight=False, soft_wrap=True)
            stop = Stop()
            with _progress() as on_attempt, _ctrl_c(stop):
                run_id = run_experiment(resolved, out_dir, on_attempt, stop)
        except KeyboardInterrupt:  # before the run began (loading its models): nothing to resume
            err.print("stopped before the run began", highlight=False)
            raise click.exceptions.Exit(130) from None
        except RunStopped as e:
            if e.why == "interrupted":
                err.print(f"stopped: {e}", highlight=False, soft_wrap=True)
                _let_generations_end()
                raise click.exceptions.Exit(130) from None
            print_report(out_dir, e.run_id, omit_zero=omit_zero)
            raise Stopped(str(e)) from None
        except StorageFault as e:  # the run's storage failed mid-run: resumable
            raise Stopped(str(e)) from None
        except Exception as e:  # the cache's or the folder's storage failed before it began
            if not io_error(e):
                raise
            raise Stopped(str(StorageFault(str(out_dir), io_cause(e)))) from None
    print_report(out_dir, run_id, omit_zero=omit_zero)
    _ending(out_dir, run_id, more)


def _ending(out_dir: Path, run_id: int, more: tuple[str, ...] = ()) -> None:
    """What a run ends with, under its report: what verification did, in two lines per verified
    configuration, then the commands to look further (its page; its corrections, or where no
    configuration was verified its tables; then ``more``)."""
    from vreact.records import DB_NAME
    from vreact.report.compute import what_verification_did

    did = what_verification_did(out_dir / DB_NAME, run_id)
    lines = [line for d in did for line in d.lines()]
    for line in [*lines, *next_commands(out_dir, run_id, corrections=bool(did), more=more)]:
        console.print(line, highlight=False, markup=False, soft_wrap=True)


@contextmanager
def _ctrl_c(stop: Stop) -> Iterator[None]:
    """While a run runs: the first Ctrl-C says at once what happens and asks it to stop (no
    attempt starts; those in flight end at their next model call, unfinished, and run again on
    resume); a second, up to the process's end, ends it at once (exit 130: the folder resumes, as after a
    kill; nothing is freed under a model that is still generating)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_sigint(signum: int, frame: Any) -> None:
        if not stop.event.is_set():
            n = stop.request()
            err.print(
                f"stopping: {n} attempt(s) in flight will be re-run on resume; Ctrl-C again to stop now",
                highlight=False,
                soft_wrap=True,
            )
            return
        err.print("stopped now: the same command resumes the run", highlight=False, soft_wrap=True)
        err.file.flush()
        os._exit(130)

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        yield
    finally:
        # once a stop was asked, a second Ctrl-C still ends the process at once: while the run
        # closes, and while the interpreter waits for other threads (Ray's) on its way out
        if not stop.event.is_set():
            signal.signal(signal.SIGINT, previous)


def _let_generations_end() -> None:
    """Before a stopped run's process exits: the in-process model's reply in flight, which cannot
    be cut, ends first (the model is never freed under it); what is waited for is said, at once
    and every few seconds, and a second Ctrl-C ends the process at once."""
    from vreact.model import end_generations

    def say(line: str) -> None:
        err.print(f"{line}; Ctrl-C again to stop now", highlight=False, soft_wrap=True)

    end_generations(say)


def _dry_run(p: Plan, out_dir: Path) -> None:
    """What a run would start, and that nothing was made."""
    from vreact.records import DB_NAME

    there = " (it holds a run: one with this identity resumes there)" if (out_dir / DB_NAME).exists() else ""
    lines = ["dry run: nothing was created and no model was loaded", *p.lines(), f"into {out_dir}{there}"]
    for line in lines:
        console.print(line, highlight=False, markup=False, soft_wrap=True)


def _loading(names: list[str]) -> None:
    err.print(f"Loading model(s) {', '.join(names)} ...", highlight=False)


def _plan(e: ResolvedExperiment, out_dir: Path) -> str:
    limited = " (some configurations on fewer: their limit)" if any(c.limit for c in e.configs) else ""
    return (
        f"{len(e.configs)} configuration(s) x {len(e.tasks)} task(s){limited} x {e.attempts} attempt(s)"
        f" = {e.total()}, {e.concurrency} at a time, into {out_dir}"
    )


def _role_models(pairs: tuple[str, ...]) -> dict[str, str]:
    """``("judge=openai/x",)`` -> ``{"judge": "openai/x"}``, refusing unknown roles."""
    out = {}
    for pair in pairs:
        role, sep, name = pair.partition("=")
        if not sep or role not in CALL_ROLES or not name:
            raise ModelConfigError(
                f"--role-model {pair!r}: expected ROLE=PROVIDER/MODEL, ROLE one of {', '.join(CALL_ROLES)}"
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
        if p.notice:
            err.print(p.notice, highlight=False, soft_wrap=True)

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
LIMITS_OF = LIMITS.model_dump()

_dry_run_option = click.option(
    "--dry-run",
    is_flag=True,
    help="print the plan's size and what it would start; create nothing, load no model",
)

_cache_only = click.option(
    "--cache-only",
    is_flag=True,
    help="serve every model call from the response cache; a miss ends its attempt as crash kind "
    "not_cached (run again once the cache holds it)",
)


def _configs(default: str) -> Any:
    return click.option(
        "--configs", default=default, show_default=True, help="comma-separated configurations"
    )


def _experiment(default: str | None, shipped: str) -> Any:
    return click.option(
        "--experiment",
        default=default,
        show_default=default is not None,
        help=f"the experiment file --configs picks configurations from (default: {shipped})",
    )


#: Where the attempts run (``runner:`` in an experiment file).
_BACKEND = [
    click.option(
        "--backend",
        type=click.Choice(["local", "ray"]),
        default=None,
        help="where the attempts run: this process's threads (local, the default) or a Ray cluster"
        " (pip install 'vreact[ray]')",
    ),
    click.option(
        "--ray-address",
        default=None,
        help="with --backend ray: the cluster to join (default: start a local one)",
    ),
]


def _runner(backend: str | None, ray_address: str | None) -> dict[str, str]:
    """The ``runner`` fields the backend flags give (none when left out)."""
    return {k: v for k, v in (("backend", backend), ("address", ray_address)) if v is not None}


def _common(configs: str = "N,VG", experiment: str | None = None) -> list[Any]:
    """The options of run and demo (the demo's own configurations, from its own experiment)."""
    shipped = f"the shipped {experiment} experiment" if experiment else "the shipped pilot ladder"
    return [
        plugin_option,
        _configs(configs),
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
            type=click.Path(path_type=Path),  # a directory is the loader's one line
            default=None,
            help="models file: aliases, per-role models, base URLs, prices",
        ),
        click.option(
            "--base-url",
            default=None,
            help="the server of every model without a base_url of its own in --models (else "
            "OPENAI_BASE_URL / ANTHROPIC_BASE_URL)",
        ),
        click.option(
            "--out", type=click.Path(path_type=Path), default=None, help="run folder (default runs/TIMESTAMP)"
        ),
        click.option(
            "--spec", default=None, help="L1 spec: a name or a YAML file (default: the family's; qa: musique)"
        ),
        click.option(
            "--verifiers",
            default=None,
            help="verifier set: a name or a YAML file (default: the family's; qa: musique)",
        ),
        _experiment(experiment, shipped),
        click.option("--no-cache", is_flag=True, help="bypass the response cache (see 'vreact cache path')"),
        cache_dir_option,
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
            help="requests in flight per endpoint (server, or local model file)",
        ),
        click.option(
            "--role-model",
            multiple=True,
            metavar="ROLE=MODEL",
            help=f"a model for one role ({', '.join(CALL_ROLES)}); repeatable",
        ),
    ]


def _with(options: list[Any]) -> Callable[[Any], Any]:
    def decorate(f: Any) -> Any:
        for option in reversed(options):
            f = option(f)
        return f

    return decorate


_with_common = _with(_common())
#: The demo's: plain ReAct beside the verified chain (experiments/chain.yaml).
_with_demo_common = _with(_common("N,VG+chain", "chain"))


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
        "--concurrency",
        type=click.IntRange(min=1),
        default=4,
        show_default=True,
        help="attempts in flight (requests per endpoint: --endpoint-concurrency)",
    ),
]


@click.command()
@dataset_options(required=True)
@click.option("--limit", type=click.IntRange(min=1), default=None, help="first N tasks only")
@click.option("--task-ids", default=None, help="comma-separated task ids to run, in that order")
@click.option(
    "--sandbox",
    type=click.Choice(["bwrap", "none"]),
    default=None,
    help="where a family that runs model-written code runs it (default bwrap; none: no isolation)",
)
@_with_common
@_with(_attempts)
@_cache_only
@_with(_BACKEND)
@_dry_run_option
def run(**options: Any) -> None:
    """Run each configuration on each task; print the report.

    Rerun the same command with the same --out to resume: finished attempts are kept, and
    attempts a killed run left unfinished are run again."""
    _execute(**options)


#: The code part of the demo: four problems of HumanEval's tuning half (0-81), chosen from the
#: tuning run (docs/evidence/2026-12-03-qwen0.5b-code-tuning.md) to show each thing verification
#: does there: both configurations right (0, 2); N's wrong program kept, VG's rejected on its
#: failing example and the retry right (27); N's wrong program kept, VG abstaining (9) in the
#: tuning run, corrected since the retry's prompt numbers its runs (a fresh clone, 2026-12-04).
CODE_DEMO = ("HumanEval/0", "HumanEval/27", "HumanEval/9", "HumanEval/2")
CODE_DEMO_MODEL = "llamacpp/qwen2.5-coder-0.5b"


@click.command()
@click.option(
    "--limit", type=click.IntRange(min=1), default=4, show_default=True, help="how many sample questions"
)
@click.option(
    "--family",
    type=click.Choice(["qa", "code"]),
    default="qa",
    show_default=True,
    help=f"qa: the sample questions; code: {len(CODE_DEMO)} HumanEval problems, N beside VG, on "
    f"{CODE_DEMO_MODEL} (skipped, saying why, where no sandbox can start)",
)
@_with_demo_common
def demo(family: str = "qa", **options: Any) -> None:
    """Answer a few built-in sample questions (default N and VG+chain) on the embedded model; end
    with what verification did: the answers it kept, and the wrong answers it stopped, by check.

    The options of run, but for --dataset (always the built-in sample, or with --family code its
    HumanEval problems), --format and --fields (its questions are in MuSiQue's format), --task-ids,
    --attempts (1), --seed (0), --concurrency (1), --cache-only (the demo asks its model), --sandbox
    (its questions run no code), --backend and --ray-address (it runs here) and --dry-run (it runs);
    --limit is how many sample questions. With --family code: HumanEval problems instead,
    N and VG (unless --configs or --experiment say otherwise) on a coding model."""
    if family == "code":
        _code_demo(options)
        return
    _execute(dataset="sample", attempts=1, seed=0, concurrency=1, omit_zero=True, **options)


def _code_demo(options: dict[str, Any]) -> None:
    """The demo on code: where no sandbox can start, one line on why it is skipped (exit 0:
    ``make demo`` goes on); else N beside VG on ``CODE_DEMO``, what verification did, and the
    commands to look further."""
    from vreact.sandbox import unavailable

    why = unavailable()
    if why is not None:  # make demo's last words: said where a user looks, not lost above
        console.print(
            f"\nThe code part of the demo is skipped: {why}.\nOnly the sample questions above ran; "
            "once that is mended, `vreact demo --family code` runs the code part.",
            highlight=False,
            soft_wrap=True,
        )
        return
    given = click.get_current_context().get_parameter_source
    if given("configs") is ParameterSource.DEFAULT:
        options["configs"] = "N,VG"
    if given("experiment") is ParameterSource.DEFAULT:
        options["experiment"] = "code"  # its configurations: N and VG, and room for a program
    options["model_name"] = options.get("model_name") or CODE_DEMO_MODEL
    out = options.pop("out", None) or default_out_dir()
    problems = ",".join(CODE_DEMO)
    _execute(
        out,
        options.pop("cache_dir", None),
        omit_zero=True,
        more=("vreact experiment code --configs N,VG --set dataset.limit=20   (N and VG on 20 problems)",),
        dataset="humaneval",
        family="code",
        task_ids=problems,
        attempts=1,
        seed=0,
        concurrency=1,
        **options,
    )


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
@cache_dir_option
@_cache_only
@_BACKEND[0]
@_BACKEND[1]
@_dry_run_option
@plugin_option
def experiment(
    file: str,
    overrides: tuple[str, ...],
    out: Path | None,
    configs: str | None,
    cache_dir: Path | None,
    cache_only: bool,
    backend: str | None,
    ray_address: str | None,
    dry_run: bool,
) -> None:
    """Run an experiment file (experiments/*.yaml, or a shipped name such as 'pilot'):
    its tasks, configurations, models per role and attempts; print the report.

    Running it again into the same folder resumes it."""
    with user_errors(*INPUT_ERRORS):
        runner = {f"runner.{k}": v for k, v in _runner(backend, ray_address).items()}
        sets = {**parse_overrides(overrides), **runner}
        exp = load_experiment(file, sets)
        given = _in_file(experiment_file(file), sets, [c.name for c in exp.configurations])
        if configs:
            exp = only_configs(exp, configs)
    out_dir = out or Path("runs") / exp.name
    _launch(exp, out_dir, cache_dir, cache_only=cache_only, dry_run=dry_run, given=given)


def _in_file(path: Path, sets: dict[str, Any], configs: list[str]) -> Given:
    """Where the fields of the experiment file at ``path`` are: ``FILE:LINE: field``, or ``FILE:
    --set KEY`` for one a ``--set`` gave (``configs``: its configurations' names, in order)."""

    def loc_in_file(loc: Loc) -> Loc:
        if loc[:1] == ("configurations",) and len(loc) > 1 and loc[1] in configs:
            return ("configurations", configs.index(str(loc[1])), *loc[2:])
        return loc

    def at(loc: Loc) -> str:
        loc = loc_in_file(loc)
        parts = tuple(map(str, loc))
        for key in sets:
            k = tuple(key.split("."))
            if parts[: len(k)] == k or k[: len(parts)] == parts:
                return f"{path}: --set {key}"
        return f"{path}:{field_line(path, loc)}: {'.'.join(parts)}"

    return Given(at=at, named=lambda loc: ".".join(map(str, loc_in_file(loc))))
