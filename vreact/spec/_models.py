"""Pydantic models of the declarative files: level specs, verifier sets and the role schema."""

from __future__ import annotations

import difflib
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from vreact.config import CALL_ROLES, COMPONENTS, ROLE_COMPONENT, Configuration, IdleSetting, SettingError
from vreact.model import DEFAULT_MODEL, CallPolicy, Watchdog, provider_reads, providers_reading
from vreact.spec._plugins import PluginError, load_plugin
from vreact.verify.gates import check_gate_args, gate_factory


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# --- L1: specs/*.yaml -------------------------------------------------------------------


class AnswerRequirements(_Strict):
    """What an acceptable answer is (L1). The gates (R1's and R3's) take their conditions from here by
    name (vreact.verify.gates.build_gate), and the designer's contract says them."""

    max_words: int = Field(15, ge=1, description="longest acceptable answer, in words")
    type_from_wh_word: bool = Field(
        True, description="the answer type must fit the wh-word (R3's answer_type and the contract)"
    )
    cite_evidence: bool = Field(
        True,
        description="the answer must cite retrieved paragraphs (false: evidence_retrieved, supported "
        "and multi_hop accept an uncited answer, and the contract asks for no citation)",
    )
    abstention_allowed: bool = Field(True, description="the agent may decline to answer")
    min_paragraphs: int = Field(
        1, ge=1, description="fewest distinct paragraphs the final answer must cite (2 for multi-hop)"
    )

    @field_validator("min_paragraphs")
    @classmethod
    def _cited(cls, n: int, info: ValidationInfo) -> int:
        """More than one paragraph can only be counted among cited ones."""
        if n > 1 and info.data.get("cite_evidence") is False:
            raise ValueError(f"min_paragraphs {n} counts cited paragraphs: it needs cite_evidence: true")
        return n


class Requirements(_Strict):
    task: str = Field(description="the task, as the agent's requirements state it")
    answer: AnswerRequirements = Field(default_factory=AnswerRequirements)


class TaskSpec(_Strict):
    """An L1 requirements spec (specs/*.yaml)."""

    kind: Literal["spec"] = "spec"
    name: str
    description: str = ""
    requirements: Requirements


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

    @model_validator(mode="after")
    def _known(self) -> GateRef:
        gate_factory(self.name)  # raises UnknownGate (a ValueError) with a did-you-mean
        check_gate_args(self.name, self.args)
        return self


class JudgeSpec(_Strict):
    """An LLM judge, run only on what the verifier's gates cleared."""

    min_confidence: float = Field(0.7, ge=0.0, le=1.0, description="an accept below this is a reject")


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
            close = difflib.get_close_matches(name, known, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f" (known: {', '.join(known)})"
            raise ValueError(f"unknown {what} {name!r}{hint}")
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


MODEL_ROLES = ("default", *CALL_ROLES)


class DatasetSelection(_Strict):
    """Which tasks an experiment runs: a MuSiQue file and a filter, applied in this order."""

    path: str = Field("sample", description="a MuSiQue .jsonl file or 'sample'")
    hops: list[int] | None = Field(None, description="keep only these hop counts, e.g. [2, 3]")
    answerable: bool | None = Field(None, description="keep only answerable (true) or unanswerable (false)")
    task_ids: list[str] | None = Field(None, description="keep only these ids, in this order")
    limit: int | None = Field(None, ge=1, description="then keep the first N")
    corpus: str | None = Field(
        None,
        description="a corpus (JSON array or JSON lines of {title, text}; ids are positions): search"
        " runs over it instead of each task's own paragraphs (docs/corpus.md)",
    )


#: How a model call is made when nothing says otherwise: the model layer's defaults.
_CALL = CallPolicy()


class RunLimits(_Strict):
    """How model calls are made (the same as vreact run's flags)."""

    max_retries: int = Field(
        _CALL.max_retries, ge=0, description="retries of a call on 429, 5xx and time-outs"
    )
    timeout: float = Field(120.0, gt=0, description="seconds for one HTTP request")
    call_timeout: float = Field(
        _CALL.call_timeout or 0.0, ge=0, description="seconds for all tries of one call (0: none)"
    )
    endpoint_concurrency: int = Field(_CALL.concurrency, ge=1, description="requests in flight per endpoint")
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
        description="role (default, planner, executor, judge) -> provider/model or an alias of models_file",
    )
    models_file: str | None = Field(None, description="a models file with aliases, base URLs and prices")
    base_url: str | None = Field(None, description="the provider's server for every model")
    spec: str = Field("musique", description="L1 spec: a shipped name or a YAML file")
    verifiers: str = Field("musique", description="verifier set: a shipped name or a YAML file")
    attempts: int = Field(1, ge=1, description="attempts per task and configuration (Pass@k uses k = this)")
    seed: int = Field(0, description="attempt i of every task runs with seed + i")
    concurrency: int = Field(4, ge=1, description="attempts in flight")
    cache: bool = Field(True, description="use the response cache")
    limits: RunLimits = Field(default_factory=RunLimits)

    @field_validator("configurations")
    @classmethod
    def _unique(cls, configs: list[Configuration]) -> list[Configuration]:
        names = [c.name for c in configs]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"configuration names repeat: {', '.join(dupes)}")
        return configs

    @field_validator("models")
    @classmethod
    def _roles(cls, models: dict[str, str]) -> dict[str, str]:
        for role in models:
            if role not in MODEL_ROLES:
                raise ValueError(f"unknown role {role!r} (roles: {', '.join(MODEL_ROLES)})")
        return models

    @model_validator(mode="after")
    def _no_idle_settings(self) -> Experiment:
        """A role's model that no configuration calls, or a model setting (``base_url``,
        ``limits``) that no model of the experiment reads, is refused, not silently ignored."""
        running = self.roles_run()
        for role in self.models:
            if role != "default" and role not in running:
                title = COMPONENTS[ROLE_COMPONENT[role]].title
                raise IdleSetting(
                    ("models", role),
                    f"models.{role} is read by {title}, which no configuration of this experiment runs",
                )
        resolved = self._role_models()
        if "default" in self.models and all(own for _, own in resolved.values()):
            raise IdleSetting(
                ("models", "default"),
                "models.default is read by no role: each role this experiment runs has a model of its own",
            )
        called = {role: model for role, (model, _) in resolved.items()}
        for path, setting in self._model_settings():
            if not any(_reads(m, setting) for m in called.values()):
                used = ", ".join(sorted(set(called.values())))
                readers = " and ".join(f"{p}/" for p in providers_reading(setting))
                where = ".".join(map(str, path))
                raise IdleSetting(
                    path,
                    f"{where} is read by {readers} models, which this experiment does not call"
                    f" (it calls {used})",
                )
        return self

    def roles_run(self) -> set[str]:
        """The roles that call a model in at least one of the configurations."""
        return {r for r in CALL_ROLES for c in self.configurations if COMPONENTS[ROLE_COMPONENT[r]].runs(c)}

    def models_run(self) -> dict[str, str]:
        """Each role that runs -> its model's ``provider/model`` (an alias of ``models_file``
        resolved when that file reads; else kept as it is)."""
        return {role: model for role, (model, _) in self._role_models().items()}

    def _role_models(self) -> dict[str, tuple[str, bool]]:
        """Each role that runs -> (its model, whether that is its own rather than the default's),
        the models file read once."""
        catalog = _catalog(self.models_file)
        roles = dict(catalog.roles) if catalog else {}
        default = self.models.get("default") or roles.get("default") or DEFAULT_MODEL
        out = {}
        for role in sorted(self.roles_run()):
            own = self.models.get(role) or roles.get(role)
            entry = catalog.models.get(own or default) if catalog else None
            out[role] = (entry.model if entry else own or default, own is not None)
        return out

    def ignored_settings(self) -> list[tuple[Loc, str]]:
        """(where, why) of each model setting that a model of the experiment ignores although
        another reads it: worth a warning, not a refusal."""
        called = self.models_run()
        return [
            (path, f"warning: the {role}'s model {model} ignores {'.'.join(map(str, path))}")
            for path, setting in self._model_settings()
            for role, model in called.items()
            if not _reads(model, setting)
        ]

    def _model_settings(self) -> list[tuple[Loc, str]]:
        """(path, name) of each model setting the experiment gives: base_url and its limits."""
        given: list[tuple[Loc, str]] = [(("base_url",), "base_url")] if self.base_url is not None else []
        return given + [(("limits", k), k) for k in sorted(self.limits.model_fields_set)]


Loc = tuple[str | int, ...]


def _reads(model: str, setting: str) -> bool:
    provider, sep, _ = model.partition("/")
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


class PriceSpec(_Strict):
    input: float = Field(ge=0, description="US dollars per million prompt tokens")
    output: float = Field(ge=0, description="US dollars per million completion tokens")


class ModelEntry(_Strict):
    """One model under an alias: where it is, how it answers in JSON, and what it costs."""

    model: str = Field(description="provider/model, e.g. openai/gpt-4o-mini")
    base_url: str | None = None
    api_key_env: str | None = Field(None, description="the environment variable that holds its key")
    structured_output: Literal["json_schema", "json_object"] | None = Field(
        None, description="openai/ only: skip probing and use this response_format"
    )
    price: PriceSpec | None = None

    @field_validator("model")
    @classmethod
    def _provider_model(cls, v: str) -> str:
        if "/" not in v.strip("/"):
            raise ValueError(f"expected provider/model, got {v!r}")
        return v


class ModelsFile(_Strict):
    """Model aliases and per-role models (models.yaml). CLI flags override it."""

    kind: Literal["models"] = "models"
    models: dict[str, ModelEntry] = Field(default_factory=dict)
    roles: dict[str, str] = Field(default_factory=dict, description="role -> alias or provider/model")

    @field_validator("roles")
    @classmethod
    def _roles_resolve(cls, roles: dict[str, str], info: ValidationInfo) -> dict[str, str]:
        models = info.data.get("models") or {}
        for role, name in roles.items():
            if role not in MODEL_ROLES:
                raise ValueError(f"unknown role {role!r} (roles: {', '.join(MODEL_ROLES)})")
            if name not in models and "/" not in name:
                close = difflib.get_close_matches(name, models, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                raise ValueError(f"role {role!r}: {name!r} is neither an alias here nor provider/model{hint}")
        return roles


KINDS: dict[str, type[BaseModel]] = {
    "spec": TaskSpec,
    "verifiers": VerifierSet,
    "roles": RoleSchema,
    "experiment": Experiment,
    "models": ModelsFile,
}
