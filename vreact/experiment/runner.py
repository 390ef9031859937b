"""The experiment runner: every configuration on every task, ``attempts`` times, each attempt
accounted; concurrent, and resumable after a crash or a SIGKILL at any moment."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

from vreact.controller import Outcome
from vreact.experiment.attempt import Job, Stop, run_attempt
from vreact.experiment.history import RunMismatch, grown, plain, refusal
from vreact.experiment.resolved import ResolvedExperiment
from vreact.families import Task, family_of
from vreact.records import DB_NAME, StorageFault, Store, exclusive, io_cause, io_error, provenance
from vreact.sandbox import Kind, SandboxUnavailable, unavailable


@dataclass(frozen=True)
class Progress:
    """Where a run stands, handed to ``on_attempt`` after each attempt (and once at the start,
    with ``outcome`` None, so a resumed run's bar starts at what was already done)."""

    done: int
    total: int
    config: str = ""
    task: Task | None = None
    outcome: Outcome | None = None
    run_id: int = 0
    resumed: int = 0  # attempts that were already finished when this process started
    tally: dict[str, int] = field(default_factory=dict)  # outcomes so far: answer, abstain, crash
    #: said once, at the start: a resume made by another commit, or a dirty tree, than the run's
    #: earlier attempts (provenance is not identity: the run goes on)
    notice: str | None = None


OnAttempt = Callable[[Progress], None]


def default_out_dir() -> Path:
    return Path("runs") / time.strftime("%Y%m%d-%H%M%S")


class RunStopped(Exception):
    """A run that stopped before its plan was done, resumable with the same command: asked to
    (Ctrl-C: ``interrupted``), or because nothing answered at a model's server (``unreachable``:
    its first error and how many attempts ended that way)."""

    def __init__(self, run_id: int, why: str, message: str, attempts: int = 0) -> None:
        super().__init__(message)
        self.run_id, self.why, self.attempts = run_id, why, attempts


def run_experiment(
    experiment: ResolvedExperiment,
    out_dir: Path,
    on_attempt: OnAttempt | None = None,
    stop: Stop | None = None,
) -> int:
    """Run each configuration ``attempts`` times on each task into ``out_dir/vreact.db``;
    return the run id. Attempt ``i`` runs with seed ``seed + i``.

    Resumable: when the folder already holds this run (the same resolved configuration, with
    the same configurations or others: vreact.experiment.history), that run continues:
    attempts it finished are skipped, and attempts a killed process left unfinished (or that
    crashed without a fair run: ``RETRYABLE_CRASHES``) are discarded and run again. A folder
    that holds another run is refused (``RunMismatch``). The attempts are planned lazily, and
    up to ``concurrency`` run at once, each in a worker thread with its own store connection.

    It stops early, raising ``RunStopped`` with the run interrupted, when ``stop`` is requested
    (or on KeyboardInterrupt), and when an attempt ends because nothing answers at a model's
    server (crash kind ``unreachable``): no attempt starts after that.
    """
    out_dir = Path(out_dir)
    ready_to_run_code(experiment.family, experiment.sandbox)  # before anything is made
    try:
        return _run_experiment(experiment, out_dir, on_attempt, stop or Stop())
    except Exception as e:
        if io_error(e):  # one line for the user: the folder and the cause, never a traceback
            raise StorageFault(str(out_dir), io_cause(e)) from e
        raise


def ready_to_run_code(family: str, sandbox: str) -> None:
    """For a family that runs model-written code, the sandbox an experiment names (``sandbox``),
    started here once (``SandboxUnavailable``, one line saying why and what to do, when it
    cannot be): vreact runs no model-written code outside a sandbox unless the experiment says
    ``sandbox: none``. The run's programs run in what its family opens for it
    (``TaskFamily.shared``, given ``sandbox=``)."""
    if not family_of(family).runs_code:
        return
    kind: Kind = "none" if sandbox == "none" else "bwrap"
    why = unavailable(kind)
    if why is not None:
        raise SandboxUnavailable(f"the {family} family runs model-written code only in a sandbox: {why}")


def _run_experiment(
    experiment: ResolvedExperiment, out_dir: Path, on_attempt: OnAttempt | None, stop: Stop
) -> int:
    with exclusive(out_dir):
        store = Store(out_dir / DB_NAME)
        store.discard_unfinished()
        run_id, experiment, before = _open_run(store, experiment, out_dir)
        family = family_of(experiment.family)
        store.add_tasks([family.row(t) for t in experiment.tasks])
        finished = store.finished_attempts(run_id)
        notice = _record_provenance(store, run_id, experiment, len(finished))
        notice = "\n".join(n for n in (before, notice) if n) or None
        tally = dict(Counter(finished.values()))
        total = experiment.total()
        resumed = _planned_among(experiment, finished)
        jobs = (j for j in planned(experiment) if (j.config.name, j.task.id, j.attempt_index) not in finished)
        if on_attempt:
            on_attempt(
                Progress(resumed, total, run_id=run_id, resumed=resumed, tally=dict(tally), notice=notice)
            )
        status = "interrupted"
        run = _Run(experiment, out_dir / DB_NAME, run_id, on_attempt, tally, stop)
        try:
            count = run.counter(resumed, total)
            if backend(experiment) == "ray":
                from vreact.experiment.ray_backend import run_on_ray

                run_on_ray(experiment, store, run_id, jobs, total - resumed, count, stop, run.halted)
            else:
                run.local(jobs, count)
            if not run.stopping():
                status = "completed"
        except KeyboardInterrupt:  # no handler of its own (the Python API): stop as asked
            stop.request()
            raise
        finally:
            try:
                store.finish_run(run_id, status)
            except Exception:
                if status == "completed":
                    raise
                # a failed disk may refuse this too: the fault that stopped the run stands
            store.close()
    run.raise_stopped()
    return run_id


def backend(experiment: ResolvedExperiment) -> str:
    """Where its attempts run: ``local`` threads, or ``ray`` (the experiment's ``runner``)."""
    return experiment.source.runner.backend if experiment.source is not None else "local"


def _open_run(
    store: Store, experiment: ResolvedExperiment, out_dir: Path
) -> tuple[int, ResolvedExperiment, str | None]:
    """The folder's run that this one is, reopened (its stored identity grown by the
    configurations it had not run); a new run in a folder without one; else the refusal that
    names how this run differs from the folder's latest. With the run, what it runs: this
    experiment, or, for a run made before its family gave the executor's tokens where the file
    gives none (``ResolvedExperiment.as_made_before``), the experiment as that run was made, with
    the line that says so: a default that moved neither refuses an old folder nor changes what
    its run makes.

    A folder made before the rule may hold several runs: the one recorded with exactly this
    identity is resumed first, else the latest that differs in its configurations alone."""
    runs = dict(store.run_configs())
    latest: RunMismatch | None = None
    before = experiment.as_made_before() if runs else None
    for candidate in (experiment, before):
        if candidate is None:
            continue
        identity = plain(candidate.identity())
        refusals = {run_id: refusal(out_dir, run_id, stored, identity) for run_id, stored in runs.items()}
        same = [run_id for run_id, error in refusals.items() if error is None]
        run_id = store.find_run(candidate.identity()) or next(reversed(same), None)
        if run_id is not None:
            store.reopen_run(run_id, grown(runs[run_id], identity))
            return run_id, candidate, None if candidate is experiment else _made_before(run_id, experiment)
        latest = latest or (refusals[max(runs)] if runs else None)
    if latest is not None:
        raise latest
    family = family_of(experiment.family).record()
    identity = plain(experiment.identity())
    return store.new_run(identity, experiment.model_name(), experiment.dataset, family), experiment, None


def _made_before(run_id: int, experiment: ResolvedExperiment) -> str:
    """The line a run made before its family's executor tokens says as it resumes."""
    family = family_of(experiment.family)
    tokens = family.step_settings.executor_defaults.max_tokens
    return (
        f"note: run {run_id} was made before the {family.name} family gave its executor {tokens}"
        " completion tokens where the file gives none; it goes on as it was made, with vreact's"
        " (another --out makes a run with them)"
    )


def _record_provenance(store: Store, run_id: int, experiment: ResolvedExperiment, done: int) -> str | None:
    """Record what makes the run's attempts from now on (``vreact.records.provenance``); the
    line to say once when the run's ``done`` earlier attempts were made by another commit or a
    dirty tree (None: the same, or none done)."""
    family = family_of(experiment.family)
    selection = experiment.source.dataset if experiment.source is not None else None
    models = [*experiment.models.values()]
    models += [m for setup in experiment.setups.values() for m in setup.models.values()]
    now = provenance.collect(
        models,
        dataset_files=family.data_files(selection) if selection is not None else (),
        libraries=family.libraries,
        ask_servers=not (experiment.cache is not None and experiment.cache.only),
        limits=experiment.limits.model_dump(),
    )
    before = store.latest_provenance(run_id)
    store.record_provenance(run_id, now)
    if not done:
        return None
    if before is None:
        return (
            f"note: run {run_id}'s {done} earlier attempt(s) have no recorded provenance; those"
            f" from now on are made by {provenance.summary(now)}"
        )
    if provenance.state(before) == provenance.state(now):
        return None
    return (
        f"note: run {run_id} was made by {provenance.summary(before)} so far; its attempts from now on"
        f" by {provenance.summary(now)} (the run goes on: its report says which attempts each made)"
    )


def planned(experiment: ResolvedExperiment) -> Iterator[Job]:
    """Every attempt of the run, task-major (so an interrupted run still compares the
    configurations on the same tasks), made one at a time: a plan's size never lives in memory."""
    e = experiment
    for n, task in enumerate(e.tasks):
        for config in e.configs:
            if config.limit is None or n < config.limit:
                for i in range(e.attempts):
                    yield Job(config, task, i, e.seed + i)


def _planned_among(experiment: ResolvedExperiment, finished: dict[tuple[str, str, int], str]) -> int:
    """How many of the run's planned attempts are among ``finished`` (config, task id, index)."""
    e = experiment
    position = {t.id: n for n, t in enumerate(e.tasks)}
    limits = {c.name: c.limit for c in e.configs}
    return sum(
        1
        for config, task, index in finished
        if config in limits
        and task in position
        and index < e.attempts
        and (limits[config] is None or position[task] < (limits[config] or 0))
    )


@dataclass
class _Run:
    """What every attempt of one run shares, and why it stops early (``stop`` asked, or a server
    that does not answer: ``unreachable``, the errors of the attempts it ended)."""

    experiment: ResolvedExperiment
    db_path: Path
    run_id: int
    on_attempt: OnAttempt | None
    tally: dict[str, int]
    stop: Stop = field(default_factory=Stop)
    unreachable: list[str] = field(default_factory=list)

    def halted(self) -> bool:
        """Whether a server that does not answer ended an attempt: then none starts."""
        return bool(self.unreachable)

    def stopping(self) -> bool:
        """Whether no attempt may start any more: asked to stop, or halted."""
        return self.stop.event.is_set() or self.halted()

    def raise_stopped(self) -> None:
        """``RunStopped`` when the run ended before its plan did."""
        if self.stop.event.is_set():
            raise RunStopped(
                self.run_id, "interrupted", f"run {self.run_id} interrupted; the same command resumes it"
            )
        if self.unreachable:
            n, first = len(self.unreachable), self.unreachable[0].removeprefix("Unreachable: ")
            raise RunStopped(
                self.run_id,
                "unreachable",
                f"stopped: {first}; {n} attempt(s) ended that way and run again on resume: start"
                " the server (or fix its address), then run the same command again",
                n,
            )

    def counter(self, done: int, total: int) -> Callable[[Job, Outcome], None]:
        """What to do as each attempt ends: count it, and report the progress."""
        resumed = done

        def count(job: Job, outcome: Outcome) -> None:
            nonlocal done
            done += 1
            self.tally[outcome.kind] = self.tally.get(outcome.kind, 0) + 1
            if outcome.crash_kind == "unreachable":  # no attempt starts after it
                self.unreachable.append(outcome.error or "")
            if self.on_attempt:
                progress = Progress(
                    done, total, job.config.name, job.task, outcome, self.run_id, resumed, dict(self.tally)
                )
                self.on_attempt(progress)

        return count

    def local(self, jobs: Iterator[Job], count: Callable[[Job, Outcome], None]) -> None:
        """Run the jobs in this process, at most ``concurrency`` at once, each in a worker thread
        with its own store connection; the next job is planned only when a thread is free.
        Progress is reported from this thread, one attempt at a time."""
        local = threading.local()
        stores: list[Store] = []
        stop = self.stop

        def work(job: Job) -> Outcome | None:
            if not hasattr(local, "store"):
                local.store = Store(self.db_path)
                stores.append(local.store)  # list.append is atomic
            return run_attempt(self.experiment, job, local.store, self.run_id, stop.event)

        concurrency = self.experiment.concurrency
        pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="vreact-attempt")
        in_flight: dict[Future[Outcome | None], Job] = {}

        def reap() -> None:
            ended, _ = wait(in_flight, return_when=FIRST_COMPLETED)
            for f in ended:
                job = in_flight.pop(f)
                stop.in_flight = len(in_flight)
                outcome = f.result()  # an io fault, or an internal error under the test suite
                if outcome is not None:  # None: the run is stopping, the attempt left unfinished
                    count(job, outcome)

        try:
            for job in jobs:
                while len(in_flight) >= concurrency:
                    reap()
                if self.stopping():
                    break
                in_flight[pool.submit(work, job)] = job
                stop.in_flight = len(in_flight)
            while in_flight:
                reap()
        except BaseException:
            stop.event.set()  # those in flight end at their next call, unfinished
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
            stop.in_flight = 0
            for s in stores:
                s.close()
