"""Budgets that only count up: a spent budget never comes back inside an attempt."""

from __future__ import annotations

from dataclasses import dataclass, field


class BudgetSpent(Exception):
    """Raised when a spent budget is asked for more."""

    def __init__(self, budget: Budget) -> None:
        super().__init__(f"budget {budget.name!r} spent ({budget.used}/{budget.limit})")
        self.budget = budget


@dataclass
class Budget:
    """A named counter with a limit. `used` only ever increases."""

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
        """Count `amount` up and return what is left. Never resets."""
        if amount < 0:
            raise ValueError("budgets only count up")
        self.used += amount
        return self.left


@dataclass
class Budgets:
    """All budgets of one attempt, keyed by name (e.g. ``r1:s1``, ``steps``)."""

    limits: dict[str, int]
    _budgets: dict[str, Budget] = field(default_factory=dict)

    def __getitem__(self, name: str) -> Budget:
        if name not in self._budgets:
            kind = name.split(":", 1)[0]
            self._budgets[name] = Budget(name, self.limits[kind])
        return self._budgets[name]

    def snapshot(self) -> dict[str, int]:
        """How much of each budget has been used, for records and tests."""
        return {name: b.used for name, b in self._budgets.items()}
