"""The gsm8k family's probe classes, built from a worked solution's calculator annotations (gold:
the probe's alone): the gold program, a paraphrased control, and faults made from the gold
program by a fixed rule, never tuned to the gates.

The gold program: each annotation ``<<expr=value>>``, in order, becomes ``vK = expr``, a number
in it equal to an earlier step's value written as that step's name (the steps linked, so a fault
in one reaches the answer), each with its claim as a comment (``# expr = value``), and it prints
the last. A solution whose annotations are missing, unreadable or do not reach its ``#### N`` is
skipped and counted. A fault whose program prints the gold number anyway is equivalent: dropped,
by the gold number alone, and counted."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from vreact import families, syntax
from vreact.gsm8k.numbers import calculate, number, same, shown

#: A calculator annotation of a worked solution.
ANNOTATION = re.compile(r"<<([^<>=]*)=([^<>]*)>>")
#: The factors a unit conversion multiplies or divides by (minutes, percent, grams, months,
#: hours, days, weeks, days of a year, ounces).
UNITS = frozenset({60.0, 100.0, 1000.0, 12.0, 24.0, 7.0, 52.0, 365.0, 16.0})


@dataclass(frozen=True)
class Step:
    """One step of a program: its name, its expression (a tree), its value, and what its comment
    claims (an expression and a value as written; None: no comment)."""

    name: str
    expr: ast.expr
    value: float
    claim: tuple[str, str] | None = None

    def line(self) -> str:
        comment = f"  # {self.claim[0]} = {self.claim[1]}" if self.claim else ""
        return f"{self.name} = {ast.unparse(self.expr)}{comment}"


def steps_of(solution: str, final: float | None) -> tuple[list[Step] | None, str]:
    """The gold program's steps from ``solution``'s annotations, or None and why not."""
    found = ANNOTATION.findall(solution)
    if not found:
        return None, "no calculator annotations"
    steps: list[Step] = []
    for k, (expression, _) in enumerate(found, 1):
        try:
            value = calculate(expression)
            tree = syntax.parse(expression.strip(), mode="eval").body
        except (ValueError, SyntaxError):
            return None, "an annotation the calculator cannot read"
        linked = _Link(steps).visit(tree)
        steps.append(Step(f"v{k}", linked, value, (expression.strip(), shown(value))))
    if final is None or not same(steps[-1].value, final):
        return None, "annotations that do not reach #### N"
    return steps, ""


class _Link(ast.NodeTransformer):
    """A number equal to an earlier step's value becomes that step's name (the latest such)."""

    def __init__(self, steps: list[Step]) -> None:
        self.steps = steps

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        v = numeric(node)
        for s in reversed(self.steps):
            if v is not None and same(v, s.value):
                return ast.Name(s.name, ast.Load())
        return node


def numeric(node: ast.AST) -> float | None:
    """The number a node is, when it is a number written out (not a bool)."""
    if (
        isinstance(node, ast.Constant)
        and isinstance(node.value, int | float)
        and not isinstance(node.value, bool)
    ):
        return float(node.value)
    return None


def program(steps: list[Step], printed: str | None = None) -> str:
    """The steps as a program that prints ``printed`` (a step's name; default: the last)."""
    return "\n".join([*(s.line() for s in steps), f"print({printed or steps[-1].name})"]) + "\n"


def value(steps: list[Step], name: str | None = None) -> float | None:
    """What the steps compute for ``name`` (default: the last), by the calculator (None: they do
    not compute)."""
    env: dict[str, float] = {}
    try:
        for s in steps:
            env[s.name] = calculate(ast.unparse(_Inline(env).visit(_copy(s.expr))))
    except ValueError:
        return None
    return env.get(name or steps[-1].name)


class _Inline(ast.NodeTransformer):
    def __init__(self, env: dict[str, float]) -> None:
        self.env = env

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.env:
            return ast.Constant(self.env[node.id])
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:  # round(x): computed here, as Python would
        if isinstance(node.func, ast.Name) and node.func.id == "round" and len(node.args) == 1:
            inner = calculate(ast.unparse(self.visit(node.args[0])))
            return ast.Constant(float(round(inner)))
        raise ValueError("a call the calculator does not make")


def _copy(tree: ast.expr) -> ast.expr:
    return syntax.parse(ast.unparse(tree), mode="eval").body


def chain(steps: list[Step]) -> list[int]:
    """The indexes of the steps the printed one depends on, itself included, in order."""
    needed = {steps[-1].name}
    for s in reversed(steps):
        if s.name in needed:
            needed |= {n.id for n in ast.walk(s.expr) if isinstance(n, ast.Name)}
    return [i for i, s in enumerate(steps) if s.name in needed]


def _restated(s: Step, expr: ast.expr, steps: list[Step], i: int) -> list[Step]:
    """``steps`` with step ``i`` computing ``expr``, every comment restated from the program."""
    changed = [*steps[:i], replace(s, expr=expr), *steps[i + 1 :]]
    return _comments_from_program(changed)


def _comments_from_program(steps: list[Step]) -> list[Step]:
    """Each step's comment as the program computes it: its expression with the earlier steps'
    values in place of their names, and its value."""
    out: list[Step] = []
    env: dict[str, float] = {}
    for s in steps:
        shown_expr = ast.unparse(_Shown(env).visit(_copy(s.expr)))
        v = value([*out, s], s.name)
        if v is None:
            return steps
        env[s.name] = v
        try:  # the comment's own arithmetic, on the values as it shows them
            claimed = shown(calculate(shown_expr))
        except ValueError:  # round(...): said as the program computes it
            claimed = shown(v)
        out.append(replace(s, value=v, claim=(shown_expr, claimed)))
    return out


class _Shown(ast.NodeTransformer):
    def __init__(self, env: dict[str, float]) -> None:
        self.env = env

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return _constant(self.env[node.id]) if node.id in self.env else node


def _constant(v: float) -> ast.Constant:
    """``v`` as a program writes it (a whole number without its ``.0``; six decimals at most)."""
    text = shown(v)
    return ast.Constant(int(text) if "." not in text else float(text))


# --- the classes ------------------------------------------------------------------------------


def _gold(task: Any, steps: list[Step]) -> tuple[str, str] | None:
    return program(steps), ""


def _paraphrased(task: Any, steps: list[Step]) -> tuple[str, str] | None:
    """The same computation written another way: steps named ``step_K``, no comments, the claims
    in the prose before the program, and the answer named and asserted."""
    names = {s.name: f"step_{k}" for k, s in enumerate(steps, 1)}

    class Rename(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            return ast.Name(names.get(node.id, node.id), ast.Load())

    lines = [f"{names[s.name]} = {ast.unparse(Rename().visit(_copy(s.expr)))}" for s in steps]
    code = "\n".join([*lines, f"answer = {names[steps[-1].name]}", "print(answer)"]) + "\n"
    claims = [f"{c[0]} = {c[1]}." for s in steps if (c := s.claim)]
    prose = " ".join(["Step by step:", *claims, f"The answer is {shown(steps[-1].value)}."])
    return code, prose


def _arithmetic_wrong(task: Any, steps: list[Step]) -> tuple[str, str] | None:
    """The first step the answer depends on states a wrong value and carries it on."""
    i = chain(steps)[0]
    s = steps[i]
    wrong = s.value + 1 if abs(s.value) >= 1 else (s.value * 2 or 1.0)
    claim = (s.claim[0] if s.claim else ast.unparse(s.expr), shown(wrong))
    changed = _comments_from_program([*steps[:i], replace(s, expr=_constant(wrong)), *steps[i + 1 :]])
    changed[i] = replace(changed[i], claim=claim)  # the wrong value stated for the step's own expression
    return program(changed), ""


def _first_binop(steps: list[Step], where: Callable[[ast.BinOp], bool]) -> tuple[int, ast.BinOp] | None:
    for i in chain(steps):
        for node in ast.walk(steps[i].expr):
            if isinstance(node, ast.BinOp) and where(node):
                return i, node
    return None


def _mutated(
    steps: list[Step], where: Callable[[ast.BinOp], bool], change: Callable[[ast.BinOp], None]
) -> str | None:
    found = _first_binop(steps, where)
    if found is None:
        return None
    i, _ = found
    expr = _copy(steps[i].expr)
    node = next(n for n in ast.walk(expr) if isinstance(n, ast.BinOp) and where(n))
    change(node)
    return program(_restated(steps[i], expr, steps, i))


def _operands_swapped(task: Any, steps: list[Step]) -> tuple[str, str] | None:
    """The first subtraction or division the answer depends on, its operands swapped."""

    def swap(node: ast.BinOp) -> None:
        node.left, node.right = node.right, node.left

    made = _mutated(steps, lambda n: isinstance(n.op, ast.Sub | ast.Div), swap)
    return (made, "") if made else None


def _unit_factor(node: ast.BinOp) -> bool:
    return isinstance(node.op, ast.Mult | ast.Div) and any(
        numeric(side) in UNITS for side in (node.left, node.right)
    )


def _unit_slip(task: Any, steps: list[Step]) -> tuple[str, str] | None:
    """The first multiplication or division by a unit's factor the answer depends on, the other
    way round (divided where it multiplied)."""

    def flip(node: ast.BinOp) -> None:
        node.op = ast.Div() if isinstance(node.op, ast.Mult) else ast.Mult()

    made = _mutated(steps, _unit_factor, flip)
    return (made, "") if made else None


def _off_by_one(task: Any, steps: list[Step]) -> tuple[str, str] | None:
    """The first number the answer depends on that the question states, one more."""
    stated = {number(n) for n in re.findall(r"\d[\d,]*(?:\.\d+)?", task.question)}
    for i in chain(steps):
        expr = _copy(steps[i].expr)
        for node in ast.walk(expr):
            v = numeric(node)
            if v is not None and v in stated:
                node.value = int(v) + 1 if type(node.value) is int else v + 1  # type: ignore[attr-defined]
                return program(_restated(steps[i], expr, steps, i)), ""
    return None


def _rounded_early(task: Any, steps: list[Step]) -> tuple[str, str] | None:
    """The first step the answer depends on whose value is not whole, rounded there."""
    for i in chain(steps)[:-1] or chain(steps):
        if not same(steps[i].value, round(steps[i].value)):
            rounded = ast.Call(ast.Name("round", ast.Load()), [_copy(steps[i].expr)], [])
            return program(_restated(steps[i], rounded, steps, i)), ""
    return None


def _sub_question(task: Any, steps: list[Step]) -> tuple[str, str] | None:
    """The step before the last printed: the answer to a sub-question instead of the question."""
    if len(steps) < 2:
        return None
    return program(steps, printed=steps[-2].name), ""


@dataclass(frozen=True)
class FaultClass(families.FaultClass):
    """A gsm8k class: how its (program, prose) is made from the gold steps (None: it yields none
    here, with ``none``, the reason)."""

    make: Callable[[Any, list[Step]], tuple[str, str] | None]
    none: str = ""


CLASSES: tuple[FaultClass, ...] = (
    FaultClass("gold", "gold", "the program built from the worked solution's calculator annotations", _gold),
    FaultClass(
        "paraphrased",
        "control",
        "the same computation written another way: other names, the claims in prose, the answer asserted",
        _paraphrased,
    ),
    FaultClass(
        "arithmetic_wrong",
        "fault",
        "one step the answer depends on states a wrong value (one more) and carries it on",
        _arithmetic_wrong,
    ),
    FaultClass(
        "operands_swapped",
        "fault",
        "the first subtraction or division the answer depends on, its operands swapped",
        _operands_swapped,
        "no subtraction or division",
    ),
    FaultClass(
        "unit_slip",
        "fault",
        "a multiplication by a unit's factor (60, 100, 1000, 12, 24, 7, 52, 365, 16) made a division,"
        " or back",
        _unit_slip,
        "no unit factor",
    ),
    FaultClass(
        "off_by_one",
        "fault",
        "the first number of the question the answer depends on, one more",
        _off_by_one,
        "no number of the question in the steps",
    ),
    FaultClass(
        "rounded_early",
        "fault",
        "the first step the answer depends on whose value is not whole, rounded there",
        _rounded_early,
        "no step with a value that is not whole",
    ),
    FaultClass(
        "sub_question",
        "fault",
        "prints the step before the last: the answer to a sub-question",
        _sub_question,
        "one step only",
    ),
)
BY_NAME = {c.name: c for c in CLASSES}


def build(
    task: Any, classes: tuple[families.FaultClass, ...], make: Callable[[str, str], Any]
) -> families.Probed:
    """Each class's artifact for ``task`` (``make(program, prose)``: the artifact a finish would
    make, run in the sandbox), the classes it yields none for (with why), and no chain."""
    steps, why = steps_of(str(task.solution), task.gold())
    built: dict[str, list[Any]] = {}
    skipped: dict[str, tuple[str, int]] = {}
    gold = task.gold()
    for c in classes:
        own = BY_NAME[c.name]
        made = own.make(task, steps) if steps is not None else None
        if made is None:
            skipped[c.name] = (why if steps is None else own.none, 1)
            built[c.name] = []
            continue
        artifact = make(*made)
        printed = artifact.printed()
        if c.role == "fault" and printed is not None and gold is not None and same(printed, gold):
            skipped[c.name] = ("equivalent", 1)  # it prints the gold number: no fault to catch
            built[c.name] = []
            continue
        built[c.name] = [artifact]
    return families.Probed(built, skipped)
