"""Values that carry where they came from: a string tagged with an origin (a key of the context
schema's ``never_reads``) is refused by the context assembler wherever it lands in a context
whose role's row excludes that origin. The task's gold answers and support are tagged ``gold``
when a dataset is read, so no prompt can be handed them by accident."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any


class Tagged(str):
    """A string with an ``origin``; equal to, and stored as, the plain string."""

    origin: str

    def __new__(cls, value: str, origin: str) -> Tagged:
        s = super().__new__(cls, value)
        s.origin = origin
        return s

    def __reduce__(self) -> tuple[Any, ...]:  # copies and pickles keep the tag
        return (Tagged, (str(self), self.origin))


def tag(value: str, origin: str) -> Tagged:
    return Tagged(value, origin)


def origins_in(value: Any) -> Iterator[str]:
    """The origins tagged anywhere inside ``value``: in strings, containers (lists, tuples, sets,
    dicts: keys and values) and the fields of objects (dataclasses, pydantic models). A tag
    marks that string object: a string made from it (sliced, formatted, joined) carries none."""
    if isinstance(value, str):
        if isinstance(value, Tagged):
            yield value.origin
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from origins_in(k)
            yield from origins_in(v)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for v in value:
            yield from origins_in(v)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            yield from origins_in(getattr(value, f.name))
    elif hasattr(value, "__dict__") and not isinstance(value, type):  # a pydantic model, a plain object
        yield from origins_in(vars(value))
