"""Task families: what the core asks of a kind of task.

vreact's V, controller, budgets, verdict-only memory, records and report are the same for any
task; a family says what its tasks are. A family is a subclass of :class:`TaskFamily`
registered under its name (``@vreact.family``) when its module loads: built in (``qa``:
question answering over paragraphs, ``vreact/qa/``), from a user's module (``--plugin``,
``plugins:``) or from an installed package's entry point (group ``vreact.plugins``). The core
imports no family: it finds one here, by name, and a built-in family's module is imported only
when its name is first asked for.

A family provides its readers (record formats -> tasks, ``read``), the dataset settings it
declares (``settings``: used with another family, each is refused naming the field), and its
scorer (``score``: whether an attempt's answer is right and the family's own metrics), which a
run writes when each attempt ends, so reading a run never needs the machinery that made it.
"""

from __future__ import annotations

import difflib
import importlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

#: The families vreact ships, by name -> the module that registers it (imported on first use).
BUILT_IN = {"qa": "vreact.qa"}
#: The family a dataset is read with when nothing names one.
DEFAULT = "qa"


class UnknownFamily(ValueError):
    """A family name nothing registered: one line with the names that are."""


@dataclass(frozen=True)
class Score:
    """An attempt's score under its family: ``correct`` (None: the attempt gave no answer or its
    task cannot be scored) and the family's metrics, each a number."""

    correct: bool | None
    metrics: Mapping[str, float] = field(default_factory=dict)


class TaskFamily:
    """A kind of task. Subclass it, set ``name`` (and ``version``, ``formats``, ``settings``,
    ``metrics``), implement ``read`` and ``score``, and register it with ``@vreact.family``."""

    #: its registered name (``dataset: {family: NAME}``, ``--family NAME``)
    name: ClassVar[str] = ""
    #: recorded with every run it makes
    version: ClassVar[str] = "1"
    #: the record formats its readers take (``--format``), the default first
    formats: ClassVar[tuple[str, ...]] = ()
    #: the dataset settings it declares beyond the core's (path, task_ids, limit)
    settings: ClassVar[tuple[str, ...]] = ()
    #: the names of the metrics ``score`` gives, in the order a report shows them
    metrics: ClassVar[tuple[str, ...]] = ()

    def read(self, path: str, format: str, limit: int | None = None) -> list[Any]:
        """The tasks of the file ``path`` (a family may take names such as ``sample``), in
        ``format`` (the first ``limit`` only, when given); a bad record raises a ``ValueError``
        that names its file, line and field."""
        raise NotImplementedError

    def score(self, task: Any, answer: str | None, evidence: list[str]) -> Score:
        """An attempt's answer (None: it gave none) and the evidence it cited, scored."""
        raise NotImplementedError

    def row(self, task: Any) -> dict[str, Any]:
        """The task's row in the records' ``tasks`` table: its id, its family and its record
        as JSON (a pydantic model's dump; a family may add columns of its own)."""
        record = task.model_dump(mode="json") if hasattr(task, "model_dump") else dict(vars(task))
        return {"id": task.id, "family": self.name, "record": json.dumps(record, sort_keys=True)}

    def record(self) -> dict[str, str]:
        """What a run records of the family that made it."""
        return {"family": self.name, "family_version": self.version}


_FAMILIES: dict[str, TaskFamily] = {}


def family(cls: type[TaskFamily]) -> type[TaskFamily]:
    """Register a :class:`TaskFamily` subclass under its ``name`` (a class decorator); the
    last registration of a name wins, so a plugin may replace a built-in family."""
    if not (isinstance(cls, type) and issubclass(cls, TaskFamily)) or not cls.name:
        raise TypeError("@vreact.family decorates a TaskFamily subclass with a name")
    if not cls.formats:
        raise TypeError(f"family {cls.name!r} names no record format (formats = ('...',))")
    _FAMILIES[cls.name] = cls()
    return cls


def family_of(name: str) -> TaskFamily:
    """The family registered as ``name`` (a built-in one is loaded now); ``UnknownFamily``
    names the registered ones and the closest."""
    if name not in _FAMILIES and name in BUILT_IN:
        importlib.import_module(BUILT_IN[name])
    if name not in _FAMILIES:
        known = family_names()
        close = difflib.get_close_matches(name, known, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise UnknownFamily(f"unknown task family {name!r}{hint} (known: {', '.join(known)})")
    return _FAMILIES[name]


def family_names() -> list[str]:
    """Every family's name: the built-in ones and those registered so far."""
    return sorted({*BUILT_IN, *_FAMILIES})


def settings_of_families() -> dict[str, set[str]]:
    """Each dataset setting a family declares -> the families that declare it (the built-in
    ones are loaded)."""
    for name in BUILT_IN:
        family_of(name)
    out: dict[str, set[str]] = {}
    for f in _FAMILIES.values():
        for s in f.settings:
            out.setdefault(s, set()).add(f.name)
    return out
