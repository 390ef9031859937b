"""What a test starts dies with the pytest that started it, however that pytest ends (issue 58):
a pytest in a subprocess holds a fixture's processes (a loopback llama.cpp server, a process with
a child of its own, the session's Ray cluster, a headless Chromium), writes their pids and its
own, and is killed with SIGTERM or SIGKILL; within 5 s none of them runs. A plain
``subprocess.Popen`` in the same place is the control: its processes are still running after the
same kill, so the check can tell."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.processes import alive, run, start, stop

#: How long the processes a killed pytest started may take to die (the issue's bound).
DIES_WITHIN = 5.0

#: The inner test: holds what ``hold`` (a context manager ``imports`` defines) starts, writes
#: {"pytest": pid, "held": pid, "all": [...]} (the held process's pid, and every process under
#: pytest) to ``pids``, and waits to be killed.
INNER = """
import json, os, time
from pathlib import Path

from tests.processes import descendants

{imports}


def test_hold(tmp_path):
    with {hold} as held:
        Path({pids!r}).write_text(
            json.dumps({{"pytest": os.getpid(), "held": held, "all": descendants(os.getpid())}})
        )
        time.sleep(600)
"""

#: A process with a child of its own: the death signal reaches the first, only the reaper the second.
TREE = "import subprocess, time; print(subprocess.Popen(['sleep', '600']).pid, flush=True); time.sleep(600)"

TREE_IMPORTS = """
import contextlib, subprocess, sys

from tests.processes import start, stop

TREE = {tree!r}


@contextlib.contextmanager
def tree(plain):
    p = (subprocess.Popen if plain else start)([sys.executable, "-c", TREE])
    try:
        while not any(True for _ in descendants(p.pid)):
            time.sleep(0.02)
        yield p.pid
    finally:
        stop(p) if not plain else p.kill()
"""

LLAMA_IMPORTS = """
import contextlib

from tests.model.test_real_server import serve


@contextlib.contextmanager
def server(log):
    with serve(log):
        [pid] = [
            p for p in descendants(os.getpid())
            if b"llama_cpp.server" in Path(f"/proc/{p}/cmdline").read_bytes()
        ]
        yield pid
"""

RAY_IMPORTS = """
import contextlib
import ray

from tests.conftest import ray_joined


@contextlib.contextmanager
def cluster(log):
    # the ray_cluster fixture's, and one task run, so a worker process exists
    with ray_joined(Path(log)):
        assert ray.get(ray.remote(lambda: os.getpid()).remote()) != os.getpid()
        yield os.getpid()
"""

CHROMIUM_IMPORTS = """
import contextlib

from tests.processes import start, stop
from tests.report.test_html import chromium


@contextlib.contextmanager
def browser(profile):
    # as browse() runs it, kept open: an about:blank page and a debugging port hold it
    args = ["--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={profile}"]
    p = start([chromium(), *args, "--remote-debugging-port=0", "about:blank"])
    try:
        while sum(1 for _ in descendants(p.pid)) < 3:  # its zygotes and renderer
            time.sleep(0.1)
        yield p.pid
    finally:
        stop(p)
"""


def held_then_killed(tmp_path: Path, imports: str, hold: str, how: signal.Signals, startup: float) -> dict:
    """Run the inner test in a pytest of its own, wait until it holds its processes, send that
    pytest ``how``, and return what it wrote, with "left": its processes still running
    ``DIES_WITHIN`` s later (then killed here, so a failure leaves nothing behind either)."""
    pids = tmp_path / "pids.json"
    inner = tmp_path / "test_inner.py"
    inner.write_text(INNER.format(imports=imports, hold=hold, pids=str(pids)))
    log = tmp_path / "inner.log"
    with log.open("wb") as out:
        pytest_ = start(  # no reaper: its group, killed when it dies, would hide what is checked
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(inner)],
            reap=False,
            cwd=REPO,
            env={**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])},
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    written: dict = {}
    try:
        deadline = time.monotonic() + startup
        while not pids.exists() or not (written := json.loads(pids.read_text() or "{}")):
            assert pytest_.poll() is None, log.read_text(errors="replace")[-3000:]
            assert time.monotonic() < deadline, f"not held after {startup}s:\n{log.read_text()[-3000:]}"
            time.sleep(0.1)
        assert written["pytest"] == pytest_.pid
        started = written["all"]
        assert written["held"] in started or written["held"] == pytest_.pid
        assert all(alive(p) for p in started), log.read_text()  # else "none left" would say nothing
        pytest_.send_signal(how)
        assert pytest_.wait(timeout=DIES_WITHIN) < 0  # of a signal: no fixture's finally ran
        deadline = time.monotonic() + DIES_WITHIN
        while (left := [p for p in started if alive(p)]) and time.monotonic() < deadline:
            time.sleep(0.05)
        return {**written, "left": left}
    finally:
        stop(pytest_, grace=0)
        for p in written.get("all", []):
            if alive(p):
                os.kill(p, signal.SIGKILL)


KILLS = [pytest.param(signal.SIGTERM, id="SIGTERM"), pytest.param(signal.SIGKILL, id="SIGKILL")]


@pytest.mark.parametrize("how", KILLS)
def test_a_process_and_its_child_die_with_a_killed_pytest(tmp_path, how):
    """A process started with tests.processes.start ends by its death signal, its child by the
    reaper, and the reaper itself once its work is done."""
    imports = TREE_IMPORTS.format(tree=TREE)
    held = held_then_killed(tmp_path, imports, "tree(plain=False)", how, startup=60)
    assert len(held["all"]) == 3, held  # the process, its child, its reaper
    assert held["left"] == [], held


def test_the_control_a_plain_popen_outlives_a_killed_pytest(tmp_path):
    """Without tests.processes the same process and its child outlive a SIGKILLed pytest."""
    imports = TREE_IMPORTS.format(tree=TREE)
    held = held_then_killed(tmp_path, imports, "tree(plain=True)", signal.SIGKILL, startup=60)
    assert len(held["all"]) == 2, held
    assert sorted(held["left"]) == sorted(held["all"]), held


@pytest.mark.real_model
@pytest.mark.parametrize("how", KILLS)
def test_the_llama_cpp_server_dies_with_a_killed_pytest(tmp_path, how):
    """tests/model/test_real_server.py's ``serve`` (SmolLM2 behind ``python -m llama_cpp.server``
    on a loopback port), held by a pytest killed once it answers: the server and its reaper end
    within 5 s."""
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama_cpp is not importable: pip install 'vreact[llamacpp]' runs the server")
    hold = f"server({str(tmp_path / 'server.log')!r})"
    held = held_then_killed(tmp_path, LLAMA_IMPORTS, hold, how, startup=180)
    assert held["held"] in held["all"]
    assert held["left"] == [], held


def test_a_ray_cluster_dies_with_a_killed_pytest(tmp_path):
    """The ray_cluster fixture's cluster (``ray start --head`` through tests.processes), joined by
    the inner pytest as a driver that ran a task, then SIGKILLed: its GCS, raylet, agents and
    worker end. (A cluster from ``ray.init(address="local")`` in pytest would leave the raylet's
    two agents running: see ``ray_head``.)"""
    pytest.importorskip("ray", reason="the ray backend is an extra: pip install 'vreact[ray]'")
    hold = f"cluster({str(tmp_path / 'head.log')!r})"
    held = held_then_killed(tmp_path, RAY_IMPORTS, hold, signal.SIGKILL, startup=120)
    assert len(held["all"]) >= 6, held  # ray start, its reaper, GCS, raylet, two agents, ...
    assert held["left"] == [], held


def test_a_headless_chromium_dies_with_a_killed_pytest(tmp_path):
    """Chromium as browse() runs it, held open, SIGKILLed with its pytest: the browser, its
    zygotes and renderers end (its crash handlers, in sessions of their own, end with it)."""
    hold = f"browser({str(tmp_path / 'profile')!r})"
    held = held_then_killed(tmp_path, CHROMIUM_IMPORTS, hold, signal.SIGKILL, startup=60)
    assert held["held"] in held["all"] and len(held["all"]) >= 4, held
    assert held["left"] == [], held


def test_a_run_that_times_out_takes_its_whole_group_with_it():
    """``run`` as ``subprocess.run``, but a timeout kills the process's child too (subprocess.run
    kills the process alone, and a child holding its pipes would keep it waiting)."""
    with pytest.raises(subprocess.TimeoutExpired) as timed_out:
        run([sys.executable, "-c", TREE], capture_output=True, text=True, timeout=1)
    child = int(timed_out.value.stdout)
    deadline = time.monotonic() + DIES_WITHIN
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(child)
    done = run([sys.executable, "-c", "print('ok')"], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, "ok\n")


def test_only_the_main_thread_starts_a_process():
    """A child forked from a thread that ends would be killed when it ends: refused."""
    refused: list[BaseException] = []

    def other() -> None:
        try:
            start([sys.executable, "-c", "pass"])
        except RuntimeError as e:
            refused.append(e)

    thread = threading.Thread(target=other)
    thread.start()
    thread.join()
    assert refused and "PR_SET_PDEATHSIG" in str(refused[0])
