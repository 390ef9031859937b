"""The tester's prompt and reply: the prompt alone goes in (a problem's signature and docstring,
no program, no gold); inputs come back as literal argument tuples of the entry point's arity,
anything else dropped."""

from __future__ import annotations

import json

from vreact.code.data import SHIPPED, read_problems
from vreact.code.tester import MOST, SCHEMA, inputs, messages
from vreact.origin import origins_in


def problem(task: str):
    [found] = [p for p in read_problems(SHIPPED, audit=lambda p: []) if p.id == task]
    return found


def test_the_tester_reads_the_prompt_and_nothing_of_the_gold():
    p = problem("HumanEval/120")
    asked = messages(p.prompt, p.entry_point)
    text = " ".join(m["content"] for m in asked)
    assert p.prompt.strip() in text and "maximum(arr, k)" in text
    assert str(p.canonical_solution).strip() not in text and "def check(" not in text
    assert all(set(origins_in(m["content"])) == set() for m in asked)
    assert "expected output" in asked[0]["content"] and SCHEMA["properties"]["inputs"]["maxItems"] == MOST


def test_a_reply_gives_argument_tuples_of_the_right_arity_and_nothing_else():
    p = problem("HumanEval/120")  # maximum(arr, k)
    reply = json.dumps(
        {
            "inputs": [
                "([1, 2, 3], 2)",
                "([], 0)",
                "([1, 2, 3], 2)",  # a repeat
                "([1, 2, 3],)",  # one argument of two
                "maximum([1], 1)",  # a call, not a literal
                "([5, 5], 1, 'x')",  # three
                "([-1000, 1000], 2)",
            ]
        }
    )
    assert inputs(f"Sure! {reply}", p.prompt, p.entry_point) == [([1, 2, 3], 2), ([], 0), ([-1000, 1000], 2)]
    assert inputs("no JSON here", p.prompt, p.entry_point) == []


def test_one_argument_is_read_as_asked_or_bare():
    p = problem("HumanEval/78")  # hex_key(num)
    reply = json.dumps({"inputs": ["('AB',)", "'2020'", "('',)", "(1, 2)"]})
    assert inputs(reply, p.prompt, p.entry_point) == [("AB",), ("2020",), ("",), ((1, 2),)]
