"""L2 on code, in the real sandbox with a scripted ``mock/`` model on HumanEval/0: the planner's
helpers and their invented examples, the plan gates, each helper under R1 on its examples, and R2
on the assembled module with the prompt's real examples. Individually correct units can assemble
into a wrong function (R2 rejects it and the planner, told why, plans again); a wrong invented
example rejects a right helper, and the scorer shows that rejection false by putting the rejected
helper into the attempt's final program."""

from __future__ import annotations

import json
from typing import Any

import pytest

import vreact
from vreact.code.plan import WRITTEN, CodePlan
from vreact.model import MockModel
from vreact.records import read_run
from vreact.verify.gates import build_gate

PLANNED = """kind: experiment
name: code-plan
dataset: {family: code, path: humaneval, task_ids: ["HumanEval/0"]}
spec: humaneval
verifiers: humaneval
configurations:
  - {name: VPG, planner: true, guards: true, gates: true, show_rejected: true}
models: {default: openai/unused}
base_url: http://127.0.0.1:9/v1
cache: false
"""

HELPER_RIGHT = "def distance(a, b):\n    return abs(a - b)\n"
HELPER_BENT = "def distance(a, b):\n    return abs(a - b) + 1.0\n"  # what the wrong example asks
CALLS = "for i, a in enumerate(numbers) for b in numbers[i + 1:])\n"
MAIN_RIGHT = "def has_close_elements(numbers, threshold):\n    return any(distance(a, b) < threshold " + CALLS
MAIN_WRONG = "def has_close_elements(numbers, threshold):\n    return any(distance(a, b) > threshold " + CALLS


def plan(returns: str) -> str:
    example = {"call": "distance(1.0, 3.0)", "returns": returns}
    helper = {"name": "distance", "signature": "def distance(a: float, b: float) -> float"}
    return json.dumps(
        {"helpers": [{**helper, "contract": "how far apart a and b are", "examples": [example]}]}
    )


def fenced(code: str) -> str:
    return f"```python\n{code}```"


def run(tmp_path, script) -> Any:
    path = tmp_path / "plan.yaml"
    path.write_text(PLANNED)
    experiment = vreact.resolve(vreact.load_experiment(str(path)))
    experiment.models["default"] = MockModel(script)
    vreact.run_experiment(experiment, str(tmp_path / "run"))
    [attempt] = read_run(str(tmp_path / "run")).attempts
    return attempt


def prompt_of(messages: list[dict[str, Any]]) -> str:
    return "\n".join(m["content"] for m in messages)


def test_right_helpers_that_assemble_into_a_wrong_function_are_rejected_by_r2(tmp_path):
    """The helper passes its example, the function loads and calls it, but compares the wrong
    way: no unit check can see it; R2, on the prompt's examples, does."""
    mains: list[str] = []

    def script(messages: list[dict[str, Any]]) -> str:
        prompt = prompt_of(messages)
        if "Plan helpers" in prompt:
            return plan("2.0")
        if "def distance(a: float, b: float)" in prompt.split(WRITTEN)[0]:
            return fenced(HELPER_RIGHT)
        mains.append(prompt)
        return fenced(MAIN_WRONG if len(mains) == 1 else MAIN_RIGHT)

    attempt = run(tmp_path, script)
    assert attempt.outcome == "answer" and attempt.score.correct is True
    rejects = [
        (v.verifier, v.component, v.check_name, v.cause) for v in attempt.verdicts if v.decision == "reject"
    ]
    assert rejects == [("R2", "planner", "assembly_passes", "example_failed")]
    [r2] = [v for v in attempt.verdicts if v.decision == "reject"]
    assert r2.detail == "has_close_elements([1.0, 2.0, 3.0], 0.5) should return False; it returned True"
    # each unit was accepted by R1 first (the helper on its invented example, the function loaded
    # with the helper), and the second plan's planner was told what R2 found
    accepted = {(v.component, v.check_name) for v in attempt.verdicts if v.verifier == "R1"}
    assert ("executor.p1.distance", "examples_pass") in accepted
    assert ("executor.p1.has_close_elements", "examples_pass") in accepted
    planners = [prompt_of(c.messages or []) for c in attempt.calls if c.role == "planner"]
    assert len(planners) == 2 and r2.detail in planners[1] and r2.detail not in planners[0]
    # the function's executor was given the accepted helper, and the answer is the whole module
    assert HELPER_RIGHT.strip() in mains[0]
    assert "def distance" in attempt.answer and "def has_close_elements" in attempt.answer


def test_a_wrong_invented_example_is_a_false_rejection_the_scorer_finds(tmp_path):
    """The plan says distance(1.0, 3.0) returns 3.0: the right helper is rejected, the retry, shown
    it (show_rejected), bends to the example, R2 rejects the assembly on the real examples, and the
    next plan is right. The scorer puts the rejected helper into the final program: it passes the
    hidden test, so that rejection was false."""

    def script(messages: list[dict[str, Any]]) -> str:
        prompt = prompt_of(messages)
        if "Plan helpers" in prompt:
            return plan("2.0" if "rejected" in prompt else "3.0")
        if "def distance(a: float, b: float)" in prompt.split(WRITTEN)[0]:
            return fenced(HELPER_BENT if "Your last program was rejected" in prompt else HELPER_RIGHT)
        return fenced(MAIN_RIGHT)

    attempt = run(tmp_path, script)
    assert attempt.outcome == "answer" and attempt.score.correct is True
    rejects = [(v.verifier, v.component, v.detail) for v in attempt.verdicts if v.decision == "reject"]
    assert rejects[0] == (
        "R1",
        "executor.p1.distance",
        "distance(1.0, 3.0) should return 3.0; it returned 2.0",
    )
    assert rejects[1][:2] == ("R2", "planner") and len(rejects) == 2
    report = vreact.report(str(tmp_path / "run"))
    vpg = report.configs["VPG"]
    assert vpg.false_rejections["gate"] == 1  # the right helper; the bent one was accepted, not rejected


UNHASHABLE = "d({[1]: 2})"  # ast.literal_eval raises TypeError, not ValueError


@pytest.mark.parametrize(
    ("helpers", "gate", "cause"),
    [
        ([{"name": "has_close_elements"}], "helpers_parse", "bad_name"),
        ([{"name": "d", "signature": "def e(a)"}], "helpers_parse", "bad_signature"),
        ([{"name": "d", "examples": [{"call": "d(x)", "returns": "1"}]}], "helpers_parse", "bad_example"),
        ([{"name": "d", "examples": [{"call": "d(1)", "returns": "one"}]}], "helpers_parse", "bad_example"),
        (
            [{"name": "d", "examples": [{"call": "d({[1]: 2})", "returns": "1"}]}],
            "helpers_parse",
            "bad_example",
        ),
        (
            [{"name": "d", "examples": [{"call": "d(1)", "returns": "{[1]: 2}"}]}],
            "helpers_parse",
            "bad_example",
        ),
        ([{"name": "len"}], "helpers_parse", "bad_name"),
        ([{"name": "d", "contract": "twice e(a)"}, {"name": "e"}], "helpers_ordered", "order"),
        ([{"name": n} for n in "defg"], "helpers_bounded", "too_many_subtasks"),
        # each plan gate rejects a plan that does not validate, saying where
        ([{"name": "d", "examples": 5}], "helpers_parse", "format"),
        ([{"name": "d", "examples": 5}], "helpers_ordered", "format"),
        ([{"name": "d", "examples": 5}], "helpers_bounded", "format"),
    ],
)
def test_the_plan_gates(helpers, gate, cause):
    prompt = "def has_close_elements(numbers, threshold):\n    pass\n"
    full = []
    for h in helpers:
        name = h["name"]
        base = {
            "signature": f"def {name}(a)",
            "contract": "a",
            "examples": [{"call": f"{name}(1)", "returns": "1"}],
        }
        full.append({"name": name, **base, **{k: v for k, v in h.items() if k != "name"}})
    proposal = CodePlan(prompt, {"helpers": full})
    result = build_gate(gate)(proposal)
    assert (result.ok, result.cause) == (False, cause)
    if cause == "format":
        assert result.detail == "helpers.0.examples: Input should be a valid list"
        return
    fine = CodePlan(prompt, {"helpers": full[:1] if gate != "helpers_parse" else []})
    if gate != "helpers_ordered":
        assert build_gate(gate)(fine).ok


def test_a_contract_that_names_a_later_helper_as_a_word_does_not_call_it():
    words = {"name": "is_even", "contract": "True when all digits of n are even"}
    calls = {"name": "is_even", "contract": "True when digits(n) are all even"}
    for first, ok in ((words, True), (calls, False)):
        helpers = [
            {**first, "signature": "def is_even(n)", "examples": [{"call": "is_even(2)", "returns": "True"}]}
        ]
        helpers.append(
            {"name": "digits", "signature": "def digits(n)", "contract": "n's digits", "examples": []}
        )
        plan = CodePlan("def f(n):\n    pass\n", {"helpers": helpers})
        assert build_gate("helpers_ordered")(plan).ok is ok


def test_a_plan_of_no_helper_is_the_whole_function_still_checked_on_the_real_examples(tmp_path):
    wrong = "def has_close_elements(numbers, threshold):\n    return True\n"
    right = "def has_close_elements(numbers, threshold):\n    return any(abs(a - b) < threshold " + CALLS
    written: list[str] = []

    def script(messages: list[dict[str, Any]]) -> str:
        if "Plan helpers" in prompt_of(messages):
            return json.dumps({"helpers": []})
        written.append(wrong if not written else right)
        return fenced(written[-1])

    attempt = run(tmp_path, script)
    assert attempt.outcome == "answer" and attempt.score.correct is True
    [r2] = [v for v in attempt.verdicts if v.decision == "reject"]
    assert (r2.verifier, r2.check_name) == ("R2", "assembly_passes") and len(written) == 2


def test_a_plan_whose_first_helper_declines_is_accounted_not_a_crash(tmp_path):
    """The first helper's executor abstains: no helper was accepted, so there is nothing to
    assemble, and the attempt is an abstention naming that helper, not a crash."""
    prompts: list[str] = []

    def script(messages: list[dict[str, Any]]) -> str:
        prompts.append(prompt_of(messages))
        if "Plan helpers" in prompts[-1]:
            return plan("2.0")  # distance(1.0, 3.0) -> 2.0
        return "ABSTAIN: I cannot write distance"

    attempt = run(tmp_path, script)
    assert (attempt.outcome, attempt.crash_kind) == ("abstain", None)
    assert (attempt.abstain_level, attempt.abstain_component) == ("declined", "executor.p1.distance")


def test_a_rejected_helper_is_scored_inside_the_final_program_or_not_at_all():
    """A rejected helper is right when the final program with it in place of the accepted one
    passes the hidden test; one that does not parse or define the helper is wrong; an answer that
    has no such helper (another plan's, or the fallback's) gives it nothing to be scored in."""
    from vreact.code import Code
    from vreact.code.data import SHIPPED, read_problems

    [task] = read_problems(SHIPPED, 1)
    final = "from typing import List\n\n" + HELPER_RIGHT + "\n" + MAIN_RIGHT
    helper = {"kind": "answer", "helper": "distance"}
    assert Code().score_try(task, {**helper, "answer": HELPER_RIGHT}, final) is True
    assert Code().score_try(task, {**helper, "answer": HELPER_BENT}, final) is False
    assert Code().score_try(task, {**helper, "answer": "def distance(a, b) return 0"}, final) is False
    assert Code().score_try(task, {**helper, "answer": "def far(a, b):\n    return 1\n"}, final) is False
    whole = "def has_close_elements(numbers, threshold):\n    return any(abs(a - b) < threshold " + CALLS
    assert Code().score_try(task, {**helper, "answer": HELPER_RIGHT}, whole) is None


def test_the_code_review_judge_reads_the_description_and_the_code_as_text():
    from vreact.verify.gates._prompts import prompt_of

    render = prompt_of("code_review")
    objective = f"def f(x):\n    '''Twice x.'''\n{WRITTEN}\n```python\ndef g(y):\n    return y\n```"
    [system, user] = render(
        "L3",
        {"paired_level": {"objective": objective}, "artifact": {"program": "def f(x):\n    return 2 * x\n"}},
    )
    assert "already passes every example" in system["content"] and "name it" in system["content"]
    assert '"decision"' in system["content"]
    # the helper it may call is named, its code is not under review
    assert (
        "Twice x." in user["content"] and "def g(y)" in user["content"] and "return y" not in user["content"]
    )
    assert "```python\ndef f(x):\n    return 2 * x\n" in user["content"]
    # a plan: its helpers as text, one per line with their examples; the helpers are not written yet
    helper = {
        "name": "g",
        "signature": "def g(y)",
        "contract": "y",
        "examples": [{"call": "g(1)", "returns": "1"}],
    }
    [system, user] = render(
        "L2", {"paired_level": {"question": "def f(x): ..."}, "artifact": {"helpers": [helper]}}
    )
    assert "not written yet" in system["content"] and "A plan of no helper is fine" in system["content"]
    assert "- def g(y): y\n    g(1) -> 1" in user["content"] and "{" not in user["content"]
    [_, user] = render("L2", {"paired_level": {"question": "def f(x): ..."}, "artifact": {"helpers": []}})
    assert "No helper" in user["content"]
    # odd levels and artifacts are shown as they are, never raise
    odd = {"helpers": [{"name": "g", "examples": 5}, "h", {"signature": None}]}
    [_, user] = render("L2", {"paired_level": [{}], "artifact": odd})
    assert "- g: \n- ?: \n- ?: " in user["content"]
    [_, user] = render("L3", {"paired_level": "f", "artifact": {"program": "x"}})
    assert user["content"].startswith("What was asked:\nf\n")
    one_line = f"def f(x): ...\n{WRITTEN}\n```python\nasync def a(x, *, k=1) -> int: return 1\n```"
    [_, user] = render("L3", {"paired_level": {"objective": one_line}, "artifact": {"program": "x"}})
    assert "async def a(x, *, k=1) -> int\n" in user["content"] and "return 1" not in user["content"]
