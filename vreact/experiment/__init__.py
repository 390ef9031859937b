"""Running experiments: the resolved experiment (everything a run needs, from an experiment
file or from ``vreact run``'s flags) and the runner that makes its attempts."""

from vreact.experiment.resolved import ResolvedExperiment, experiment_tasks, resolve
from vreact.experiment.runner import (
    DB_NAME,
    LOCK_NAME,
    RAISE_INTERNAL,
    EndpointMismatch,
    Job,
    OnAttempt,
    Progress,
    RunDirBusy,
    crash,
    crash_kind,
    default_out_dir,
    exclusive,
    run_attempt,
    run_experiment,
)

__all__ = [
    "DB_NAME",
    "LOCK_NAME",
    "RAISE_INTERNAL",
    "EndpointMismatch",
    "Job",
    "OnAttempt",
    "Progress",
    "ResolvedExperiment",
    "RunDirBusy",
    "crash",
    "crash_kind",
    "default_out_dir",
    "exclusive",
    "experiment_tasks",
    "resolve",
    "run_attempt",
    "run_experiment",
]
