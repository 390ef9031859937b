"""The JSON Schemas of the files whose shape depends on a task family (a spec, an experiment):
one branch per registered family (vreact's own and any a plugin loaded), each the core's fields
with the family's settings beside them, so an editor completes and checks them as vreact does."""

from __future__ import annotations

import copy
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from vreact.families import DEFAULT, TaskFamily, family_names, family_of
from vreact.spec._models import Experiment, TaskSpec

#: The objects the core and a family's settings model both describe (their keys side by side in
#: one mapping): open in ``$defs``, closed where a family's branch joins them.
_JOINED = ("DatasetSelection", "Configuration", "GuardSettings", "Acceptable")
#: A core group a family's step settings may add keys to, under its own name.
_GROUPS = ("guard",)


def family_schemas(names: list[str] | None = None) -> dict[str, dict[str, Any]]:
    """``spec`` and ``experiment``'s JSON Schemas, a branch per family of ``names`` (None: every
    registered family: the installed ones and those of the plugins loaded)."""
    families = [family_of(name) for name in (family_names() if names is None else sorted(names))]
    return {"spec": _spec(families), "experiment": _experiment(families)}


def _defs(core: type[BaseModel], own: list[type[BaseModel]]) -> tuple[dict[Any, str], dict[str, Any]]:
    """Each model's ``$ref``, and the ``$defs`` they share. The objects a family's keys join
    (the core's groups, each family model, and a family's group of a core group's name, qa's
    ``guard``) are open there: each branch closes its own with ``unevaluatedProperties``."""
    models = list(dict.fromkeys([core, *own]))
    found, top = models_json_schema([(m, "validation") for m in models])
    refs = {m: found[(m, "validation")]["$ref"] for m in models}
    defs: dict[str, Any] = top.get("$defs", {})
    opened = set(_JOINED) | {refs[m].rsplit("/", 1)[-1] for m in own}
    for m in own:
        for name, prop in (defs[refs[m].rsplit("/", 1)[-1]].get("properties") or {}).items():
            if name in _GROUPS and "$ref" in prop:
                opened.add(prop["$ref"].rsplit("/", 1)[-1])
    for name in opened & defs.keys():
        defs[name].pop("additionalProperties", None)
    defs.pop(refs[core].rsplit("/", 1)[-1], None)  # the schema's top
    return refs, defs


def _branch(*refs: str, **properties: Any) -> dict[str, Any]:
    """The objects at ``refs`` as one, with ``properties`` beside them, and no other key."""
    out: dict[str, Any] = {"allOf": [{"$ref": r} for r in refs], "unevaluatedProperties": False}
    if properties:
        out["properties"] = properties
    return out


def _family(family: TaskFamily) -> dict[str, Any]:
    """The ``family`` key of a branch: the family's name (given, or left out for the default)."""
    return {"const": family.name, "description": f"the {family.name} family"}


def _spec(families: list[TaskFamily]) -> dict[str, Any]:
    refs, defs = _defs(TaskSpec, [f.requirements for f in families])
    schema = TaskSpec.model_json_schema()
    schema.pop("$defs", None)
    branches = []
    for f in families:
        answer = _branch("#/$defs/Acceptable", refs[f.requirements])
        branch: dict[str, Any] = {
            "title": f"a spec of the {f.name} family",
            "properties": {"family": _family(f), "requirements": {"properties": {"answer": answer}}},
        }
        if f.name != DEFAULT:
            branch["required"] = ["family"]
        branches.append(branch)
    return {**schema, "anyOf": branches, "$defs": defs}


def _experiment(families: list[TaskFamily]) -> dict[str, Any]:
    refs, defs = _defs(Experiment, [m for f in families for m in (f.dataset_settings, f.step_settings)])
    schema = copy.deepcopy(Experiment.model_json_schema())
    schema.pop("$defs", None)
    props = schema["properties"]
    datasets, configurations = [], []
    for f in families:
        dataset = _branch("#/$defs/DatasetSelection", refs[f.dataset_settings], family=_family(f))
        dataset["title"] = f"a dataset of the {f.name} family"
        if f.name != DEFAULT:
            dataset["required"] = ["family"]
        datasets.append(dataset)
        configuration = _branch("#/$defs/Configuration", refs[f.step_settings])
        configuration["title"] = f"a configuration of the {f.name} family's steps"
        configurations.append(configuration)
    props["dataset"] = {k: v for k, v in props["dataset"].items() if k != "$ref"} | {"anyOf": datasets}
    props["configurations"]["items"] = {"anyOf": configurations}
    schema["$defs"] = defs
    return schema
