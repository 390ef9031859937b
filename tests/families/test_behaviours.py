"""What each family says its candidates did (``TaskFamily.behaviours``), the input of agreement at
R3: question answering compares normalised answers; code runs the programs in the problem's
sandbox (the real one) on the stated and made-up inputs; a family that cannot compare says so."""

from __future__ import annotations

import pytest

from vreact.code.artifact import Program
from vreact.code.data import SHIPPED, read_problems
from vreact.code.sandboxes import opened
from vreact.families import family_of
from vreact.qa.gates import Artifact
from vreact.sandbox import unavailable
from vreact.verify.agreement import DISPUTED, agree, grouped


def answered(text: str) -> Artifact:
    return Artifact("answer", "Where is it?", answer=text)


def test_question_answering_agrees_on_the_normalised_answer_and_leaves_abstentions_out():
    qa = family_of("qa")
    said = qa.behaviours(
        None,
        {
            0: answered("The Eiffel Tower"),
            1: answered("eiffel tower."),
            2: Artifact("abstain", "Where is it?", reason="not found"),
            3: answered("Louvre"),
            4: answered("The."),  # nothing once normalised
        },
    )
    assert said.left_out == {2: "declined", 4: "an empty answer once normalised"} and said.disputed == set()
    groups = grouped(said.of)
    assert groups[0].members == (0, 1)
    assert agree(5, 0.4, groups).chosen == 0
    assert agree(5, 0.5, groups).chosen is None  # two of five is not 0.5


def test_a_family_that_cannot_compare_its_candidates_says_so():
    from tests.families.arith import Arithmetic  # a family that gives no behaviours of its own

    with pytest.raises(NotImplementedError, match="the arith family cannot compare candidates"):
        Arithmetic().behaviours(None, {})


def test_agreement_on_a_family_that_cannot_compare_is_refused_naming_its_line(tmp_path):
    """Refused when the file is read, not by every attempt abstaining; best of k needs no
    comparison and is taken."""
    from tests.families.test_arith import DATA, PLUGIN
    from tests.helpers import cli

    body = (
        f"kind: experiment\nname: x\nplugins: [{PLUGIN}]\n"
        f"dataset: {{family: arith, path: {DATA / 'problems.jsonl'}}}\n"
        f"spec: {DATA / 'spec.yaml'}\nverifiers: {DATA / 'verifiers.yaml'}\n"
        "configurations:\n  - name: A\n    gates: true\n    agreement: {k: 3}\n"
    )
    path = tmp_path / "x.yaml"
    path.write_text(body)
    done = cli("experiment", str(path), "--dry-run", "--out", str(tmp_path / "out"))
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert f"{path}:10: configurations.0.agreement: the arith family cannot compare candidates" in done.stderr
    path.write_text(body.replace("{k: 3}", "{k: 3, select: first}"))
    assert cli("experiment", str(path), "--dry-run", "--out", str(tmp_path / "out")).returncode == 0


@pytest.fixture(scope="module")
def median():
    why = unavailable()
    assert why is None, f"the sandbox tests need bubblewrap and /usr/bin/python3 ({why}): make install-test"
    [problem] = [p for p in read_problems(SHIPPED, audit=lambda p: []) if p.id == "HumanEval/47"]
    return problem.in_sandbox(opened("bwrap"))


def program(problem, text: str) -> Program:
    return Program("answer", problem.entry_point, answer=text, examples=tuple(problem.examples))


def test_code_compares_programs_on_the_stated_and_made_up_inputs_in_the_sandbox(median):
    """HumanEval/47 states ``median([-10, 4, 6, 1000, 10, 20]) == 15.0`` (the median is 8.0): two
    right programs agree with each other and fail it alike, so their group is disputed; an
    abstention is left out."""
    right = (
        "def median(l):\n    s = sorted(l)\n    n = len(s)\n"
        "    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2\n"
    )
    also_right = "import statistics\ndef median(l):\n    return statistics.median(l)\n"
    said = family_of("code").behaviours(
        median,
        {
            0: program(median, right),
            1: program(median, also_right),
            2: Program("abstain", "median", reason="no"),
        },
        made=40,
    )
    assert said.unavailable is None and said.left_out == {2: "declined"}
    assert said.disputed == {0, 1} and said.of[0] == said.of[1]
    assert said.record["sources"][:2] == ["stated", "stated"] and "generated" in said.record["sources"]
    assert agree(3, 0.5, grouped(said.of, said.disputed)).cause == DISPUTED
