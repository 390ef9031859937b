"""L3 for the code family: the designer of a problem's subtasks."""

from __future__ import annotations

from dataclasses import dataclass

from vreact.code.artifact import parameters_of
from vreact.code.plan import HelperPlan, design
from vreact.families import Subtask


@dataclass(frozen=True)
class Designer:
    """L3 for code: the problem as one subtask (the whole function under R1's checks), or a
    plan's helpers and the function that calls them (``vreact.code.plan.design``)."""

    checks: tuple[str, ...]
    prompt: str = ""
    entry_point: str = ""

    def single_task(self, text: str) -> Subtask:
        return Subtask("s1", text, "a program that defines the function", self.checks, "executor.s1")

    def design(self, plan: HelperPlan, n: int) -> list[Subtask]:
        parameters = parameters_of(self.prompt, self.entry_point)
        return design(plan, self.prompt, self.entry_point, parameters, self.checks, n)
