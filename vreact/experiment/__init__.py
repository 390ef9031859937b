"""Running experiments: the resolved experiment (everything a run needs, from an experiment
file or from ``vreact run``'s flags) and the runner that makes its attempts."""

from vreact.experiment.attempt import RAISE_INTERNAL, Job, Stop, crash, crash_kind, run_attempt
from vreact.experiment.history import CorpusMismatch, EndpointMismatch, RunMismatch
from vreact.experiment.resolved import Plan, PlanTooLarge, ResolvedExperiment, experiment_tasks, plan, resolve
from vreact.experiment.runner import (
    OnAttempt,
    Progress,
    RunStopped,
    default_out_dir,
    ready_to_run_code,
    run_experiment,
)

__all__ = [
    "RAISE_INTERNAL",
    "CorpusMismatch",
    "EndpointMismatch",
    "Job",
    "OnAttempt",
    "Plan",
    "PlanTooLarge",
    "Progress",
    "ResolvedExperiment",
    "RunMismatch",
    "RunStopped",
    "Stop",
    "crash",
    "crash_kind",
    "default_out_dir",
    "experiment_tasks",
    "plan",
    "ready_to_run_code",
    "resolve",
    "run_attempt",
    "run_experiment",
]
