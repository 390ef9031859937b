"""Inputs made up for a problem with Hypothesis, from what its prompt alone gives: the entry
point's type hints where it has them (read with ``ast``, never evaluated), else the stated
examples' argument values (their types, shapes and ranges). Seeded: the same prompt and seed
give the same inputs. No expected output is made, and nothing of the gold (a canonical solution,
a hidden test, HumanEval+'s inputs or contract) shapes a strategy.

From an example's values the inputs stay where the examples are: numbers keep their sign (all
examples at least 1, or at least 0, and so are the inputs; all 0 or 1, and so are they) and
reach twice the largest stated; a
string's characters are the ones the examples' strings use; a list is empty only when an example's
is, and at most twice the longest stated. A precondition the examples do not show is left to the
candidates (an input most of them refuse by raising is dropped: ``vreact.code.agreement``)."""

from __future__ import annotations

import ast
import string
from collections.abc import Sequence
from typing import Any

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from hypothesis.internal.conjecture.providers import AVAILABLE_PROVIDERS, HypothesisProvider

from vreact import syntax
from vreact.code.examples import definition, parameters


class Unmined(HypothesisProvider):
    """Hypothesis's own choices, without the constants it mines from every module loaded that is
    not installed (vreact's, a test's): with them the inputs would depend on what else was
    imported, and Hypothesis would cache them under ``.hypothesis/`` in the working folder."""

    def _maybe_draw_constant(self, *args: Any, **kwargs: Any) -> None:
        return None


#: The backend ``generated`` draws with (Hypothesis's way to name a provider: ``backend=``).
BACKEND = "vreact-unmined"
AVAILABLE_PROVIDERS.setdefault(BACKEND, f"{__name__}.Unmined")

#: The most elements a made-up list, dict or string has, whatever the examples show.
MOST = 20
#: What a string is made of when no example shows one.
LETTERS = string.ascii_letters + string.digits + " "


Sized = str | list[Any] | tuple[Any, ...] | dict[Any, Any]


def _ints(values: list[int]) -> st.SearchStrategy[Any]:
    if len(values) > 1 and set(values) == {0, 1}:  # bits (a grid of wells): they stay bits
        return st.integers(0, 1)
    lo, hi = min(values, default=0), max(values, default=10)
    low = 1 if lo >= 1 else 0 if lo >= 0 else min(2 * lo, -10)
    high = max(2 * hi, 10) if hi > 0 else hi
    return st.integers(low, max(low, high))


def _floats(values: list[float]) -> st.SearchStrategy[Any]:
    lo, hi = min(values, default=0.0), max(values, default=10.0)
    low = 0.0 if lo >= 0 else min(2 * lo, -10.0)
    high = max(2 * hi, 10.0) if hi > 0 else hi
    return st.floats(low, max(low, high), allow_nan=False, allow_infinity=False)


def _sized(values: list[Sized]) -> tuple[int, int]:
    lengths = [len(v) for v in values] or [0, 5]
    return (0 if min(lengths) == 0 else 1), min(max(2 * max(lengths), 5), MOST)


def from_values(values: Sequence[Any]) -> st.SearchStrategy[Any]:
    """Values like ``values`` (one argument's, across the stated examples): their types, each
    with its shape and range."""
    by_type: dict[type, list[Any]] = {}
    for v in values:
        by_type.setdefault(type(v), []).append(v)
    made = [_of_type(t, vs) for t, vs in by_type.items()]
    return st.one_of(made) if len(made) > 1 else made[0] if made else st.integers(-10, 10)


def _of_type(t: type, values: list[Any]) -> st.SearchStrategy[Any]:
    if t is bool:
        return st.booleans()
    if t is int:
        return _ints(values)
    if t is float:
        return _floats(values)
    if t is str:
        low, high = _sized(values)
        alphabet = sorted(set("".join(values))) or LETTERS
        # characters drawn from a list, not ``st.text``: that would build (and cache under
        # ``.hypothesis/``, in the working folder) Unicode's character map
        return st.lists(st.sampled_from(alphabet), min_size=low, max_size=high).map("".join)
    if t is list or t is set:
        low, high = _sized(values)
        elements = from_values([e for v in values for e in v])
        return st.lists(elements, min_size=low, max_size=high).map(t)
    if t is tuple:
        lengths = {len(v) for v in values}
        if len(lengths) == 1:
            return st.tuples(*(from_values([v[i] for v in values]) for i in range(lengths.pop())))
        low, high = _sized(values)
        return st.lists(from_values([e for v in values for e in v]), min_size=low, max_size=high).map(tuple)
    if t is dict:
        low, high = _sized(values)
        keys = from_values([k for v in values for k in v])
        return st.dictionaries(
            keys, from_values([x for v in values for x in v.values()]), min_size=low, max_size=high
        )
    return st.none()


#: A type hint's name, read as written (``List`` or ``list``), and what it makes.
_HINTS: dict[str, type] = {
    "int": int,
    "float": float,
    "str": str,
    "bool": bool,
    "list": list,
    "tuple": tuple,
    "dict": dict,
}


def from_hint(hint: ast.expr | None, values: Sequence[Any]) -> st.SearchStrategy[Any]:
    """Values of the type ``hint`` names (an ``ast`` node, never evaluated), shaped by the stated
    examples' ``values`` of that type where there are any; no hint, or one not read here (``Any``,
    a class): the values alone."""
    if hint is None:
        return from_values(values)
    name, inner = _hint_name(hint)
    kind = _HINTS.get(name.lower())
    if name == "Optional" and inner:
        return st.none() | from_hint(inner[0], [v for v in values if v is not None])
    if kind is None:
        return from_values(values)
    same: list[Any] = [v for v in values if type(v) is kind]
    if kind in (list, tuple) and inner and not (kind is tuple and len(inner) > 1):
        low, high = _sized(same)
        elements = from_hint(inner[0], [e for v in same for e in v])
        return st.lists(elements, min_size=low, max_size=high).map(kind)
    if kind is tuple and inner:
        return st.tuples(*(from_hint(h, [v[i] for v in same if len(v) > i]) for i, h in enumerate(inner)))
    if same or kind in (bool, int, float, str):
        return _of_type(kind, same)
    return from_values(values)


def _hint_name(hint: ast.expr) -> tuple[str, list[ast.expr]]:
    """``List[int]`` as ``("List", [int])``; ``typing.List`` as ``List``."""
    inner: list[ast.expr] = []
    if isinstance(hint, ast.Subscript):
        inner = list(hint.slice.elts) if isinstance(hint.slice, ast.Tuple) else [hint.slice]
        hint = hint.value
    name = hint.attr if isinstance(hint, ast.Attribute) else hint.id if isinstance(hint, ast.Name) else ""
    return name, [i for i in inner if not (isinstance(i, ast.Constant) and i.value is Ellipsis)]


def hints(prompt: str, entry_point: str) -> list[ast.expr | None]:
    """Each parameter's type hint as written in the prompt's ``def`` (None: none), parsed, never
    evaluated; empty when the prompt has no ``def`` of the entry point."""
    found = definition(prompt, entry_point)
    if found is None:
        return []
    return [a.annotation for a in (*found.args.posonlyargs, *found.args.args)]


def strategy(
    prompt: str, entry_point: str, examples: Sequence[tuple[str, str]]
) -> st.SearchStrategy[Any] | None:
    """Argument tuples for ``entry_point``: each parameter from its hint or the stated examples'
    values; None when the parameters are not known (no ``def`` in the prompt), or a parameter
    has neither a hint nor a stated value."""
    names = parameters(prompt, entry_point)
    if not names:
        return None
    given_hints = hints(prompt, entry_point) or [None] * len(names)
    stated = [syntax.literal_eval(args) for args, _ in examples]
    stated = [a for a in stated if isinstance(a, tuple) and len(a) == len(names)]
    made = []
    for i, hint in enumerate(given_hints):
        values = [a[i] for a in stated]
        if hint is None and not values:
            return None
        made.append(from_hint(hint, values))
    return st.tuples(*made)


def generated(
    prompt: str, entry_point: str, examples: Sequence[tuple[str, str]], n: int = 100, seed_: int = 0
) -> list[tuple[Any, ...]]:
    """Up to ``n`` argument tuples for ``entry_point``, distinct, in the order made, the same for
    the same prompt, examples and seed; none when ``strategy`` has nothing to go on."""
    made = strategy(prompt, entry_point, examples)
    if made is None:
        return []
    out: list[tuple[Any, ...]] = []
    seen: set[str] = set()

    @settings(
        max_examples=n,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
        backend=BACKEND,
    )
    @seed(seed_)
    @given(made)
    def collect(args: tuple[Any, ...]) -> None:
        key = repr(args)
        if key not in seen and len(out) < n:
            seen.add(key)
            out.append(args)

    collect()
    return out
