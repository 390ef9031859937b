"""The gsm8k family's artifact: a ``Solution`` (a try's final: the program, the prose around it,
what the program printed when it ran in the sandbox, and the number it printed, the answer), and
how a reply becomes one."""

from __future__ import annotations

import io
import tokenize
from dataclasses import dataclass, field
from typing import Any

from vreact.gsm8k.numbers import NUMBER, number
from vreact.marking import mark

#: What a solution keeps of its program's output (characters).
KEPT = 600


@dataclass(frozen=True)
class Solution:
    """A try's final: a program (kind ``answer``) or an abstention. ``answer`` is the last number
    the program printed, as printed (empty: it printed none); ``prose``, the reply's text around
    the program, whose arithmetic claims a gate recomputes with the program's comments;
    ``output`` and ``error``, what its run in the sandbox printed and how it ended (``error``:
    the exception and its line, or why it was stopped; empty: it ran to its end). ``question``
    is what a gate reads of the task (never gold)."""

    kind: str
    program: str = ""
    prose: str = ""
    answer: str = ""
    output: str = ""
    error: str = ""
    reason: str = ""
    question: str = ""
    evidence: list[str] = field(default_factory=list)

    def identity(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "program": self.program,
            "prose": self.prose,
            "answer": self.answer,
            "reason": self.reason,
        }

    def gate_input(self) -> dict[str, Any]:
        return {**self.identity(), "output": self.output, "error": self.error, "question": self.question}

    @classmethod
    def from_input(cls, data: dict[str, Any]) -> Solution:
        program, prose, answer, output, error, reason, question = (
            str(data.get(k) or "")
            for k in ("program", "prose", "answer", "output", "error", "reason", "question")
        )
        return cls(str(data["kind"]), program, prose, answer, output, error, reason, question)

    def shown(self, marked: bool = False) -> Any:
        if self.kind == "abstain":
            return {"abstain": self.reason}
        shown = {
            "reasoning": self.prose,
            "program": self.program,
            "printed": self.output if not self.error else f"{self.output}\n{self.error}".strip(),
        }
        return {k: mark(v) if marked else v for k, v in shown.items()}

    def comments(self) -> str:
        """The program's comments, a line each (where it does not tokenize: each line's text
        after its first ``#``)."""
        try:
            tokens = tokenize.generate_tokens(io.StringIO(self.program).readline)
            return "\n".join(t.string.lstrip("#").strip() for t in tokens if t.type == tokenize.COMMENT)
        except (tokenize.TokenError, SyntaxError, IndentationError):
            return "\n".join(
                line.partition("#")[2].strip() for line in self.program.splitlines() if "#" in line
            )

    def printed(self) -> float | None:
        """The number the answer is (None: the program printed none)."""
        return number(self.answer) if self.answer else None


def last_number(output: str) -> str:
    """The last number in ``output``, as printed (``$`` and a trailing ``.`` dropped)."""
    found = NUMBER.findall(output)
    return found[-1].replace("$", "").replace(" ", "").rstrip(".") if found else ""


def one_number(output: str) -> bool:
    """Whether ``output`` is one number and nothing else."""
    return number(output.strip()) is not None


def ran(program: str, result: Any) -> tuple[str, str]:
    """What a sandbox run of ``program`` printed (cut to ``KEPT``) and how it ended: the
    exception and its line, why it was stopped, or empty."""
    output = (result.output or "")[:KEPT]
    if not result.marked:
        return output, f"stopped: {result.killed}"
    if result.stopped:
        return output, f"stopped: {result.stopped}"
    if result.error:
        where = f" (line {result.line})" if result.line else ""
        return output, f"{result.error}{where}"
    return output, ""


def solution(
    program: str, prose: str, question: str, sandbox: Any, deadline: float | None = None
) -> Solution:
    """A finish: ``program`` run once in ``sandbox``, its answer the last number it printed."""
    result = sandbox.run(program, mode="run", deadline=deadline)
    output, error = ran(program, result)
    return Solution("answer", program, prose, last_number(output), output, error, question=question)
