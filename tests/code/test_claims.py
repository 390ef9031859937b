"""Judges that show their work on code (``vreact.code.claims``): a rejecting code-review judge names
an input, what the program returns there and what it should; the real sandbox runs the input and
the claim counts only where it holds and something other than the judge corroborates it. Through a
whole attempt on HumanEval/0 with a scripted ``mock/`` model, and unit by unit."""

from __future__ import annotations

import json
from typing import Any

import pytest

import vreact
from vreact.code.artifact import Program
from vreact.code.claims import arguments, weigh
from vreact.code.plan import CodePlan
from vreact.model import MockModel
from vreact.records import read_run
from vreact.report import compute, render_markdown
from vreact.verify.judges import Judgement

JUDGED = """kind: experiment
name: code-claims
dataset: {family: code, path: humaneval, task_ids: ["HumanEval/0"]}
spec: humaneval
verifiers: VERIFIERS
configurations:
  - {name: VGJ, guards: true, gates: true, judges: true}
models: {default: openai/unused}
base_url: http://127.0.0.1:9/v1
cache: false
"""

HEAD = "def has_close_elements(numbers, threshold):\n"
RIGHT = HEAD + (
    "    return any(abs(a - b) < threshold for i, a in enumerate(numbers) for b in numbers[i + 1:])\n"
)
# passes both stated examples; on a longer list with no close pair it returns None, not False
# (HumanEval/0's hidden test has one: the scorer finds it wrong)
NONE_ON_LONG = HEAD + (
    "    found = any(abs(a - b) < threshold for i, a in enumerate(numbers) for b in numbers[i + 1:])\n"
    "    return True if found else (False if len(numbers) <= 3 else None)\n"
)


def fenced(code: str) -> str:
    return f"```python\n{code}```"


def judged(decision: str, reason: str = "", input: str = "", returns: str = "", expected: str = "") -> str:
    reply = {"reason": reason, "input": input, "returns": returns, "expected": expected}
    return json.dumps({**reply, "decision": decision, "confidence": 0.9})


ACCEPT = judged("accept", "looks right")


def text(messages: list[dict[str, Any]]) -> str:
    return "\n".join(m["content"] for m in messages)


def run(tmp_path, programs: list[str], judges: list[str], unfounded: str = "ignore") -> tuple[Any, list[str]]:
    """One VGJ attempt: the executor writes ``programs`` in turn (the last repeated), the judges
    reply ``judges`` in turn (then accept); the attempt and each executor prompt."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    verifiers = tmp_path / "verifiers.yaml"
    judge = f"{{min_confidence: 0.7, prompt: code_review, unfounded: {unfounded}}}"
    verifiers.write_text(
        "kind: verifiers\nname: claims\n"
        "R1: {gates: [code_parses, defines_entry_point, examples_pass], judge: " + judge + "}\n"
        "R3: {gates: [examples_pass, abstention_allowed], judge: " + judge + "}\n"
    )
    path = tmp_path / "claims.yaml"
    path.write_text(JUDGED.replace("VERIFIERS", str(verifiers)))
    prompts: list[str] = []
    replies = list(judges)

    def script(messages: list[dict[str, Any]]) -> str:
        if "software tester" in messages[0]["content"]:
            return replies.pop(0) if replies else ACCEPT
        prompts.append(text(messages))
        return fenced(programs[min(len(prompts), len(programs)) - 1])

    experiment = vreact.resolve(vreact.load_experiment(str(path)))
    experiment.models["default"] = MockModel(script)
    vreact.run_experiment(experiment, str(tmp_path / "run"))
    [attempt] = read_run(str(tmp_path / "run")).attempts
    return attempt, prompts


def by_judge(attempt: Any) -> list[tuple[str, str, str]]:
    return [(v.verifier, v.decision, v.cause) for v in attempt.verdicts if v.source == "judge"]


def test_a_false_claim_is_refuted_by_the_run_and_the_right_program_kept(tmp_path):
    """The judge says the right program returns True on a list with no close pair: the sandbox
    runs it (False), so the rejection is unfounded, recorded as the judge's verdict and not acted
    on; the executor is asked once."""
    wrong_claim = judged("reject", "misses far pairs", "has_close_elements([1.0, 2.0], 0.5)", "True", "False")
    attempt, prompts = run(tmp_path, [RIGHT], [wrong_claim])
    assert attempt.outcome == "answer" and attempt.score.correct is True
    assert by_judge(attempt) == [("R1", "accept", "unfounded:returns"), ("R3", "accept", "")]
    [ignored] = [v for v in attempt.verdicts if v.cause == "unfounded:returns"]
    assert "it returns False" in ignored.detail
    assert len(prompts) == 1
    # the report counts it: refuted, ignored, on a try the scorer found right
    claims = compute(str(tmp_path / "run")).configs["VGJ"].judge_claims
    refuted = {"unfounded": 1, "ignored": 1, "unfounded_right": 1}
    assert claims["R1"].model_dump(exclude_defaults=True) == refuted
    assert "R3" not in claims


def test_a_founded_rejection_leads_to_a_correction_the_scorer_confirms(tmp_path):
    """The program passes the stated examples but returns None, where the signature asks for a
    bool, on a longer list: the judge names that input and the run and the property check bear it
    out. The rejection routes to the executor with the input and what came back, never the judge's
    own expected value; the retry is right, and the scorer finds the rejected try wrong."""
    claim = judged(
        "reject", "None on long lists", "has_close_elements([1.0, 2.0, 3.0, 4.0], 0.5)", "None", "False"
    )
    attempt, prompts = run(tmp_path, [NONE_ON_LONG, RIGHT], [claim])
    assert attempt.outcome == "answer" and attempt.score.correct is True
    assert by_judge(attempt) == [
        ("R1", "reject", "founded:property"),
        ("R1", "accept", ""),
        ("R3", "accept", ""),
    ]
    [founded] = [v for v in attempt.verdicts if v.decision == "reject"]
    assert founded.detail == (
        "has_close_elements([1.0, 2.0, 3.0, 4.0], 0.5) returned None, a NoneType, where a bool is asked"
    )
    assert len(prompts) == 2 and founded.detail in prompts[1]
    tries = attempt.score.tries
    accepted = next(v for v in attempt.verdicts if v.source == "judge" and v.decision == "accept")
    assert tries[founded.artifact_hash] is False and tries[accepted.artifact_hash] is True
    report = compute(str(tmp_path / "run"))
    assert report.configs["VGJ"].judge_claims["R1"].model_dump(exclude_defaults=True) == {
        "founded": 1,
        "founded_wrong": 1,
    }
    assert report.configs["VGJ"].confirmed_corrections["judge"] == 1
    table = render_markdown(report)
    assert "Judges that show their work" in table and "| VGJ | R1 | 1 | 0 | 0 | 0 | 0 | 1 |" in table


def test_an_unparseable_reply_still_rejects(tmp_path):
    """A reply that is no JSON has no claim to weigh: it rejects, as any judge's unclear reply."""
    attempt, prompts = run(tmp_path, [RIGHT], ["I think it is wrong."])
    assert by_judge(attempt)[0] == ("R1", "reject", "judge_format")
    assert len(prompts) == 2


def test_an_unverified_expected_value_never_reaches_the_executor(tmp_path):
    """The program returns what the judge says, but nothing but the judge says it should return
    987654321: unverified, recorded, not acted on, and that value is in no executor prompt. With
    ``unfounded: keep`` the same reply rejects, as a judge's did before claims were weighed (its
    reason, not its claim, routed)."""
    claim = judged("reject", "wrong on two items", "has_close_elements([1.0, 1.2], 0.5)", "True", "987654321")
    attempt, prompts = run(tmp_path, [RIGHT], [claim])
    assert by_judge(attempt) == [("R1", "accept", "unfounded:unverified"), ("R3", "accept", "")]
    assert len(prompts) == 1 and not any("987654321" in p for p in prompts)

    kept, prompts = run(tmp_path / "keep", [RIGHT], [claim], unfounded="keep")
    assert by_judge(kept)[0] == ("R1", "reject", "unfounded:unverified")
    assert len(prompts) == 2 and "wrong on two items" in prompts[1]
    assert not any("987654321" in p for p in prompts)


def test_a_claim_check_that_fails_leaves_the_rejection_standing(tmp_path, monkeypatch):
    """Fail closed: a check that raises decides nothing, so the judge's rejection stands."""
    from vreact.verify.gates import _prompts

    def broken(*args: Any) -> Any:
        raise RuntimeError("no sandbox")

    monkeypatch.setitem(_prompts.CLAIMS, "code_review", broken)
    claim = judged("reject", "misses far pairs", "has_close_elements([1.0, 2.0], 0.5)", "True", "False")
    attempt, prompts = run(tmp_path, [RIGHT], [claim])
    [first, *_] = [v for v in attempt.verdicts if v.source == "judge"]
    assert (first.decision, first.cause) == ("reject", "judge_reject")
    assert "its claim could not be checked: RuntimeError: no sandbox" in first.detail
    assert len(prompts) == 2


@pytest.mark.parametrize(
    ("given", "arity", "args"),
    [
        ("f(1, [2, 3])", 2, (1, [2, 3])),
        ("(1, [2, 3])", 2, (1, [2, 3])),
        ("[1, 2]", 1, ([1, 2],)),
        ("([1, 2],)", 1, ([1, 2],)),
        ("'abc'", 0, ("abc",)),
        ("f(x)", 1, None),  # not a literal
        ("g(1)", 1, (1,)),  # the function under another name: the run decides
        ("the call, as f(1)", 1, None),  # prose
        ("f(1)", 2, None),  # too few
        ("f(a=1)", 1, None),  # keywords are not read
        ("an empty list", 1, None),
    ],
)
def test_a_judges_input_is_read_as_literal_arguments(given, arity, args):
    assert arguments(given, arity) == args


MEDIAN = 'def median(l{hint}){ret}:\n    """Median of l.\n    >>> median([3, 1, 2])\n    2\n    """\n'


@pytest.mark.parametrize(
    ("hint", "ret", "status"),
    [("", "", "unverified"), (": list", " -> int", "founded")],
)
def test_a_type_founds_a_rejection_only_where_the_annotation_states_it(hint, ret, status):
    """A stated example returning an int does not make a float wrong; a return annotation does.
    The program runs in the real sandbox."""
    prompt = MEDIAN.format(hint=hint, ret=ret)
    body = "    s, n = sorted(l), len(l)\n    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2"
    program = prompt + body + "\n"
    artifact = Program("answer", "median", program, parameters=("l",), examples=(("[3, 1, 2]", "2"),))
    said = Judgement(
        decision="reject", confidence=0.9, input="median([1, 2, 3, 4])", returns="2.5", expected="2"
    )
    assert weigh("L1", artifact, prompt, said).status == status


def test_a_witness_corroborates_only_the_value_the_judge_expects():
    """Agreement's other behaviour groups, run in the real sandbox on the judge's input: one that
    returns the value the judge expects founds the claim; one that returns another value, does not
    load, or is a program of another name does not."""
    program = Program("answer", "has_close_elements", NONE_ON_LONG, parameters=("numbers", "threshold"))
    said = Judgement(
        decision="reject",
        confidence=0.9,
        input="f([1.0, 2.0, 3.0, 4.0], 0.5)",
        returns="None",
        expected="False",
    )

    def witness(code: str, name: str = "has_close_elements") -> Program:
        return Program("answer", name, code, parameters=("numbers", "threshold"))

    assert weigh("L1", program, "", said).status == "unverified"
    assert weigh("L1", program, "", said, (witness(RIGHT),)).cause == "founded:agreement"
    others = (witness(HEAD + "    return True\n"), witness(HEAD + "    return (\n"), witness(RIGHT, "other"))
    assert weigh("L1", program, "", said, others).status == "unverified"


def plan(examples: list[dict[str, str]], returns: str = "int") -> CodePlan:
    helper = {
        "name": "g",
        "signature": f"def g(x: int) -> {returns}",
        "contract": "twice x",
        "examples": examples,
    }
    return CodePlan("def f(x): ...", {"helpers": [helper]})


def on_plan(p: CodePlan, call: str) -> tuple[str, str]:
    claim = weigh(
        "L2", p, None, Judgement(decision="reject", confidence=0.9, input=call, returns="", expected="")
    )
    return claim.status, claim.cause


def test_a_plan_judges_rejection_is_advice_unless_the_plan_contradicts_the_example():
    assert on_plan(plan([{"call": "g(2)", "returns": "4"}]), "g(2)") == ("unverified", "unfounded:unverified")
    assert on_plan(plan([{"call": "g(2)", "returns": "4"}]), "g(3)") == ("unfounded", "unfounded:example")
    # its own def line says int, the example returns a string
    assert on_plan(plan([{"call": "g(2)", "returns": "'4'"}]), "g(2)") == ("founded", "founded:contract")
    # two examples call it the same way and say different things
    twice = [{"call": "g(2)", "returns": "4"}, {"call": "g( 2 )", "returns": "5"}]
    assert on_plan(plan(twice), "g(2)") == ("founded", "founded:contract")
    assert on_plan(plan([{"call": "g(2)", "returns": "4.0"}], returns="float"), "g(2)")[0] == "unverified"
    # an Optional return reads as the property check reads it: its type or None, nothing else
    optional = "Optional[int]"
    assert on_plan(plan([{"call": "g(2)", "returns": "None"}], returns=optional), "g(2)")[0] == "unverified"
    assert on_plan(plan([{"call": "g(2)", "returns": "'4'"}], returns=optional), "g(2)")[0] == "founded"


def test_the_probe_counts_a_judges_founded_and_refuted_claims_on_gold_and_faults(tmp_path):
    """``vreact probe --judge`` on HumanEval/0, through a loopback judge that always claims the
    program returns None on a four-item list where False is expected: on the gold program the run
    refutes it (not acted on: no false rejection); on the fault that returns the stated examples'
    values and None otherwise, it holds and the signature's bool says so (founded, caught)."""
    from tests.fakes.scripted_server import ScriptedServer
    from tests.quality.test_probe import probe

    four = "has_close_elements([1.0, 2.0, 3.0, 4.0], 0.5)"
    claim = judged("reject", "None on four items", four, "None", "False")
    with ScriptedServer(lambda body: claim) as server:
        report = probe(
            tmp_path, "--family", "code", "--dataset", "humaneval", "--limit", "1",
            "--faults", "gold,hardcoded_examples", "--levels", "R1",
            "--judge", "openai/judge", "--base-url", server.base_url, "--no-cache",
        )  # fmt: skip
    [r1] = report["judges"]
    claims = (r1["founded_faults"], r1["refuted_gold"], r1["founded_gold"], r1["refuted_faults"])
    assert claims == (1, 1, 0, 0)
    assert r1["false_rejections"] == 0 and r1["caught"] == 1


def test_a_replay_judges_a_code_run_with_its_claims(tmp_path):
    """``vreact replay --judge`` on a code run reads each program back as the code family's
    artifact (it read a question-answering one, and crashed): the judge's false claim on the right
    program is refuted, recorded, and the answer kept."""
    import sqlite3

    from tests.fakes.scripted_server import ScriptedServer
    from tests.quality.test_probe import vreact as cli

    run(tmp_path, [RIGHT], [])
    wrong = judged("reject", "misses far pairs", "has_close_elements([1.0, 2.0], 0.5)", "True", "False")
    with ScriptedServer(lambda body: wrong) as server:
        done = cli(
            "replay", "run", "--judge", "openai/judge", "--base-url", server.base_url, "--no-cache",
            "--out", "judged", "--json", cwd=tmp_path,
        )  # fmt: skip
        requests = len(server.requests)
    assert done.returncode == 0, done.stderr[-3000:]
    [config] = json.loads(done.stdout)["configs"]
    # R1's and R3's judges on each recorded check, and on the final answer as the filter reads it
    assert config["post_hoc"]["answered"] == 1 and requests == 4
    conn = sqlite3.connect(tmp_path / "judged" / "vreact.db")
    causes = conn.execute("select decision, cause from verdicts where source = 'judge'").fetchall()
    conn.close()
    assert causes == [("accept", "unfounded:returns")] * 4


def test_unfounded_is_refused_where_no_claim_is_checked(tmp_path):
    """The setting is read only by a judge whose prompt shows its work: on the built-in prompt it
    would do nothing, so loading refuses it in one line naming the field."""
    from vreact.spec import SpecError, load_verifiers

    for value in ("keep", "ignore"):
        path = tmp_path / f"{value}.yaml"
        path.write_text(f"kind: verifiers\nname: x\nR3: {{judge: {{unfounded: {value}}}}}\n")
        with pytest.raises(SpecError, match="unfounded: the judge's prompt"):
            load_verifiers(str(path))
    shown = tmp_path / "shown.yaml"
    shown.write_text("kind: verifiers\nname: x\nR1: {judge: {prompt: code_review, unfounded: keep}}\n")
    assert load_verifiers(str(shown)).R1.judge.unfounded == "keep"
