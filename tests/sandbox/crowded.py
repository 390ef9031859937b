"""Run by tests/sandbox/test_no_zombies.py in a process of its own, as a long-lived process that
runs the code family would be: many sandboxed programs, some killed by the wall clock, beside a
local Ray cluster and a headless Chromium page, each started and ended in this process. Then
what this process holds: its children that are zombies, whether it is a child subreaper, and
whether any process of a sandbox user is left. ``python -m tests.sandbox.crowded N`` prints one
JSON object.

Ray and Chromium are what left zombies here when the sandbox made this process a subreaper:
every orphan of their processes (Ray's workers once its raylet ends, Chromium's helpers once the
browser ends) was then reparented to it and never reaped. Ray's own children (its GCS, raylet,
monitors: this process started them) are another matter: its shutdown ends one without waiting
for it, so they are reaped here, as what this process started is its own to reap. Ray is started
in this process (``ray.init(address="local")``, not the suite's ``ray start`` head) so that it is
the parent of Ray's services, as a user's process that runs Ray locally is; the test starts this
process through ``tests.processes``, so it dies with pytest, and Ray's services and Chromium, in
its process group, with it."""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from vreact.sandbox import Limits, Result, Sandbox, _pids_of, free_users

PR_GET_CHILD_SUBREAPER = 37
#: A page whose text a timer sets: what Chromium shows once it has run scripts.
PAGE = "<!DOCTYPE html><p id=x></p><script>setTimeout(() => x.textContent = 'ok', 50)</script>"
CHROMIUM = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)

HONEST = "def f(x):\n    return 2 * x\n"
EXAMPLE = [("(1,)", "2")]
ENDLESS = "while True:\n    pass\n"
SLEEPS = "import time\ntime.sleep(10**6)\n"
DAEMON = (
    "import os, time\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
    "        time.sleep(10**6)\n    os._exit(0)\ndef f(x):\n    return 2 * x\n"
)


def program(sandbox: Sandbox, i: int) -> tuple[str, Result]:
    """The ``i``-th program: one in ten killed by the wall clock (an endless loop, a sleeper, or
    one whose attempt's time is already out, killed while bubblewrap is still starting), one in
    ten leaving a daemonised grandchild, the rest an honest check or a snippet."""
    if i % 10 == 3:
        deadline = time.monotonic() + (0.0 if i % 30 == 3 else 0.3)
        return "killed", sandbox.run(ENDLESS if i % 20 == 3 else SLEEPS, mode="run", deadline=deadline)
    if i % 10 == 7:
        return "daemon", sandbox.run(DAEMON, entry_point="f", examples=EXAMPLE)
    if i % 2:
        return "snippet", sandbox.run("x = 1\nx + 1", mode="run")
    return "honest", sandbox.run(HONEST, entry_point="f", examples=EXAMPLE)


def start_ray() -> tuple[Any, list[int]] | str:
    """A local Ray cluster with its workers started, and the processes Ray started as this
    process's children (its GCS, raylet, monitors: none of the sandbox's runs is under way yet);
    or why there is none."""
    try:
        import ray
    except ImportError as e:
        return f"Ray is not installed ({e})"
    os.environ.setdefault("RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO", "0")
    ray.init(
        address="local",
        num_cpus=2,
        include_dashboard=False,
        _node_ip_address="127.0.0.1",
        log_to_driver=False,
    )
    keep_busy(ray, None)
    return ray, children()


def keep_busy(ray: Any, stop: threading.Event | None) -> None:
    """Tasks for Ray's workers, until ``stop`` (one round when None)."""

    @ray.remote
    def square(x: int) -> int:
        return x * x

    while True:
        assert ray.get([square.remote(i) for i in range(4)]) == [0, 1, 4, 9]
        if stop is None or stop.wait(0.5):
            return


def stop_ray(ray: Any, own: list[int]) -> None:
    """Shut Ray down, then reap what of its own it ended without waiting for (one of its
    monitors): this process started it, so it is this process's to reap, not an adopted orphan."""
    ray.shutdown()
    time.sleep(0.5)
    for pid in own:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


def chromium_page(stop: threading.Event) -> str | None:
    """A page loaded in headless Chromium again and again until ``stop``; None, or why not."""
    if CHROMIUM is None:
        return "Chromium is not installed (apt-get install chromium)"
    with tempfile.TemporaryDirectory(prefix="vreact-crowded-") as folder:
        page = Path(folder) / "page.html"
        page.write_text(PAGE)
        while not stop.is_set():
            shown = subprocess.run(
                [
                    CHROMIUM,
                    *("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"),
                    f"--user-data-dir={folder}/profile",
                    *("--virtual-time-budget=500", "--dump-dom", page.as_uri()),
                ],
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert ">ok<" in shown.stdout, shown.stderr[-500:]
    return None


def _stat(pid: int | str) -> tuple[str, str, int] | None:
    """``pid``'s name, state and parent, from /proc (None: no such process)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    rest = stat[stat.rindex(")") + 2 :].split()
    return stat[stat.index("(") + 1 : stat.rindex(")")], rest[0], int(rest[1])


def children() -> list[int]:
    """This process's children, ended or not."""
    found = [int(e) for e in os.listdir("/proc") if e.isdigit()]
    return [pid for pid in found if (stat := _stat(pid)) is not None and stat[2] == os.getpid()]


def zombie_children() -> list[str]:
    """This process's children that have ended and are not reaped: ``pid (name)`` each."""
    return [f"{pid} ({s[0]})" for pid in children() if (s := _stat(pid)) is not None and s[1] == "Z"]


def subreaper() -> int:
    """PR_GET_CHILD_SUBREAPER: 1 when this process adopts its descendants' orphans."""
    value = ctypes.c_int(-1)
    assert ctypes.CDLL(None, use_errno=True).prctl(PR_GET_CHILD_SUBREAPER, ctypes.byref(value), 0, 0, 0) == 0
    return value.value


def main(count: int) -> None:
    sandbox = Sandbox(Limits(wall_s=6.0, call_s=2.0, cpu_s=4, memory_mb=512, processes=32, file_mb=1))
    start = time.monotonic()
    ray = start_ray()
    skipped = [ray] if isinstance(ray, str) else []
    stop = threading.Event()
    with ThreadPoolExecutor(2) as neighbours:
        busy = None if isinstance(ray, str) else neighbours.submit(keep_busy, ray[0], stop)
        chromium = neighbours.submit(chromium_page, stop)
        with ThreadPoolExecutor(4) as pool:
            results = list(pool.map(lambda i: program(sandbox, i), range(count)))
        stop.set()
        if busy is not None:
            busy.result()
        if (why := chromium.result()) is not None:
            skipped.append(why)
    if not isinstance(ray, str):
        stop_ray(*ray)
    kinds: Counter[str] = Counter()
    for kind, result in results:
        if kind == "killed":
            ok = not result.marked and (result.killed or "").startswith("wall clock")
        elif kind == "snippet":
            ok = result.marked and result.value == "2"
        else:
            ok = result.passed
        kinds[f"{kind} {'as expected' if ok else 'NOT as expected'}"] += 1
    time.sleep(1.0)  # what Ray and Chromium left behind has ended by now
    report: dict[str, Any] = {
        "programs": dict(sorted(kinds.items())),
        "zombies": zombie_children(),
        "subreaper": subreaper(),
        "left": [pid for user in free_users() for pid in _pids_of(user)] if os.geteuid() == 0 else [],
        "skipped": skipped,
        "seconds": round(time.monotonic() - start, 1),
    }
    print(json.dumps(report))


if __name__ == "__main__":
    main(int(sys.argv[1]))
