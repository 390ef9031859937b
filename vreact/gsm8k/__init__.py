"""GSM8K: grade-school maths word problems, vreact's third family, ``gsm8k``, written outside the
core as any installed package's family is (its entry point in pyproject.toml; no core module
names it).

The executor writes a short Python program whose variables name the problem's quantities and
which prints the answer, and may ``# run`` code first; the finish runs once in the run's sandbox
and its answer is the number it printed. Its gates (``vreact.gsm8k.gates``) check for free what
can be checked: the program parses, runs and prints one number; each arithmetic claim the reply
states agrees with the calculator; a final answer the prose asserts is the printed one; a "how
many" is not negative; and, as a setting of the spec, the answer is whole. Agreement among k
candidates compares their numbers. The scorer compares the answer with the number after the
worked solution's ``####`` as numbers; the worked solution is gold, the scorer's and the probe's
alone (``vreact.gsm8k.faults`` builds the probe's programs from its calculator annotations)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

from pydantic import Field

from vreact.families import (
    Acceptable,
    Behaviours,
    FaultClass,
    Probed,
    Score,
    Settings,
    StepKit,
    Subtask,
    TaskFamily,
    family,
)
from vreact.gsm8k import gates as _gates  # noqa: F401  (register the family's gates)
from vreact.gsm8k.artifact import Solution, solution
from vreact.gsm8k.data import FIELDS, GSM8K, JSONL, Problem, read
from vreact.gsm8k.kit import MathsKit, MathsSteps
from vreact.gsm8k.numbers import number, same
from vreact.sandbox import shared


class GsmSandbox(shared.RunSandbox):
    """A gsm8k run's sandbox: its problems' programs run in it."""

    family = "gsm8k"

    def place(self, tasks: list[Any], source: str) -> list[Any]:
        return [p.in_sandbox(self) for p in tasks]


#: Where a problem outside any run runs its programs (a probe's, a test's): bubblewrap's.
DEFAULT = GsmSandbox("bwrap")


def sandbox_of(problem: Any) -> GsmSandbox:
    return getattr(problem, "sandbox", None) or DEFAULT


class MathsRequirements(Acceptable):
    """L1's answer requirements for a maths problem."""

    whole_number: bool = Field(
        False,
        description="the answer is a whole number (the whole_answer gate): a prior about a dataset whose"
        " answers are whole, as GSM8K's are, so off unless the spec says so",
    )


class MathsDataset(Settings):
    """What a gsm8k dataset selection says beyond the core's."""

    fields: dict[str, str] | None = Field(
        None,
        description="format jsonl: which field of a record holds each part (id, question, answer), those"
        " that differ from the part's name (docs/gsm8k.md)",
    )


class Designer:
    """L3 for a maths problem: the problem as one subtask."""

    def __init__(self, checks: tuple[str, ...]) -> None:
        self.checks = checks

    def single_task(self, text: str) -> Subtask:
        return Subtask("s1", text, "a program that prints the answer, one number", self.checks, "executor.s1")


@family
class Gsm8k(TaskFamily):
    """A grade-school maths word problem, answered by a program that prints one number."""

    name = "gsm8k"
    version = "1"
    runs_code = True
    formats = (GSM8K, JSONL)
    shapes = MappingProxyType({GSM8K: frozenset({"question", "answer"})})
    requirements = MathsRequirements
    dataset_settings = MathsDataset
    step_settings = MathsSteps
    metrics = ("match",)
    default_spec = "gsm8k"
    default_verifiers = "gsm8k"
    judged = MappingProxyType(
        {
            "L3": "a program that prints the answer to a maths word problem (the artifact) against its"
            " design (the paired level, L3)",
            "L1": "a program that prints the answer to a maths word problem, the reasoning around it and"
            " what it printed (the artifact) against the problem's requirements (the paired level, L1)",
        }
    )
    audited = MappingProxyType(
        {"task": "a maths word problem answered by a program", "cited": "its runs", "label": "Problem"}
    )
    noun = "problem"

    def read(
        self, path: str, format: str, limit: int | None = None, fields: dict[str, str] | None = None
    ) -> list[Any]:
        return read(path, format, limit, fields)

    def read_dataset(self, selection: Any, limit: int | None = None) -> list[Any]:
        """The file read in its format, through the dataset's field map (``fields``) if it has one."""
        return self.read(selection.path, selection.record_format, limit, selection.settings.fields)

    def shared(self, selection: Any, sandbox: str = "bwrap") -> GsmSandbox:
        """The run's sandbox, of the kind the experiment names (``bwrap``, or ``none``)."""
        return GsmSandbox(shared.kind_of(sandbox))

    def score(self, task: Problem, answer: str | None, evidence: list[str]) -> Score | None:
        """Right: the answer is the number after the worked solution's ``####`` (commas and ``$``
        removed, compared as numbers: 72.0 is 72). None: the problem has no gold number."""
        gold = task.gold()
        if gold is None:
            return None
        if answer is None:
            return Score(None, {})
        right = _matches(answer, gold)
        return Score(right, {"match": float(right)})

    def score_try(self, task: Problem, artifact: Any, answer: str | None = None) -> bool | None:
        """A judged program, right when the number it printed is the gold one."""
        gold = task.gold()
        if gold is None or not isinstance(artifact, Mapping) or artifact.get("kind") != "answer":
            return None
        return _matches(str(artifact.get("answer") or ""), gold)

    def answer_right(self, task: Any, answer: str) -> bool | None:
        record = task.record if isinstance(task.record, dict) else {}
        gold = number(str(record.get("final") or ""))
        return None if gold is None else _matches(answer, gold)

    def row(self, task: Problem) -> dict[str, Any]:
        """The question and its final number (the worked solution stays in the data file)."""
        record = {"id": task.id, "question": task.question, "final": str(task.final)}
        return {"id": task.id, "question": task.text, "family": self.name, "record": json.dumps(record)}

    def l1(self, task: Problem, spec: Any) -> dict[str, Any]:
        return {"question": task.text, "task": spec.requirements.task}

    def designer(self, l1: dict[str, Any], checks: tuple[str, ...]) -> Designer:
        return Designer(checks)

    def kit(self, ctx: Any, subtask: Subtask, retry: bool, settings: MathsSteps) -> StepKit:
        return MathsKit(ctx.task, subtask, sandbox_of(ctx.task), ctx.budgets.deadline)

    def unit(self, data: dict[str, Any]) -> Solution:
        return Solution.from_input(data)

    def behaviours(
        self,
        task: Any,
        candidates: Mapping[int, Any],
        inputs: Sequence[Any] = (),
        made: int = 0,
        seed: int = 0,
    ) -> Behaviours:
        """Each candidate's printed number (to six decimals, so 72 and 72.0 agree); a candidate
        that declined or printed no number is left out."""
        of: dict[int, Any] = {}
        left: dict[int, str] = {}
        for i, a in candidates.items():
            printed = a.printed() if a.kind == "answer" else None
            if a.kind != "answer":
                left[i] = "declined"
            elif printed is None:
                left[i] = "printed no number"
            else:
                of[i] = round(printed, 6) + 0.0
        record = {"numbers": {str(i): v for i, v in of.items()}}
        why = None if of else "no candidate printed a number"
        return Behaviours(of=of, left_out=left, record=record, unavailable=why)

    def fault_classes(self) -> tuple[FaultClass, ...]:
        from vreact.gsm8k.faults import CLASSES

        return CLASSES

    def probe(self, task: Problem, classes: tuple[FaultClass, ...], spec: Any) -> Probed:
        from vreact.gsm8k.faults import build

        box = sandbox_of(task)
        return build(task, classes, lambda program, prose: solution(program, prose, task.question, box))


def _matches(answer: str, gold: float) -> bool:
    got = number(answer)
    return got is not None and same(got, gold)


__all__ = ["FIELDS", "Gsm8k", "GsmSandbox", "MathsRequirements", "Problem"]
