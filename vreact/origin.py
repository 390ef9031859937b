"""Values that carry where they came from: a string tagged with an origin (a key of the context
schema's ``never_reads``) is refused by the context assembler wherever it lands in a context
whose role's row excludes that origin. The task's gold answers and support are tagged ``gold``
when a dataset is read, so no prompt can be handed them by accident."""

from __future__ import annotations

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
    """The origins tagged anywhere inside ``value`` (strings, lists, tuples, sets, dicts)."""
    if isinstance(value, Tagged):
        yield value.origin
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from origins_in(k)
            yield from origins_in(v)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for v in value:
            yield from origins_in(v)
