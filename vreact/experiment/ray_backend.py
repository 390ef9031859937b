"""The Ray backend (``runner: {backend: ray}``): the run's attempts on a Ray cluster, one
writer.

The driver puts one payload in the cluster's object store: the experiment as data (its file's
fields, the tasks as resolved, the spec, verifier set and role schema as loaded, what its family
opened for the run (qa: the corpus), the source of each single-file plugin it loaded, the
environment to run in). A worker loads those plugins from their text, so a lab's own gates
reach every node with no shared disk; a plugin package is installed on each node, where its
entry point loads it.

Each worker is an actor that resolves the run from the payload once, building its models there
(an in-process GGUF is about 1.1 GB a worker), and then runs one attempt at a time against a
store of its own in a temporary folder, sending back the attempt's whole record batch. Only the
driver writes ``vreact.db``: it imports each batch in one transaction (``Store.import_attempt``:
new ids, messages once), skipping an attempt the run already holds, so a retried worker never
duplicates one.

A worker that is lost (its node gone, its process killed) is replaced and its attempt runs again
elsewhere; after ``LOST_TRIES`` losses in a row the attempt is recorded as a crash of kind
``worker_lost``, which resume runs again. On Ctrl-C the workers end with the driver that owns
them: the attempts in flight are never written and run again on resume, as after a SIGKILL of
the driver.

The response cache is each node's own: workers open ``VREACT_CACHE_DIR`` (the driver's, sent in
the payload) on the node they run on, so on one machine every worker shares the driver's cache
file, and on several each node keeps its own (a call answered on one node may be asked again on
another; the records are the same either way, only ``cached`` differs)."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import sys
import tempfile
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vreact.controller import Outcome
from vreact.experiment.attempt import Job, Stop, run_attempt
from vreact.experiment.models import INDEX_ENV, NODE_ENV
from vreact.experiment.resolved import Loaded, ResolvedExperiment, resolve
from vreact.families import Task, family_of
from vreact.records import DB_NAME, Store
from vreact.registry import sources as plugin_sources
from vreact.spec import Experiment, RunnerSettings

#: How many times one attempt may lose its worker before it is recorded as a ``worker_lost`` crash.
LOST_TRIES = 3
#: The driver's environment a worker runs in: vreact's own settings (the cache folder, the test
#: suite's switches) and the providers' keys.
_ENV_PREFIXES = ("VREACT_",)
_ENV_SUFFIXES = ("_API_KEY", "_BASE_URL")


@dataclass(frozen=True)
class Payload:
    """What every worker resolves the run from: data, never paths on the driver's disk, live
    clients, models, cache connections or locks."""

    experiment: Experiment
    tasks: list[Task]
    loaded: Loaded
    plugins: tuple[tuple[str, str], ...]  # each single-file plugin's name and source text
    cache_dir: str | None
    cache_only: bool  # --cache-only: a worker's miss is a not_cached crash, never a request
    env: dict[str, str]


def payload_of(experiment: ResolvedExperiment) -> Payload:
    assert experiment.source is not None, "a Ray run is resolved from an experiment"
    env = {k: v for k, v in os.environ.items() if k.startswith(_ENV_PREFIXES) or k.endswith(_ENV_SUFFIXES)}
    plugins = tuple(plugin_sources())
    cache = str(experiment.cache_dir) if experiment.cache_dir else None
    only = experiment.cache is not None and experiment.cache.only
    return Payload(experiment.source, experiment.tasks, experiment.loaded(), plugins, cache, only, env)


class Worker:
    """One Ray actor: the run resolved once, then one attempt at a time into its own store."""

    def __init__(self, payload: Payload, index: int) -> None:
        import ray

        os.environ.update(payload.env)
        # which member of an endpoint pool this worker calls: its node's, else by its index
        os.environ[NODE_ENV], os.environ[INDEX_ENV] = ray.util.get_node_ip_address(), str(index)
        from vreact.model import _llamacpp
        from vreact.registry import load_entry_points, load_plugin

        _llamacpp.ALLOW_LOCAL_LOADS = os.environ.get(_llamacpp.ALLOW_LOCAL_LOADS_ENV, "1") != "0"
        self.folder = tempfile.mkdtemp(prefix="vreact-worker-")
        load_entry_points()  # installed plugin packages: each node has its own install
        for i, (_, text) in enumerate(payload.plugins):  # the driver's own files, as it loaded them
            path = Path(self.folder) / f"plugin_{i}.py"
            path.write_text(text, encoding="utf-8")
            load_plugin(str(path))
        cache_dir = Path(payload.cache_dir) if payload.cache_dir else None
        self.experiment = resolve(
            payload.experiment,
            tasks=payload.tasks,
            cache_dir=cache_dir,
            cache_only=payload.cache_only,
            loaded=payload.loaded,
        )
        self.tasks = {t.id: t for t in payload.tasks}
        self.configs = {c.name: c for c in self.experiment.configs}
        self.store = Store(Path(self.folder) / DB_NAME)
        self.run_id = self.store.new_run({}, self.experiment.model_name(), self.experiment.dataset)
        self.store.add_tasks([family_of(self.experiment.family).row(t) for t in payload.tasks])

    def attempt(self, config: str, task: str, index: int, seed: int) -> tuple[Outcome, dict[str, Any]]:
        """One attempt (vreact.experiment.attempt.run_attempt), and its records as a batch."""
        job = Job(self.configs[config], self.tasks[task], index, seed)
        outcome = run_attempt(self.experiment, job, self.store, self.run_id)
        assert outcome is not None  # a worker is never asked to stop: the driver drops it
        [row] = self.store.query(
            "select id from attempts where run_id = ? and config = ? and task_id = ? and attempt_index = ?",
            [self.run_id, config, task, index],
        )
        return outcome, self.store.export_attempt(row["id"])

    def close(self) -> None:
        self.store.close()
        shutil.rmtree(self.folder, ignore_errors=True)


class ClusterUnavailable(Exception):
    """No Ray to run on: the package is not installed, or no cluster answers at the address."""


def connect(runner: RunnerSettings) -> bool:
    """Join the cluster ``runner`` names, or the one this process already joined, or start a
    local one (its node's address pinned to loopback); whether this call started it. Refused in
    one line (``ClusterUnavailable``) without Ray, or with an address where nothing listens
    (Ray itself would retry it for minutes)."""
    host, _, port = (runner.address or "").rpartition(":")
    if runner.address:
        try:
            socket.create_connection((host.strip("[]"), int(port)), timeout=5).close()
        except (OSError, ValueError) as e:
            why = "expected HOST:PORT" if isinstance(e, ValueError) else e.strerror or str(e)
            raise ClusterUnavailable(
                f"no Ray cluster at {runner.address} ({why}): start one there with 'ray start --head',"
                " or leave out the address for a local one"
            ) from None
    if host in ("127.0.0.1", "localhost", "[::1]"):
        # a cluster on this machine's loopback: else Ray swaps 127.0.0.1 for the address the
        # machine would be reached at from outside, where that cluster does not listen
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    os.environ.setdefault("RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO", "0")  # no GPU to hide: no warning about it
    try:
        import ray
    except ImportError:
        raise ClusterUnavailable("the ray backend needs Ray: pip install 'vreact[ray]'") from None

    if ray.is_initialized():
        return False
    if runner.address:
        ray.init(address=runner.address, log_to_driver=False)
        return False
    ray.init(address="local", include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False)
    return True


def run_on_ray(
    experiment: ResolvedExperiment,
    store: Store,
    run_id: int,
    jobs: Iterator[Any],
    count: int,
    done: Callable[[Any, Outcome], None],
    stop: Stop | None = None,
    halted: Callable[[], bool] = lambda: False,
) -> None:
    """Run ``jobs`` (vreact.experiment.attempt.Job, ``count`` of them, planned one at a time) on
    the cluster, ``concurrency`` at once (one worker each), importing each attempt's batch into
    ``store`` as it ends and calling ``done``. Once ``halted()`` no attempt starts (those in
    flight end and are written); once ``stop`` is set (Ctrl-C) the driver stops waiting too: the
    attempts in flight are never written, and run again on resume."""
    stop = stop or Stop()
    assert experiment.source is not None, "a Ray run is resolved from an experiment"
    runner = experiment.source.runner
    started = connect(runner)  # before ray is imported here: it reads the environment then
    import ray
    from ray.exceptions import ActorDiedError, ActorUnavailableError, RayActorError, WorkerCrashedError

    lost_errors = (RayActorError, ActorDiedError, ActorUnavailableError, WorkerCrashedError)
    remote = ray.remote(Worker).options(  # type: ignore[attr-defined]
        num_cpus=runner.num_cpus_per_attempt,
        resources=runner.resources or None,
        scheduling_strategy="SPREAD",
        max_restarts=0,
    )
    payload = ray.put(payload_of(experiment))
    workers: list[Any] = []
    idle: deque[Any] = deque()
    pending: dict[Any, tuple[Any, int, Any]] = {}
    again: deque[tuple[Any, int]] = deque()  # attempts whose worker was lost, first in line
    try:
        idle.extend(remote.remote(payload, i) for i in range(min(experiment.concurrency, count)))
        workers.extend(idle)
        index = len(workers) - 1  # each worker's index, which picks its member of an endpoint pool
        while True:
            while idle and not stop.event.is_set() and not halted():
                if again:
                    job, lost = again.popleft()
                else:
                    job, lost = next(jobs, None), 0
                    if job is None:
                        break
                worker = idle.popleft()
                ref = worker.attempt.remote(job.config.name, job.task.id, job.attempt_index, job.seed)
                pending[ref] = (job, lost, worker)
            stop.in_flight = len(pending)
            if not pending:
                break
            ready, _ = ray.wait(list(pending), num_returns=1, timeout=_POLL)
            if not ready:
                if stop.event.is_set():
                    break  # asked to stop: the attempts in flight are never written
                continue
            [ref] = ready
            job, lost, worker = pending.pop(ref)
            stop.in_flight = len(pending)
            try:
                outcome, batch = ray.get(ref)
            except lost_errors as e:
                # the run goes on; the user is told why an attempt runs again
                print(
                    f"vreact: a Ray worker was lost ({type(e).__name__}); {job.config.name} on"
                    f" {job.task.id} runs again ({lost + 1} of {LOST_TRIES})",
                    file=sys.stderr,
                )
                workers.remove(worker)
                replacement = remote.remote(payload, index := index + 1)
                workers.append(replacement)
                idle.append(replacement)
                if lost + 1 < LOST_TRIES:
                    again.append((job, lost + 1))
                    continue
                outcome = Outcome("crash", error="its Ray worker was lost 3 times", crash_kind="worker_lost")
                _record_lost(store, run_id, job, outcome)
                done(job, outcome)
                continue
            store.import_attempt(run_id, batch)
            idle.append(worker)
            done(job, outcome)
        if not pending:
            with contextlib.suppress(*lost_errors):  # their temporary stores
                ray.get([w.close.remote() for w in idle])
    finally:
        # the workers end with their handles (an actor this driver owns ends when no handle to it
        # is left, or when the driver ends): on Ctrl-C or an error, the attempts in flight are
        # never written and run again on resume. Never ray.kill: killing an actor Ray already
        # lost with its node aborts the driver (Ray 2.52)
        workers.clear()
        idle.clear()
        pending.clear()
        if started:
            ray.shutdown()


#: How often the driver, waiting on its workers, looks whether the run is asked to stop (seconds).
_POLL = 0.2


def _record_lost(store: Store, run_id: int, job: Any, outcome: Outcome) -> None:
    attempt_id = store.start_attempt(run_id, job.config.name, job.task.id, job.attempt_index, job.seed)
    store.finish_attempt(attempt_id, outcome.record())
