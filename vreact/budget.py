"""Budgets that only count up: a spent budget never comes back inside an attempt."""

from __future__ import annotations

from dataclasses import dataclass

from vreact.config import BudgetLimits
from vreact.v import V


@dataclass
class Budget:
    """A named counter with a limit. ``used`` only ever increases."""

    name: str
    limit: int
    used: int = 0

    @property
    def left(self) -> int:
        return max(self.limit - self.used, 0)

    @property
    def spent(self) -> bool:
        return self.used >= self.limit

    def spend(self, amount: int = 1) -> int:
        """Count ``amount`` up and return what is left. Never resets."""
        if amount < 0:
            raise ValueError("budgets only count up")
        self.used += amount
        return self.left


class Budgets:
    """All budgets of one attempt: plan tries, R2 and R3 re-descents, the attempt's executor
    steps, R1 tries per subtask (``r1(component)``) and each try's step cap (``step_cap()``)."""

    def __init__(self, limits: BudgetLimits) -> None:
        self.limits = limits
        self.plan = Budget("plan", limits.plan)
        self.r2 = Budget("r2", limits.r2)
        self.r3 = Budget("r3", limits.r3)
        self.steps = Budget("steps", limits.steps)
        self._r1: dict[str, Budget] = {}

    def r1(self, component: str) -> Budget:
        """The tries of one subtask's executor (one budget per component, never re-created)."""
        if component not in self._r1:
            self._r1[component] = Budget(f"r1:{component}", self.limits.r1)
        return self._r1[component]

    def step_cap(self) -> Budget:
        """A new try's steps."""
        return Budget("step_cap", self.limits.step_cap)

    def of(self, verifier: str, component: str) -> Budget:
        """The budget a rejection by ``verifier`` spends (vreact/v.py)."""
        name = V[verifier].budget
        return self.r1(component) if name == "r1" else getattr(self, name)
