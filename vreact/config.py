"""Configurations: named compositions of components, one parameter of one codebase."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from vreact.model import GenerateSettings

#: The roles that call a model (a models file or experiment may give each its own model, and a
#: configuration its own call settings).
CALL_ROLES = ("planner", "executor", "judge", "critic", "context_manager")


class BudgetLimits(BaseModel):
    """Budget limits of one attempt (DESIGN.md defaults). Budgets only count up."""

    model_config = ConfigDict(extra="forbid")

    step_cap: int = Field(12, ge=1, description="executor steps per try")
    steps: int = Field(40, ge=1, description="executor steps per attempt")
    r1: int = Field(3, ge=1, description="executor tries per subtask (R1 unit)")
    plan: int = Field(3, ge=1, description="plan tries (L2)")
    r2: int = Field(2, ge=0, description="re-descents after an R2 integration reject")
    r3: int = Field(2, ge=0, description="re-descents after an R3 acceptance reject")
    wall_clock_s: float = Field(0.0, ge=0, description="seconds per attempt (0: no limit)")
    tokens: int = Field(0, ge=0, description="prompt + completion tokens per attempt (0: no limit)")


class GuardSettings(BaseModel):
    """Loop guards (seed 003): byte-identical repeated tool calls."""

    model_config = ConfigDict(extra="forbid")

    repeat_hint: int = Field(3, ge=2, description="identical consecutive calls before a hint")
    repeat_stop: int = Field(5, ge=2, description="identical consecutive calls before a stop")
    text_repeat: bool = Field(False, description="the text repetition guard: near-verbatim thoughts")
    text_similarity: float = Field(0.9, gt=0, le=1, description="similarity ratio of a near-repeat")
    text_hint: int = Field(2, ge=1, description="consecutive near-repeated thoughts before a hint")
    text_stop: int = Field(4, ge=1, description="consecutive near-repeated thoughts before a stop")
    duplicate_search: bool = Field(
        False, description="roll back a search already run in this try that returned results"
    )
    duplicate_rollbacks: int = Field(3, ge=0, description="rollbacks of duplicate searches per try")


class DeReActSettings(BaseModel):
    """The critic's threshold and the brain's history window (seed 000)."""

    model_config = ConfigDict(extra="forbid")

    kappa_min: float = Field(0.7, ge=0, le=1, description="the critic's least confidence to accept")
    window: int = Field(25, ge=1, description="W: raw steps of the try the brain sees (with a CM)")
    initial: int = Field(5, ge=0, description="m: of those, the first steps kept")


class MemberRef(BaseModel):
    """A member of the executor's step pipeline, by registered name, with its arguments."""

    model_config = ConfigDict(extra="forbid")

    name: str
    args: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _bare_name(cls, v: Any) -> Any:
        return {"name": v} if isinstance(v, str) else v

    @field_validator("name")
    @classmethod
    def _registered(cls, name: str) -> str:
        from vreact.pipeline import build_member, member_names

        if name not in member_names():
            build_member(name)  # raises, naming the closest registered member
        return name


class CallSettings(BaseModel):
    """One role's model-call settings; a field left out is the configuration's."""

    model_config = ConfigDict(extra="forbid")

    temperature: float | None = Field(None, ge=0.0, le=2.0)
    max_tokens: int | None = Field(None, ge=16, description="completion tokens per model call")


class Configuration(BaseModel):
    """Which components run. Adjacent configurations differ by one switch."""

    model_config = ConfigDict(extra="forbid")

    name: str
    planner: bool = False
    guards: bool = False
    gates: bool = False
    judges: bool = False
    critic: bool = Field(False, description="the DeReAct critic: authorises each proposal before it runs")
    context_manager: bool = Field(
        False,
        description="the DeReAct context manager: an evidence-only State, the brain's history window, "
        "and the certification (or veto) of a proposed final",
    )
    dereact: DeReActSettings = Field(default_factory=lambda: DeReActSettings())
    budgets: BudgetLimits = Field(default_factory=BudgetLimits)
    guard: GuardSettings = Field(default_factory=GuardSettings)
    final_answer_recovery: bool = Field(
        False, description="when a try hits the step cap, ask once more for finish or abstain only"
    )
    profile: Literal["simple", "benchmark"] | None = Field(
        None,
        description="the executor's context profile: simple keeps the last keep_last_k tool results "
        "in full; benchmark also summarises the oldest steps past 75% of context_tokens",
    )
    keep_last_k: int | None = Field(
        None, ge=-1, description="the profile's kept results (-1: all; default 5)"
    )
    context_tokens: int = Field(8192, ge=256, description="the benchmark profile's context size")
    pipeline: list[MemberRef] = Field(
        default_factory=list,
        description="more members of the executor's step pipeline, by registered name (run after "
        "the parse gate and the repetition guard); a member's stop is routed like an R1 reject",
    )
    limit: int | None = Field(
        None, ge=1, description="run this configuration on the first LIMIT tasks only (default: all)"
    )
    temperature: float = Field(0.2, ge=0.0, le=2.0)
    max_tokens: int = Field(256, ge=16, description="completion tokens per model call")
    calls: dict[str, CallSettings] = Field(
        default_factory=dict,
        description="per-role overrides of temperature and max_tokens, e.g. {judge: {temperature: 0.1}}"
        f" (roles: {', '.join(CALL_ROLES)})",
    )

    @field_validator("calls")
    @classmethod
    def _call_roles(cls, calls: dict[str, CallSettings]) -> dict[str, CallSettings]:
        for role in calls:
            if role not in CALL_ROLES:
                raise ValueError(f"unknown role {role!r} (roles: {', '.join(CALL_ROLES)})")
        return calls

    @model_validator(mode="after")
    def _no_idle_settings(self) -> Configuration:
        """A setting its component never reads is refused, not silently ignored."""
        g, given = self.guard, self.model_fields_set
        if (g.text_repeat or g.duplicate_search) and not self.guards:
            raise ValueError(
                "guard.text_repeat and guard.duplicate_search are loop guards: they need guards: true"
            )
        if self.keep_last_k is not None and self.profile is None:
            raise ValueError("keep_last_k needs a profile (simple or benchmark)")
        if "context_tokens" in given and self.profile != "benchmark":
            raise ValueError("context_tokens is the benchmark profile's: it needs profile: benchmark")
        if "dereact" in given and not (self.critic or self.context_manager):
            raise ValueError("dereact settings need critic: true or context_manager: true")
        return self

    def settings_for(self, role: str, seed: int | None = None) -> GenerateSettings:
        """How ``role``'s model calls are made: its overrides, else this configuration's values."""
        own = self.calls.get(role) or CallSettings()
        return GenerateSettings(
            temperature=self.temperature if own.temperature is None else own.temperature,
            max_tokens=self.max_tokens if own.max_tokens is None else own.max_tokens,
            seed=seed,
        )

    @property
    def verified(self) -> bool:
        """True when anything checks the executor (gates, guards, judges or pipeline members):
        then its results go through R1 (and the chain through R2, the answer through R3), each
        verifier running its gates if gates are on and its judge if judges are on."""
        return (
            self.gates
            or self.guards
            or self.judges
            or self.critic
            or self.context_manager
            or bool(self.pipeline)
        )
