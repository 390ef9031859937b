"""The gate registry: a name maps to a factory whose arguments are recorded with each verdict."""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import TypeAdapter, ValidationError

from vreact.families import Artifact
from vreact.registry import Registry, UnknownName

ArtifactKind = str  # "answer" or "abstain"


@dataclass(frozen=True)
class GateResult:
    """What a gate decided: ``ok`` with a cause and a human detail when not."""

    ok: bool
    cause: str = ""
    detail: str = ""


def accept() -> GateResult:
    return GateResult(True)


def reject(cause: str, detail: str = "") -> GateResult:
    return GateResult(False, cause, detail)


Check = Callable[[Any], GateResult]  # takes an Artifact, PlanArtifact or ChainArtifact


@dataclass(frozen=True)
class Gate:
    """A built gate: a deterministic, free check of one condition on one artifact."""

    name: str
    check: Check
    kinds: frozenset[str]
    args: dict[str, Any] = field(default_factory=dict)
    description: str = ""

    def applies_to(self, artifact: Artifact) -> bool:
        return artifact.kind in self.kinds

    def __call__(self, artifact: Artifact) -> GateResult:
        return self.check(artifact)


@dataclass(frozen=True)
class GateFactory:
    name: str
    factory: Callable[..., Check]
    kinds: frozenset[str]
    description: str

    @functools.cached_property
    def parameters(self) -> dict[str, inspect.Parameter]:
        """The factory's parameters (read once: a signature does not change)."""
        return dict(inspect.signature(self.factory).parameters)

    @functools.cached_property
    def adapters(self) -> dict[str, tuple[Any, TypeAdapter[Any]]]:
        """A validator per annotated parameter, with its type: made once, not per check."""
        hints = typing.get_type_hints(self.factory)
        return {k: (hints[k], TypeAdapter(hints[k])) for k in self.parameters if k in hints}


class UnknownGate(UnknownName):
    pass


GATES: Registry[GateFactory] = Registry("gate", UnknownGate)


def gate(
    name: str | None = None, *, kinds: tuple[str, ...] = ("answer",)
) -> Callable[[Callable[..., Check]], Callable[..., Check]]:
    """Register a gate factory (default name: the function's). The factory takes the gate's
    arguments and returns a check."""

    def make(gate_name: str, factory: Callable[..., Check]) -> GateFactory:
        doc = (inspect.getdoc(factory) or "").split("\n")[0]
        return GateFactory(gate_name, factory, frozenset(kinds), doc)

    return GATES.register(name, make)


def gate_names() -> list[str]:
    """Every gate's name: the core's, the installed families' and plugins', and those
    registered so far."""
    return GATES.names()


def gate_factory(name: str) -> GateFactory:
    """A gate by name; ``UnknownGate`` names the closest."""
    return GATES[name]


def check_gate_args(name: str, args: dict[str, Any]) -> None:
    """Raise ValueError when ``args`` do not fit the gate factory's signature."""
    params = gate_factory(name).parameters
    for key in args:
        if key not in params:
            raise ValueError(
                f"gate {name!r} takes no argument {key!r} (takes: {', '.join(params) or 'none'})"
            )
    missing = [p for p, spec in params.items() if spec.default is inspect.Parameter.empty and p not in args]
    if missing:
        raise ValueError(f"gate {name!r} needs argument(s): {', '.join(missing)}")
    adapters = gate_factory(name).adapters
    for key, value in args.items():
        if key in adapters:
            hint, adapter = adapters[key]
            try:
                adapter.validate_python(value, strict=True)
            except ValidationError:
                raise ValueError(
                    f"gate {name!r}: argument {key!r} must be {getattr(hint, '__name__', hint)}, "
                    f"not {value!r}"
                ) from None


def build_gate(name: str, args: dict[str, Any] | None = None, defaults: dict[str, Any] | None = None) -> Gate:
    """Build a gate. Arguments missing from ``args`` are taken from ``defaults`` (the paired
    level's spec) by name, then from the factory's own defaults; all are recorded."""
    entry = gate_factory(name)
    given = dict(args or {})
    for param, spec in entry.parameters.items():
        if param not in given and defaults and param in defaults:
            given[param] = defaults[param]
        elif param not in given and spec.default is not inspect.Parameter.empty:
            given[param] = spec.default
    check_gate_args(name, given)
    return Gate(name, entry.factory(**given), entry.kinds, given, entry.description)
