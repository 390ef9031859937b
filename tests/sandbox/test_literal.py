"""The sandbox's runner reads every message as a Python literal with its own reader
(``_harness.literal``: the compiler's syntax tree, no ``ast`` import), so it must read exactly
what ``ast.literal_eval`` reads: every plain value back from its ``repr``, and nothing else."""

from __future__ import annotations

import ast
import math

from hypothesis import given
from hypothesis import strategies as st

from vreact.sandbox._harness import literal, value_of

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.complex_numbers(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
    | st.binary(max_size=20)
)
HASHABLE = st.recursive(
    SCALARS, lambda inner: st.tuples(inner, inner) | st.frozensets(inner).map(tuple), max_leaves=8
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(HASHABLE, inner, max_size=3)
        | st.sets(HASHABLE, max_size=3)
    ),
    max_leaves=12,
)


@given(VALUES)
def test_every_plain_value_reads_back_from_its_repr_as_literal_eval_reads_it(value):
    text = repr(value)
    assert repr(literal(text)) == repr(ast.literal_eval(text))
    assert literal(text) == value


def test_it_refuses_what_literal_eval_refuses_and_reads_inf_and_nan_as_values():
    for text in ("__import__('os')", "x", "[1] * 3", "{[1]: 2}", "f(1)", "set([1])", "(", "[" * 5000):
        try:
            literal(text)
        except ValueError:
            continue
        raise AssertionError(f"read {text[:20]!r}")
    assert value_of("inf") == math.inf and math.isnan(value_of("nan"))  # type: ignore[arg-type]
    assert literal("set()") == set() and literal("-1-2j") == -1 - 2j
