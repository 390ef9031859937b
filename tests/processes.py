"""The one way the tests start a process that could outlive them: a server, a worker, a browser,
a ``vreact`` run, a Ray head. Such a process dies with the pytest process that started it however
pytest ends, SIGTERM and SIGKILL included, and so do the processes it starts in turn.

A llama.cpp server started by a fixture once outlived its SIGTERMed pytest by an hour: a
fixture's ``finally`` never runs when pytest is killed, so only the kernel, or a process pytest's
death does not take down, can end what pytest started. Two things do it here:

* the child is started with ``PR_SET_PDEATHSIG`` = SIGKILL (``prctl`` option 1, in a
  ``preexec_fn``): the kernel kills it when the thread that forked it exits. It holds across
  ``exec``, is never inherited by the child's own children, and is the only guard that holds if
  everything else is SIGKILLed at once;
* the child leads a session (and process group) of its own, and a small reaper, a ``python -I
  -S`` process in a session of its own as well (so a signal sent to pytest's process group
  never reaches it; it ignores SIGINT, SIGTERM and SIGHUP), waits on two pidfds: pytest's and
  the child's. When pytest dies it SIGKILLs the child's whole process group: the grandchildren
  (a Ray head's raylet, Chromium's renderers) that the death signal does not reach. When the
  child ends first it kills what is left of its group (a test's process leaves nothing behind
  either way) and exits.

Linux only, as the suite is (``pidfd_open`` needs Linux 5.3). A grandchild that leaves the group
(``setsid``) escapes the reaper. Of those the tests start, Ray's services and agents stay in it;
Chromium's crash handlers leave it but end as soon as the browser does (tests/test_processes.py
checks both). Ray started in pytest itself (``ray.init(address="local")``) is not covered: its
agents outlive a killed pytest, so the suite's cluster is a ``ray start`` started here
(tests/conftest.py's ``ray_head``).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any

#: ``prctl`` option 1: the signal the kernel sends this process when its parent thread exits.
PR_SET_PDEATHSIG = 1

_libc = ctypes.CDLL(None, use_errno=True)
_prctl = _libc.prctl
_prctl.restype = ctypes.c_int
_prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]

#: The reaper: ``python -I -S -c REAPER OWNER LEADER``. It outlives neither: it ends when the
#: owner (pytest) or the leader (the child, whose pid is its process group's id) ends, and takes
#: the leader's group with it. A pid it cannot open is a process already gone.
REAPER = """
import os, select, signal, sys
for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
    signal.signal(s, signal.SIG_IGN)
owner, leader = int(sys.argv[1]), int(sys.argv[2])
fds = []
try:
    fds.append(os.pidfd_open(owner))
    if os.getppid() == owner:  # else the pid is already another process's: pytest is gone
        fds.append(os.pidfd_open(leader))
        select.select(fds, [], [])
except ProcessLookupError:
    pass
try:
    os.killpg(leader, signal.SIGKILL)
except OSError:
    pass
"""

#: The reapers of the children still running, each held until its child ends (a Popen dropped
#: while its process runs warns).
_reapers: set[subprocess.Popen[bytes]] = set()


def _dies_with(parent: int, then: Callable[[], Any] | None) -> Callable[[], None]:
    """A ``preexec_fn`` (run in the child, between fork and exec) asking the kernel for SIGKILL
    when the forking thread exits. A parent already gone before the request (the child is then
    init's) would never send it: the child kills itself instead. ``then`` runs after it.

    A ``preexec_fn`` is unsafe in a process with threads when it takes a lock another thread may
    have held at the fork; this one takes none: ``prctl`` is bound in advance, and ``getppid``
    and ``kill`` are plain system calls (Ray starts its own services the same way)."""

    def preexec() -> None:
        if _prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
        if os.getppid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)
        if then is not None:
            then()

    return preexec


def start(args: Sequence[str | os.PathLike[str]], reap: bool = True, **popen: Any) -> subprocess.Popen[Any]:
    """``subprocess.Popen(args, **popen)``, but the process, and every process it starts, dies
    with this one however this one ends (see the module's docstring). It leads a process group
    of its own (``start_new_session``); a ``preexec_fn`` given runs after the death signal is set.
    ``reap=False`` leaves out the reaper (only the process itself then dies with this one): for
    the test of what the reaper does, where the group must outlive its leader.

    Call it from the main thread (or, in code that is not a test, a thread that lives as long
    as the process): ``PR_SET_PDEATHSIG`` fires when the *thread* that forked the child exits,
    not the process, so a child forked from a short-lived thread would be killed when that
    thread ends. It refuses any other thread rather than start a process that dies at random."""
    if threading.current_thread() is not threading.main_thread():
        raise RuntimeError(
            "tests.processes.start from a thread other than the main one: the child's death signal "
            "would fire when that thread ends (PR_SET_PDEATHSIG follows the forking thread)"
        )
    if not popen.pop("start_new_session", True) or popen.get("process_group") is not None:
        raise ValueError("the child leads a session of its own: its reaper kills it by its group")
    for done in [r for r in _reapers if r.poll() is not None]:
        _reapers.discard(done)
    me = os.getpid()
    proc = subprocess.Popen(
        args, start_new_session=True, preexec_fn=_dies_with(me, popen.pop("preexec_fn", None)), **popen
    )
    if not reap:
        return proc
    reaper = subprocess.Popen(
        [sys.executable, "-I", "-S", "-c", REAPER, str(me), str(proc.pid)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # no death signal: pytest's death is what it waits for
    )
    _reapers.add(reaper)
    return proc


def stop(proc: subprocess.Popen[Any], grace: float = 15.0) -> int:
    """End a process :func:`start` started, with its group: SIGTERM, and SIGKILL after ``grace``
    seconds; its exit code."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        return proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        return proc.wait()


def run(
    args: Sequence[str | os.PathLike[str]],
    *,
    input: Any = None,
    capture_output: bool = False,
    timeout: float | None = None,
    check: bool = False,
    **popen: Any,
) -> subprocess.CompletedProcess[Any]:
    """``subprocess.run`` through :func:`start`: the process dies with this one, and on a
    timeout (or any error while waiting) its whole group is killed, not only the process."""
    if capture_output:
        popen["stdout"] = popen["stderr"] = subprocess.PIPE
    if input is not None:
        popen["stdin"] = subprocess.PIPE
    with start(args, **popen) as proc:
        try:
            stdout, stderr = proc.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired as e:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            e.stdout, e.stderr = proc.communicate()
            raise
        except BaseException:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            raise
    done = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
    if check:
        done.check_returncode()
    return done


def alive(pid: int) -> bool:
    """Whether ``pid`` is a running process (a zombie is not: it only waits to be reaped)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat[stat.rindex(b")") + 2 : stat.rindex(b")") + 3] not in (b"Z", b"X")


def descendants(pid: int) -> list[int]:
    """The processes under ``pid`` (children, theirs, ...), from /proc."""
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(b")") + 2 :].split()[1])
        parents.setdefault(ppid, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found
