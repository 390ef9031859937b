"""One attempt of a run: the job that names it, its making (``run_attempt``: an answer, an
abstention or a crash, never a raise for a failure inside it), its scores and crash record, and
how a run asks its attempts to stop. The runner and the Ray backend both make attempts so."""

from __future__ import annotations

import contextlib
import os
import threading
import traceback
from dataclasses import dataclass, field
from typing import Any

from vreact.config import Configuration
from vreact.controller import AttemptContext, Controller, CrashKind, Outcome, Recorder
from vreact.experiment.resolved import ResolvedExperiment
from vreact.families import Score, Task, family_of, score_outcome
from vreact.memory import ContextAssembler
from vreact.model import (
    CallTimeoutError,
    ContextLengthError,
    Interrupted,
    MockScriptExhausted,
    ModelError,
    NotCached,
    Unreachable,
    redact,
)
from vreact.records import Store, io_error


@dataclass(frozen=True)
class Job:
    """One attempt to make: a configuration on a task, the ``attempt_index``-th time."""

    config: Configuration
    task: Task
    attempt_index: int = 0
    seed: int = 0


def run_attempt(
    experiment: ResolvedExperiment, job: Job, store: Store, run_id: int, stop: threading.Event | None = None
) -> Outcome | None:
    """One attempt, ending in exactly one of answer, abstention or crash (never raising for a
    failure inside the attempt). A crash says which failure ended it (``crash_kind``): a model,
    transport, unreachable server, time-out, context-length or mock-script failure, a storage
    fault (``io``: then it is recorded if the disk allows and raised, for the run stops), else
    ``internal``, a bug in vreact, kept with its whole traceback (or raised, when
    ``VREACT_RAISE_INTERNAL=1``). None when ``stop`` was set during it: the attempt is left
    unfinished (what it wrote is discarded on resume, and it runs again)."""
    config, task, seed = job.config, job.task, job.seed
    attempt_id = store.start_attempt(run_id, config.name, task.id, job.attempt_index, seed)
    recorder = Recorder(store, attempt_id)
    try:
        assembler = ContextAssembler(experiment.roles, store)
        setup = experiment.setup(config)
        family = family_of(experiment.family)
        ctx = AttemptContext(config, task, setup.models, assembler, recorder, seed, stop, family)
        outcome = Controller(setup.spec, setup.verifiers, ctx).run()
    except Interrupted:  # the run is stopping: left unfinished, as a killed attempt is
        return None
    except Exception as e:  # a crash is data, not the end of the run
        outcome = crash(e)
        if outcome.crash_kind == "internal" and os.environ.get(RAISE_INTERNAL) == "1":
            raise  # the attempt stays unfinished, as a killed one would
        if outcome.crash_kind == "io":  # the storage failed: recorded if it can be, and the run stops
            with contextlib.suppress(Exception):
                store.finish_attempt(attempt_id, outcome.record())
            raise
    try:
        scores = scored(experiment, task, outcome, recorder.judged)
    except Exception as e:  # the family's scorer failed: a crash, never an unscored answer
        outcome, scores = crash(e), []
    store.finish_attempt(attempt_id, outcome.record(), *scores)
    return outcome


def scored(
    experiment: ResolvedExperiment, task: Task, outcome: Outcome, judged: dict[str, Any] | None = None
) -> list[Score | None]:
    """An ended attempt's scores under the run's family (none for a crash), one per scorer the
    run records (``TaskFamily.scorers``), its primary first: its answer (None for an
    abstention) and the evidence it cited; and each try ``judged`` (artifacts by hash) that the
    family can score."""
    if outcome.kind == "crash":
        return []
    family = family_of(experiment.family)
    names = experiment.scorers or (family.name,)
    return [score_outcome(family, name, task, outcome, judged) for name in names]


#: Set to 1 (the test suite does) and an internal error raises instead of becoming a crash record.
RAISE_INTERNAL = "VREACT_RAISE_INTERNAL"


def crash_kind(e: BaseException) -> CrashKind:
    """Which expected failure ``e`` is; anything that is not one is a bug in vreact."""
    if isinstance(e, CallTimeoutError):
        return "timeout"
    if isinstance(e, ContextLengthError):
        return "context_length"
    if isinstance(e, MockScriptExhausted):
        return "script"
    if isinstance(e, NotCached):  # --cache-only met a request the cache does not hold: retryable
        return "not_cached"
    if isinstance(e, Unreachable):  # nothing answered at its server: retryable, and the run stops
        return "unreachable"
    if io_error(e):  # the disk, not vreact or the model: never "internal"
        return "io"
    if isinstance(e, ModelError):  # provider and transport errors left after the retry layer
        return "model"
    return "internal"


def crash(e: BaseException) -> Outcome:
    """The crash record of an attempt that raised ``e``: a one-line error, and for an internal
    error the whole traceback (keys redacted, never truncated)."""
    kind = crash_kind(e)
    error = redact(f"{type(e).__name__}: {e}")
    if kind != "internal":
        return Outcome("crash", error=error[:2000], crash_kind=kind)
    trace = redact("".join(traceback.format_exception(e)))
    return Outcome("crash", error=f"internal error: {error}"[:2000], crash_kind=kind, traceback=trace)


@dataclass
class Stop:
    """How a run is asked to stop, and what it says meanwhile: once ``event`` is set no attempt
    starts, and those in flight end at their next model call (one waiting on a reply ends at
    once), unfinished: resume runs them again. ``in_flight`` is how many are running now."""

    event: threading.Event = field(default_factory=threading.Event)
    in_flight: int = 0

    def request(self) -> int:
        """Ask the run to stop; how many attempts were in flight (they run again on resume)."""
        self.event.set()
        return self.in_flight
