"""Configurations: named compositions of components, one parameter of one codebase."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.fields import FieldInfo
from pydantic.json_schema import GetJsonSchemaHandler, JsonSchemaValue
from pydantic_core import PydanticUndefined, core_schema

from vreact.model import GenerateSettings

#: The roles that call a model (a models file or experiment may give each its own model, and a
#: configuration its own call settings).
CALL_ROLES = ("planner", "executor", "judge", "critic", "context_manager", "tester")
#: The roles a model may be given for: each calling role, and ``default`` for those without one.
MODEL_ROLES = ("default", *CALL_ROLES)


def known_roles(by_role: dict[str, Any], roles: tuple[str, ...] = MODEL_ROLES) -> dict[str, Any]:
    """``by_role`` when each key is one of ``roles``; else the error naming them."""
    for role in by_role:
        if role not in roles:
            raise ValueError(f"unknown role {role!r} (roles: {', '.join(roles)})")
    return by_role


# --- who reads which setting ------------------------------------------------------------------


@dataclass(frozen=True)
class Component:
    """A component that reads settings: how an error names it, and when a configuration runs it
    (the same switches the controller and the step pipeline are built from)."""

    title: str
    runs: Callable[[Configuration], bool]


#: Every component a configuration's settings belong to. A setting declares its reader with
#: ``setting(NAME, ...)``; validation refuses a setting given to a configuration that does not run
#: its reader (``idle_settings``), so nothing is accepted and ignored.
COMPONENTS: dict[str, Component] = {
    "executor": Component("the executor", lambda c: True),
    "runner": Component("the experiment runner", lambda c: True),
    "planner": Component("the planner", lambda c: c.planner),
    # k candidates are no retries, and no rejection of theirs re-descends
    "R1": Component(
        "the R1 unit verifier (it re-tries a subtask; not with k candidates)",
        lambda c: c.verified and not c.sampled,
    ),
    # a verifier with nothing to check never rejects: its budget is spent only by gates or judges
    "plan_verifier": Component(
        "the plan verifier (a planner, with gates or judges)", lambda c: c.planner and (c.gates or c.judges)
    ),
    "R2": Component(
        "the R2 integration verifier (a planner, with gates or judges)",
        lambda c: c.planner and (c.gates or c.judges),
    ),
    "R3": Component(
        "the R3 acceptance verifier (gates or judges; its re-descents not with k candidates)",
        lambda c: (c.gates or c.judges) and not c.sampled,
    ),
    "judges": Component("the judges", lambda c: c.judges),
    "guards": Component("the loop guards", lambda c: c.guards),
    "text_repetition": Component(
        "the text repetition guard (guards and guard.text_repeat)", lambda c: c.guards and c.guard.text_repeat
    ),
    "critic": Component("the DeReAct critic", lambda c: c.critic),
    "context_manager": Component("the DeReAct context manager", lambda c: c.context_manager),
    # their model calls: switched on, or named in the configuration's own pipeline (with its args)
    "critic_calls": Component(
        "the critic (critic: true, or named in pipeline)", lambda c: c.critic or c.runs_member("critic")
    ),
    "context_manager_calls": Component(
        "the context manager (context_manager: true, or named in pipeline)",
        lambda c: c.context_manager or c.runs_member("context_manager"),
    ),
    # a configuration's own temperature and max_tokens: read by each role without its own
    "temperature": Component(
        "the roles without calls.<role>.temperature", lambda c: c.takes_default("temperature")
    ),
    "max_tokens": Component(
        "the roles without calls.<role>.max_tokens", lambda c: c.takes_default("max_tokens")
    ),
    # a configuration's own default model: read by each role it runs without a model of its own
    "own_default_model": Component(
        "the roles without models.<role>", lambda c: any(r not in c.models for r in c.roles_called())
    ),
    # its own verifier set: read by the verifiers' gates and judges
    "verifiers": Component("the verifiers (gates or judges)", lambda c: c.gates or c.judges),
    "profile": Component("the context profile", lambda c: c.profile is not None),
    # candidates: k of them (1, as without agreement); best of k or agreement among them
    "candidates": Component("the controller's candidates (without a planner)", lambda c: not c.planner),
    "sampling": Component("k candidates (agreement.k above 1)", lambda c: c.sampled),
    "agreement": Component(
        "agreement among candidates (agreement.k above 1, select: agree)",
        lambda c: c.sampled and c.agreement.select == "agree",
    ),
    "tester": Component(
        "the tester (agreement among candidates, with agreement.tester)",
        lambda c: c.sampled and c.agreement.select == "agree" and c.agreement.tester,
    ),
    "benchmark_profile": Component("the benchmark context profile", lambda c: c.profile == "benchmark"),
}
#: The component each calling role's model calls (and call settings) belong to.
ROLE_COMPONENT = {
    "planner": "planner",
    "executor": "executor",
    "judge": "judges",
    "critic": "critic_calls",
    "context_manager": "context_manager_calls",
    "tester": "tester",
}


def setting(reader: str, default: Any = PydanticUndefined, **field: Any) -> Any:
    """A field read by the component ``reader`` (a name of ``COMPONENTS``): a pydantic ``Field``
    that declares its reader (kept in the JSON Schema too, as ``read_by``)."""
    assert reader in COMPONENTS, reader
    return Field(default, json_schema_extra={"read_by": reader}, **field)


def reader_of(info: FieldInfo) -> str | None:
    """The component a field declares as its reader (None: a switch, a name or a group)."""
    extra = info.json_schema_extra
    return extra.get("read_by") if isinstance(extra, dict) else None  # type: ignore[return-value]


class SettingError(ValueError):
    """A setting refused by the object that holds it. ``path`` is where it is, below that object
    (the loader adds it to the error's location, so the message names its line)."""

    def __init__(self, path: tuple[str | int, ...], message: str) -> None:
        super().__init__(message)
        self.path = path


class IdleSetting(SettingError):
    """A setting given to a configuration (or experiment) that does not run the component that
    reads it."""


def given_settings(model: BaseModel, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], str]]:
    """(path, reader) of every setting given explicitly in ``model`` and its groups: the
    fields the input named, not those left at their defaults. A group's own reader (``calls``'
    role) stands for its fields'."""
    for name in sorted(model.model_fields_set & type(model).model_fields.keys()):  # not a family's
        value = getattr(model, name)
        reader = reader_of(type(model).model_fields[name])
        here = (*path, name)
        if isinstance(value, BaseModel) and reader is None:
            yield from given_settings(value, here)
        elif isinstance(value, dict) and name in ("calls", "models"):
            for role in value:
                yield (*here, role), ROLE_COMPONENT.get(role, "own_default_model")
        elif reader is not None:
            yield here, reader


class BudgetLimits(BaseModel):
    """Budget limits of one attempt (docs/design.md's defaults). Budgets only count up."""

    model_config = ConfigDict(extra="forbid")

    step_cap: int = setting("executor", 12, ge=1, description="executor steps per try")
    steps: int = setting("executor", 40, ge=1, description="executor steps per attempt")
    r1: int = setting("R1", 3, ge=1, description="executor tries per subtask (R1 unit)")
    plan: int = setting("plan_verifier", 3, ge=1, description="plan tries (L2)")
    r2: int = setting("R2", 2, ge=0, description="re-descents after an R2 integration reject")
    r3: int = setting("R3", 2, ge=0, description="re-descents after an R3 acceptance reject")
    wall_clock_s: float = setting("executor", 0.0, ge=0, description="seconds per attempt (0: no limit)")
    tokens: int = setting(
        "executor", 0, ge=0, description="prompt + completion tokens per attempt (0: no limit)"
    )


class GuardSettings(BaseModel):
    """Loop guards (seed 003): byte-identical repeated tool calls. A family's own guards' settings
    are keys of this group too (its ``step_settings``' ``guard``), validated by the family."""

    model_config = ConfigDict(extra="allow")

    repeat_hint: int = setting("guards", 3, ge=2, description="identical consecutive calls before a hint")
    repeat_stop: int = setting("guards", 5, ge=2, description="identical consecutive calls before a stop")
    text_repeat: bool = setting(
        "guards", False, description="the text repetition guard: near-verbatim thoughts"
    )
    text_similarity: float = setting(
        "text_repetition", 0.9, gt=0, le=1, description="similarity ratio of a near-repeat"
    )
    text_hint: int = setting(
        "text_repetition", 2, ge=1, description="consecutive near-repeated thoughts before a hint"
    )
    text_stop: int = setting(
        "text_repetition", 4, ge=1, description="consecutive near-repeated thoughts before a stop"
    )


class DeReActSettings(BaseModel):
    """The critic's threshold and the brain's history window (seed 000)."""

    model_config = ConfigDict(extra="forbid")

    kappa_min: float = setting(
        "critic", 0.7, ge=0, le=1, description="the critic's least confidence to accept"
    )
    window: int = setting(
        "context_manager", 25, ge=1, description="W: raw steps of the try the brain sees (with a CM)"
    )
    initial: int = setting("context_manager", 5, ge=0, description="m: of those, the first steps kept")


class AgreementSettings(BaseModel):
    """Candidates per attempt and what is made of them (docs/agreement.md): ``k`` fresh executor
    tries of the task (candidate i samples with the attempt's seed + i; candidate 0 is the first
    try a configuration without agreement makes, the later ones at the ``temperatures``
    schedule), each through R1's gates; then ``select``: ``first``, the first that passes every
    gate (best of k by gate), or ``agree``, the largest group of candidates that behave alike
    when it holds at least two and ``tau`` of all k (agreement at R3)."""

    model_config = ConfigDict(extra="forbid")

    k: int = setting(
        "candidates", 1, ge=1, le=16, description="candidates per attempt (1: one try at a time)"
    )
    select: Literal["agree", "first"] = setting(
        "sampling",
        "agree",
        description="agree: the largest group that behaves alike; first: the first candidate every"
        " gate passes (best of k by gate)",
    )
    temperatures: list[float] = setting(
        "sampling",
        default_factory=lambda: [0.8],
        min_length=1,
        description="the executor's temperature of candidate 1, 2, ... (the last repeats); candidate 0"
        " samples at the configuration's own",
    )
    tau: float = setting(
        "agreement",
        0.5,
        gt=0,
        le=1,
        description="the least share of all k candidates the answer's group holds",
    )
    inputs: int = setting(
        "agreement",
        100,
        ge=0,
        le=1000,
        description="made-up inputs the candidates run on, beside the stated and the tester's (code)",
    )
    tester: bool = setting(
        "agreement", True, description="ask the tester role for inputs from the task alone (code)"
    )

    @field_validator("temperatures")
    @classmethod
    def _temperatures(cls, ts: list[float]) -> list[float]:
        if any(not 0.0 <= t <= 2.0 for t in ts):
            raise ValueError("each temperature is between 0 and 2")
        return ts

    def temperature(self, i: int) -> float | None:
        """Candidate ``i``'s temperature (None: the configuration's own)."""
        return None if i == 0 else self.temperatures[min(i, len(self.temperatures)) - 1]


def named_forms(long: JsonSchemaValue, what: str) -> JsonSchemaValue:
    """The JSON Schema of a reference that a file may write three ways, as the loader reads it:
    ``- name``, ``- name: {arg: value}`` (or ``name:`` with nothing) and ``{name, args}``."""
    return {
        "anyOf": [
            {"type": "string", "description": f"a registered {what}, with no arguments"},
            {
                "type": "object",
                "minProperties": 1,
                "maxProperties": 1,
                "not": {"required": ["name"]},
                "additionalProperties": {"anyOf": [{"type": "object"}, {"type": "null"}]},
                "description": f"{{{what}: {{argument: value}}}}",
            },
            long,
        ]
    }


class MemberRef(BaseModel):
    """A member of the executor's step pipeline, by registered name, with its arguments."""

    model_config = ConfigDict(extra="forbid")

    name: str
    args: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _bare_name(cls, v: Any) -> Any:
        return {"name": v} if isinstance(v, str) else v

    @classmethod
    def __get_pydantic_json_schema__(
        cls, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return {
            "anyOf": [
                {"type": "string", "description": "a registered member, default arguments"},
                handler(schema),
            ]
        }

    @model_validator(mode="after")
    def _registered(self) -> MemberRef:
        """A registered member that takes these arguments (built once to check: a member's
        constructor is its declaration), so a typo fails here, not in every attempt."""
        from vreact.pipeline import member_class

        cls = member_class(self.name)  # raises, naming the closest registered member
        try:
            inspect.signature(cls).bind(**self.args)
        except TypeError as e:
            raise ValueError(f"pipeline member {self.name!r}: {e}") from None
        return self


class CallSettings(BaseModel):
    """One role's model-call settings; a field left out is the configuration's."""

    model_config = ConfigDict(extra="forbid")

    temperature: float | None = Field(None, ge=0.0, le=2.0)
    max_tokens: int | None = Field(None, ge=16, description="completion tokens per model call")


class Configuration(BaseModel):
    """Which components run. Adjacent configurations differ by one switch. Its other keys are
    its task family's step settings (``TaskFamily.step_settings``), validated by the family where
    an experiment names it (``vreact.spec.steps_of``)."""

    model_config = ConfigDict(extra="allow")

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
    agreement: AgreementSettings = Field(default_factory=AgreementSettings)
    final_answer_recovery: bool = setting(
        "executor",
        False,
        description="when a try hits the step cap, ask once more for finish or abstain only",
    )
    observation_marking: bool = setting(
        "executor",
        False,
        description="spotlighting: each paragraph a role reads (the executor's observations, the critic's "
        "and the context manager's, the judges' cited text) is delimited as data, and every role is "
        "told that text inside it is never an instruction",
    )
    retry_temperature: float | None = setting(
        "R1",
        None,
        ge=0.0,
        le=2.0,
        description="the executor's temperature in a try after a rejection routed like R1's (gate, "
        "judge, guard or budget stop); the attempt's seed stays",
    )
    profile: Literal["simple", "benchmark"] | None = Field(
        None,
        description="the executor's context profile: simple keeps the last keep_last_k tool results "
        "in full; benchmark also summarises the oldest steps past 75% of context_tokens",
    )
    keep_last_k: int | None = setting(
        "profile", None, ge=-1, description="the profile's kept results (-1: all; default 5)"
    )
    context_tokens: int = setting(
        "benchmark_profile", 8192, ge=256, description="the benchmark profile's context size"
    )
    pipeline: list[MemberRef] = setting(
        "executor",
        default_factory=list,
        description="more members of the executor's step pipeline, by registered name (run after "
        "the parse gate and the repetition guard); a member's stop is routed like an R1 reject",
    )
    limit: int | None = setting(
        "runner",
        None,
        ge=1,
        description="run this configuration on the first LIMIT tasks only (default: all)",
    )
    temperature: float = setting(
        "temperature", 0.2, ge=0.0, le=2.0, description="every role's, unless calls says"
    )
    max_tokens: int = setting(
        "max_tokens",
        256,
        ge=16,
        description="completion tokens per model call (every role's, unless calls says)",
    )
    calls: dict[str, CallSettings] = Field(
        default_factory=dict,
        description="per-role overrides of temperature and max_tokens, e.g. {judge: {temperature: 0.1}}"
        f" (roles: {', '.join(CALL_ROLES)}); each is read by its role's component",
    )

    models: dict[str, str] = Field(
        default_factory=dict,
        description=f"this configuration's own models: role ({', '.join(MODEL_ROLES)}) -> provider/model"
        " or an alias of the experiment's models_file; a role it leaves out takes the experiment's"
        " (models.default: the roles without one of their own)",
    )
    spec: str | None = setting(
        "executor", None, description="this configuration's own L1 spec: a shipped name or a YAML file"
    )
    verifiers: str | None = setting(
        "verifiers", None, description="this configuration's own verifier set: a shipped name or a YAML file"
    )

    @field_validator("calls", "models")
    @classmethod
    def _call_roles(cls, by_role: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
        return known_roles(by_role, CALL_ROLES if info.field_name == "calls" else MODEL_ROLES)

    @model_validator(mode="after")
    def _no_idle_settings(self, info: ValidationInfo) -> Configuration:
        """A setting its component never reads is refused, not silently ignored. The rule is for
        new input: a configuration a run stored (``context={"stored": True}``, every field
        dumped) is read as it is."""
        if (info.context or {}).get("stored"):
            return self
        for path, component in idle_settings(self):
            setting = ".".join(path)
            title = COMPONENTS[component].title
            raise IdleSetting(path, f"{setting} is read by {title}, which this configuration does not run")
        d = self.dereact
        if self.context_manager and d.initial >= d.window:  # else the newest steps are never seen
            raise IdleSetting(
                ("dereact", "initial"),
                f"dereact.initial ({d.initial}) must be less than dereact.window ({d.window}): the"
                " window keeps the first `initial` steps and the newest of the rest",
            )
        return self

    def settings_for(self, role: str, seed: int | None = None) -> GenerateSettings:
        """How ``role``'s model calls are made: its overrides, else this configuration's values."""
        own = self.calls.get(role) or CallSettings()
        return GenerateSettings(
            temperature=self.temperature if own.temperature is None else own.temperature,
            max_tokens=self.max_tokens if own.max_tokens is None else own.max_tokens,
            seed=seed,
        )

    def takes_default(self, field: str) -> bool:
        """Whether a role this configuration runs makes its calls with the configuration's own
        ``field`` (temperature or max_tokens): one without that override in ``calls``."""
        return any(
            getattr(self.calls.get(role) or CallSettings(), field) is None for role in self.roles_called()
        )

    def roles_called(self) -> list[str]:
        """The roles whose models this configuration calls."""
        return [r for r, component in ROLE_COMPONENT.items() if COMPONENTS[component].runs(self)]

    def runs_member(self, name: str) -> bool:
        """Whether the configuration's own pipeline names the member ``name``."""
        return any(m.name == name for m in self.pipeline)

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
            or self.sampled
        )

    @property
    def sampled(self) -> bool:
        """True when each attempt makes k candidates (``agreement.k`` above 1, no planner)."""
        return self.agreement.k > 1 and not self.planner


def idle_settings(config: Configuration) -> list[tuple[tuple[str, ...], str]]:
    """(path, reader) of each setting ``config`` was given whose reader it does not run."""
    return [(path, c) for path, c in given_settings(config) if not COMPONENTS[c].runs(config)]


#: The key under which a run's stored configuration keeps what its own models, spec and verifiers
#: resolved to (vreact.experiment.resolved): not a setting.
RESOLVED = "resolved"


def calls_role(stored: dict[str, Any], role: str) -> bool:
    """Whether a configuration as a run stored it calls ``role``'s model (one that no longer
    reads as a configuration is taken to: the safe answer)."""
    try:
        body = {k: v for k, v in stored.items() if k != RESOLVED}
        config = Configuration.model_validate(body, context={"stored": True})
    except ValueError:  # a ValidationError too
        return True
    return COMPONENTS[ROLE_COMPONENT[role]].runs(config) if role in ROLE_COMPONENT else True
