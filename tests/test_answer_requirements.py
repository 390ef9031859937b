"""The L1 answer requirements do what they say: ``type_from_wh_word`` and ``cite_evidence``
reach the gates that read them by name and the contract's wording, in a real attempt too, and
``cite_evidence: false`` is refused beside ``min_paragraphs`` above 1."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tests.helpers import attempt, finish, last_support, read, verdicts
from tests.verify.test_gates import ANSWERABLE, gold_artifact, shipped_gates
from vreact.cli import cli
from vreact.qa.gates import expected_answer_type
from vreact.qa.roles.designer import Designer
from vreact.qa.settings import AnswerRequirements
from vreact.spec import TaskSpec, builtin_configs, load_spec
from vreact.verify.gates import build_gate

UNCITED = {"cite_evidence": False, "min_paragraphs": 1}
UNTYPED = {"type_from_wh_word": False}


def with_answer(spec: TaskSpec, **answer: object) -> TaskSpec:
    """``spec`` with some of its answer requirements changed."""
    data = spec.model_dump()
    data["requirements"]["answer"].update(answer)
    return TaskSpec.model_validate(data)


def gate(name: str, **answer: object):
    """A gate built as the verifier builds it: its arguments from the spec's answer requirements."""
    return build_gate(name, defaults=with_answer(load_spec(), **answer).requirements.answer.model_dump())


@pytest.fixture
def date_record():
    return next(r for r in ANSWERABLE if expected_answer_type(r["question"]) == "date")


def test_answer_type_expects_the_wh_word_s_type_only_when_l1_says_so(date_record):
    wrong_type = gold_artifact(date_record, answer="Freddie Mercury")
    assert gate("answer_type")(wrong_type).cause == "answer_type"
    untyped = gate("answer_type", **UNTYPED)
    assert untyped.args == {"type_from_wh_word": False}
    assert untyped(wrong_type).ok
    assert expected_answer_type(date_record["question"], type_from_wh_word=False) == "any"


@pytest.mark.parametrize("name", ["evidence_retrieved", "supported", "multi_hop"])
def test_an_uncited_answer_passes_only_when_l1_asks_for_no_citation(name, date_record):
    uncited = gold_artifact(date_record, evidence=[], cited={})
    shipped = [g for g in shipped_gates("R1") + shipped_gates("R3") if g.name == name]
    assert [g.args["cite_evidence"] for g in shipped] == [True]  # the spec's, by name
    assert not gate(name)(uncited).ok
    assert gate(name, **UNCITED)(uncited).ok


def test_a_citation_is_still_checked_when_none_is_asked_for(date_record):
    unseen = gold_artifact(date_record, retrieved=frozenset())
    assert gate("evidence_retrieved", **UNCITED)(unseen).cause == "evidence_not_retrieved"
    elsewhere = gold_artifact(date_record, cited={"0": "a paragraph about something else"}, evidence=["0"])
    assert gate("supported", **UNCITED)(elsewhere).cause == "unsupported"


def contract(question: str, **answer: object) -> str:
    return Designer(AnswerRequirements.model_validate(answer), ()).single_task(question).contract


def test_the_contract_says_what_l1_asks_for():
    q, cited = "When did the author of Dune die?", ", citing the ids of paragraphs you found"
    assert contract(q) == "a date, at most 15 words" + cited
    assert contract(q, **UNTYPED) == "a short answer, at most 15 words" + cited
    assert contract(q, **UNCITED) == "a date, at most 15 words"
    assert contract(q, min_paragraphs=2).endswith(", citing the ids of the 2 or more paragraphs it rests on")


def test_no_citation_with_more_than_one_paragraph_is_refused_with_file_and_line(tmp_path):
    path = tmp_path / "specs" / "uncited.yaml"
    path.parent.mkdir()
    answer = "  answer:\n    cite_evidence: false\n    min_paragraphs: 2\n"
    path.write_text("kind: spec\nname: m\nrequirements:\n  task: t\n" + answer)
    result = CliRunner().invoke(cli, ["validate", str(path)])
    assert result.exit_code == 2
    assert result.output.strip() == (
        f"{path}:7: requirements.answer.min_paragraphs: min_paragraphs 2 counts cited paragraphs: "
        "it needs cite_evidence: true"
    )
    assert AnswerRequirements(cite_evidence=False).min_paragraphs == 1


def test_an_attempt_follows_the_spec_s_answer_requirements(full_tasks, store, spec, verifiers, roles):
    """A "when" question answered with a word that is no date, citing nothing: the shipped spec
    rejects it at R1 (no evidence); a spec that types no answer and asks for no citation accepts
    it through R1 and R3, and its contract says so."""
    task = next(t for t in full_tasks if t.answerable and t.question.lower().startswith("when"))
    pid = last_support(task)
    word = next(w for w in task.paragraphs[int(pid)].paragraph_text.split() if w.isalpha() and len(w) > 5)
    script = [read(pid), finish(word, [])]
    vg = builtin_configs()["VG"]

    _, shipped, model = attempt(vg, task, script * 3, store, spec, verifiers, roles)
    assert (shipped["outcome"], shipped["abstain_cause"]) == ("abstain", "evidence_retrieved:no_evidence")
    assert "Answer: a date, at most 15 words, citing the ids of the 2 or more" in model.calls[0][1]["content"]

    loose = with_answer(spec, **UNTYPED, **UNCITED)
    _, row, model = attempt(vg, task, script, store, loose, verifiers, roles)
    assert (row["outcome"], row["answer"]) == ("answer", word)
    assert "Answer: a short answer, at most 15 words\n" in model.calls[0][1]["content"]
    accepted = {v["check_name"]: json.loads(v["args"]) for v in verdicts(store, row["id"])}
    assert accepted["answer_type"] == {"type_from_wh_word": False}
    assert accepted["multi_hop"] == {"min_paragraphs": 1, "cite_evidence": False}
    assert accepted["evidence_retrieved"]["cite_evidence"] is False
