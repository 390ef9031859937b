"""Every parser of a model's reply takes any text and fails closed: the executor's step, the
planner's plan (through plan_parses), a judge's decision, the critic's and the context manager's.
Whatever the text (invalid UTF-8 as a decoder leaves it, 10 MB, JSON nested 100,000 deep, NaN and
Infinity, control characters), each returns a parse rejection or a fail-closed verdict, never
raises. The large and deep cases are built from small draws (Hypothesis' buffer is 8 KiB) and
given as explicit examples too."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from vreact import dereact
from vreact.model import parse_json_object
from vreact.qa.gates import PlanArtifact
from vreact.qa.roles.executor import parse_step
from vreact.verify import judges
from vreact.verify.gates import gate_factory

PLAN_PARSES = gate_factory("plan_parses").factory()

DEEP = "[" * 100_000 + "]" * 100_000
DEEP_OBJECT = '{"a":' * 100_000 + "1" + "}" * 100_000
HUGE = '{"thought": "' + "x" * 10_000_000 + '", "action": "finish", "input": "a", "evidence": []}'
NAN = '{"decision": "accept", "confidence": NaN, "reason": "", "feedback": "", "status": "success"}'
INFINITE = '{"decision": "accept", "confidence": Infinity, "reason": "r"}'
CONTROL = '{"thought": "\x00\x07\x1b", "action": "search", "input": "\x01", "evidence": []}'
BROKEN_UTF8 = b'{"action": "finish", "input": "\xff\xfe\xc3", "evidence": []}'.decode(
    "utf-8", "surrogateescape"
)

#: A JSON-ish piece: what replies are made of, so draws often come close to parsing.
PIECES = st.sampled_from(
    [
        '{"',
        '"}',
        "{",
        "}",
        "[",
        "]",
        ":",
        ",",
        '"decision"',
        '"accept"',
        '"reject"',
        '"confidence"',
        '"action"',
        '"finish"',
        '"search"',
        '"input"',
        '"evidence"',
        '"subtasks"',
        '"status"',
        '"state"',
        "0.9",
        "NaN",
        "Infinity",
        "-Infinity",
        "1e999",
        "null",
        "true",
        "\x00",
        "\\u0000",
        "\\ud800",
        "```json",
    ]
)
REPLIES = st.one_of(
    st.text(max_size=300),
    st.binary(max_size=300).map(lambda b: b.decode("utf-8", "surrogateescape")),  # bytes a decoder left
    st.lists(PIECES, max_size=40).map("".join),
    st.tuples(st.integers(1, 150_000), st.sampled_from("[{")).map(lambda nk: nk[1] * nk[0]),  # deep
    st.tuples(st.integers(1, 3_000_000), st.text(max_size=3, min_size=1)).map(
        lambda nt: nt[1] * nt[0]
    ),  # big
)


def parsed_everywhere(text: str) -> None:
    """Each parser on ``text``: a value of the kind it returns, never an exception."""
    data = parse_json_object(text)
    assert data is None or isinstance(data, dict)
    step = parse_step(text)
    assert step is None or step.action in ("search", "read", "finish", "abstain")
    verdict = judges.decide(text, 0.7)
    assert verdict.ok or verdict.cause in ("judge_format", "judge_reject", "low_confidence")
    ok, cause, _, confidence = dereact.decide(text, 0.7)
    assert ok or cause in ("critic_format", "critic_reject", "low_confidence")
    assert confidence is None or 0.0 <= confidence <= 1.0
    update = dereact.parse(text)
    assert update is None or update.status in ("success", "continue")
    plan = PLAN_PARSES(PlanArtifact("q", data))
    assert plan.ok or plan.cause


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(REPLIES)
@example(DEEP)
@example(DEEP_OBJECT)
@example(HUGE)
@example(NAN)
@example(INFINITE)
@example(CONTROL)
@example(BROKEN_UTF8)
@example("")
@example("\ud800")
def test_every_reply_parser_takes_any_text_and_fails_closed(text):
    parsed_everywhere(text)


def test_what_cannot_be_read_is_a_rejection_not_an_accept():
    for text in (DEEP, DEEP_OBJECT, HUGE, NAN, INFINITE):
        assert parse_step(text) is None
        assert not judges.decide(text, 0.7).ok
        assert dereact.decide(text, 0.7)[1] == "critic_format"
        assert dereact.parse(text) is None
    # a confident accept, well formed, is still read
    good = json.dumps({"reason": "fine", "decision": "accept", "confidence": 0.9})
    assert judges.decide(good, 0.7).ok


def test_a_reply_past_the_cap_is_cut_when_it_arrives_and_its_call_says_so(
    store, spec, verifiers, roles, task_nissedal
):
    from tests.helpers import attempt
    from vreact.config import Configuration
    from vreact.model import MAX_REPLY_CHARS

    huge = json.dumps(
        {"thought": "x" * (MAX_REPLY_CHARS * 3), "action": "abstain", "input": "no", "evidence": []}
    )
    config = Configuration(name="N", budgets={"step_cap": 2})
    _, row, _ = attempt(config, task_nissedal, lambda m: huge, store, spec, verifiers, roles)
    query = "select cut, length(response) as n from model_calls where attempt_id = ?"
    calls = list(store.query(query, [row["id"]]))
    assert calls and {(c["cut"], c["n"]) for c in calls} == {(1, MAX_REPLY_CHARS)}
    # a cut reply no longer parses: each step is a format reject, the try ends at its cap
    assert (row["outcome"], row["abstain_level"]) == ("abstain", "cap")


def test_a_paragraph_past_the_cap_is_cut_once_for_everyone_and_says_so():
    from vreact.qa.dataset import MAX_PARAGRAPH_CHARS, Paragraph

    text = "Nissedal is in Norway. " * 250_000  # about 5.7 MB
    p = Paragraph(idx=0, title="Nissedal", paragraph_text=text)
    assert p.paragraph_text.startswith(text[:MAX_PARAGRAPH_CHARS])
    assert len(p.paragraph_text) < MAX_PARAGRAPH_CHARS + 80 and p.paragraph_text.endswith("kept]")
    assert Paragraph(idx=1, title="t", paragraph_text="short").paragraph_text == "short"
