"""Budgets that only count up: a spent budget never comes back inside an attempt."""

from __future__ import annotations

import sys
import time
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


class BudgetStop(Exception):
    """A model call the attempt may not make, or that its budget cut: the attempt's tokens or
    wall clock are spent (``cause``: ``token_budget`` or ``wall_clock``). The controller turns
    it into a ``budget`` verdict (verified configurations) or an abstention with that cause;
    ``component`` is where the work stopped, filled in on the way up."""

    def __init__(self, cause: str, detail: str, component: str = "") -> None:
        super().__init__(f"{cause}: {detail}")
        self.cause, self.detail, self.component = cause, detail, component


class Budgets:
    """All budgets of one attempt: plan tries, R2 and R3 re-descents, the attempt's executor
    steps, R1 tries per subtask (``r1(component)``), each try's step cap (``step_cap()``), and
    the attempt's tokens and wall clock (``exhausted()``, ``allowance()``; both off by default).
    The tokens and the wall clock hold at every model call (the attempt context's guard)."""

    def __init__(self, limits: BudgetLimits) -> None:
        self.limits = limits
        self.plan = Budget("plan", limits.plan)
        self.r2 = Budget("r2", limits.r2)
        self.r3 = Budget("r3", limits.r3)
        self.steps = Budget("steps", limits.steps)
        self.tokens = Budget("tokens", limits.tokens or sys.maxsize)  # 0: no limit
        self.deadline = time.monotonic() + limits.wall_clock_s if limits.wall_clock_s else None
        self._r1: dict[str, Budget] = {}

    def r1(self, component: str) -> Budget:
        """The tries of one subtask's executor (one budget per component, never re-created)."""
        if component not in self._r1:
            self._r1[component] = Budget(f"r1:{component}", self.limits.r1)
        return self._r1[component]

    def step_cap(self) -> Budget:
        """A new try's steps."""
        return Budget("step_cap", self.limits.step_cap)

    def exhausted(self) -> tuple[str, str] | None:
        """(cause, detail) when the attempt's wall clock or tokens are spent, else None."""
        if self.deadline is not None and time.monotonic() >= self.deadline:
            return "wall_clock", self.wall_clock_detail()
        if self.tokens.spent:
            return "token_budget", f"the attempt's {self.tokens.limit} tokens are spent ({self.tokens.used})"
        return None

    def attempt_spent(self) -> tuple[str, str] | None:
        """(cause, detail) when the attempt's tokens, wall clock or executor steps are spent."""
        if self.steps.spent:
            return self.exhausted() or ("step_budget", "the attempt's executor steps are spent")
        return self.exhausted()

    def wall_clock_detail(self) -> str:
        return f"the attempt's {self.limits.wall_clock_s:g} s are spent"

    def allowance(self, max_tokens: int) -> int:
        """The completion tokens the next model call may take: ``max_tokens``, capped by the
        tokens left (so an attempt's tokens exceed its budget by at most its last call's prompt).
        Raises ``BudgetStop`` when the tokens or the wall clock are already spent: no call starts
        then (``deadline`` is when the wall clock ends one in flight)."""
        spent = self.exhausted()
        if spent is not None:
            raise BudgetStop(*spent)
        return min(max_tokens, self.tokens.left) if self.limits.tokens else max_tokens

    def of(self, verifier: str, component: str) -> Budget:
        """The budget a rejection by ``verifier`` spends (vreact/v.py)."""
        name = V[verifier].budget
        return self.r1(component) if name == "r1" else getattr(self, name)
