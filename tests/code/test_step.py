"""The code family's step format, one for every configuration: a reply is read as a coding
model writes it. A ```python block is the whole program (a finish), or a ``run`` when its first
line is ``# run``; ``ABSTAIN: why`` declines; a reply that is Python itself is a finish; the
JSON step the scripted tests write is read too; anything else is no step (a format failure)."""

from __future__ import annotations

import json

from vreact.code.kit import parse_step

PROGRAM = "def f(x):\n    return x + 1\n"


def test_a_python_block_is_the_whole_program_and_the_prose_around_it_the_thought():
    step = parse_step(f"Here it is:\n```python\n{PROGRAM}```\nIt adds one.")
    assert step is not None and (step.action, step.input) == ("finish", PROGRAM)
    assert "Here it is" in step.thought and "It adds one" in step.thought
    last = parse_step(f"```python\nx = 1\n```\nthen\n```\n{PROGRAM}```")  # the last block wins
    assert last is not None and last.input == PROGRAM
    unclosed = parse_step(f"```python\n{PROGRAM}")  # cut off before its closing fence
    assert unclosed is not None and unclosed.input == PROGRAM


def test_a_block_that_starts_with_run_is_a_run():
    step = parse_step("```python\n# run\nprint(f(2))\n```")
    assert step is not None and step.action == "run" and "print(f(2))" in step.input


def test_abstain_bare_code_json_and_prose():
    abstain = parse_step("ABSTAIN: the docstring contradicts its examples")
    assert abstain is not None and (abstain.action, abstain.input) == (
        "abstain",
        "the docstring contradicts its examples",
    )
    bare = parse_step(PROGRAM)
    assert bare is not None and (bare.action, bare.input) == ("finish", PROGRAM.strip())
    scripted = parse_step(json.dumps({"thought": "t", "action": "finish", "input": PROGRAM}))
    assert scripted is not None and scripted.input == PROGRAM
    assert parse_step(json.dumps({"thought": "t", "action": "search", "input": "x"})) is None
    assert parse_step("The decimal part is what is left after the integer part.") is None
    assert parse_step("") is None
    assert parse_step("Done") is None  # Python, but it defines nothing: prose
