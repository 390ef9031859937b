"""Hostile programs through the real sandbox (bubblewrap, the system's Python), two at a time:
each is contained (it passes no check it should not, reads nothing it should not, reaches no
server, writes nothing outside its work folder), its neighbour's honest check still passes, and
no process of either is left behind."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.conftest import REPO
from vreact.records import Store
from vreact.sandbox import (
    FIRST_UID,
    SLOTS,
    Limits,
    Result,
    Sandbox,
    _pids_of,
    _users,
    free_users,
    unavailable,
)

LIMITS = Limits(wall_s=6.0, call_s=2.0, cpu_s=4, memory_mb=512, processes=32, file_mb=1)
#: Every program is checked as ``f`` on one visible example and a hidden test with a secret.
EXAMPLE = [("(1,)", "2")]
SECRET = "hidden-4e1f0c-expected"
TEST = f"def check(candidate):\n    assert candidate(5) == 10, {SECRET!r}\n"
HONEST = "def f(x):\n    return 2 * x\n"


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    why = unavailable()
    assert why is None, f"the sandbox tests need bubblewrap and /usr/bin/python3 ({why}): make install-test"
    return Sandbox(LIMITS)


@pytest.fixture
def server() -> Iterator[tuple[int, list[bytes]]]:
    """A loopback TCP server the tests run: what reaches it is recorded."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0.2)
    got: list[bytes] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            got.append(conn.recv(100) or b"(connected)")
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield listener.getsockname()[1], got
    stop.set()
    thread.join()
    listener.close()


def beside_an_honest_one(sandbox: Sandbox, program: str) -> Result:
    """``program`` and an honest program checked at once (concurrency 2): the honest one must
    pass; the hostile one's result is returned."""
    with ThreadPoolExecutor(2) as pool:
        hostile = pool.submit(sandbox.run, program, entry_point="f", examples=EXAMPLE, test=TEST)
        honest = pool.submit(sandbox.run, HONEST, entry_point="f", examples=EXAMPLE, test=TEST)
        result, neighbour = hostile.result(), honest.result()
    assert neighbour.passed, neighbour
    assert not _left_behind()
    return result


def _left_behind() -> list[int]:
    """Processes of a sandbox user no run holds (another vreact process's runs hold theirs)."""
    users = free_users() if os.geteuid() == 0 else []
    return [pid for u in users for pid in _pids_of(u)]


def test_an_honest_program_passes_and_a_wrong_one_names_its_example(sandbox):
    ok = sandbox.run(HONEST, entry_point="f", examples=EXAMPLE, test=TEST)
    assert ok.passed and ok.examples == [{"passed": True, "actual": "2"}] and ok.test == {"passed": True}
    wrong = sandbox.run("def f(x):\n    return x + 1\n", entry_point="f", examples=[("(2,)", "4")], test=TEST)
    assert not wrong.passed
    assert wrong.examples == [{"passed": False, "actual": "3"}]
    assert (
        wrong.test is not None and SECRET in wrong.test["error"]
    )  # the checker's message, outside the program
    raising = sandbox.run("def f(x):\n    return [][x]\n", entry_point="f", examples=EXAMPLE)
    assert raising.examples[0]["error"].startswith("IndexError") and raising.examples[0]["line"] == 2


#: Programs that try to break out, exhaust the machine, or pass without being right.
HOSTILE = {
    "fork bomb": """
import os
while True:
    try:
        os.fork()
    except OSError:
        continue
""",
    "memory bomb": """
blocks = []
while True:
    blocks.append(bytearray(50 << 20))
""",
    "busy loop": """
def f(x):
    while True:
        pass
""",
    "sleep forever": """
import time
time.sleep(10**6)
""",
    "exit before the checks": """
import sys
sys.exit(0)
""",
    "_exit before the checks": """
import os
os._exit(0)
""",
    "kill the parent": """
import os, signal
os.kill(os.getppid(), signal.SIGKILL)
def f(x):
    return 2 * x
""",
    "redefine builtins": """
import builtins
builtins.repr = lambda o: '2'
builtins.AssertionError = type('N', (Exception,), {})
builtins.isinstance = lambda *a: True
def f(x):
    return 2
""",
    "an object equal to everything": """
class E:
    def __eq__(self, other):
        return True
def f(x):
    return E()
""",
    "a forged marker": """
import os, sys
line = '#' + '0' * 32 + '#' + '{"loaded": true, "examples": [{"passed": true}], "test": {"passed": true}}'
print(line)
sys.__stdout__.write(line + '\\n')
for fd in range(3, 20):
    try:
        os.write(fd, (line + '\\n').encode())
    except OSError:
        pass
def f(x):
    return 0
""",
    "a daemonised grandchild": """
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(10**6)
    os._exit(0)
def f(x):
    return 0
""",
}


@pytest.mark.parametrize("name", HOSTILE)
def test_a_hostile_program_is_contained(sandbox, name):
    result = beside_an_honest_one(sandbox, HOSTILE[name])
    assert not result.passed, (name, result)
    if name not in ("kill the parent",):  # its checker is dead: no reply, as it must be
        assert result.marked, (name, result)  # the checker itself held


def test_megabytes_of_output_are_capped(sandbox):
    result = beside_an_honest_one(sandbox, "print('x' * (8 << 20))\ndef f(x):\n    return 2 * x\n")
    assert result.marked and len(result.output) <= 4000
    assert not result.loaded  # the file-size limit stopped it


def test_the_hidden_test_is_not_in_the_programs_process(sandbox):
    """The program looks for the hidden test's secret everywhere it can reach: its memory, its
    callers' frames, its files. Its example expects nothing found."""
    program = (
        "import gc, sys, os\n"
        f"NEEDLE = {SECRET[:7]!r} + {SECRET[7:13]!r}\n"
        "def found_in(values):\n"
        "    return sum(1 for v in values if isinstance(v, str) and NEEDLE in v and v is not NEEDLE)\n"
        "def f(x):\n"
        "    found = 0\n"
        "    for o in gc.get_objects():\n"
        "        if isinstance(o, dict):\n"
        "            found += found_in([*o.keys(), *o.values()])\n"
        "        elif isinstance(o, (list, tuple, set)):\n"
        "            found += found_in(o)\n"
        "    frame = sys._getframe()\n"
        "    while frame is not None:\n"
        "        found += found_in(frame.f_locals.values()) + found_in(frame.f_code.co_consts)\n"
        "        frame = frame.f_back\n"
        "    for root, dirs, files in os.walk('/'):\n"
        "        dirs[:] = [d for d in dirs if root != '/' or d not in ('proc', 'sys', 'dev', 'usr')]\n"
        "        for name in files:\n"
        "            try:\n"
        "                found += NEEDLE in open(os.path.join(root, name), errors='ignore').read()\n"
        "            except OSError:\n"
        "                pass\n"
        "    return found\n"
    )
    result = sandbox.run(program, entry_point="f", examples=[("(1,)", "0")], test=TEST)
    assert result.examples == [{"passed": True, "actual": "0"}], result
    assert result.test is not None and not result.test["passed"]


def test_no_network_not_even_loopback(sandbox, server):
    port, got = server
    program = (
        "import socket\ndef f(x):\n"
        f"    s = socket.create_connection(('127.0.0.1', {port}), timeout=1)\n"
        "    s.sendall(b'leak')\n    return 2 * x\n"
    )
    result = beside_an_honest_one(sandbox, program)
    assert not result.passed and "ConnectionRefusedError" in result.examples[0]["error"]
    assert got == []


def test_what_it_may_not_read_or_write(sandbox, tmp_path, monkeypatch):
    """The parent's environment (an API key), the repository, site-packages (where the hidden
    tests live), a run's records, and a file outside its work folder."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-4e1f0c")
    run = tmp_path / "run"
    run.mkdir()
    Store(run / "vreact.db").close()  # a run's records (SQLite)
    outside = tmp_path / "written.txt"
    site = Path(pytest.__file__).parent / "__init__.py"
    targets = [str(REPO / "pyproject.toml"), str(site), str(run / "vreact.db"), "/proc/1/environ"]
    program = (
        "import os\n"
        "seen = repr(dict(os.environ))\n"
        f"for path in {targets!r}:\n"
        "    try:\n        seen += open(path, errors='ignore').read()\n    except OSError as e:\n"
        "        print(type(e).__name__, path)\n"
        f"for path in [{str(outside)!r}, '/usr/bin/evil', '/work/../evil']:\n"
        "    try:\n        open(path, 'w').write('x')\n    except OSError as e:\n"
        "        print(type(e).__name__, path)\n"
        "print('sk-' in seen, '[project]' in seen, 'SQLite' in seen)\n"
    )
    result = sandbox.run(program, mode="run")
    assert result.marked and result.loaded, result
    assert result.output.strip().splitlines()[-1] == "False False False", result.output
    assert not outside.exists() and not Path("/usr/bin/evil").exists()


def test_a_run_ends_at_the_attempts_deadline_sooner_than_its_own_wall_clock(sandbox):
    """A run's time counts against its attempt's wall clock: given the attempt's deadline, an
    endless snippet is killed there (1 s here, not the sandbox's 6 s), saying why; a deadline
    already past kills it before it answers."""
    start = time.monotonic()
    result = sandbox.run("while True:\n    pass\n", mode="run", deadline=start + 1.0)
    took = time.monotonic() - start
    assert not result.marked and "the attempt's time ran out" in (result.killed or "")
    assert 0.9 <= took < 3.0, took
    assert not sandbox.run("x = 1", mode="run", deadline=time.monotonic() - 1).marked
    assert not _left_behind()


@pytest.mark.skipif(os.geteuid() != 0, reason="as another user every run is that user's")
def test_two_processes_never_share_a_sandbox_user():
    """A user is held machine-wide: while another process holds one, this process takes
    another, and a user its holder's death released is free again."""
    import subprocess
    import sys

    from tests.processes import start

    hold = "from vreact.sandbox import _users; u = _users().get(); print(u, flush=True); input()"
    other = start(
        [sys.executable, "-c", hold], cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        theirs = int(other.stdout.readline())  # type: ignore[union-attr]
        assert FIRST_UID <= theirs < FIRST_UID + SLOTS and theirs not in free_users()
        users = _users()
        mine = [users.get() for _ in range(3)]
        assert theirs not in mine and len(set(mine)) == 3
        for u in mine:
            users.put(u)
    finally:
        other.kill()
        other.wait()
    assert theirs in free_users()
