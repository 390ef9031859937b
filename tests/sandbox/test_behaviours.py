"""Several candidates in one sandbox start (``mode="behaviours"``), through the real sandbox: what
each does on every input, compared whole by the checker; a hostile candidate among honest ones
is contained, and nothing of one candidate (a process, a file) reaches the next."""

from __future__ import annotations

import pytest

from tests.sandbox.test_hostile import HOSTILE, LIMITS, _left_behind
from vreact.sandbox import Limits, Sandbox, unavailable

HONEST = "def f(x):\n    return 2 * x\n"
ALSO_HONEST = "def f(x):\n    return x + x\n"
INPUTS = [[0], [1], [-3], [10**6]]


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    why = unavailable()
    assert why is None, f"the sandbox tests need bubblewrap and /usr/bin/python3 ({why}): make install-test"
    return Sandbox(LIMITS)


def same(result, a: int, b: int) -> bool:
    """Whether candidates ``a`` and ``b`` behaved the same on every input."""
    return all(labels[a] == labels[b] for labels in result.labels)


def test_candidates_that_behave_alike_share_every_label_and_others_do_not(sandbox):
    programs = [
        HONEST,
        "def f(x):\n    return x * x\n",
        ALSO_HONEST,
        "def f(x):\n    return 1 // x\n",  # raises on 0
        "def f(x) return",  # does not load
        "def f(x):\n    return {x, 'a', 1}\n",  # a set: its order is the hash's
        "def f(x):\n    return {1, x, 'a'}\n",
    ]
    result = sandbox.run("", mode="behaviours", entry_point="f", programs=programs, inputs=INPUTS)
    assert result.marked and len(result.behaviours) == 7 and len(result.labels) == len(INPUTS)
    assert same(result, 0, 2) and same(result, 5, 6)
    assert not same(result, 0, 1) and not same(result, 0, 3)
    assert result.behaviours[0]["shown"] == ["= 0", "= 2", "= -6", "= 2000000"]
    assert result.behaviours[3]["shown"][0] == "raised ZeroDivisionError"
    assert result.behaviours[4]["loaded"] is False and "SyntaxError" in result.behaviours[4]["error"]
    assert all(labels[4] == -1 for labels in result.labels)
    assert result.behaviours[0]["types"] == ["int"] * 4 and result.behaviours[3]["types"][0] == ""


def test_the_stated_inputs_each_candidate_fails_are_named(sandbox):
    """The first inputs are the stated examples', with their expected values: compared whole and
    type first, as the examples gate compares (``2.0`` is not ``2``)."""
    programs = [HONEST, "def f(x):\n    return 2.0 * x\n", "def f(x):\n    return x + 1\n"]
    result = sandbox.run(
        "", mode="behaviours", entry_point="f", programs=programs, inputs=INPUTS, expected=["0", "2"]
    )
    assert [b["fails"] for b in result.behaviours] == [[], [0, 1], [0]]


def test_a_candidate_that_hangs_is_stopped_on_that_input_started_again_and_after_two_stops_ends():
    sandbox = Sandbox(Limits(wall_s=30, call_s=1.0))
    hangs_on_one = "def f(x):\n    while x == 1:\n        pass\n    return 2 * x\n"
    hangs_on_two = "def f(x):\n    while x in (0, 1):\n        pass\n    return 2 * x\n"
    result = sandbox.run(
        "", mode="behaviours", entry_point="f", programs=[hangs_on_one, HONEST, hangs_on_two], inputs=INPUTS
    )
    assert result.marked
    assert result.behaviours[0]["shown"] == ["= 0", "stopped", "= -6", "= 2000000"]
    assert "no answer within" in result.behaviours[0]["stopped"] and result.behaviours[0]["stops"] == 1
    assert result.behaviours[1]["shown"] == ["= 0", "= 2", "= -6", "= 2000000"]
    assert result.behaviours[2]["shown"] == ["stopped"] * 4 and result.behaviours[2]["stops"] == 2


@pytest.mark.parametrize("name", HOSTILE)
def test_a_hostile_candidate_between_two_honest_ones_is_contained(sandbox, name):
    programs = [HONEST, HOSTILE[name], ALSO_HONEST]
    result = sandbox.run("", mode="behaviours", entry_point="f", programs=programs, inputs=INPUTS)
    if name == "kill the parent":  # the checker is dead: no reply, so no agreement at all
        assert not result.marked
    else:
        assert result.marked, (name, result)
        assert same(result, 0, 2), (name, result.behaviours)
        assert not same(result, 0, 1), (name, result.behaviours)
    assert _left_behind() == []


def test_nothing_of_one_candidate_reaches_the_next(sandbox):
    """The first leaves a daemonised grandchild writing a file, files in its work folder, in
    ``/dev/shm`` and at ``/`` (read-only: refused), and a System V shared memory segment; the
    second finds none of them, and nothing of the checker's (the first's value, the reply's
    marker) in the frames above it: its process was forked before the request was read."""
    leaves = """
import ctypes, os, time
open('left.txt', 'w').write('x')
for path in ('/dev/shm/note', '/note'):
    try:
        open(path, 'w').write('from one')
    except OSError:
        pass
libc = ctypes.CDLL(None)
shm = libc.shmget(4242, 64, 0o1666)
if shm >= 0:
    libc.shmat.restype = ctypes.c_void_p
    ctypes.memmove(libc.shmat(shm, None, 0), b"from one\\0", 9)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        while True:
            open('/tmp/alive', 'w').write(str(time.time()))
            time.sleep(0.001)
    os._exit(0)
def f(x):
    return 'secret of one'
"""
    looks = """
import ctypes, os, sys, time
def f(x):
    time.sleep(0.05)
    seen = [os.path.exists(p) for p in ('left.txt', '/tmp/alive', '/dev/shm/note', '/note')]
    seen.append(ctypes.CDLL(None).shmget(4242, 64, 0o666) >= 0)
    frame, names = sys._getframe(), set()
    while frame is not None:
        names |= {n for n in ('whole', 'marker', 'labels') if n in frame.f_locals}  # the checker's
        frame = frame.f_back
    return (seen, sorted(names))
"""
    result = sandbox.run("", mode="behaviours", entry_point="f", programs=[leaves, looks], inputs=[[0]])
    assert result.marked
    assert result.behaviours[0]["shown"] == ["= 'secret of one'"]
    assert result.behaviours[1]["shown"] == ["= ([False, False, False, False, False], [])"]
    assert _left_behind() == []


def test_a_batch_refuses_a_hidden_test(sandbox):
    with pytest.raises(ValueError, match="no hidden test"):
        sandbox.run("", mode="behaviours", entry_point="f", programs=[HONEST], inputs=INPUTS, test="x")


def test_the_runner_and_vreact_agree_on_its_batch_words():
    from vreact.sandbox import SPARE, STOPS, _harness

    assert (_harness.STOPS, _harness.SPARE) == (STOPS, SPARE)
