"""Find the shipped specs, verifier sets and role schema, from a checkout or a wheel."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from vreact.config import Configuration
from vreact.families import DEFAULT as DEFAULT_FAMILY
from vreact.families import family_of
from vreact.registry import suggestion
from vreact.spec._loader import SpecError, load_file, located
from vreact.spec._models import (
    Experiment,
    ModelsFile,
    RoleSchema,
    TaskSpec,
    VerifierSet,
    with_calls,
)

_PACKAGE = Path(__file__).resolve().parent.parent


def builtin_dir(kind: str) -> Path:
    """The folder of a kind of shipped file: ``specs``, ``verifiers``, ``memory``, ``schemas``,
    ``experiments``.

    A wheel carries them under ``vreact/_builtin/``; a checkout has them at the top level.
    """
    for candidate in (_PACKAGE / "_builtin" / kind, _PACKAGE.parent / kind):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"built-in folder {kind!r} not found beside the vreact package")


#: What each kind of shipped file is called in a message.
_KINDS = {"specs": "spec", "verifiers": "verifier set", "experiments": "experiment"}


def shipped(kind: str) -> list[str]:
    """The names of the shipped files of a kind (``experiments``: pilot, attacks, ...)."""
    return sorted(p.stem for p in builtin_dir(kind).glob("*.yaml"))


def _resolve(kind: str, name_or_path: str) -> Path:
    """A YAML file by its path, or a shipped one by its name; an unknown name is refused with
    the shipped ones listed."""
    p = Path(name_or_path)
    if p.suffix in (".yaml", ".yml") or p.exists():
        return p
    found = builtin_dir(kind) / f"{name_or_path}.yaml"
    if not found.is_file():
        what = _KINDS.get(kind, kind)
        hint = suggestion(name_or_path, shipped(kind), listed=False)
        names = ", ".join(shipped(kind))
        raise SpecError(
            [f"{name_or_path}: no shipped {what} of that name (shipped: {names}), nor such a file{hint}"]
        )
    return found


def load_spec(name_or_path: str | None = None, family: str | None = None) -> TaskSpec:
    """A spec by its path or shipped name (None: the default family's own), its answer
    requirements read as its family's: the one it names, else ``family`` (the experiment's),
    else the default family's. A spec that names another family than ``family`` is refused."""
    path = _resolve("specs", name_or_path or _default("spec"))
    return load_file(path, TaskSpec, context={"family": family})  # type: ignore[return-value]


def load_verifiers(name_or_path: str | None = None) -> VerifierSet:
    """A verifier set by its path or shipped name (None: the default family's own)."""
    found = _resolve("verifiers", name_or_path or _default("verifiers"))
    return load_file(found, VerifierSet)  # type: ignore[return-value]


def _default(kind: str) -> str:
    """The default family's own spec or verifier set (``kind``), by its shipped name."""
    family = family_of(DEFAULT_FAMILY)
    return str(family.default_spec if kind == "spec" else family.default_verifiers)


def load_roles(path: str | None = None) -> RoleSchema:
    p = Path(path) if path else builtin_dir("memory") / "roles.yaml"
    return load_file(p, RoleSchema)  # type: ignore[return-value]


def experiment_file(name_or_path: str) -> Path:
    """The experiment file a path or a shipped name (``pilot``) stands for."""
    return _resolve("experiments", name_or_path)


def load_experiment(name_or_path: str = "pilot", overrides: dict[str, Any] | None = None) -> Experiment:
    """An experiment file (or a shipped name), with ``--set`` overrides applied."""
    path = experiment_file(name_or_path)
    return load_file(path, Experiment, overrides)  # type: ignore[return-value]


class UnknownConfiguration(ValueError):
    pass


def builtin_configs() -> dict[str, Configuration]:
    """The shipped configurations (experiments/pilot.yaml) by name."""
    return {c.name: c for c in load_experiment("pilot").configurations}


def resolve_configs(
    names: str | list[str], experiment: str | Experiment | None = None
) -> list[Configuration]:
    """Turn ``"N,VG"`` into configurations from an experiment (a file, default the shipped
    pilot ladder, or one already loaded), with a clear error for an unknown name."""
    if not isinstance(experiment, Experiment):
        experiment = load_experiment(experiment or "pilot")
    known = {c.name: c for c in experiment.configurations}
    if isinstance(names, str):
        names = [n.strip() for n in names.split(",") if n.strip()]
    for name in names:
        if name not in known:
            raise UnknownConfiguration(f"unknown configuration {name!r} (known: {', '.join(known)})")
    return [known[n] for n in names]


def load_models(path: str | Path) -> ModelsFile:
    """A models file: aliases, per-role models, base URLs, prices."""
    return load_file(path, ModelsFile)  # type: ignore[return-value]


def only_configs(experiment: Experiment, names: str) -> Experiment:
    """``experiment`` with only the configurations ``names`` (``--configs N,VG``), validated
    again as a whole: names may not repeat, and the settings rule holds for what the subset
    runs. The file's models of roles none of the chosen configurations calls are left out with
    them (they are the left-out configurations')."""
    chosen = resolve_configs(names, experiment)
    data = experiment.model_dump(exclude_unset=True)
    data["configurations"] = [c.model_dump(exclude_unset=True) for c in chosen]
    subset = Experiment.model_construct(
        experiment.model_fields_set, **{**dict(experiment), "configurations": chosen}
    )
    for path, _ in subset.idle():  # the settings only the left-out configurations read go with them
        if path[0] != "configurations":
            _drop(data, path)
    if experiment.calls:  # and the call settings none of them takes
        given = [Configuration.model_validate(c) for c in data["configurations"]]  # as written
        _, taken = with_calls(experiment.calls, given)
        calls = {r: {f: v for f, v in c if (r, f) in taken} for r, c in experiment.calls.items()}
        data["calls"] = {r: c for r, c in calls.items() if c}
    try:
        return Experiment.model_validate(data)
    except ValidationError as e:
        raise SpecError([f"--configs {names}: {_message(err)}" for err in e.errors()]) from None


def _drop(data: dict[str, Any], path: tuple[str | int, ...]) -> None:
    """Remove the setting at ``path`` from a dumped experiment (and a group it leaves empty)."""
    *parents, last = map(str, path)  # an experiment's own settings: no list index among them
    holder: Any = data
    for part in parents:
        holder = holder.get(part) if isinstance(holder, dict) else None
    if isinstance(holder, dict):
        holder.pop(last, None)
        if parents and not holder:
            _drop(data, tuple(parents))


def _message(error: Any) -> str:
    where = ".".join(map(str, located(error)))
    return f"{where}: {error['msg'].removeprefix('Value error, ')}" if where else error["msg"]
