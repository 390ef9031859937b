"""Pydantic models of the declarative files: level specs, verifier sets and the role schema."""

from __future__ import annotations

from typing import Any, Literal, NamedTuple
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationInfo,
    create_model,
    field_validator,
    model_serializer,
    model_validator,
)
from pydantic.json_schema import GetJsonSchemaHandler, JsonSchemaValue
from pydantic_core import core_schema

from vreact.config import (
    CALL_ROLES,
    COMPONENTS,
    ROLE_COMPONENT,
    CallSettings,
    Configuration,
    IdleSetting,
    SettingError,
    given_settings,
    known_roles,
    named_forms,
)
from vreact.families import DEFAULT as DEFAULT_FAMILY
from vreact.families import (
    Acceptable,
    ExecutorDefaults,
    Settings,
    TaskFamily,
    UnknownFamily,
    family_of,
    settings_of_families,
)
from vreact.model import (
    DEFAULT_MODEL,
    CallPolicy,
    Watchdog,
    gguf_sha256,
    provider_reads,
    providers_reading,
    refused_by,
)
from vreact.registry import PluginError, UnknownName, load_plugin, suggestion
from vreact.spec._settings import steps_of, validated
from vreact.verify.gates import check_gate_args, gate_factory, prompt_of


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# --- L1: specs/*.yaml -------------------------------------------------------------------


class Requirements(_Strict):
    task: str = Field(description="the task, as the agent's requirements state it")
    answer: Acceptable = Field(
        default_factory=Acceptable,
        description="what an acceptable answer is: abstention_allowed, and its task family's own"
        " requirements (docs/families.md)",
    )


class TaskSpec(_Strict):
    """An L1 requirements spec (specs/*.yaml). Its ``requirements.answer`` is its task family's
    (``family``, else the family of the experiment that reads it): ``spec_model`` is the model
    that validates it."""

    kind: Literal["spec"] = "spec"
    name: str
    family: str | None = Field(
        None,
        exclude_if=lambda v: v is None,  # unnamed, a spec dumps as before families had L1 models
        description="the task family whose L1 it states (default: the experiment's dataset's)",
    )
    description: str = ""
    requirements: Requirements

    @model_validator(mode="wrap")
    @classmethod
    def _as_its_family(cls, data: Any, handler: Any, info: ValidationInfo) -> Any:
        """Validated as ``TaskSpec``, a spec is its family's (``spec_model``): the one it names,
        else the validation context's ``family``, else the default family's."""
        if cls is TaskSpec and isinstance(data, dict):
            named, reader = data.get("family"), (info.context or {}).get("family")
            if isinstance(named, str) and reader is not None and named != reader:
                raise SettingError(
                    ("family",), f"a spec of the {named} family, not of {reader!r} (the dataset's)"
                )
            family = named if isinstance(named, str) else reader
            try:
                model = spec_model(family)
            except UnknownFamily as e:
                raise SettingError(("family",), str(e)) from None
            return model.model_validate(data, context=info.context)
        return handler(data)


_SPEC_MODELS: dict[type[Settings], type[TaskSpec]] = {}


def spec_model(family: str | None = None) -> type[TaskSpec]:
    """The model of a spec of ``family`` (None: the default family): its answer requirements the
    family's own (``TaskFamily.requirements``)."""
    answer = family_of(family or DEFAULT_FAMILY).requirements
    if answer not in _SPEC_MODELS:
        req = create_model(
            "Requirements", __base__=Requirements, answer=(answer, Field(default_factory=answer))
        )
        _SPEC_MODELS[answer] = create_model("TaskSpec", __base__=TaskSpec, requirements=(req, ...))
    return _SPEC_MODELS[answer]


# --- verifiers/*.yaml -------------------------------------------------------------------


class GateRef(_Strict):
    """One gate of a verifier: a registered name and its arguments."""

    name: str
    args: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _short_form(cls, value: Any) -> Any:
        # "name" or {"name": {args}} or {"name": null}
        if isinstance(value, str):
            return {"name": value}
        if isinstance(value, dict) and len(value) == 1 and "name" not in value:
            ((name, args),) = value.items()
            return {"name": name, "args": args or {}}
        return value

    @classmethod
    def __get_pydantic_json_schema__(
        cls, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return named_forms(handler(schema), "gate")

    @model_validator(mode="after")
    def _known(self) -> GateRef:
        gate_factory(self.name)  # raises UnknownGate (a ValueError) with a did-you-mean
        check_gate_args(self.name, self.args)
        return self


class JudgeSpec(_Strict):
    """An LLM judge, run only on what the verifier's gates cleared."""

    min_confidence: float = Field(0.7, ge=0.0, le=1.0, description="an accept below this is a reject")
    prompt: str | None = Field(
        None, description="a judge prompt registered with @vreact.judge_prompt (default: the built-in one)"
    )
    unfounded: Literal["ignore", "keep"] = Field(
        "ignore",
        description="what a rejection whose claim the free check refutes or nothing corroborates does,"
        " where the prompt shows its work (claims=): ignore (recorded, not acted on) or keep (it"
        " rejects as any judge's does)",
    )

    @field_validator("prompt")
    @classmethod
    def _registered(cls, name: str | None) -> str | None:
        prompt_of(name)  # raises UnknownPrompt (a ValueError) with a did-you-mean
        return name

    @model_validator(mode="after")
    def _unfounded_read(self) -> JudgeSpec:
        """``unfounded`` is read only where the prompt shows its work: set on any other judge it
        would do nothing, so it is refused."""
        from vreact.verify.gates._prompts import claims_of

        if "unfounded" in self.model_fields_set and claims_of(self.prompt) is None:
            raise ValueError(
                f"unfounded: the judge's prompt ({self.prompt or 'the built-in one'}) does not show its"
                " work, so nothing reads it (a prompt registered with claims=, as code_review)"
            )
        return self

    @model_serializer(mode="wrap")
    def _without_default_prompt(self, handler: Any) -> dict[str, Any]:
        """The built-in prompt is not named: a judge dumps as it did before prompts had names,
        so its verdicts' arguments and run folders' identities are unchanged."""
        data: dict[str, Any] = handler(self)
        if data.get("prompt") is None:
            data.pop("prompt", None)
        if data.get("unfounded") == "ignore":  # the default, unnamed for the same reason
            data.pop("unfounded", None)
        return data


class VerifierSpec(_Strict):
    """A verifier: gates in order (the first reject stops it), then an optional judge."""

    gates: list[GateRef] = Field(default_factory=list)
    judge: JudgeSpec | None = Field(None, description="runs when the configuration enables judges")


class _Plugged(_Strict):
    """A file that may name plugins: they are loaded before its other fields are validated, so
    the gates and members they register are known by then."""

    plugins: list[str] = Field(
        default_factory=list,
        description="modules (my_lab.gates) or .py files (relative to this file) that register gates "
        "and pipeline members; loaded first",
    )

    @model_validator(mode="before")
    @classmethod
    def _load_plugins(cls, data: Any, info: ValidationInfo) -> Any:
        base = (info.context or {}).get("base")
        for i, ref in enumerate(data.get("plugins") or [] if isinstance(data, dict) else []):
            try:
                load_plugin(str(ref), base)
            except PluginError as e:
                raise SettingError(("plugins", i), str(e)) from None
        return data


class VerifierSet(_Plugged):
    """The verifiers of each level (verifiers/*.yaml): R1 unit, R2 integration, R3 acceptance."""

    kind: Literal["verifiers"] = "verifiers"
    name: str
    plan: VerifierSpec = Field(default_factory=VerifierSpec, description="plan gates and judge (L2)")
    R1: VerifierSpec = Field(default_factory=VerifierSpec, description="unit: a subtask's result vs L3")
    R2: VerifierSpec = Field(default_factory=VerifierSpec, description="integration: the chain vs L2")
    R3: VerifierSpec = Field(default_factory=VerifierSpec, description="acceptance: the answer vs L1")


# --- memory/roles.yaml ------------------------------------------------------------------

#: Where a value a role reads comes from: the keys a row's ``never_reads`` names. Every value
#: the context assembler hands out carries one (its field's, below, and any a value inside it was
#: tagged with: vreact.memory.tag), and a value whose origin the role's row excludes is refused.
ORIGINS: dict[str, str] = {
    "l1": "the task's question and requirements (L1)",
    "l2": "the plan (L2)",
    "l3": "a subtask's design: its objective, contract and checks (L3)",
    "tools": "the tool inventory",
    "failures": "the failure index: causes, never transcripts",
    "ledger": "the success ledger: the attempt's accepted units",
    "try": "the current try's own steps",
    "state": "the DeReAct State",
    "proposal": "the executor's proposed step",
    "result": "what a proposed step returned",
    "artifact": "an artifact under verification",
    "paired_level": "the specification a judge's verifier pairs with",
    "gold": "the task's gold answers and supporting paragraphs (for scoring only)",
    "attack": "an attacked task's added paragraph ids and the attacker's target (for scoring only)",
    "transcripts": "recorded transcripts: earlier tries' and other attempts' steps, prompts and replies",
}

#: Every field the context assembler knows how to provide: (what it is, where it comes from).
CONTEXT_FIELDS: dict[str, tuple[str, str]] = {
    "l1": ("the task's question and requirements (L1)", "l1"),
    "l2": ("the plan (L2)", "l2"),
    "tools": ("the tool inventory", "tools"),
    "failures.l2": ("failure entries addressed to L2 (causes, not transcripts)", "failures"),
    "subtask.objective": ("this subtask's objective, accepted upstream answers substituted in", "l3"),
    "subtask.contract": ("this subtask's L3 contract", "l3"),
    "subtask.checks": ("the checks R1 applies to a subtask", "l3"),
    "failures.own": ("this component's own failure entries in this attempt", "failures"),
    "failures.rejected": (
        "what this component's last rejection was of: the rejected artifact (a program), not how it was made",
        "failures",
    ),
    "try.steps": (
        "the steps of the current try (never an earlier try's; with a context manager the brain sees"
        " a window of them)",
        "try",
    ),
    "state": ("the DeReAct State: facts of this try, each citing the paragraphs it rests on", "state"),
    "proposal": (
        "the executor's proposed step: intent (thought) and command (action, input, evidence)",
        "proposal",
    ),
    "result": ("what the proposed step returned (the tool's observation, or the proposed final)", "result"),
    "artifact": ("the artifact under verification", "artifact"),
    "paired_level": ("the specification level a judge's verifier pairs with", "paired_level"),
    "ledger": ("this attempt's accepted units: answer, evidence, cited text, retrieved ids", "ledger"),
}


def _known(names: list[str], known: dict[str, Any], what: str) -> list[str]:
    for name in names:
        if name not in known:
            raise UnknownName(what, name, known)
    return names


class RoleRow(_Strict):
    """What one role may read, and the origins no value it reads may carry. Anything else is
    refused by the assembler (fail closed)."""

    reads: list[str] = Field(description="context fields (memory/roles.yaml's comment lists them)")
    never_reads: list[str] = Field(
        default_factory=list, description=f"origins refused in anything it reads: {', '.join(ORIGINS)}"
    )

    @field_validator("reads")
    @classmethod
    def _known_fields(cls, reads: list[str]) -> list[str]:
        return _known(reads, CONTEXT_FIELDS, "context field")

    @field_validator("never_reads")
    @classmethod
    def _known_origins(cls, never: list[str]) -> list[str]:
        return _known(never, ORIGINS, "origin")

    @model_validator(mode="after")
    def _consistent(self) -> RoleRow:
        for name in self.reads:
            if CONTEXT_FIELDS[name][1] in self.never_reads:
                raise ValueError(f"reads {name!r}, whose origin {CONTEXT_FIELDS[name][1]!r} it never reads")
        return self


class RoleSchema(_Strict):
    """The per-role context schema (memory/roles.yaml)."""

    kind: Literal["roles"] = "roles"
    roles: dict[str, RoleRow]


class DatasetSelection(BaseModel):
    """Which tasks an experiment runs: a file of a task family's records and a filter, applied in
    this order. Its other keys are its family's dataset settings (``TaskFamily.dataset_settings``:
    qa's ``hops``, ``answerable``, ``corpus``, ``fields``, ``attacks``), read as ``settings``."""

    model_config = ConfigDict(extra="allow")

    family: str = Field(
        DEFAULT_FAMILY, description="the task family of its records ('vreact plugins' lists them)"
    )
    format: str | None = Field(None, description="the format of its records (default: the family's first)")
    path: str = Field(
        "sample",
        description="a file of the family's records (qa: MuSiQue, HotpotQA, 2Wiki or a user's JSON"
        " lines, by format; or 'sample')",
    )
    task_ids: list[str] | None = Field(None, description="keep only these ids, in this order")
    limit: int | None = Field(None, ge=1, description="then keep the first N")
    _settings: Settings = PrivateAttr()

    @model_validator(mode="after")
    def _of_its_family(self) -> DatasetSelection:
        """A known family, one of its formats, and its own settings (one another family
        declares is refused naming that family)."""
        try:
            family = family_of(self.family)
        except UnknownFamily as e:
            raise SettingError(("family",), str(e)) from None
        if self.format is not None and self.format not in family.formats:
            raise SettingError(
                ("format",),
                f"the {family.name} family reads no format {self.format!r} (its formats:"
                f" {', '.join(family.formats)})",
            )
        given = dict(self.model_extra or {})
        declared = settings_of_families()
        for name in sorted(given):
            if name not in family.dataset_settings.model_fields and name in declared:
                owners = " and ".join(sorted(declared[name]))
                raise IdleSetting((name,), f"a setting of the {owners} family, not of {family.name!r}")
            if name not in family.dataset_settings.model_fields:
                known = [*type(self).model_fields, *family.dataset_settings.model_fields]
                raise SettingError((name,), f"unknown field{suggestion(name, known, listed=False)}")
        self._settings = validated(family.dataset_settings, given)
        return self

    @property
    def settings(self) -> Any:
        """Its family's dataset settings, typed (``TaskFamily.dataset_settings``)."""
        return self._settings

    def __getattr__(self, name: str) -> Any:
        """A family's setting read as the selection's own (``selection.hops``), typed."""
        settings = (self.__pydantic_private__ or {}).get("_settings")
        if settings is not None and name in type(settings).model_fields:
            return getattr(settings, name)
        return super().__getattr__(name)  # type: ignore[misc]

    @property
    def record_format(self) -> str:
        """The format its records are read in: the one it names, else its family's first."""
        return self.format or family_of(self.family).formats[0]


#: A configuration's call settings when nothing says otherwise.
_DEFAULT_CALL = Configuration(name="default").settings_for("executor")
#: How a model call is made when nothing says otherwise: the model layer's defaults.
_CALL = CallPolicy()


#: The largest run vreact plans: attempts per task and configuration, attempts in flight (and
#: requests per endpoint), and attempts in all (configurations x tasks x attempts). Past them a
#: file or a flag is refused before anything is made.
MAX_ATTEMPTS = 1_000_000
MAX_CONCURRENCY = 1024
MAX_PLANNED = 1_000_000


class RunLimits(_Strict):
    """How model calls are made (the same as vreact run's flags)."""

    max_retries: int = Field(
        _CALL.max_retries, ge=0, description="retries of a call on 429, 5xx and time-outs"
    )
    timeout: float = Field(120.0, gt=0, description="seconds for one HTTP request")
    call_timeout: float = Field(
        _CALL.call_timeout or 0.0,
        ge=0,
        description="seconds for all tries of one call (0: none); unset, the dataset's family's if it"
        " gives one (code's 1200)",
    )
    endpoint_concurrency: int = Field(
        _CALL.concurrency, ge=1, le=MAX_CONCURRENCY, description="requests in flight per endpoint"
    )
    reasoning_only_timeout_s: float = Field(
        0.0, ge=0, description="abort a streamed reply that has produced only reasoning this long (0: off)"
    )
    reasoning_only_max_tokens: int = Field(
        0, ge=0, description="abort a streamed reply at this many estimated reasoning tokens (0: off)"
    )

    def policy(self) -> CallPolicy:
        """The retry layer's policy under these limits (a call timeout of 0 means none); the
        limits' defaults are the policy's."""
        return CallPolicy(
            max_retries=self.max_retries,
            call_timeout=self.call_timeout or None,
            concurrency=self.endpoint_concurrency,
            watchdog=Watchdog(self.reasoning_only_timeout_s, self.reasoning_only_max_tokens),
        )


class RunnerSettings(_Strict):
    """Where the attempts run: this process's threads (``local``), or a Ray cluster (``ray``:
    ``pip install 'vreact[ray]'``). Not part of a run's identity: a run started on one resumes
    on the other."""

    backend: Literal["local", "ray"] = Field("local", description="local threads, or a Ray cluster")
    address: str | None = Field(
        None, description="ray: the cluster to join (ray start's address); none: start a local one"
    )
    num_cpus_per_attempt: float = Field(
        0.25,
        ge=0,
        description="ray: CPUs each attempt's worker reserves (an attempt mostly waits on a model)",
    )
    resources: dict[str, float] = Field(
        default_factory=dict, description="ray: custom resources each worker needs, e.g. {gpu_node: 1}"
    )

    @model_validator(mode="after")
    def _ray_only(self) -> RunnerSettings:
        if self.backend == "local":
            for name in sorted(self.model_fields_set - {"backend"}):
                raise IdleSetting(
                    (name,), f"runner.{name} is read by the ray backend, which this experiment does not use"
                )
        return self


class Experiment(_Plugged):
    """An experiment (experiments/*.yaml): tasks, configurations, models per role, attempts.

    ``vreact experiment FILE`` runs it; ``vreact run --experiment FILE`` only takes its
    configurations."""

    kind: Literal["experiment"] = "experiment"
    name: str
    description: str = ""
    dataset: DatasetSelection = Field(default_factory=DatasetSelection)
    configurations: list[Configuration] = Field(min_length=1)
    models: dict[str, str] = Field(
        default_factory=dict,
        description=f"role (default, {', '.join(CALL_ROLES)}) -> provider/model or an alias of models_file",
    )
    models_file: str | None = Field(None, description="a models file with aliases, base URLs and prices")
    base_url: str | None = Field(
        None, description="the provider's server for every model without a base_url of its own (models_file)"
    )

    @field_validator("base_url")
    @classmethod
    def _url(cls, url: str | None) -> str | None:
        return base_url(url)

    spec: str = Field(
        None,  # type: ignore[assignment]  # the dataset's family's, once validated
        description="L1 spec: a shipped name or a YAML file (default: the dataset's family's)",
    )
    verifiers: str = Field(
        None,  # type: ignore[assignment]
        description="verifier set: a shipped name or a YAML file (default: the dataset's family's)",
    )
    attempts: int = Field(
        1, ge=1, le=MAX_ATTEMPTS, description="attempts per task and configuration (Pass@k uses k = this)"
    )
    seed: int = Field(0, description="attempt i of every task runs with seed + i")
    concurrency: int = Field(4, ge=1, le=MAX_CONCURRENCY, description="attempts in flight")
    cache: bool = Field(True, description="use the response cache")
    limits: RunLimits = Field(default_factory=RunLimits)
    runner: RunnerSettings = Field(default_factory=RunnerSettings)
    sandbox: Literal["bwrap", "none"] = Field(
        "bwrap",
        description="where a family that runs model-written code (code) runs it: bwrap, or none (no"
        " isolation, for a machine without bubblewrap; recorded in the run, printed on every report)",
    )
    calls: dict[str, CallSettings] = Field(
        default_factory=dict,
        description="model-call settings for every configuration: default: {temperature, max_tokens}"
        f" (vreact's: {_DEFAULT_CALL.temperature} and {_DEFAULT_CALL.max_tokens}; where neither"
        " names the executor's max_tokens, its family's, if it gives one: code's 768) and per role"
        f" ({', '.join(CALL_ROLES)}); a configuration's own temperature, max_tokens or calls.<role>"
        " wins",
    )

    @field_validator("configurations")
    @classmethod
    def _unique(cls, configs: list[Configuration]) -> list[Configuration]:
        names = [c.name for c in configs]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"configuration names repeat: {', '.join(dupes)}")
        return configs

    @field_validator("models", "calls")
    @classmethod
    def _roles(cls, by_role: dict[str, Any]) -> dict[str, Any]:
        return known_roles(by_role)

    @model_validator(mode="after")
    def _call_defaults(self) -> Experiment:
        """Every configuration takes the experiment's call settings where it gives none of its
        own; a setting no configuration takes is refused, not ignored."""
        if not self.calls:
            return self
        self.configurations, taken = with_calls(self.calls, self.configurations)
        for role, given in self.calls.items():
            for field in sorted(given.model_fields_set):
                if (role, field) not in taken:
                    raise IdleSetting(
                        ("calls", role, field),
                        f"calls.{role}.{field} is read by no configuration: each gives its own"
                        + ("" if role == "default" else f" or calls no {role}"),
                    )
        return self

    #: each configuration as the file makes it, before its family's executor defaults (by name;
    #: empty: the family gave it none): what a run folder made before the family gave them ran
    _made_before: dict[str, Configuration] = PrivateAttr(default_factory=dict)

    @model_validator(mode="after")
    def _executor_defaults(self) -> Experiment:
        """Where the file says nothing of the executor's completion tokens (a configuration's
        ``max_tokens`` or ``calls.executor``, the experiment's ``calls.default`` or
        ``calls.executor``) or of ``limits.call_timeout``, its family's
        (``Settings.executor_defaults`` of its step settings), else vreact's. The tokens are
        set as the experiment's ``calls.executor`` would set them, so a run records them where
        a file's go (each configuration's ``calls``) and its requests are the same as a file's
        that gives them; the timeout is set but not marked as given, so no rule takes it for the
        file's (a setting no model reads is refused only where a file gives it)."""
        given = family_of(self.dataset.family).step_settings.executor_defaults
        calls = family_calls(given, self.calls)
        if calls:
            before = self.configurations
            self.configurations, _ = with_calls(calls, before)
            self._made_before = {c.name: c for c in before}
        limits = self.limits
        if given.call_timeout is not None and "call_timeout" not in limits.model_fields_set:
            values = {**dict(limits), "call_timeout": given.call_timeout}
            self.__dict__["limits"] = RunLimits.model_construct(limits.model_fields_set, **values)
        return self

    def as_made_before(self) -> Experiment | None:
        """This experiment with each configuration as the file makes it, without its family's
        executor tokens: how a run folder made before the family gave them resumes, as it was
        made (None: the family gave none here)."""
        if not self._made_before:
            return None
        configs = [self._made_before.get(c.name, c) for c in self.configurations]
        return self.model_copy(update={"configurations": configs})

    @model_validator(mode="after")
    def _family_defaults(self) -> Experiment:
        """A spec or verifier set left unnamed is the dataset's family's (qa: musique); a family
        that has none needs both named."""
        family = family_of(self.dataset.family)
        spec = family.spec_for(self.dataset.record_format)
        for name, default in (("spec", spec), ("verifiers", family.default_verifiers)):
            if name in self.model_fields_set:
                continue
            if default is None:
                raise SettingError(
                    (name,),
                    f"the {family.name} family has no default {name}: name its {name} (an experiment's"
                    f" {name}: FILE, or --{name} FILE)",
                )
            self.__dict__[name] = default  # stays unset: the settings rule reads what was named
        return self

    @model_validator(mode="after")
    def _family_compares(self) -> Experiment:
        """Agreement among candidates needs a family that says what "the same behaviour" is
        (``TaskFamily.behaviours``); best of k (``select: first``) needs none."""
        family = family_of(self.dataset.family)
        if type(family).behaviours is not TaskFamily.behaviours:
            return self
        for n, c in enumerate(self.configurations):
            if c.sampled and c.agreement.select == "agree":
                raise SettingError(
                    ("configurations", n, "agreement"),
                    f"the {family.name} family cannot compare candidates: agreement needs one that"
                    " can (select: first, best of k by gate, needs none)",
                )
        return self

    @model_validator(mode="after")
    def _sandbox_runs_code(self) -> Experiment:
        """``sandbox`` is read by a family that runs model-written code only."""
        if "sandbox" in self.model_fields_set and not family_of(self.dataset.family).runs_code:
            raise IdleSetting(("sandbox",), f"the {self.dataset.family!r} family runs no model-written code")
        return self

    @model_validator(mode="after")
    def _steps_of_its_family(self) -> Experiment:
        """Each configuration's keys beyond the core's are its family's step settings, validated
        by the family (one another family declares is refused naming that family); each is
        refused when the component that reads it does not run."""
        family = family_of(self.dataset.family)
        declared = settings_of_families(step=True)
        own = family.step_settings.model_fields
        for i, config in enumerate(self.configurations):
            where: tuple[str | int, ...] = ("configurations", i)
            for name in sorted(config.model_extra or {}):
                if name not in own and name in declared:
                    owners = " and ".join(sorted(declared[name]))
                    why = f"a setting of the {owners} family's steps, not of {family.name!r}"
                    raise IdleSetting((*where, name), why)
                if name not in own:
                    hint = suggestion(name, [*Configuration.model_fields, *own], listed=False)
                    raise SettingError((*where, name), f"unknown field{hint}")
            steps = steps_of(family, config, where)
            for path, component in given_settings(steps):
                if not COMPONENTS[component].runs(config):
                    title = COMPONENTS[component].title
                    setting = ".".join(path)
                    raise IdleSetting(
                        (*where, *path),
                        f"{setting} is read by {title}, which this configuration does not run",
                    )
        return self

    @model_validator(mode="after")
    def _no_idle_settings(self) -> Experiment:
        """A role's model that no configuration calls, a spec or verifier set every
        configuration replaces, or a model setting (``base_url``, ``limits``) that no model of
        the experiment reads, is refused, not silently ignored."""
        for path, message in self.idle():
            raise IdleSetting(path, message)
        return self

    def idle(self) -> list[tuple[Loc, str]]:
        """(where, why) of each setting of the experiment that nothing it runs reads (a
        configuration's own ``models.default`` included)."""
        out: list[tuple[Loc, str]] = []
        running = self.roles_run()
        chosen = self._role_models()
        sources = {(role, c.source) for roles in chosen.values() for role, c in roles.items()}
        for role in self.models:
            if role == "default":
                if not any(source == "default" for _, source in sources):
                    out.append(
                        (
                            ("models", "default"),
                            "models.default is read by no role: each role this experiment runs has a"
                            " model of its own",
                        )
                    )
            elif role not in running:
                title = COMPONENTS[ROLE_COMPONENT[role]].title
                out.append(
                    (
                        ("models", role),
                        f"models.{role} is read by {title}, which no configuration of this experiment runs",
                    )
                )
            elif (role, "experiment") not in sources:
                out.append(
                    (
                        ("models", role),
                        f"models.{role} is read by no configuration: each that calls the {role} names"
                        " its own",
                    )
                )
        for i, config in enumerate(self.configurations):
            if "default" in config.models and not any(
                c.source == "config default" for c in chosen[config.name].values()
            ):
                out.append(
                    (
                        ("configurations", i, "models", "default"),
                        f"models.default is read by no role of {config.name}: each has a model of its own",
                    )
                )
        for name, reads in (("spec", lambda c: True), ("verifiers", lambda c: c.gates or c.judges)):
            if name in self.model_fields_set and not any(
                getattr(c, name) is None and reads(c) for c in self.configurations
            ):
                why = " or runs no gates or judges" if name == "verifiers" else ""
                out.append(((name,), f"{name} is read by no configuration: each names its own{why}"))
        out += self._unsent_temperatures(chosen)
        called = {c for roles in chosen.values() for c in roles.values()}
        for path, setting in self._model_settings():
            if not any(c.reads(setting) for c in called):
                used = ", ".join(sorted({c.model for c in called}))
                readers = " and ".join(f"{p}/" for p in providers_reading(setting))
                where = ".".join(map(str, path))
                if any(c.own_url for c in called):  # its readers each have their own server
                    why = f"{where} is read by no model: each that calls a server has its own base_url"
                    out.append((path, why + " in the models file"))
                else:
                    out.append(
                        (
                            path,
                            f"{where} is read by {readers} models, which this experiment does not call"
                            f" (it calls {used})",
                        )
                    )
        return out

    def _unsent_temperatures(self, chosen: dict[str, dict[str, Called]]) -> list[tuple[Loc, str]]:
        """(where, why) of each explicit temperature (a configuration's, ``calls.<role>``'s,
        ``retry_temperature``) given to a role whose model would never be sent one."""
        out: list[tuple[Loc, str]] = []
        given: list[tuple[Loc, str, list[str]]] = []  # where, the setting's name, the roles it reaches
        for i, config in enumerate(self.configurations):
            for path, roles in _temperatures(config):
                given.append((("configurations", i, *path), config.name, roles))
        for role, settings in self.calls.items():
            if "temperature" in settings.model_fields_set:
                reached = list(CALL_ROLES) if role == "default" else [role]
                given += [(("calls", role, "temperature"), c.name, reached) for c in self.configurations]
        seen: set[Loc] = set()
        for path, name, roles in given:
            for role in roles:
                called = chosen[name].get(role)
                why = refused_by(called.model, "temperature") if called is not None else None
                if called is not None and why and path not in seen:
                    seen.add(path)
                    where = ".".join(str(p) for p in path if not isinstance(p, int) and p != "configurations")
                    out.append(
                        (path, f"{where}: {called.model} (the {role}'s model) takes no temperature: {why}")
                    )
        return out

    def unseeded(self) -> list[str]:
        """The models the experiment calls that take no seed: their calls are never seeded."""
        called = {c.model for roles in self._role_models().values() for c in roles.values()}
        return sorted(m for m in called if refused_by(m, "seed"))

    def roles_run(self) -> set[str]:
        """The roles that call a model in at least one of the configurations."""
        return {r for c in self.configurations for r in c.roles_called()}

    def _role_models(self) -> dict[str, dict[str, Called]]:
        """Configuration -> each role it runs -> the model it calls, the models file read once."""
        catalog = _catalog(self.models_file)
        out = {}
        for config in self.configurations:
            sources = model_sources(self.models, catalog, config)
            roles = {}
            for role in config.roles_called():
                name, source = sources.get(role) or sources["default"]
                entry = catalog.models.get(name) if catalog else None
                roles[role] = Called(entry.model if entry else name, source, bool(entry and entry.base_url))
            out[config.name] = roles
        return out

    def ignored_settings(self) -> list[tuple[Loc, str]]:
        """(where, why) of each model setting that a model of the experiment ignores although
        another reads it: worth a warning, not a refusal."""
        called = {(role, c.model): c for roles in self._role_models().values() for role, c in roles.items()}
        return [
            (path, f"warning: the {role}'s model {model} ignores {'.'.join(map(str, path))}")
            for path, setting in self._model_settings()
            for (role, model), c in sorted(called.items())
            if not c.reads(setting)
        ]

    def _model_settings(self) -> list[tuple[Loc, str]]:
        """(path, name) of each model setting the experiment gives: base_url and its limits."""
        given: list[tuple[Loc, str]] = [(("base_url",), "base_url")] if self.base_url is not None else []
        return given + [(("limits", k), k) for k in sorted(self.limits.model_fields_set)]


def _temperatures(config: Configuration) -> list[tuple[Loc, list[str]]]:
    """(where, the roles it reaches) of each temperature ``config`` gives explicitly."""
    out: list[tuple[Loc, list[str]]] = []
    own = {r: c for r, c in config.calls.items() if "temperature" in c.model_fields_set}
    if "temperature" in config.model_fields_set:
        out.append((("temperature",), [r for r in config.roles_called() if r not in own]))
    out += [(("calls", r, "temperature"), [r]) for r in own]
    if "retry_temperature" in config.model_fields_set and config.retry_temperature is not None:
        out.append((("retry_temperature",), ["executor"]))
    return out


def family_calls(given: ExecutorDefaults, calls: dict[str, CallSettings]) -> dict[str, CallSettings]:
    """The executor's and the tester's call settings a family gives (``given``) that an
    experiment's ``calls`` leave to it, as ``calls`` would give them: each role's ``max_tokens``,
    unless ``calls.default`` or the role's own names one (empty: none)."""
    out = {}
    for role, tokens in (("executor", given.max_tokens), ("tester", given.tester_max_tokens)):
        said = any(c.max_tokens is not None for r, c in calls.items() if r in ("default", role))
        if tokens is not None and not said:
            out[role] = CallSettings(max_tokens=tokens)
    return out


def with_calls(
    calls: dict[str, CallSettings], configs: list[Configuration]
) -> tuple[list[Configuration], set[tuple[str, str]]]:
    """``configs`` with an experiment's ``calls`` (``default`` and per role) where each gives
    none of its own (its own ``temperature`` or ``max_tokens`` wins over the experiment's for
    every role), and which (role, field) any of them took. What each configuration gave is kept
    as given (its fields set, its calls' too), so a subset of them (``--configs``) validates the
    same."""
    taken: set[tuple[str, str]] = set()
    out = []
    for config in configs:
        own_calls = dict(config.calls)
        for role, given in calls.items():
            if role == "default" or role not in config.roles_called():
                continue
            own = own_calls.get(role) or CallSettings()
            fields = {
                f: v
                for f, v in given
                if v is not None and getattr(own, f) is None and f not in config.model_fields_set
            }
            taken |= {(role, f) for f in fields}
            if fields:  # kept as given: the experiment's fields are not the configuration's own
                own_calls[role] = CallSettings.model_construct(
                    own.model_fields_set, **{**dict(own), **fields}
                )
        update: dict[str, Any] = {"calls": own_calls} if own_calls != config.calls else {}
        probe = config.model_copy(update=update)
        for field, value in calls.get("default") or CallSettings():
            if value is not None and field not in config.model_fields_set and probe.takes_default(field):
                update[field] = value
                taken.add(("default", field))
        fields_set = set(config.model_fields_set)
        out.append(Configuration.model_construct(fields_set, **{**dict(config), **update}))
    return out, taken


def model_names(
    models: dict[str, str], catalog: ModelsFile | None, config: Configuration | None = None
) -> dict[str, str]:
    """Which name (a ``provider/model`` or an alias of ``catalog``) each role calls, with
    ``default`` for the others, under an experiment's ``models`` and models file, and
    ``config``'s own models when given (:func:`model_sources` says where each comes from)."""
    return {role: name for role, (name, _) in model_sources(models, catalog, config).items()}


def model_sources(
    models: dict[str, str], catalog: ModelsFile | None, config: Configuration | None = None
) -> dict[str, tuple[str, str]]:
    """Each role with a model of its own, and ``default``, -> (its name, where it comes from).
    A role's own model comes first: the configuration's (``config``), then the experiment's
    or the models file's roles (``experiment``); then the default: the configuration's
    (``config default``), else the experiment's, the file's or vreact's (``default``)."""
    shared = {**(dict(catalog.roles) if catalog else {}), **models}
    out = {"default": (shared.pop("default", None) or DEFAULT_MODEL, "default")}
    out |= {role: (name, "experiment") for role, name in shared.items()}
    mine = dict(config.models) if config else {}
    if "default" in mine:
        out["default"] = (mine.pop("default"), "config default")
    return out | {role: (name, "config") for role, name in mine.items()}


Loc = tuple[str | int, ...]


class Called(NamedTuple):
    """A model a role calls: its ``provider/model`` (an alias when the models file does not
    read), where it comes from (``config``, ``experiment``, ``config default`` or ``default``),
    and whether its models-file entry names its own server."""

    model: str
    source: str
    own_url: bool = False

    def reads(self, setting: str) -> bool:
        """Whether the model reads an experiment setting (``base_url`` or a limit); an entry's
        own ``base_url`` wins over the experiment's."""
        if setting == "base_url" and self.own_url:
            return False
        provider, sep, _ = self.model.partition("/")
        return provider_reads(provider, setting) if sep else True  # an alias not resolved: it may


def _catalog(path: str | None) -> ModelsFile | None:
    """A models file for resolving aliases (None when it does not read: the run reports that)."""
    if path is None:
        return None
    from vreact.spec._loader import SpecError, load_file

    try:
        return load_file(path, ModelsFile)  # type: ignore[return-value]
    except SpecError:
        return None


# --- models.yaml ----------------------------------------------------------------------


def base_url(url: str | None) -> str | None:
    """``url`` when it is an http(s) URL with a host (a server's base URL), else the error."""
    if url is None:
        return None
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{url!r} is not a server's base URL: expected http(s)://HOST[:PORT][/PATH]")
    return url.strip()


class PriceSpec(_Strict):
    input: float = Field(ge=0, description="US dollars per million prompt tokens")
    output: float = Field(ge=0, description="US dollars per million completion tokens")


class ModelEntry(_Strict):
    """One model under an alias: where it is, how it answers in JSON, and what it costs."""

    model: str = Field(description="provider/model, e.g. openai/gpt-4o-mini")
    base_url: str | None = None
    pool: list[str] | None = Field(
        None,
        min_length=1,
        description="an endpoint pool: the base URLs of servers that answer alike, one per node (on"
        " Ray each worker calls its node's, else one by its index); the alias, not a URL, is the"
        " run's endpoint and the cache's key, and each call records the URL it used",
    )

    @field_validator("base_url")
    @classmethod
    def _url(cls, url: str | None) -> str | None:
        return base_url(url)

    @field_validator("pool")
    @classmethod
    def _urls(cls, pool: list[str] | None) -> list[str] | None:
        return None if pool is None else [str(base_url(u)) for u in pool]

    @model_validator(mode="after")
    def _one_place(self) -> ModelEntry:
        if self.pool is not None and self.base_url is not None:
            raise ValueError("a model has a base_url or a pool, not both")
        return self

    api_key_env: str | None = Field(None, description="the environment variable that holds its key")
    structured_output: Literal["json_schema", "json_object"] | None = Field(
        None,
        description="openai/ only: use this response_format, without reading the server's"
        " /openapi.json or trying json_schema first",
    )
    actions: Literal["json", "native"] = Field(
        "json",
        description="how it takes the executor's actions: json, one JSON object in its reply (the"
        " default), or native, the provider's own tool calls (openai/ tools, anthropic/ tool_use;"
        " docs/tools.md)",
    )
    price: PriceSpec | None = None
    sha256: str | None = Field(
        None,
        pattern=r"^[0-9a-f]{64}$",
        description="the sha256 of the model's file: a llamacpp/ file is checked against it when a run"
        " starts (a mismatch is refused); a served model's is recorded as declared in the run's"
        " provenance",
    )

    @field_validator("model")
    @classmethod
    def _provider_model(cls, v: str) -> str:
        if "/" not in v.strip("/"):
            raise ValueError(f"expected provider/model, got {v!r}")
        return v

    @model_validator(mode="after")
    def _file_matches(self) -> ModelEntry:
        """A local file's ``sha256`` is checked when the file is read: a wrong one is refused."""
        if self.sha256 and self.model.startswith("llamacpp/"):
            found = gguf_sha256(self.model.split("/", 1)[1])
            if found is not None and found[1] != self.sha256:
                raise SettingError(
                    ("sha256",), f"{found[0]}'s sha256 is {found[1]}, not the {self.sha256} given here"
                )
        return self

    @model_validator(mode="after")
    def _native_provider(self) -> ModelEntry:
        provider = self.model.split("/", 1)[0]
        if self.actions == "native" and not provider_reads(provider, "actions"):
            raise SettingError(
                ("actions",),
                f"native tool calls need openai/ or anthropic/, not {provider}/",
            )
        return self


class ModelsFile(_Strict):
    """Model aliases and per-role models (models.yaml). CLI flags override it."""

    kind: Literal["models"] = "models"
    models: dict[str, ModelEntry] = Field(default_factory=dict)
    roles: dict[str, str] = Field(default_factory=dict, description="role -> alias or provider/model")

    @field_validator("roles")
    @classmethod
    def _roles_resolve(cls, roles: dict[str, str], info: ValidationInfo) -> dict[str, str]:
        models = info.data.get("models") or {}
        for role, name in known_roles(roles).items():
            if name not in models and "/" not in name:
                hint = suggestion(name, models, listed=False)
                raise ValueError(f"role {role!r}: {name!r} is neither an alias here nor provider/model{hint}")
        return roles


KINDS: dict[str, type[BaseModel]] = {
    "spec": TaskSpec,
    "verifiers": VerifierSet,
    "roles": RoleSchema,
    "experiment": Experiment,
    "models": ModelsFile,
}
