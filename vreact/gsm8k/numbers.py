"""Numbers as GSM8K writes them, an arithmetic calculator over Python's parser (never ``eval``),
and the arithmetic claims a reply states ("3 * 12 = 36"), each recomputed.

A claim agrees with its value when they are equal, or, where the claim states decimals, when they
differ by at most half a unit of its last stated digit (``10 / 3 = 3.33`` agrees; ``48 / 7 = 7``
does not: a whole number claimed is a whole number computed)."""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass

from vreact import syntax

#: A number as a reply or a dataset writes it: a sign, thousands commas, decimals, a dollar sign.
NUMBER = re.compile(r"-?\$?\s?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|-?\$?\.\d+")
#: The largest exponent and magnitude the calculator computes (a claim past them is no claim).
MAX_EXPONENT, MAX_VALUE = 64, 1e15
#: How close two numbers are to be the same answer (relative, for floats printed by programs).
SAME = 1e-6

_BINARY: dict[type, Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}


def number(text: str) -> float | None:
    """The number ``text`` is (``$1,200.50``, ``-7``, ``.5``, ``72.``), or None."""
    cleaned = text.strip().rstrip(".").replace("$", "").replace(" ", "")
    if re.fullmatch(r"-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|-?\.\d+", cleaned) is None:
        return None
    return float(cleaned.replace(",", ""))


def decimals(text: str) -> int:
    """How many decimals ``text`` (a number as written) states."""
    _, dot, rest = text.strip().rstrip(".").partition(".")
    return len(rest) if dot else 0


def same(a: float, b: float) -> bool:
    """Two answers the same number (to ``SAME``, relative to the larger)."""
    return math.isclose(a, b, rel_tol=SAME, abs_tol=1e-9)


def calculate(expression: str) -> float:
    """The value of an arithmetic ``expression`` of numbers (``+ - * / // % **``, unary signs,
    parentheses), parsed by Python's parser and computed by walking its tree: a name, a call or
    anything else is a ``ValueError``, as is a division by zero or a value past ``MAX_VALUE``."""
    try:
        tree = syntax.parse(expression.strip(), mode="eval")
    except SyntaxError:
        raise ValueError(f"not arithmetic: {expression!r}") from None
    return _value(tree.body)


def _value(node: ast.AST) -> float:
    if (
        isinstance(node, ast.Constant)
        and isinstance(node.value, int | float)
        and not isinstance(node.value, bool)
    ):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        inner = _value(node.operand)
        return -inner if isinstance(node.op, ast.USub) else inner
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _value(node.left), _value(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > MAX_EXPONENT:
            raise ValueError("an exponent past the calculator's")
        try:
            value = _BINARY[type(node.op)](left, right)
        except (ZeroDivisionError, OverflowError):
            raise ValueError("a division by zero or an overflow") from None
        if isinstance(value, complex) or not math.isfinite(value) or abs(value) > MAX_VALUE:
            raise ValueError("a value past the calculator's")
        return value
    raise ValueError(f"not arithmetic: {type(node).__name__}")


@dataclass(frozen=True)
class Claim:
    """One arithmetic claim a reply states: its expression as written, the value it claims (as
    written) and the value the calculator computes."""

    expression: str
    claimed: str
    computed: float

    @property
    def agrees(self) -> bool:
        """Equal, or within half a unit of the claim's last stated decimal."""
        claimed = number(self.claimed)
        if claimed is None:
            return False
        places = decimals(self.claimed)
        if places == 0:
            return same(claimed, self.computed)
        return abs(claimed - self.computed) <= 0.5 * 10**-places + 1e-9 * max(1.0, abs(claimed))

    def said(self) -> str:
        """``3 * 12 = 38, but 3 * 12 is 36``."""
        return f"{self.expression} = {self.claimed}, but {self.expression} is {shown(self.computed)}"


def shown(value: float) -> str:
    """A computed value as a person writes it (``36``, ``0.2``, ``3.333333``)."""
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.6f}".rstrip("0").rstrip(".")


#: The left side of a claim: numbers and operators, read back from the ``=``.
_LEFT = re.compile(r"[\d.,$()+\-*/x×÷^ \t]+$")
#: The right side: a number after the ``=``.
_RIGHT = re.compile(r"\s*(-?\s?\$?\s?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|-?\$?\.\d+)")
_OPERATOR = re.compile(r"\d[\s)]*[-+*/×÷^x][\s($]*-?[\d.]")


def claims(text: str) -> list[Claim]:
    """The arithmetic claims in ``text``: each ``=`` (not ``==``, ``<=``, ``>=``, ``!=``) with
    an expression of numbers and at least one operator before it (``x`` and ``×`` are times,
    ``÷`` divides, ``^`` raises; ``$`` and thousands commas are dropped) and a number after it.
    An expression glued to a word before it (a name's digits, ``v1 * 50``; a call's
    parentheses, ``round(48 / 7)``) or that the calculator cannot compute (a name in it, a
    division by zero) is no claim."""
    found = []
    for m in re.finditer(r"(?<![=<>!])=(?!=)", text):
        left = _LEFT.search(text[: m.start()])
        right = _RIGHT.match(text, m.end())
        if left is None or right is None:
            continue
        written = _trimmed(left.group(0))
        if written is None or _OPERATOR.search(written) is None:
            continue
        start = left.start() + left.group(0).index(written)
        if start and (text[start - 1].isalnum() or text[start - 1] == "_"):
            continue  # a name's digits (v1 * 50) or a call's parentheses (round(48 / 7)): no number
        try:
            computed = calculate(_arithmetic(written))
        except ValueError:
            continue
        claimed = right.group(1).replace(" ", "")
        found.append(Claim(" ".join(written.split()), claimed.replace("$", ""), computed))
    return found


def _trimmed(left: str) -> str | None:
    """The expression at the end of ``left``: from its first digit, ``(``, ``$``, ``.`` or
    ``-`` on, after a list's comma or a sentence's full stop, its parentheses balanced (an
    unmatched ``(`` before it dropped)."""
    start = re.search(r"[\d($.\-]", left)
    if start is None:
        return None
    # after a list's comma or a sentence's full stop ("= 24. 24 + 3"): not a thousands comma, a decimal point
    written = re.split(r"[,.]\s+", left[start.start() :].strip())[-1]
    while written.startswith("(") and written.count("(") > written.count(")"):
        written = written[1:].lstrip()
    return written if written and written.count("(") == written.count(")") else None


def _arithmetic(written: str) -> str:
    """The expression as the calculator reads it."""
    out = re.sub(r"(?<=\d),(?=\d{3}\b)", "", written).replace("$", "")
    out = re.sub(r"(?<=[\d)])\s*[x×]\s*(?=[\d(.])", " * ", out)
    return out.replace("÷", "/").replace("^", "**")
