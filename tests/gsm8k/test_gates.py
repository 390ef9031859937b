"""The gsm8k gates on programs run in the real sandbox: each rejects what it names with the
sentence the next try reads, and accepts a right program with its reasoning."""

from __future__ import annotations

import pytest

from vreact.gsm8k import GsmSandbox
from vreact.gsm8k.artifact import Solution, solution
from vreact.verify.gates import build_gate

BOX = GsmSandbox("bwrap")
QUESTION = (
    "Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May."
    " How many clips did Natalia sell altogether in April and May?"
)
RIGHT = "april = 48\nmay = april / 2  # 48 / 2 = 24\nprint(april + may)\n"
GATES = ("prints_a_number", "claims_agree", "answer_is_printed", "count_not_negative", "whole_answer")


def verdicts(s: Solution, **args) -> dict[str, tuple[str, str]]:
    out = {}
    for name in GATES:
        given = {k: v for k, v in args.items() if k == "whole_number" and name == "whole_answer"}
        result = build_gate(name, given)(s)
        if not result.ok:
            out[name] = (result.cause, result.detail)
    return out


def test_a_right_program_with_its_reasoning_passes_every_gate():
    s = solution(RIGHT, "She sold 48 / 2 = 24 in May, so 48 + 24 = 72. The answer is 72.", QUESTION, BOX)
    assert (s.answer, s.output.strip(), s.error) == ("72.0", "72.0", "")
    assert verdicts(s, whole_number=True) == {}
    assert s.identity()["program"] == RIGHT and "output" in s.gate_input()
    assert Solution.from_input(s.gate_input()) == s


@pytest.mark.parametrize(
    ("program", "cause", "detail"),
    [
        ("print(48 +\n", "syntax_error", "line 1"),
        ("print(april)\n", "raised", "NameError"),
        ("total = 72\n", "printed_nothing", "print the answer"),
        ("print('The answer is', 72)\n", "not_one_number", "'The answer is 72'"),
        ("print(72)\nprint(24)\n", "not_one_number", "one number"),
        ("while True:\n    pass\n", "timeout", "stopped"),
    ],
)
def test_a_program_that_does_not_print_one_number_is_rejected(program, cause, detail):
    s = solution(program, "", QUESTION, BOX)
    got = verdicts(s).get("prints_a_number")
    assert got is not None and got[0] == cause and detail in got[1], got


def test_a_wrong_claim_in_the_prose_or_a_comment_is_rejected_with_its_value():
    prose = solution(RIGHT, "In May she sold 48 / 2 = 26.", QUESTION, BOX)
    assert verdicts(prose)["claims_agree"] == ("arithmetic_wrong", "48 / 2 = 26, but 48 / 2 is 24")
    comment = solution(RIGHT.replace("= 24", "= 25"), "", QUESTION, BOX)
    assert verdicts(comment)["claims_agree"] == ("arithmetic_wrong", "48 / 2 = 25, but 48 / 2 is 24")


def test_an_answer_the_prose_asserts_is_the_printed_one():
    s = solution(RIGHT, "So the answer is 70.", QUESTION, BOX)
    assert verdicts(s)["answer_is_printed"] == (
        "answer_contradicted",
        "the reply says the answer is 70; the program printed 72.0",
    )
    assert "answer_is_printed" not in verdicts(solution(RIGHT, "#### 72", QUESTION, BOX))


def test_a_negative_count_is_rejected_only_where_the_question_asks_how_many():
    negative = "print(48 - 120)\n"
    assert verdicts(solution(negative, "", QUESTION, BOX))["count_not_negative"][0] == "negative_count"
    average = "What was the average temperature over the 3 days?"
    assert "count_not_negative" not in verdicts(solution(negative, "", average, BOX))


def test_a_whole_number_is_asked_for_only_where_the_spec_says_so():
    half = solution("print(72 / 5)\n", "", QUESTION, BOX)
    assert "whole_answer" not in verdicts(half)
    assert verdicts(half, whole_number=True)["whole_answer"] == (
        "not_whole",
        "the program printed 14.4, not a whole number",
    )
