"""A run folder's history, with one rule: a folder holds one run per identity, and which
configurations it runs is not part of that. A run resumed with more configurations, or with
some of them, goes on within the same run (its stored identity then lists every configuration
it ran); any other difference (a configuration's body under the same name included) is
refused in one line that names it.

Folders made before the rule may hold several runs: each one still resumes (an exact match
first, else the latest run that differs from this one in its configurations alone)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from vreact.config import RESOLVED, calls_role
from vreact.experiment.resolved import in_todays_terms
from vreact.families import DEFAULT as DEFAULT_FAMILY
from vreact.families import UnknownFamily, family_of


class RunMismatch(RuntimeError):
    """A run folder already holds a run that differs from this one in more than its
    configurations: one folder keeps one history, so the new run is refused."""


class EndpointMismatch(RunMismatch):
    """A run folder's run is resumed against another server or model file than it began with."""


class CorpusMismatch(RunMismatch):
    """A run folder already holds a run searched in another corpus (or in the tasks' own
    paragraphs): one folder keeps one support list per task id, so the modes never share one."""


#: The parts of an identity in the order a refusal names the first that differs (the
#: configurations last: there only a body under the same name differs); parts not named here
#: (added later) come after these, in the identity's order.
ORDER = (
    "dataset",
    "corpus",
    "attacks",
    "spec",
    "verifiers",
    "roles",
    "seed",
    "models",
    "endpoints",
    "configs",
)
#: How a refusal calls a part made of fields (the difference is one field of it).
_PARTS = {"spec": "the spec", "verifiers": "the verifier set", "roles": "the role schema"}
_ABSENT = object()


def plain(identity: dict[str, Any]) -> dict[str, Any]:
    """An identity as its stored JSON reads back (tuples become lists), to compare with one."""
    loaded: dict[str, Any] = json.loads(json.dumps(identity))
    return loaded


def grown(stored: dict[str, Any], identity: dict[str, Any]) -> dict[str, Any]:
    """The stored identity of a run resumed with ``identity``: its configurations, then those
    it had not run yet, in this run's order; and the models (and endpoints) of roles only those
    new ones call."""
    had = _by_name(stored.get("configs"))
    new = [c for c in identity.get("configs") or [] if _name(c) not in had]
    out = {**stored, "configs": [*(stored.get("configs") or []), *new]} if new else dict(stored)
    for key in ("models", "endpoints"):
        roles = _new_roles(stored, identity, key)
        if roles:
            out[key] = {**(stored.get(key) or {}), **{r: identity[key][r] for r in roles}}
    return out


def _new_roles(stored: dict[str, Any], identity: dict[str, Any], key: str) -> list[str]:
    """The roles ``identity`` gives one of the experiment's models (or endpoints) that the
    stored run has none for and none of its configurations that take the experiment's models
    calls: growth, like a new configuration."""
    was, now = stored.get(key) or {}, identity.get(key) or {}
    configs = [c for c in stored.get("configs") or [] if isinstance(c, dict) and not _own_models(c)]
    return [r for r in now if r not in was and not any(calls_role(c, r) for c in configs)]


def _own_models(config: dict[str, Any]) -> bool:
    """Whether a stored configuration ran with models of its own (not the experiment's)."""
    resolved = config.get(RESOLVED)
    return isinstance(resolved, dict) and "models" in resolved


def refusal(
    out_dir: Path, run_id: int, stored: dict[str, Any], identity: dict[str, Any]
) -> RunMismatch | None:
    """Why this run (``identity``, :func:`plain`) is not the folder's run ``run_id``: one line
    naming the first difference. None when it is that run, with the same configurations or
    other ones (each configuration both name the same in both)."""
    stored = in_todays_terms(stored)
    keys = [k for k in ORDER if k in stored or k in identity]
    family = str(identity.get("family") or DEFAULT_FAMILY)
    settings = _settings(family)
    for key in dict.fromkeys([*keys, *stored, *identity]):
        now = identity.get(key)
        was = stored.get(key)
        if key in ("models", "endpoints") and isinstance(now, dict):
            # the roles this run calls the experiment's models for: a new role's is growth, and a
            # role it does not call (the default every configuration here replaces) is no difference
            now = {r: v for r, v in now.items() if r not in _new_roles(stored, identity, key)}
            was = {r: v for r, v in (was or {}).items() if r in now} if isinstance(was, dict) else was
        if settings is not None and key in stored:  # a part of its dataset settings, as they give it now
            was = settings.read_back(key, was)
        found = _difference(key, f"run {run_id}", was, now, family)
        if found is not None:
            kind, text = found
            return kind(f"{out_dir}: {text}: give it another --out")
    return None


def _difference(
    key: str, run: str, was: Any, now: Any, family: str = DEFAULT_FAMILY
) -> tuple[type[RunMismatch], str] | None:
    """How this run differs from ``run`` in one part of its identity (None: it does not); a part
    its family's dataset settings add is said as the family says it."""
    if key == "configs":
        return _configuration(run, was, now)
    if was == now:
        return None
    if key == "corpus":
        return CorpusMismatch, f"{run} searched {_searched(was)}; this one searches {_searched(now)}"
    said = _said(family, key)
    if said is not None:
        return RunMismatch, f"{run} was made with {said(was)}; this one has {said(now)}"
    if key == "endpoints":
        role, a, b = _first_role(was, now)
        return (
            EndpointMismatch,
            f"{run} was made with {role} at {a or 'an unrecorded endpoint'}; this one uses {b}",
        )
    if key == "models":
        role, a, b = _first_role(was, now)
        return RunMismatch, f"{run} was made with {_model(role, a)}; this one uses {_model(role, b)}"
    if key == "dataset":
        return RunMismatch, f"{run} was made on the dataset {was}; this one is on {now}"
    if key in _PARTS and isinstance(was, dict) and isinstance(now, dict):
        path, a, b = _first_difference(was, now)
        name = f" {was['name']}" if was.get("name") else ""
        return (
            RunMismatch,
            f"{run} was made with {_PARTS[key]}{name} where {path} is {_shown(a)}; this one has {_shown(b)}",
        )
    return RunMismatch, f"{run} was made with {key} {_shown(was)}; this one has {key} {_shown(now)}"


def _configuration(run: str, was: Any, now: Any) -> tuple[type[RunMismatch], str] | None:
    """A configuration whose body differs under the same name, named with its first
    differing setting (None when every name both runs have has the same body in both)."""
    mine = _by_name(was)
    for name, body in _by_name(now).items():
        if name in mine and mine[name] != body:
            path, a, b = _first_difference(mine[name], body)
            return (
                RunMismatch,
                f"{run} ran {name} with {path} {_shown(a)}; this one's {name} has {path} {_shown(b)}",
            )
    return None


def _first_role(was: Any, now: Any) -> tuple[str, Any, Any]:
    """The first role whose entry differs between two by-role maps, and its two entries."""
    was, now = was or {}, now or {}
    role = next((r for r in {**was, **now} if was.get(r) != now.get(r)), "default")
    return role, was.get(role), now.get(role)


def _first_difference(a: Any, b: Any, path: str = "") -> tuple[str, Any, Any]:
    """The dotted path of the first field where two settings differ, and its two values (a
    list of another length differs as a whole)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in dict.fromkeys([*a, *b]):
            x, y = a.get(key, _ABSENT), b.get(key, _ABSENT)
            if x != y:
                return _first_difference(x, y, f"{path}.{key}" if path else str(key))
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return _first_difference(x, y, f"{path}[{i}]")
    return path, a, b


def _shown(value: Any) -> str:
    """A setting's value in one short line."""
    if value is _ABSENT:
        return "unset"
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= 60 else text[:59] + "…"


def _said(family: str, key: str) -> Any:
    """How ``family`` says its dataset settings' identity part ``key`` (None: it adds none)."""
    settings = _settings(family)
    return settings.said(key) if settings is not None else None


def _settings(family: str) -> Any:
    """``family``'s dataset settings model (None: a family not loaded here)."""
    try:
        return family_of(family).dataset_settings
    except UnknownFamily:
        return None


def _searched(corpus: Any) -> str:
    return f"the corpus {corpus['path']}" if corpus else "the tasks' own paragraphs"


def _model(role: str, name: str | None) -> str:
    return f"the {role} model {name}" if name else f"no {role} model of its own"


def _name(config: Any) -> str:
    return str(config.get("name")) if isinstance(config, dict) else ""


def _by_name(configs: Any) -> dict[str, Any]:
    return {_name(c): c for c in configs or [] if isinstance(c, dict)}
