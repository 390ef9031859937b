"""The experiment runner: every configuration once on every task, each attempt accounted."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from vreact.config import Configuration
from vreact.controller import Controller, Outcome
from vreact.dataset import Task
from vreact.memory import ContextAssembler, Store
from vreact.model import Model, redact
from vreact.spec import RoleSchema, TaskSpec, VerifierSet

DB_NAME = "vreact.db"
#: Called after each attempt: (config name, task, outcome, attempts done, attempts in all).
OnAttempt = Callable[[str, Task, Outcome, int, int], None]


def default_out_dir() -> Path:
    return Path("runs") / time.strftime("%Y%m%d-%H%M%S")


#: One model for every role, or models by role: "default" plus any of planner, executor, judge.
Models = Model | dict[str, Model]


def by_role(models: Models) -> dict[str, Model]:
    return models if isinstance(models, dict) else {"default": models}


def run_attempt(
    config: Configuration,
    task: Task,
    model: Models,
    store: Store,
    run_id: int,
    spec: TaskSpec,
    verifiers: VerifierSet,
    roles: RoleSchema,
    attempt_index: int = 0,
    seed: int = 0,
) -> Outcome:
    """One attempt, ending in exactly one of answer, abstention or crash (never raising
    for a failure inside the attempt)."""
    attempt_id = store.start_attempt(run_id, config.name, task.id, attempt_index, seed)
    try:
        controller = Controller(
            config,
            spec,
            verifiers,
            ContextAssembler(roles, store),
            by_role(model),
            store,
            attempt_id,
            task,
            seed,
        )
        outcome = controller.run()
    except Exception as e:  # a crash is data, not the end of the run
        outcome = Outcome("crash", error=redact(f"{type(e).__name__}: {e}")[:2000])
    store.finish_attempt(attempt_id, outcome.record())
    return outcome


def run_experiment(
    tasks: list[Task],
    configs: list[Configuration],
    model: Models,
    out_dir: Path,
    spec: TaskSpec,
    verifiers: VerifierSet,
    roles: RoleSchema,
    dataset: str = "",
    on_attempt: OnAttempt | None = None,
) -> int:
    """Run each configuration once on each task into ``out_dir/vreact.db``; return the run id.

    Attempts a killed earlier run left unfinished in the same folder are discarded first.
    """
    store = Store(Path(out_dir) / DB_NAME)
    store.discard_unfinished()
    resolved = {
        "configs": [c.model_dump() for c in configs],
        "spec": spec.model_dump(),
        "verifiers": verifiers.model_dump(),
        "roles": roles.model_dump(),
        "models": {role: m.name for role, m in by_role(model).items()},
        "dataset": dataset,
    }
    run_id = store.new_run(resolved, by_role(model)["default"].name, dataset)
    store.add_tasks([t.record() for t in tasks])
    total, done = len(configs) * len(tasks), 0
    status = "interrupted"
    try:
        for config in configs:
            for task in tasks:
                outcome = run_attempt(config, task, model, store, run_id, spec, verifiers, roles)
                done += 1
                if on_attempt:
                    on_attempt(config.name, task, outcome, done, total)
        status = "completed"
    finally:
        store.finish_run(run_id, status)
    return run_id
