"""Code candidates checked together through the real sandbox, on HumanEval's own prompts: the
precondition filter, the property checks, grouping by behaviour on stated, tester and made-up
inputs, and the decision, answering, abstaining, or disputed by the prompt's own example."""

from __future__ import annotations

import pytest

from vreact.code.agreement import MADE, STATED, TESTER, allowed_types, check, inputs_for, sources_kept
from vreact.code.data import SHIPPED, read_problems
from vreact.code.tester import inputs as reply_inputs
from vreact.sandbox import Limits, Sandbox, unavailable
from vreact.verify.agreement import DISPUTED, NO_AGREEMENT, agree


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    why = unavailable()
    assert why is None, f"the sandbox tests need bubblewrap and /usr/bin/python3 ({why}): make install-test"
    return Sandbox(Limits(wall_s=60, call_s=1.0))


@pytest.fixture(scope="module")
def shipped():
    return {p.id: p for p in read_problems(SHIPPED, audit=lambda p: [])}


CLOSE_LOOP = """
def has_close_elements(numbers, threshold):
    for i in range(len(numbers)):
        for j in range(i + 1, len(numbers)):
            if abs(numbers[i] - numbers[j]) < threshold:
                return True
    return False
"""
CLOSE_SORTED = """
def has_close_elements(numbers, threshold):
    s = sorted(numbers)
    return any(b - a < threshold for a, b in zip(s, s[1:]))
"""
CLOSE_ANY = """
from itertools import combinations
def has_close_elements(numbers, threshold):
    return any(abs(a - b) < threshold for a, b in combinations(numbers, 2))
"""
#: right on the stated examples, wrong where two neighbours are exactly the threshold apart... and
#: on any list whose close pair is not adjacent
CLOSE_ADJACENT = """
def has_close_elements(numbers, threshold):
    return any(abs(a - b) < threshold for a, b in zip(numbers, numbers[1:]))
"""
HOSTILE = """
import os
os.kill(os.getppid(), 9)
"""


def test_right_candidates_agree_and_the_one_wrong_on_made_up_inputs_stands_apart(sandbox, shipped):
    problem = shipped["HumanEval/0"]
    inputs = inputs_for(problem, tester=[([1.0, 5.0, 1.2], 0.3)], made=100, seed=0)
    assert inputs.sources[:2] == [STATED, STATED] and TESTER in inputs.sources and MADE in inputs.sources
    programs = {0: CLOSE_ADJACENT, 1: CLOSE_LOOP, 2: CLOSE_SORTED, 3: CLOSE_ANY}
    checked = check(problem, programs, inputs, sandbox)
    assert checked.unavailable is None and checked.broke == {}
    assert checked.fails == {0: [], 1: [], 2: [], 3: []}  # every one passes the stated examples
    assert [g.members for g in checked.groups] == [(1, 2, 3), (0,)]
    decided = agree(5, 0.6, checked.groups)
    assert decided.chosen == 1
    assert agree(5, 0.8, checked.groups).cause == NO_AGREEMENT  # three of five made is not 0.8


def test_candidates_that_all_differ_do_not_agree(sandbox, shipped):
    problem = shipped["HumanEval/0"]
    programs = {
        0: CLOSE_LOOP,
        1: "def has_close_elements(numbers, threshold):\n    return len(numbers) > 1\n",
        2: "def has_close_elements(numbers, threshold):\n    return threshold > 1\n",
    }
    checked = check(problem, programs, inputs_for(problem, made=50), sandbox)
    assert all(g.size == 1 for g in checked.groups)
    assert agree(3, 0.5, checked.groups).cause == NO_AGREEMENT


def test_a_group_that_fails_a_stated_example_the_same_way_is_disputed(sandbox, shipped):
    """HumanEval/47's docstring says ``median([-10, 4, 6, 1000, 10, 20]) == 15.0``; the median of
    those six is 8.0: right programs agree with one another, and fail it alike."""
    problem = shipped["HumanEval/47"]
    sorted_mid = (
        "def median(l):\n    s = sorted(l)\n    n = len(s)\n"
        "    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2\n"
    )
    with_stats = "import statistics\ndef median(l):\n    return statistics.median(l)\n"
    checked = check(problem, {0: sorted_mid, 1: with_stats}, inputs_for(problem, made=50), sandbox)
    assert checked.fails == {0: [1], 1: [1]}
    assert checked.groups[0].members == (0, 1) and checked.groups[0].disputed
    assert agree(2, 0.5, checked.groups).cause == DISPUTED


def test_inputs_most_candidates_refuse_are_dropped_and_a_candidate_that_raises_is_left_out(sandbox):
    prompt = 'def half(n: int) -> int:\n    """Half of an even n.\n    >>> half(4)\n    2\n    """\n'

    class Problem:
        pass

    problem = Problem()
    problem.prompt, problem.entry_point, problem.examples = prompt, "half", [("(4,)", "2")]
    refuses_odd = "def half(n):\n    if n % 2:\n        raise ValueError(n)\n    return n // 2\n"
    also_refuses = "def half(n):\n    assert n % 2 == 0\n    return n >> 1\n"
    takes_any = "def half(n):\n    return n // 2\n"
    floats = "def half(n):\n    return n / 2\n"  # 2.0: the wrong type, and fails the example
    refuses_too = "def half(n):\n    if n & 1:\n        raise ArithmeticError\n    return n // 2\n"
    inputs = inputs_for(problem, tester=[(3,), (6,), (7,)])
    programs = {0: refuses_odd, 1: also_refuses, 2: takes_any, 3: floats, 4: refuses_too}
    checked = check(problem, programs, inputs, sandbox)
    assert checked.kept == [True, False, True, False]  # odd inputs: three of five raise, dropped
    assert sources_kept(checked) == {STATED: 1, TESTER: 1}
    assert list(checked.broke) == [3] and "returned a float" in checked.broke[3]
    assert [g.members for g in checked.groups] == [(0, 1, 2, 4)]
    # returning no value of the problem's type is refusing too: two raise and one returns a
    # float on the odd inputs, three of four, dropped
    three_of_four = check(problem, {i: programs[i] for i in range(4)}, inputs, sandbox)
    assert three_of_four.kept == [True, False, True, False]
    shifts = "def half(n):\n    return n >> 1\n"
    two_of_four = check(problem, {0: refuses_odd, 1: also_refuses, 2: takes_any, 5: shifts}, inputs, sandbox)
    assert two_of_four.kept == [True, True, True, True]  # two of four is not most: kept
    assert set(two_of_four.broke) == {0, 1}  # and raising on one is breaking a property
    assert allowed_types(problem) == frozenset({"int"})


def test_no_input_to_compare_on_is_no_agreement_however_many_candidates_load(sandbox, shipped):
    """HumanEval/83 states no example and the prompt gives nothing to make inputs from: with no
    tester's either, candidates that all load are not thereby agreed."""
    problem = shipped["HumanEval/83"]
    inputs = inputs_for(problem, made=50)
    assert inputs.args == []
    programs = {i: "def starts_one_ends(n):\n    return 1\n" for i in range(3)}
    checked = check(problem, programs, inputs, sandbox)
    assert checked.groups == () and "no input to compare" in checked.unavailable


def test_a_hostile_candidate_ends_the_check_closed(sandbox, shipped):
    """A candidate that kills the checker: no candidate is compared, and it says why."""
    problem = shipped["HumanEval/0"]
    checked = check(problem, {0: CLOSE_LOOP, 1: HOSTILE, 2: CLOSE_ANY}, inputs_for(problem), sandbox)
    assert checked.groups == () and checked.unavailable is not None


NEXT_SORTED = """
def next_smallest(lst):
    s = sorted(set(lst))
    return s[1] if len(s) > 1 else None
"""
NEXT_LOOP = """
def next_smallest(lst):
    low = second = None
    for x in set(lst):
        if low is None or x < low:
            low, second = x, low
        elif second is None or x < second:
            second = x
    return second
"""


def test_a_testers_placeholder_input_is_dropped_and_the_candidates_are_still_compared(sandbox, shipped):
    """The 0.5B's tester's reply on HumanEval/90 in the frozen evaluation's records: it copied its
    prompt's format, ``"(...)"`` too. An Ellipsis is no plain value (the sandbox's reader takes
    none): it is dropped with the tester's reply read, and the check runs on the rest, where it
    once stopped the whole check and every candidate went uncompared."""
    problem = shipped["HumanEval/90"]
    given = reply_inputs('{"inputs": ["([1, 2], 3)", "(...)"]}', problem.prompt, problem.entry_point)
    assert given == [(([1, 2], 3),)]
    checked = check(problem, {0: NEXT_SORTED, 1: NEXT_LOOP}, inputs_for(problem, given, made=20), sandbox)
    assert checked.unavailable is None
    assert [g.members for g in checked.groups] == [(0, 1)]
