"""The rule that reads a prompt's stated examples: each form HumanEval's prompts use, read from
the shipped prompts themselves, and what the rule refuses (a value that is not a literal, names
that do not fit the signature)."""

from __future__ import annotations

from collections import Counter

import pytest

from vreact.code.data import SHIPPED, read_problems
from vreact.code.examples import FORMS, examples, parameters, stated


@pytest.fixture(scope="module")
def shipped():
    return {p.id: p for p in read_problems(SHIPPED, audit=lambda p: [])}


def read(shipped, task):
    p = shipped[task]
    return [(e.args, e.expected, e.form) for e in stated(p.prompt, p.entry_point)]


@pytest.mark.parametrize(
    ("task", "first"),
    [
        ("HumanEval/0", ("([1.0, 2.0, 3.0], 0.5)", "False", "doctest")),
        ("HumanEval/12", ("([],)", "None", "doctest")),  # ``>>> longest([])`` prints nothing
        ("HumanEval/79", ("(15,)", "'db1111db'", "arrow")),  # ``# returns "db1111db"``
        ("HumanEval/141", ("('example.txt',)", "'Yes'", "arrow")),  # ``# => 'Yes'``
        (
            "HumanEval/94",
            ("([0, 3, 2, 1, 3, 5, 7, 4, 5, 5, 5, 2, 181, 32, 4, 32, 3, 2, 32, 324, 4, 3],)", "10", "for"),
        ),
        ("HumanEval/84", ("(1000,)", "'1'", "for")),  # prose between the value and the output
        ("HumanEval/112", ("('abcde', 'ae')", "('bcd', False)", "for")),  # two names, the result
        ("HumanEval/68", ("([4, 2, 3],)", "[2, 1]", "input_output")),  # a bare value
        ("HumanEval/120", ("([-3, -4, 5], 3)", "[-4, -3, 5]", "input_output")),
        ("HumanEval/115", ("([[0, 0, 1, 0], [0, 1, 0, 0], [1, 1, 1, 1]], 1)", "6", "input_output")),
        ("HumanEval/122", ("([111, 21, 3, 4000, 5, 6, 7, 8, 9], 4)", "24", "input_output")),
        (
            "HumanEval/105",
            (
                "([2, 1, 1, 4, 5, 8, 2, 3],)",
                repr(["Eight", "Five", "Four", "Three", "Two", "Two", "One", "One"]),
                "assignment",
            ),
        ),
        ("HumanEval/81", ("([4.0, 3, 1.7, 2, 3.5],)", "['A+', 'B', 'C-', 'C', 'A-']", "misnamed")),
        ("HumanEval/149", ("(['aa', 'a', 'aaa'],)", "['aa']", "misnamed")),
    ],
)
def test_each_form_is_read_from_the_prompt_that_states_it(shipped, task, first):
    assert read(shipped, task)[0] == first


def test_every_example_of_a_prompt_is_read_once_and_in_order(shipped):
    assert read(shipped, "HumanEval/115") == [
        ("([[0, 0, 1, 0], [0, 1, 0, 0], [1, 1, 1, 1]], 1)", "6", "input_output"),
        ("([[0, 0, 1, 1], [0, 0, 0, 0], [1, 1, 1, 1], [0, 1, 1, 1]], 2)", "5", "input_output"),
        ("([[0, 0, 0], [0, 0, 0]], 5)", "0", "input_output"),
    ]
    assert [e[:2] for e in read(shipped, "HumanEval/105")][1:] == [
        ("([],)", "[]"),
        ("([1, -1, 55],)", "['One']"),
    ]


def test_the_forms_reach_all_but_seven_of_the_164(shipped):
    """The seven left state no example a rule can run: none at all (38, 41, 50, 83), an example
    of another expression (32's ``round(find_zero(...), 2)``), unquoted strings (80's
    ``is_happy(a)``) and a worked expression (160)."""
    none = [k for k, p in shipped.items() if not examples(p.prompt, p.entry_point)]
    assert none == [f"HumanEval/{n}" for n in (32, 38, 41, 50, 80, 83, 160)]
    forms = Counter(e.form for p in shipped.values() for e in stated(p.prompt, p.entry_point))
    assert set(forms) == set(FORMS)


def test_the_signature_orders_named_arguments_and_refuses_names_that_do_not_fit():
    prompt = (
        "def f(a, b):\n"
        '    """For b = 2, a = 1 the output should be 3\n'
        "    For a = 1 the output should be 1\n"  # one name, two parameters: not read
        "    f(b=5, a=0) == 5\n"  # keywords: put in the signature's order
        "    f(4, b=6) -> 10\n"
        '    Input: x = 1, y = 2\n    Output: 3\n    """\n'  # other names, as many: as stated
    )
    assert parameters(prompt, "f") == ["a", "b"]
    # the calls first, then the prose forms; the Input/Output example repeats the first: once
    assert examples(prompt, "f") == [("(0, 5)", "5"), ("(4, 6)", "10"), ("(1, 2)", "3")]


@pytest.mark.parametrize(
    "prompt",
    [
        'def f(x):\n    """f(y) == 2\n    """\n',  # not a literal argument
        'def f(x):\n    """For x = 1 the output should be some number\n    """\n',
        'def f(x):\n    """Input: 3\n    Explanation: no output stated\n    """\n',
        'def f(x):\n    """x = 3\n    """\n',  # an assignment with nothing returned
        'def f(x):\n    """g(1) == 2\n    """\ndef g(x):\n    pass\n',  # g is defined: not f's
        'def f(x):\n    """f(2) -> 3 * 2\n    """\n',  # an expression, not a value
        'def f(a, b=1, c=2):\n    """f(1, c=3) == 4\n    """\n',  # a keyword that skips b
    ],
)
def test_what_is_not_an_example_is_not_read(prompt):
    assert examples(prompt, "f") == []


def test_a_misnamed_call_is_read_only_when_the_entry_point_states_none():
    both = 'def f(x):\n    """f(1) == 2\n    g(3) == 4\n    """\n'
    assert examples(both, "f") == [("(1,)", "2")]
    two_names = 'def f(x):\n    """g(1) == 2\n    h(3) == 4\n    """\n'
    assert examples(two_names, "f") == []
