"""k candidates through the controller on HumanEval's own prompts, in the real sandbox: a scripted
executor writes candidate i by the seed its call carries (the attempt's seed + i), and a scripted
tester proposes inputs from the prompt. Agreement answers the largest group, abstains when no
group is large enough, and a group that fails the prompt's own example is disputed; best of k by
gate answers the first candidate every gate passes, from the same candidates. The records hold
every candidate's fate, the groups and the inputs."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import pytest

import vreact
from tests.code.test_agreement import CLOSE_ADJACENT, CLOSE_ANY, CLOSE_LOOP, CLOSE_SORTED, HOSTILE
from tests.helpers import contexts_built
from vreact.code.data import SHIPPED, read_problems
from vreact.config import Configuration
from vreact.families import family_of
from vreact.model import MockModel
from vreact.records import TaskRecord, read_run

PROBLEMS = {p.id: p for p in read_problems(SHIPPED, 3)}
WRONG = "\ndef has_close_elements(numbers, threshold):\n    return None\n"
#: of the right type, and wrong on the prompt's first example
ALWAYS = "\ndef has_close_elements(numbers, threshold):\n    return True\n"


def scripted(programs: list[str], tester: list[str] | None = None, judge: str = "") -> MockModel:
    """Candidate i (the call's seed minus the attempt's, 0) writes ``programs[i]``; the tester
    says ``tester``; a code-review judge replies ``judge``."""
    model: MockModel

    def reply(messages: list[dict[str, Any]]) -> str:
        if judge and "What was asked:" in messages[-1]["content"]:
            return judge
        if "software tester" in messages[0]["content"]:
            return json.dumps({"inputs": tester or []})
        i = model.settings[-1].seed or 0
        return json.dumps({"thought": "", "action": "finish", "input": programs[i]})

    model = MockModel(reply)
    return model


def run(tmp_path, model: MockModel, agreement: dict[str, Any], name: str = "K", judges: bool = False) -> Any:
    shipped = vreact.load_experiment("code")
    config = {"name": name, "guards": True, "gates": True, "judges": judges, "agreement": agreement}
    update = {
        "models": {"default": "openai/unused"},
        "base_url": "http://127.0.0.1:9/v1",
        "cache": False,
        "seed": 0,
        "configurations": [Configuration.model_validate(config)],
        "dataset": shipped.dataset.model_copy(update={"task_ids": ["HumanEval/0"]}),
    }
    experiment = vreact.resolve(shipped.model_copy(update=update))
    experiment.models["default"] = model
    vreact.run_experiment(experiment, tmp_path / name)
    [attempt] = read_run(tmp_path / name).attempts
    return attempt


def test_agreement_answers_the_largest_group(tmp_path):
    model = scripted([CLOSE_LOOP, CLOSE_ADJACENT, CLOSE_SORTED, WRONG, CLOSE_ANY], ["([1.0, 5.0, 1.2], 0.3)"])
    a = run(tmp_path, model, {"k": 5, "tau": 0.5, "inputs": 50})
    assert a.outcome == "answer" and a.score.correct is True
    assert "for i in range(len(numbers))" in a.answer  # candidate 0's program, the group's first
    g = a.agreement
    assert (g.k, g.selected, g.chosen, g.cause) == (5, "agree", 0, None)
    assert g.candidates == {"0": "answer", "1": "answer", "2": "answer", "3": "stated", "4": "answer"}
    assert [x["members"] for x in g.groups][:2] == [[0, 2, 4], [1]]
    assert "tester" in g.record["sources"] and "generated" in g.record["sources"]
    assert "([1.0, 5.0, 1.2], 0.3)" in g.record["inputs"]
    # the seeds and temperatures of the five candidates, and the tester's one call
    seeds = [s.seed for s in model.settings]
    assert sorted(seeds) == [0, 0, 1, 2, 3, 4]
    roles = [c.role for c in a.calls]
    assert roles.count("executor") == 5 and roles.count("tester") == 1
    temperatures = [c.temperature for c in model.settings[:5]]
    assert temperatures[0] == 0.2 and set(temperatures[1:]) == {0.8}
    [accept] = [v for v in a.verdicts if v.check_name == "agreement"]
    assert (accept.verifier, accept.decision) == ("R3", "accept")


def test_no_group_large_enough_abstains_naming_l1(tmp_path):
    model = scripted([CLOSE_LOOP, CLOSE_ADJACENT, WRONG, WRONG, CLOSE_SORTED])
    a = run(tmp_path, model, {"k": 5, "tau": 0.6, "tester": False, "inputs": 50})
    assert a.outcome == "abstain" and a.abstain_level == "L1"
    assert a.abstain_cause == "agreement:no_agreement"
    assert a.agreement.chosen is None and a.agreement.groups[0]["members"] == [0, 4]
    [reject] = [v for v in a.verdicts if v.check_name == "agreement"]
    assert reject.cause == "no_agreement" and "2+1 of 5" in reject.detail
    # the report's tau curve reads the group again: at tau 0.4 its first candidate (right, as
    # the hidden test scored it when the attempt ended) would have been answered
    figures = vreact.report(tmp_path / "K").configs["K"].agreement
    assert figures is not None and (figures.answered, figures.causes) == (0, {"no_agreement": 1})
    assert [(p.tau, p.coverage, p.risk) for p in figures.tau_curve] == [(0.4, 1.0, 0.0)]
    assert figures.candidates == {"answer": 3, "stated": 2} and list(figures.by_states) == ["doctest"]


def test_a_wrong_group_chosen_over_a_right_candidate_is_counted(tmp_path):
    """Two candidates agree on a rule the prompt's examples do not refute and the hidden tests do
    (neighbours only); the one right candidate stands alone: agreement answers the wrong group,
    and the report counts the answer as chosen over a right candidate R1 passed."""
    model = scripted([CLOSE_ADJACENT, CLOSE_ADJACENT, CLOSE_LOOP, WRONG, WRONG])
    a = run(tmp_path, model, {"k": 5, "tau": 0.4, "tester": False, "inputs": 50})
    assert a.outcome == "answer" and a.score.correct is False and a.agreement.chosen == 0
    assert a.agreement.candidates["2"] == "answer"
    figures = vreact.report(tmp_path / "K").configs["K"].agreement
    assert figures is not None and (figures.correct, figures.wrong_over_right) == (0, 1)


def test_a_group_failing_the_prompts_example_is_disputed(tmp_path):
    model = scripted([ALWAYS, ALWAYS, ALWAYS, CLOSE_LOOP, CLOSE_ADJACENT])
    a = run(tmp_path, model, {"k": 5, "tau": 0.5, "tester": False, "inputs": 20})
    assert a.outcome == "abstain" and a.abstain_cause == "agreement:disputed_example"
    assert a.agreement.groups[0] == {"members": [0, 1, 2], "disputed": True}


#: right on the stated examples; on any other input it kills the process that runs it
SLEEPER = """
import os
def has_close_elements(numbers, threshold):
    if len(numbers) not in (3, 6):
        os.kill(os.getppid(), 9)
    return any(abs(a - b) < threshold for i, a in enumerate(numbers) for b in numbers[i + 1 :])
"""


def test_a_hostile_candidate_is_contained(tmp_path):
    """One that kills its runner on the stated examples is R1's rejection and left out; one that
    does so only on made-up inputs ends the comparison, a rejection with its cause (fail closed)."""
    model = scripted([CLOSE_LOOP, HOSTILE + CLOSE_LOOP, CLOSE_SORTED, CLOSE_ANY, CLOSE_LOOP])
    a = run(tmp_path, model, {"k": 5, "tau": 0.5, "tester": False, "inputs": 20})
    assert a.outcome == "answer" and a.agreement.candidates["1"] == "rejected"
    assert a.agreement.groups == [{"members": [0, 2, 3, 4], "disputed": False}]
    model = scripted([CLOSE_LOOP, SLEEPER, CLOSE_SORTED, CLOSE_ANY, CLOSE_LOOP])
    a = run(tmp_path, model, {"k": 5, "tau": 0.5, "tester": False, "inputs": 20}, name="S")
    assert a.outcome == "abstain" and a.abstain_cause == "agreement:unavailable"
    assert "stopped" in a.agreement.record["unavailable"]


def test_best_of_k_answers_the_first_candidate_every_gate_passes(tmp_path):
    model = scripted([WRONG, WRONG, CLOSE_ADJACENT, CLOSE_LOOP, CLOSE_LOOP])
    a = run(tmp_path, model, {"k": 5, "select": "first"}, name="B")
    assert a.outcome == "answer" and "zip(numbers, numbers[1:])" in a.answer  # the gates pass it
    assert a.score.correct is False  # the hidden test does not: a silent error best of k keeps
    assert a.agreement.candidates == {"0": "stated", "1": "stated", "2": "answer"}
    assert len([c for c in a.calls if c.role == "executor"]) == 3  # made until one passed


def test_best_of_k_without_a_passing_candidate_abstains_at_l3(tmp_path):
    a = run(tmp_path, scripted([WRONG, WRONG]), {"k": 2, "select": "first"}, name="B")
    assert a.outcome == "abstain" and a.abstain_level == "L3"
    assert a.abstain_cause.startswith("examples_pass:")
    assert a.agreement.cause == "no_candidate"


@pytest.mark.parametrize("given", [{"k": 3, "tau": 0.5}, {"k": 2, "select": "first"}])
def test_candidates_read_no_rejection(tmp_path, given):
    """Each candidate is sampled as if it were the first: no prompt holds another's rejection."""
    model = scripted([WRONG, WRONG, CLOSE_LOOP])
    run(tmp_path, model, {**given, "tester": False} if "tau" in given else given)
    prompts = ["\n".join(m["content"] for m in call) for call in model.calls]
    assert prompts and not any("rejected" in p for p in prompts)


def test_the_tester_reads_l1_alone_through_its_row(tmp_path, monkeypatch):
    """The tester's context is built under its row of memory/roles.yaml (L1 only), and its prompt
    holds the problem's prompt, never a candidate's program."""
    built = contexts_built(monkeypatch)
    model = scripted([CLOSE_LOOP, CLOSE_SORTED, CLOSE_ANY], ["([1.0, 5.0, 1.2], 0.3)"])
    a = run(tmp_path, model, {"k": 3})
    assert built["tester"] == {"l1"}
    [call] = [c for c in a.calls if c.role == "tester"]
    prompt = "\n".join(m["content"] for m in call.messages)
    assert PROBLEMS["HumanEval/0"].prompt.strip() in prompt and "sorted(numbers)" not in prompt


@pytest.mark.parametrize(
    ("problem", "states"), [("HumanEval/0", "doctest"), ("HumanEval/66", "prose"), ("HumanEval/32", "none")]
)
def test_what_a_recorded_problem_states_splits_the_report(problem, states):
    """The report's split: a prompt with a doctest example, with examples in prose only, or none
    (of the 164: 75, 82 and 7)."""
    p = {x.id: x for x in read_problems(SHIPPED, audit=lambda p: [])}[problem]
    task = TaskRecord(problem, p.prompt, None, [], True, None, [], None, record=p.model_dump(mode="json"))
    assert family_of("code").states(task) == states
    assert family_of("qa").states(task) is None


def rejecting(expected: str) -> str:
    """A code-review judge's rejection: on ``has_close_elements([1.0, 5.0, 1.2], 0.3)`` the
    program returns False and should return ``expected``."""
    claim = {"input": "has_close_elements([1.0, 5.0, 1.2], 0.3)", "returns": "False", "expected": expected}
    return json.dumps({"reason": "misses a far pair", "decision": "reject", "confidence": 0.9, **claim})


def test_another_behaviour_group_founds_a_judges_claim_at_r3(tmp_path):
    """Two candidates agree on neighbours only (wrong), one compares every pair (right), two
    return None (the property check leaves them out). The R3 judge says the chosen one returns
    False on ``[1.0, 5.0, 1.2]`` where True is right: the right candidate, a group of its own,
    returns True there, so the claim is founded and the wrong answer is not given (L1's
    abstention). Where the judge expects a value no other group returns, or only a group that
    fails the prompt's example (disputed: no witness), its claim is unverified, not acted on, and
    the wrong group is answered. At R1 no group exists yet: the same claim is never founded there.
    A replay with the same judge reads the groups back from the records and founds it again."""
    from tests.fakes.scripted_server import ScriptedServer
    from tests.quality.test_probe import vreact as cli

    programs = [CLOSE_ADJACENT, CLOSE_ADJACENT, CLOSE_LOOP, WRONG, WRONG]
    agreement = {"k": 5, "tau": 0.4, "tester": False, "inputs": 20}
    a = run(tmp_path, scripted(programs, judge=rejecting("True")), agreement, "A", judges=True)
    assert a.outcome == "abstain" and a.abstain_level == "L1"
    assert (a.agreement.cause, a.agreement.candidates["0"]) == ("r3", "rejected")  # the group chosen
    assert [g["members"] for g in a.agreement.groups] == [[0, 1], [2]]
    assert judge_causes(a, "R3") == [("reject", "founded:agreement")]
    [r3] = [v for v in a.verdicts if v.verifier == "R3" and v.source == "judge"]
    assert "returned False" in r3.detail and "True" not in r3.detail  # no expected value passed on
    r1 = judge_causes(a, "R1")
    assert r1 and all(d == "accept" and c.startswith("unfounded:") for d, c in r1)

    b = run(tmp_path, scripted(programs, judge=rejecting("None")), agreement, "B", judges=True)
    assert b.outcome == "answer" and b.score.correct is False
    assert judge_causes(b, "R3") == [("accept", "unfounded:unverified")]
    disputed = [CLOSE_ADJACENT, CLOSE_ADJACENT, ALWAYS, WRONG, WRONG]
    c = run(tmp_path, scripted(disputed, judge=rejecting("True")), agreement, "C", judges=True)
    assert [(g["members"], g["disputed"]) for g in c.agreement.groups] == [([0, 1], False), ([2], True)]
    assert c.outcome == "answer" and judge_causes(c, "R3") == [("accept", "unfounded:unverified")]

    with ScriptedServer(lambda body: rejecting("True")) as server:
        done = cli(
            "replay", "B", "--judge", "openai/judge", "--base-url", server.base_url, "--no-cache",
            "--out", "B-judged", "--json", cwd=tmp_path,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    [config] = json.loads(done.stdout)["configs"]
    assert config["post_hoc"]["answered"] == 0
    conn = sqlite3.connect(tmp_path / "B-judged" / "vreact.db")
    causes = conn.execute("select verifier, cause from verdicts where source = 'judge'").fetchall()
    conn.close()
    assert ("R3", "founded:agreement") in causes
    assert not [c for v, c in causes if v == "R1" and c.startswith("founded")]


def judge_causes(attempt: Any, verifier: str) -> list[tuple[str, str]]:
    return [(v.decision, v.cause) for v in attempt.verdicts if v.verifier == verifier and v.source == "judge"]
