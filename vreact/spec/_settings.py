"""A task family's own settings read where a file gives them: a model of its family's
(``vreact.families.TaskFamily``'s ``requirements``, ``dataset_settings``, ``step_settings``)
validated, its first error a ``SettingError`` at its path (the loader names its line)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from vreact.config import SettingError
from vreact.families import Settings, TaskFamily
from vreact.registry import suggestion


def given_steps(config: Any) -> dict[str, Any]:
    """The step settings a configuration gives its family: its keys beyond the core's, and its
    ``guard`` group's (as the family's ``guard``)."""
    given = dict(config.model_extra or {})
    if config.guard.model_extra:
        given["guard"] = dict(config.guard.model_extra)
    return given


def steps_of(family: TaskFamily, config: Any, where: tuple[str | int, ...] = ()) -> Any:
    """A configuration's step settings as ``family`` reads them (its ``step_settings``)."""
    return validated(family.step_settings, given_steps(config), where)


def validated(model: type[Settings], given: Mapping[str, Any], where: tuple[str | int, ...] = ()) -> Any:
    """``given`` as a family's settings ``model`` reads it; else a ``SettingError`` at the first
    wrong key's path below ``where`` (a file's loader names its line), an unknown key with the
    closest known one."""
    try:
        return model.model_validate(dict(given))
    except ValidationError as e:
        err = e.errors()[0]
        cause = (err.get("ctx") or {}).get("error")
        loc = (*err["loc"], *(cause.path if isinstance(cause, SettingError) else ()))
        message = (
            str(cause) if isinstance(cause, SettingError) else str(err["msg"]).removeprefix("Value error, ")
        )
        if err["type"] == "extra_forbidden":
            key = str(loc[-1])
            message = "unknown field" + suggestion(key, model.model_fields, listed=False)
        kind = type(cause) if isinstance(cause, SettingError) else SettingError
        raise kind((*where, *loc), message) from None
