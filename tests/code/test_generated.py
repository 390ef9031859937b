"""Inputs made up with Hypothesis from the prompt alone: from the type hints where the prompt
has them, else from the stated examples' values; seeded, the same whatever else is loaded, and
written nowhere."""

from __future__ import annotations

import ast
import os
import subprocess
import sys

import pytest

from tests.conftest import REPO
from vreact.code.data import SHIPPED, read_problems
from vreact.code.generated import generated, strategy


@pytest.fixture(scope="module")
def shipped():
    return {p.id: p for p in read_problems(SHIPPED, audit=lambda p: [])}


def made(problem, n=100, seed=0):
    return generated(problem.prompt, problem.entry_point, problem.examples, n=n, seed_=seed)


def test_the_type_hints_decide_the_types(shipped):
    """HumanEval/0: ``has_close_elements(numbers: List[float], threshold: float)``."""
    inputs = made(shipped["HumanEval/0"])
    assert len(inputs) == 100 and len(set(map(repr, inputs))) == 100
    for numbers, threshold in inputs:
        assert isinstance(numbers, list) and all(type(x) is float for x in numbers)
        assert type(threshold) is float


def test_without_hints_the_stated_values_give_types_signs_and_characters(shipped):
    """HumanEval/78's ``hex_key(num)``: strings of the characters its examples use; /94's
    ``skjkasdkd(lst)``: lists of integers, none negative as none stated is, none empty."""
    stated = set("".join(ast.literal_eval(a)[0] for a, _ in shipped["HumanEval/78"].examples))
    hex_inputs = made(shipped["HumanEval/78"])
    assert hex_inputs and all(type(s) is str and set(s) <= stated for (s,) in hex_inputs)
    lists = made(shipped["HumanEval/94"])
    assert lists and all(
        type(v) is list and v and all(type(x) is int and x >= 0 for x in v) for (v,) in lists
    )


def test_the_same_seed_gives_the_same_inputs_and_another_seed_others(shipped):
    problem = shipped["HumanEval/120"]
    assert made(problem, seed=3) == made(problem, seed=3)
    assert made(problem, seed=3) != made(problem, seed=4)


def test_nothing_to_go_on_is_no_input():
    bare = 'def f(x):\n    """Some function."""\n'
    assert strategy(bare, "f", []) is None and generated(bare, "f", []) == []
    assert generated("no definition here", "f", [("(1,)", "2")]) == []


def test_other_modules_loaded_change_nothing_and_nothing_is_written(tmp_path):
    """Hypothesis mines constants from every local module loaded: ``generated`` does not, so a
    process that imported more makes the same inputs; and no ``.hypothesis`` folder appears in
    the working folder."""
    script = (
        "import sys\n"
        "if sys.argv[1] == 'more':\n"
        "    import vreact.cli, vreact.report, tests.code.test_examples\n"
        "from vreact.code.data import read_problems\n"
        "from vreact.code.generated import generated\n"
        "ps = {p.id: p for p in read_problems('humaneval', audit=lambda p: [])}\n"
        "for k in ('HumanEval/0', 'HumanEval/12', 'HumanEval/94'):\n"
        "    p = ps[k]\n"
        "    print(repr(generated(p.prompt, p.entry_point, p.examples, n=100, seed_=1)))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    outs = [
        subprocess.run(
            [sys.executable, "-c", script, which],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for which in ("few", "more")
    ]
    assert outs[0] == outs[1] and outs[0].count("\n") == 3
    assert list(tmp_path.iterdir()) == []
