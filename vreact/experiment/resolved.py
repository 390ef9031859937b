"""The resolved experiment: everything one run needs (tasks, configurations, models by role,
spec, verifiers, roles, attempts, limits, cache), made from an experiment file or from
``vreact run``'s flags, so the runner takes one object."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from vreact.config import RESOLVED, AgreementSettings, Configuration
from vreact.experiment.models import build_models
from vreact.families import DEFAULT as DEFAULT_FAMILY
from vreact.families import Shared, Task, family_of
from vreact.inputs import DatasetError
from vreact.model import Model, ModelConfigError, ResponseCache, acts_natively, endpoint_of
from vreact.registry import Plugin
from vreact.registry import loaded as loaded_plugins
from vreact.spec import (
    MAX_PLANNED,
    DatasetSelection,
    Experiment,
    RoleSchema,
    RunLimits,
    TaskSpec,
    VerifierSet,
    load_models,
    load_roles,
    load_spec,
    load_verifiers,
    model_names,
    steps_of,
)


@dataclass(frozen=True)
class Setup:
    """What one configuration runs with: a model per role (``default`` for the others), the L1
    spec and the verifier set; the experiment's, or its own where it names them."""

    models: dict[str, Model]
    spec: TaskSpec
    verifiers: VerifierSet


@dataclass(frozen=True)
class Loaded:
    """What an experiment's files loaded to, so a worker elsewhere resolves the same run from
    data, not from paths on the driver's disk: the spec, verifier set and role schema, those of
    the configurations that name their own (by name), and what the family opened for the run
    (qa: the corpus)."""

    spec: TaskSpec
    verifiers: VerifierSet
    roles: RoleSchema
    own: dict[str, tuple[TaskSpec, VerifierSet]] = field(default_factory=dict)
    shared: Shared | None = None


@dataclass(frozen=True)
class ResolvedExperiment:
    """An experiment with its files loaded and its models made: what ``run_experiment`` runs.

    ``models`` holds the experiment's model per role that its configurations call (``default``
    for the roles without their own; none when every configuration names its own, in
    ``setups``). ``limits`` and ``cache`` are those the models were made with (kept to describe
    the run)."""

    tasks: list[Task]
    configs: list[Configuration]
    models: dict[str, Model]
    spec: TaskSpec
    verifiers: VerifierSet
    roles: RoleSchema
    dataset: str = ""
    family: str = DEFAULT_FAMILY  # the task family of its tasks (vreact.families)
    attempts: int = 1
    seed: int = 0  # attempt i runs with seed + i
    concurrency: int = 1  # attempts in flight
    limits: RunLimits = field(default_factory=RunLimits)
    cache: ResponseCache | None = None
    #: what the family opened once for the run and every task shares (qa: the open corpus)
    shared: Shared | None = None
    plugins: tuple[Plugin, ...] = ()  # the plugins loaded when it was resolved
    #: the configurations that name their own models, spec or verifiers -> what they run with
    setups: dict[str, Setup] = field(default_factory=dict)
    #: what it was resolved from, for a Ray worker to resolve it again (not part of what it is:
    #: the same run from flags or from a file is equal)
    source: Experiment | None = field(default=None, compare=False)
    cache_dir: Path | None = None  # the response cache's folder it was made with (None: the default)
    #: where a family that runs model-written code runs it (``bwrap``, or ``none``: unsandboxed)
    sandbox: str = "bwrap"
    #: the scorers each attempt is scored by, its primary first (``TaskFamily.scorers``; empty:
    #: the family's own, its only one)
    scorers: tuple[str, ...] = ()

    def loaded(self) -> Loaded:
        """Its files as loaded, for a worker to resolve it again (:func:`resolve`'s ``loaded``)."""
        own = {name: (s.spec, s.verifiers) for name, s in self.setups.items()}
        return Loaded(self.spec, self.verifiers, self.roles, own, self.shared)

    def model_name(self) -> str:
        """The run's model as the run list shows it: the default one's, else the first
        configuration's own (the first role's when every role it calls has its own)."""
        models = self.models or self.setup(self.configs[0]).models
        model = models.get("default") or next(iter(models.values()))
        return model.name

    def setup(self, config: Configuration) -> Setup:
        """What ``config`` runs with: its own setup, else the experiment's."""
        return self.setups.get(config.name) or Setup(self.models, self.spec, self.verifiers)

    def identity(self) -> dict[str, Any]:
        """The run's resolved configuration: a folder's run with the same one, or one that
        differs only in which configurations it lists, is resumed (vreact.experiment.history)."""
        # the family's dataset settings' part: none for most (qa: its attacks, when it has any)
        settings = self.source.dataset.settings.identity() if self.source is not None else {}
        # nothing shared: as before corpora existed, so those run folders still resume
        where = self.shared.identity() if self.shared is not None else {}
        return {
            "configs": [_identity(c, self.setups.get(c.name), self.family) for c in self.configs],
            "spec": self.spec.model_dump(),
            "verifiers": self.verifiers.model_dump(),
            "roles": self.roles.model_dump(),
            "models": {role: m.name for role, m in self.models.items()},
            "endpoints": {role: endpoint_of(m) for role, m in self.models.items()},
            # as before native actions existed when none is, so those run folders still resume
            **({"actions": native} if (native := _native(self.models)) else {}),
            "dataset": self.dataset,
            # as before families existed for question answering, so those run folders still resume
            **({"family": self.family} if self.family != DEFAULT_FAMILY else {}),
            **where,
            **settings,
            # as before scorers were named when a run has one, so those run folders still resume
            **({"scorers": list(self.scorers)} if len(self.scorers) > 1 else {}),
            # as before plugins existed when there are none, so those run folders still resume
            **({"plugins": [p.record() for p in self.plugins]} if self.plugins else {}),
            # where model-written code ran, for a family that runs some (printed on every report)
            **({"sandbox": self.sandbox} if family_of(self.family).runs_code else {}),
            "seed": self.seed,
        }

    def as_made_before(self) -> ResolvedExperiment | None:
        """This run with each configuration as its file makes it, without its family's executor
        tokens (``Experiment.as_made_before``): a run folder made before the family gave them
        (a code run without ``calls``: 256 tokens) is this, and resumes as it was made, its
        stored identity kept (None: the family gave none, or the run has no file)."""
        before = self.source.as_made_before() if self.source is not None else None
        if before is None:
            return None
        return replace(self, configs=list(before.configurations), source=before)

    def total(self) -> int:
        """How many attempts the run makes (a configuration's limit runs it on fewer tasks)."""
        return planned_total(self.configs, len(self.tasks), self.attempts)


class PlanTooLarge(ValueError):
    """A run larger than vreact plans: more than ``MAX_PLANNED`` attempts in all."""


def planned_total(configs: list[Configuration], tasks: int, attempts: int) -> int:
    """How many attempts a run makes: each configuration on its tasks (its ``limit`` at most),
    ``attempts`` times."""
    return sum(min(tasks, c.limit or tasks) for c in configs) * attempts


def bounded(configs: list[Configuration], tasks: int, attempts: int) -> int:
    """The run's planned total, refused (``PlanTooLarge``) past ``MAX_PLANNED``."""
    total = planned_total(configs, tasks, attempts)
    if total > MAX_PLANNED:
        raise PlanTooLarge(
            f"the run plans {total:,} attempts ({len(configs)} configuration(s) x {tasks:,} task(s) x"
            f" {attempts:,} attempt(s)); vreact plans at most {MAX_PLANNED:,}: lower attempts,"
            " dataset.limit or the configurations"
        )
    return total


@dataclass(frozen=True)
class Plan:
    """What a run of an experiment would make, found without making anything (``--dry-run``):
    no folder, no cache, no model loaded."""

    configs: dict[str, int]  # each configuration's attempts
    tasks: int
    attempts: int
    concurrency: int
    total: int
    models: list[str]  # the models its roles would call
    backend: str

    def lines(self) -> list[str]:
        each = ", ".join(f"{name} {n:,}" for name, n in self.configs.items())
        return [
            f"{len(self.configs)} configuration(s) x {self.tasks:,} task(s) x {self.attempts:,} attempt(s)"
            f" = {self.total:,} attempts ({each})",
            f"{self.concurrency} at a time on the {self.backend} backend, calling {', '.join(self.models)}",
        ]


def plan(exp: Experiment, tasks: list[Task] | None = None) -> Plan:
    """The plan of ``exp`` (on ``tasks`` when given, else its dataset's): its size, refused past
    the bounds (``PlanTooLarge``), and what it would start. Reads the dataset and the models
    file; makes nothing."""
    tasks = experiment_tasks(exp.dataset) if tasks is None else tasks
    configs = exp.configurations
    total = bounded(configs, len(tasks), exp.attempts)
    catalog = load_models(exp.models_file) if exp.models_file else None
    names = {n for c in configs for n in _called(model_names(exp.models, catalog, c), c).values()}
    per = {c.name: planned_total([c], len(tasks), exp.attempts) for c in configs}
    return Plan(per, len(tasks), exp.attempts, exp.concurrency, total, sorted(names), exp.runner.backend)


def _native(models: dict[str, Model]) -> dict[str, str]:
    """The roles whose models take native tool calls (``actions: native``)."""
    return {role: "native" for role, m in models.items() if acts_natively(m)}


#: The step settings every configuration recorded before task families declared their own (qa's
#: finish, designer, tools, duplicate-search guard; code's show_rejected), at the values each then
#: had unless it gave one: a configuration's identity keeps them, in their places, so run folders
#: made before still resume. ``None``: recorded only when given.
_BEFORE_FAMILIES: dict[str, Any] = {
    "finish": "answer",
    "designer": {"first_search": None, "follow_up": None},
    "tools": None,
    "show_rejected": False,
    # candidates (one, as before they existed)
    "agreement": AgreementSettings().model_dump(mode="json"),
}
_GUARD_BEFORE_FAMILIES = {"duplicate_search": False, "duplicate_rollbacks": 3}
#: A context field a role schema gained after run folders existed, with the role that reads it,
#: the field it follows, and the step setting without which no role is shown it.
_READ_SINCE = {"failures.rejected": ("executor", "failures.own", "show_rejected")}


def in_todays_terms(stored: dict[str, Any]) -> dict[str, Any]:
    """A stored identity in the terms this version records it, to compare with one: a
    configuration stored before one of the settings above existed has it at its value then (the
    value one that does not give it records now), and a role schema stored before a role read a
    field of ``_READ_SINCE`` reads it when no configuration turns on what shows it, since then it
    changes nothing any role is shown, and has the row of a role of ``_ROLES_SINCE`` that no
    configuration calls. Either way the run is the same, and its folder resumes."""
    configs = [_then(c) if isinstance(c, dict) else c for c in stored.get("configs") or []]
    out = {**stored, "configs": configs} if "configs" in stored else dict(stored)
    rows = (out.get("roles") or {}).get("roles") if isinstance(out.get("roles"), dict) else None
    for read, (role, after, shown_by) in _READ_SINCE.items():
        row = rows.get(role) if isinstance(rows, dict) else None
        reads = row.get("reads") if isinstance(row, dict) else None
        if (
            not isinstance(reads, list)
            or read in reads
            or any(isinstance(c, dict) and c.get(shown_by) for c in configs)
        ):
            continue
        at = reads.index(after) + 1 if after in reads else len(reads)
        rows = {**rows, role: {**row, "reads": [*reads[:at], read, *reads[at:]]}}  # type: ignore[dict-item]
        out["roles"] = {**out["roles"], "roles": rows}
    for role, called in _ROLES_SINCE.items():
        if isinstance(rows, dict) and role not in rows and not any(called(c) for c in configs):
            rows = {**rows, role: _shipped_row(role)}
            out["roles"] = {**out["roles"], "roles": rows}
    return out


#: Roles added since run folders existed, and whether a stored configuration calls each: a role
#: schema stored before one had its row has today's shipped row when no configuration calls it
#: (its row then changes nothing any role is shown).
_ROLES_SINCE: dict[str, Callable[[Any], bool]] = {
    "tester": lambda c: isinstance(c, dict) and ((c.get("agreement") or {}).get("k") or 1) > 1,
}


def _shipped_row(role: str) -> dict[str, Any]:
    from vreact.spec import load_roles

    return load_roles().roles[role].model_dump()


def _then(config: dict[str, Any]) -> dict[str, Any]:
    """A stored configuration with the settings of ``_BEFORE_FAMILIES`` it lacks at their values
    then (those recorded only when given stay out)."""
    body = {**{k: v for k, v in _BEFORE_FAMILIES.items() if v is not None and k not in config}, **config}
    if isinstance(body.get("guard"), dict):
        body["guard"] = {**_GUARD_BEFORE_FAMILIES, **body["guard"]}
    return body


def _identity(config: Configuration, setup: Setup | None, family: str = DEFAULT_FAMILY) -> dict[str, Any]:
    """A configuration as a run's resolved configuration records it: without the fields made
    after run folders existed (per-role calls; its own models, spec and verifiers) when it sets
    none, so those folders still resume; its family's step settings as the family reads them;
    with what its own ones resolved to (``resolved``: the models each role calls and where, the
    spec's and the verifiers' contents) when it does."""
    unset = {"calls": not config.calls, "models": not config.models}
    unset |= {"spec": config.spec is None, "verifiers": config.verifiers is None}
    core = config.model_dump(
        exclude={*(k for k, empty in unset.items() if empty), *(config.model_extra or {})}
    )
    steps = steps_of(family_of(family), config).model_dump()
    own_guard = steps.pop("guard", {}) if isinstance(steps.get("guard"), dict) else {}
    before = {k: steps.pop(k, v) for k, v in _BEFORE_FAMILIES.items()}
    body: dict[str, Any] = {}
    for key, value in core.items():
        body[key] = {**value, **_GUARD_BEFORE_FAMILIES, **own_guard} if key == "guard" else value
        if key == "final_answer_recovery":
            body["finish"] = before["finish"]
        elif key == "observation_marking":
            body["designer"] = before["designer"]
            if before["tools"] is not None:
                body["tools"] = before["tools"]
            body["show_rejected"] = before["show_rejected"]
    body |= steps  # a family's own step settings beyond those
    if setup is None:
        return body
    resolved: dict[str, Any] = {}
    if config.models:  # else its models are the experiment's (the identity's models, endpoints)
        resolved["models"] = {role: m.name for role, m in setup.models.items()}
        resolved["endpoints"] = {role: endpoint_of(m) for role, m in setup.models.items()}
        if native := _native(setup.models):
            resolved["actions"] = native
    if config.spec is not None:
        resolved["spec"] = setup.spec.model_dump()
    if config.verifiers is not None:
        resolved["verifiers"] = setup.verifiers.model_dump()
    return {**body, RESOLVED: resolved}


def _called(names: dict[str, str], config: Configuration) -> dict[str, str]:
    """The names of the models ``config`` calls: each of its roles', and the default only when a
    role it calls takes it."""
    called = {r: names[r] for r in config.roles_called() if r in names}
    if len(called) < len(config.roles_called()):
        called["default"] = names["default"]
    return called


def experiment_tasks(selection: DatasetSelection) -> list[Task]:
    """An experiment file's tasks: its dataset read and filtered by its family; none is an error."""
    tasks = family_of(selection.family).tasks(selection)
    if not tasks:
        raise DatasetError(f"{selection.path}: no task passes the experiment's dataset filter")
    return tasks


def _cached_only(exp: Experiment, names: list[str], catalog: Any) -> None:
    """``--cache-only`` needs the cache, and models whose replies it keeps."""
    if not exp.cache:
        raise ModelConfigError("--cache-only needs the response cache: drop --no-cache (or cache: false)")
    models = [catalog.models[n].model if catalog and n in catalog.models else n for n in names]
    mock = sorted({m for m in models if m.startswith("mock/")})
    if mock:
        raise ModelConfigError(
            f"--cache-only: {', '.join(mock)} is never cached (mock/ models make no requests)"
        )


def resolve(
    exp: Experiment,
    *,
    tasks: list[Task] | None = None,
    cache_dir: Path | None = None,
    announce: Callable[[list[str]], None] | None = None,
    cache_only: bool = False,
    loaded: Loaded | None = None,
) -> ResolvedExperiment:
    """Load what ``exp`` names and make its models (``announce`` is told their names first:
    a local model takes a while to load). ``tasks``, when given, stand for ``exp.dataset``'s.
    What the family opens for the whole run (a qa ``dataset.corpus``, read and indexed; code's
    sandbox, of the experiment's ``sandbox``) is opened here, once, and every task is placed in
    it. With ``cache_only`` every model call must be served by the response cache (a miss is
    ``NotCached``): refused without the cache and for ``mock/`` models, which are never cached.
    With ``loaded`` (and ``tasks``, as they were resolved) no file is read: a Ray worker
    resolves the driver's run from data."""
    tasks = experiment_tasks(exp.dataset) if tasks is None else tasks
    bounded(exp.configurations, len(tasks), exp.attempts)  # before anything is made
    if loaded is not None:
        shared = loaded.shared
    else:
        of = family_of(exp.dataset.family)
        # a family that runs model-written code opens the sandbox the experiment names for the run
        named = {"sandbox": exp.sandbox} if of.runs_code else {}
        shared = of.shared(exp.dataset, **named)
        if shared is not None:
            tasks = shared.place(tasks, exp.dataset.path)
    catalog = load_models(exp.models_file) if exp.models_file else None
    # the experiment's models that a configuration without models of its own calls (a model is
    # made only when it is called: a local one loads its weights)
    everyone = model_names(exp.models, catalog)
    names = {r: n for c in exp.configurations if not c.models for r, n in _called(everyone, c).items()}
    own = {c.name: _called(model_names(exp.models, catalog, c), c) for c in exp.configurations if c.models}
    if loaded is not None:
        spec, verifiers, roles = loaded.spec, loaded.verifiers, loaded.roles
    else:
        spec, verifiers, roles = (
            load_spec(exp.spec, exp.dataset.family),
            load_verifiers(exp.verifiers),
            load_roles(),
        )
    own_files = loaded.own if loaded is not None else {}
    if cache_only:
        _cached_only(exp, [*names.values(), *(n for m in own.values() for n in m.values())], catalog)
    if announce is not None:
        announce(sorted({*names.values(), *(n for m in own.values() for n in m.values())}))
    cache = ResponseCache(cache_dir, only=cache_only) if exp.cache else None
    limits = exp.limits
    made: dict[str, Model] = {}

    def build(names: dict[str, str]) -> dict[str, Model]:
        return build_models(
            names,
            catalog,
            base_url=exp.base_url,
            timeout=limits.timeout,
            cache=cache,
            policy=limits.policy(),
            made=made,
        )

    models = build(names)
    setups = {
        c.name: Setup(
            build(own[c.name]) if c.models else models,
            *(
                own_files[c.name]
                if c.name in own_files
                else (
                    load_spec(c.spec, exp.dataset.family) if c.spec else spec,
                    load_verifiers(c.verifiers) if c.verifiers else verifiers,
                )
            ),
        )
        for c in exp.configurations
        if c.models or c.spec or c.verifiers
    }
    family = family_of(exp.dataset.family)
    for s in [models, *(s.models for s in setups.values())]:
        native = _native(s)
        if native and not family.native_actions:
            raise ModelConfigError(
                f"the {family.name} family's executor takes no native tool calls: its models take"
                f" actions: json (set for {', '.join(native)})"
            )
        executor = s.get("executor") or s.get("default")
        idle = [role for role in native if s[role] is not executor]
        if idle:  # only the executor's actions are tool calls: for any other role it would do nothing
            raise ModelConfigError(
                f"actions: native is read by the executor's model only; {', '.join(idle)} calls a native"
                " model for another role: give that role a model with actions: json"
            )
    return ResolvedExperiment(
        tasks,
        exp.configurations,
        models,
        spec,
        verifiers,
        roles,
        dataset=exp.dataset.path,
        family=exp.dataset.family,
        attempts=exp.attempts,
        seed=exp.seed,
        concurrency=exp.concurrency,
        limits=limits,
        cache=cache,
        shared=shared,
        plugins=tuple(loaded_plugins()),
        setups=setups,
        source=exp,
        cache_dir=cache_dir,
        sandbox=exp.sandbox,
        scorers=family.scorers(exp.dataset),
    )
