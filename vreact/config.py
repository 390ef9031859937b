"""Configurations: named compositions of components, one parameter of one codebase."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class BudgetLimits(BaseModel):
    """Budget limits of one attempt (DESIGN.md defaults). Budgets only count up."""

    model_config = ConfigDict(extra="forbid")

    step_cap: int = Field(12, ge=1, description="executor steps per try")
    steps: int = Field(40, ge=1, description="executor steps per attempt")
    r1: int = Field(3, ge=1, description="executor tries per subtask (R1 unit)")
    plan: int = Field(3, ge=1, description="plan tries (L2)")
    r2: int = Field(2, ge=0, description="re-descents after an R2 integration reject")
    r3: int = Field(2, ge=0, description="re-descents after an R3 acceptance reject")


class GuardSettings(BaseModel):
    """Loop guards (seed 003): byte-identical repeated tool calls."""

    model_config = ConfigDict(extra="forbid")

    repeat_hint: int = Field(3, ge=2, description="identical consecutive calls before a hint")
    repeat_stop: int = Field(5, ge=2, description="identical consecutive calls before a stop")


class Configuration(BaseModel):
    """Which components run. Adjacent configurations differ by one switch."""

    model_config = ConfigDict(extra="forbid")

    name: str
    planner: bool = False
    guards: bool = False
    gates: bool = False
    judges: bool = False
    critic: bool = False
    context_manager: bool = False
    budgets: BudgetLimits = Field(default_factory=BudgetLimits)
    guard: GuardSettings = Field(default_factory=GuardSettings)
    temperature: float = Field(0.2, ge=0.0, le=2.0)
    max_tokens: int = Field(256, ge=16, description="completion tokens per model call")

    @property
    def verified(self) -> bool:
        """True when anything checks the executor (then steps are parsed fail-closed)."""
        return self.gates or self.guards
