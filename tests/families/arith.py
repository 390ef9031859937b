"""A second task family, defined outside vreact for its tests: arithmetic word problems.

The executor has one tool, ``calc`` (an arithmetic expression: + - * / and parentheses over
numbers), and finishes with a number; the gate ``computed`` accepts an answer only when the
``calc`` tool computed that number in the try; the scorer says whether the answer equals the
gold number. Loaded with ``--plugin tests.families.arith`` (or as a file, or through an installed
package's entry point), it registers the family ``arith`` and its gate: vreact is not edited for
it. Its records are JSON lines ``{"id", "question", "answer"}``; the answer is gold.
"""

from __future__ import annotations

import ast
import operator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

import vreact
from vreact.families import (
    FaultClass,
    Probed,
    Score,
    Settings,
    Step,
    StepKit,
    Subtask,
    TaskFamily,
    read_selection,
    select,
)
from vreact.marking import mark
from vreact.model import parse_json_object
from vreact.origin import tag


class Problem(BaseModel):
    """One word problem: the text the roles read, and the gold answer (never a role's)."""

    model_config = ConfigDict(extra="forbid")

    id: str
    question: str
    answer: str

    @field_validator("answer", mode="before")
    @classmethod
    def _number(cls, v: Any) -> str:
        return str(v)

    @field_validator("answer")
    @classmethod
    def _gold(cls, v: str) -> str:
        return tag(v, "gold")  # for the scorer only: the context assembler refuses it to every role

    @property
    def text(self) -> str:
        return self.question


@dataclass(frozen=True)
class Worked:
    """A try's final: a number (kind ``answer``) or an abstention, with what ``calc`` computed."""

    kind: str
    question: str
    answer: Any = None
    reason: str = ""
    computed: tuple[str, ...] = ()
    evidence: list[str] = field(default_factory=list)

    def identity(self) -> dict[str, Any]:
        return {"kind": self.kind, "answer": self.answer, "reason": self.reason}

    def gate_input(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "question": self.question,
            "answer": self.answer,
            "reason": self.reason,
            "computed": list(self.computed),
        }

    @classmethod
    def from_input(cls, data: dict[str, Any]) -> Worked:
        return cls(
            data["kind"],
            data["question"],
            data.get("answer"),
            data.get("reason", ""),
            tuple(data["computed"]),
        )

    def shown(self, marked: bool = False) -> Any:
        if self.kind == "abstain":
            return {"abstain": self.reason}
        return {"answer": self.answer, "computed": [mark(c) if marked else c for c in self.computed]}


_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


def evaluate(expression: str) -> float:
    """An arithmetic expression's value (numbers, + - * /, parentheses, unary minus)."""

    def walk(node: ast.AST) -> float:
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
            return float(node.value)
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](walk(node.left), walk(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -walk(node.operand)
        raise ValueError("only numbers, + - * / and parentheses")

    return walk(ast.parse(expression, mode="eval").body)


def number(text: Any) -> str | None:
    """A number as the family writes it (``12``, ``2.5``), or None when ``text`` is none."""
    try:
        value = float(str(text).replace(",", "").strip())
    except ValueError:
        return None
    return str(int(value)) if value.is_integer() else f"{value:g}"


SCHEMA = {
    "type": "object",
    "properties": {
        "thought": {"type": "string", "maxLength": 120},
        "action": {"type": "string", "enum": ["calc", "finish", "abstain"]},
        "input": {"type": "string", "maxLength": 120},
    },
    "required": ["thought", "action", "input"],
    "additionalProperties": False,
}
SYSTEM = (
    "You solve an arithmetic word problem. Reply with ONE JSON object: "
    '{"thought": "...", "action": "calc|finish|abstain", "input": "..."}\n'
    "- calc: input is an arithmetic expression; you get its value\n"
    "- finish: input is the answer, a number calc gave you\n"
    "- abstain: input says why you cannot solve it"
)


class Dataset(Settings):
    """The family's own dataset setting (an experiment's ``dataset:`` key beside the core's)."""

    containing: str | None = Field(None, min_length=1, description="keep only problems whose text has this")


class Steps(Settings):
    """The family's own step setting (a configuration's key beside the core's)."""

    decimals: int | None = Field(
        None, ge=0, le=12, description="calc rounds what it computes to this many decimals (None: as is)"
    )


class CalcKit(StepKit):
    """One try: the calc tool, and a finish that becomes a ``Worked``."""

    def __init__(self, subtask: Subtask, decimals: int | None = None) -> None:
        super().__init__(SCHEMA, subtask.checks, "Reply now with ONE JSON object: finish or abstain.")
        self.subtask = subtask
        self.decimals = decimals

    def parse(self, text: str) -> Step | None:
        data = parse_json_object(text)
        if data is None or data.get("action") not in ("calc", "finish", "abstain"):
            return None
        try:
            return Step.model_validate(data)
        except ValidationError:
            return None

    def messages(self, context: dict[str, Any]) -> list[dict[str, str]]:
        lines = [f"Problem: {context['subtask.objective']}"]
        rejected = [f"- {f['cause']}: {f['detail']}" for f in context.get("failures.own") or []]
        lines += ["Earlier tries were rejected:", *rejected] if rejected else []
        steps = context.get("try.steps") or []
        lines += [
            f"{i}. {(parse_json_object(text) or {}).get('input', '')} -> {obs}"
            for i, (text, obs) in enumerate(steps, 1)
        ]
        return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "\n".join(lines)}]

    def act(self, step: Step) -> tuple[str, bool]:
        try:
            computed = evaluate(step.input)
            value = number(round(computed, self.decimals) if self.decimals is not None else computed)
        except (ValueError, SyntaxError, ZeroDivisionError) as e:
            return f"cannot compute: {e}", False
        assert value is not None
        self.retrieved.add(value)
        return f"= {value}", False

    def artifact(self, step: Step) -> Worked:
        computed = tuple(sorted(self.retrieved))
        if step.action == "abstain":
            return Worked(
                "abstain", self.subtask.objective, reason=step.input or step.thought, computed=computed
            )
        return Worked("answer", self.subtask.objective, answer=step.input, computed=computed)


@dataclass(frozen=True)
class Designer:
    """The task as one subtask: find the number, with R1's checks."""

    checks: tuple[str, ...]

    def single_task(self, text: str) -> Subtask:
        return Subtask("s1", text, "a number calc computed", self.checks, "executor.s1")


#: The probe's classes: the gold number as calc computed it, a control that must pass, and the
#: faults the gate ``computed`` should catch.
CLASSES = (
    FaultClass("gold", "gold", "the gold number, which calc computed"),
    FaultClass("gold_written_out", "control", "the gold number as a decimal (12.0), which calc computed"),
    FaultClass("uncomputed", "fault", "the gold number, but calc computed nothing"),
    FaultClass("off_by_one", "fault", "one more than the number calc computed"),
    FaultClass("in_words", "fault", "an answer in words, not a number"),
)


def probed(problem: Problem, name: str) -> list[Worked]:
    """One class's artifacts of a problem, built from its gold number (no model)."""
    gold = str(problem.answer)
    q = problem.question
    built = {
        "gold": Worked("answer", q, answer=gold, computed=(gold,)),
        "gold_written_out": Worked("answer", q, answer=f"{float(gold):.1f}", computed=(gold,)),
        "uncomputed": Worked("answer", q, answer=gold),
        "off_by_one": Worked("answer", q, answer=number(float(gold) + 1), computed=(gold,)),
        "in_words": Worked("answer", q, answer="a dozen or so", computed=(gold,)),
    }
    return [built[name]]


@vreact.family
class Arithmetic(TaskFamily):
    """Arithmetic word problems with a calculator."""

    name = "arith"
    version = "0.1"
    formats = ("jsonl",)
    metrics = ("exact", "abs_error")
    dataset_settings = Dataset
    step_settings = Steps

    def read(self, path: str, format: str, limit: int | None = None) -> list[Any]:
        problems = []
        for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                problems.append(Problem.model_validate_json(line))
            except ValidationError as e:
                error = e.errors()[0]
                where = ".".join(str(p) for p in error["loc"])
                raise ValueError(f"{path}:{n}: {where}: {error['msg']}") from None
        return problems[:limit]

    def tasks(self, selection: Any) -> list[Any]:
        """The file's problems, those ``containing`` a text when it is given, then ``task_ids``
        and ``limit``."""
        containing = selection.settings.containing
        kept = [p for p in read_selection(self, selection) if containing is None or containing in p.question]
        return select(kept, selection.task_ids, selection.limit, selection.path)

    def score(self, task: Problem, answer: str | None, evidence: list[str]) -> Score:
        if answer is None:
            return Score(None, {})
        got, gold = number(answer), number(task.answer)
        error = abs(float(got) - float(gold)) if got is not None and gold is not None else float("inf")
        return Score(got == gold, {"exact": float(got == gold), "abs_error": min(error, 1e9)})

    def designer(self, l1: dict[str, Any], checks: tuple[str, ...]) -> Designer:
        return Designer(checks)

    def kit(self, ctx: Any, subtask: Subtask, retry: bool, settings: Steps) -> StepKit:
        return CalcKit(subtask, settings.decimals)

    def unit(self, data: dict[str, Any]) -> Worked:
        return Worked.from_input(data)

    def fault_classes(self) -> tuple[FaultClass, ...]:
        return CLASSES

    def probe(self, task: Problem, classes: tuple[FaultClass, ...], spec: Any) -> Probed:
        return Probed({c.name: probed(task, c.name) for c in classes})


@vreact.gate("computed")
def computed():
    """The answer is a number the calc tool computed in the try."""

    def check(artifact: Worked) -> vreact.GateResult:
        value = number(artifact.answer)
        if value is None:
            return vreact.reject("not_a_number", f"{artifact.answer!r} is no number")
        if value not in artifact.computed:
            return vreact.reject(
                "not_computed", f"{value} is not a number calc gave ({', '.join(artifact.computed)})"
            )
        return vreact.accept()

    return check
