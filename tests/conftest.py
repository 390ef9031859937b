"""Shared fixtures: real MuSiQue records, the shipped declarative files, a fresh store."""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.processes import start, stop
from vreact.cli._check import problems
from vreact.experiment import RAISE_INTERNAL
from vreact.model import _llamacpp
from vreact.qa.dataset import Task, load_tasks
from vreact.records import Store
from vreact.spec import RoleSchema, TaskSpec, VerifierSet, load_roles, load_spec, load_verifiers

REPO = Path(__file__).resolve().parents[1]
#: Real MuSiQue records (CC BY 4.0), shipped with the suite: tests/data/musique/README.md.
MUSIQUE = REPO / "tests" / "data" / "musique"
FULL = MUSIQUE / "musique_full_train_80.jsonl"
ANS = MUSIQUE / "musique_ans_train_100.jsonl"


def musique_records() -> list[dict[str, Any]]:
    """Every real MuSiQue record shipped with the suite (Full then Ans)."""
    out = []
    for path in (FULL, ANS):
        out += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return out


pytest_plugins = ["pytester"]

#: The network guard (loopback only), in this process and, through PYTHONPATH, in every Python
#: subprocess a test starts.
GUARD_DIR = REPO / "tests" / "loopback_only"


def pytest_configure(config: pytest.Config) -> None:
    os.environ["VREACT_LOOPBACK_ONLY"] = "1"
    # Ray's clusters in the tests are on loopback: read once, when ray is imported, this keeps a
    # driver joining 127.0.0.1 there (as vreact sets it for a cluster on loopback), instead of
    # the machine's outside address
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(GUARD_DIR), os.environ.get("PYTHONPATH")]))
    spec = importlib.util.spec_from_file_location("vreact_loopback_only", GUARD_DIR / "sitecustomize.py")
    assert spec is not None and spec.loader is not None
    guard = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(guard)  # installs itself: VREACT_LOOPBACK_ONLY is set


@pytest.fixture(autouse=True)
def _own_cache_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test gets its own response cache, never the user's."""
    monkeypatch.setenv("VREACT_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))


@pytest.fixture(autouse=True)
def _bugs_raise_and_no_accidental_models(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An internal error (a bug in vreact) fails the test instead of becoming a crash record;
    no test loads a GGUF in-process unless it is marked ``real_model`` (as pydantic-ai's
    ALLOW_MODEL_REQUESTS). Both hold in the subprocesses a test starts, through the environment."""
    monkeypatch.setenv(RAISE_INTERNAL, "1")
    real = request.node.get_closest_marker("real_model") is not None
    monkeypatch.setattr(_llamacpp, "ALLOW_LOCAL_LOADS", real)
    monkeypatch.setenv(_llamacpp.ALLOW_LOCAL_LOADS_ENV, "1" if real else "0")


def records_problems(root: Path) -> list[str]:
    """What ``vreact check`` finds wrong in every run folder under ``root``, one line each."""
    return [f"{db.parent}: {p}" for db in sorted(root.rglob("vreact.db")) for p in problems(db)]


def assert_records_whole(root: Path) -> None:
    found = records_problems(root)
    assert not found, "vreact check fails on records this test made:\n" + "\n".join(found)


@pytest.fixture(autouse=True)
def _records_pass_check(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[None]:
    """Every run folder a test makes under its ``tmp_path`` passes ``vreact check`` when the
    test ends, unless the test damages records on purpose (marked ``damages_records``). Folders
    of module fixtures are checked by the fixture itself (``assert_records_whole``)."""
    yield
    if request.node.get_closest_marker("damages_records") is None and tmp_path.is_dir():
        assert_records_whole(tmp_path)


@pytest.fixture(scope="session")
def full_tasks() -> list[Task]:
    return load_tasks(FULL)


@pytest.fixture
def task_nissedal(full_tasks: list[Task]) -> Task:
    """A 2-hop MuSiQue-Full record (its answer: north)."""
    return next(t for t in full_tasks if t.id == "2hop__269805_135710")


@pytest.fixture(scope="session")
def spec() -> TaskSpec:
    return load_spec()


@pytest.fixture(scope="session")
def verifiers() -> VerifierSet:
    return load_verifiers()


@pytest.fixture(scope="session")
def roles() -> RoleSchema:
    return load_roles()


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / "vreact.db")


def free_port() -> int:
    """A loopback TCP port free when asked (the OS's choice)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def ray_head(log: Path, num_cpus: int = 2) -> Iterator[str]:
    """A Ray cluster of one node on loopback, started by ``ray start --head --block`` (no
    dashboard) through tests.processes, its output in ``log``: its address (HOST:PORT), once its
    GCS answers. Stopped at the end by its process group.

    Not ``ray.init(address="local")`` in pytest: Ray's GCS and raylet share the fate of the
    process that starts them (a death signal), but the raylet's two agents (dashboard and
    runtime-env) do not: when a pytest holding such a cluster is SIGKILLed they see the raylet
    die, call ``sys.exit`` and hang there for good (Ray 2.52, seen here). In a process group of
    its own, the cluster goes whole with pytest, agents included."""
    port = free_port()
    env = {**os.environ, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO": "0"}
    command = [str(Path(sys.executable).parent / "ray"), "start", "--head", "--block", f"--port={port}"]
    command += [f"--num-cpus={num_cpus}", "--node-ip-address=127.0.0.1", "--include-dashboard=false"]
    with log.open("ab") as out:
        head = start([*command, "--disable-usage-stats"], env=env, stdout=out, stderr=out)
    try:
        deadline = time.monotonic() + 120
        while True:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if head.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"ray start --head did not answer on {port}:\n{log.read_text()[-3000:]}")
            time.sleep(0.2)
        yield f"127.0.0.1:{port}"
    finally:
        stop(head, grace=60)


@contextmanager
def ray_joined(log: Path) -> Iterator[str]:
    """A :func:`ray_head` cluster (2 CPUs, no dashboard, its node on loopback, so address
    discovery never meets the network guard) that this process joins as a driver: its address,
    for runs to join."""
    os.environ.setdefault("RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO", "0")  # no GPUs: no warning about them
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # see pytest_configure
    import ray

    with ray_head(log) as address:
        ray.init(address=address, _node_ip_address="127.0.0.1", log_to_driver=False)
        try:
            yield ray.get_runtime_context().gcs_address
        finally:
            ray.shutdown()


@pytest.fixture(scope="session")
def ray_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One local Ray cluster for the session, joined by this process (:func:`ray_joined`): its
    address. The tests that lose a node or kill a driver start their own."""
    with ray_joined(tmp_path_factory.mktemp("ray") / "head.log") as address:
        yield address
