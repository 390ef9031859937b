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


#: Values that hold no other value and can carry no tag (a ``Tagged`` is not a plain ``str``).
_PLAIN = frozenset({str, int, float, bool, type(None), bytes})


def origins_in(value: Any) -> Iterator[str]:
    """The origins tagged anywhere inside ``value``: in strings, containers (lists, tuples, sets,
    dicts: keys and values) and the fields of objects (dataclasses, pydantic models). A tag
    marks that string object: a string made from it (sliced, formatted, joined) carries none.
    Walked without recursion, plain values skipped at once: it runs on every prompt."""
    stack = [value]
    while stack:
        v = stack.pop()
        t = type(v)
        if t in _PLAIN:
            continue
        if isinstance(v, str):
            if isinstance(v, Tagged):
                yield v.origin
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, (list, tuple, set, frozenset)):
            stack.extend(v)
        elif dataclasses.is_dataclass(v) and not isinstance(v, type):
            stack.extend(getattr(v, f.name) for f in dataclasses.fields(v))
        elif hasattr(v, "__dict__") and not isinstance(v, type):  # a pydantic model, a plain object
            stack.append(vars(v))
