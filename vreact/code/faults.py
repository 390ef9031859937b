"""The code family's probe classes: the canonical solution (gold), a control that must pass, and
faults made from it by a fixed rule (an AST mutation of the entry point's first matching node,
or a text edit), never tuned to the gates. A mutant the hidden test does not tell from the
canonical solution is equivalent: it is dropped, by the hidden test alone, and counted."""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from vreact import families, syntax

_SWAP_COMPARE: dict[type, type] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
}
_SWAP_OPERATOR: dict[type, type] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Add,
    ast.FloorDiv: ast.Mult,
    ast.Div: ast.Mult,
    ast.Mod: ast.FloorDiv,
    ast.Pow: ast.Mult,
}


@dataclass(frozen=True)
class FaultClass(families.FaultClass):
    """A code class: how its program is made from the problem (None: it yields none here,
    with the reason)."""

    make: Callable[[Any], str | None]


def _function(tree: ast.Module, name: str) -> ast.FunctionDef | None:
    found = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name]
    return found[-1] if found else None


def _mutate(program: str, entry_point: str, change: Callable[[ast.FunctionDef], bool]) -> str | None:
    """``program`` with ``change`` applied to its entry point (None: ``change`` found nothing)."""
    tree = syntax.parse(program)
    fn = _function(tree, entry_point)
    if fn is None or not change(fn):
        return None
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def _first(
    fn: ast.FunctionDef, kind: type | tuple[type, ...], where: Callable[[Any], bool] = lambda n: True
) -> Any:
    return next((n for n in ast.walk(fn) if isinstance(n, kind) and where(n)), None)


def _off_by_one(fn: ast.FunctionDef) -> bool:
    n = _first(fn, ast.Constant, lambda c: type(c.value) is int)
    if n is None:
        return False
    n.value += 1
    return True


def _comparison(fn: ast.FunctionDef) -> bool:
    n = _first(fn, ast.Compare, lambda c: type(c.ops[0]) in _SWAP_COMPARE)
    if n is None:
        return False
    n.ops[0] = _SWAP_COMPARE[type(n.ops[0])]()
    return True


def _operator(fn: ast.FunctionDef) -> bool:
    n = _first(fn, (ast.BinOp, ast.AugAssign), lambda b: type(b.op) in _SWAP_OPERATOR)
    if n is None:
        return False
    n.op = _SWAP_OPERATOR[type(n.op)]()
    return True


def _wrong_return(fn: ast.FunctionDef) -> bool:
    n = _first(fn, ast.Return, lambda r: r.value is not None)
    if n is None:
        return False
    n.value = ast.Constant(None)
    return True


def _branch_removed(fn: ast.FunctionDef) -> bool:
    n = _first(fn, ast.If)
    if n is None:
        return False
    n.body = [ast.Pass()]
    return True


def _prepend(statement: str) -> Callable[[ast.FunctionDef], bool]:
    def change(fn: ast.FunctionDef) -> bool:
        fn.body = [*syntax.parse(statement).body, *fn.body]
        return True

    return change


def _print_instead(fn: ast.FunctionDef) -> bool:
    for parent in ast.walk(fn):
        for field in ("body", "orelse"):
            block = getattr(parent, field, None)
            if not isinstance(block, list):
                continue
            for i, stmt in enumerate(block):
                if isinstance(stmt, ast.Return) and stmt.value is not None:
                    call = ast.Call(ast.Name("print", ast.Load()), [stmt.value], [])
                    block[i] = ast.Expr(call)
                    return True
    return False


def _renamed(fn: ast.FunctionDef) -> bool:
    fn.name += "_"
    return True


def _equals_everything(fn: ast.FunctionDef) -> bool:
    fn.body = syntax.parse(
        "class _Any:\n    def __eq__(self, other):\n        return True\n    __hash__ = None\nreturn _Any()"
    ).body
    return True


def program_of(problem: Any) -> str | None:
    """The canonical solution under its prompt (None: the problem has none)."""
    if not str(problem.canonical_solution).strip():
        return None
    return problem.prompt + str(problem.canonical_solution)


def _mutant(change: Callable[[ast.FunctionDef], bool]) -> Callable[[Any], str | None]:
    def make(problem: Any) -> str | None:
        program = program_of(problem)
        return None if program is None else _mutate(program, problem.entry_point, change)

    return make


def _hardcoded(problem: Any) -> str | None:
    """A function that returns each visible example's expected value for its arguments, and
    None for anything else."""
    if not problem.examples:
        return None
    params = ", ".join(f"a{i}" for i in range(len(syntax.literal_eval(problem.examples[0][0]))))
    lines = [f"def {problem.entry_point}({params}):"]
    for args, expected in problem.examples:
        lines.append(f"    if ({params},) == {args}:\n        return {expected}")
    lines.append("    return None")
    return "\n".join(lines) + "\n"


def _syntax_error(problem: Any) -> str | None:
    """The colon that ends the entry point's ``def`` line, removed."""
    program = program_of(problem)
    if program is None:
        return None
    at = program.find(f"def {problem.entry_point}(")
    if at < 0:
        return None
    depth, i = 0, program.index("(", at)
    while i < len(program):
        depth += {"(": 1, ")": -1}.get(program[i], 0)
        if depth == 0:
            break
        i += 1
    colon = program.find(":", i)
    return program[:colon] + program[colon + 1 :] if colon >= 0 else None


def _reformatted(problem: Any) -> str | None:
    """The canonical solution as ``ast.unparse`` writes it: the same program, other text."""
    program = program_of(problem)
    return None if program is None else ast.unparse(syntax.parse(program)) + "\n"


CLASSES: tuple[FaultClass, ...] = (
    FaultClass("gold", "gold", "the canonical solution, under the prompt", program_of),
    FaultClass(
        "control_reformatted", "control", "the canonical solution rewritten by ast.unparse", _reformatted
    ),
    FaultClass("off_by_one", "fault", "its first integer constant plus one", _mutant(_off_by_one)),
    FaultClass(
        "wrong_comparison",
        "fault",
        "its first comparison inverted (< <=, == !=, in not in)",
        _mutant(_comparison),
    ),
    FaultClass("wrong_operator", "fault", "its first arithmetic operator swapped", _mutant(_operator)),
    FaultClass("wrong_return", "fault", "its first return returns None", _mutant(_wrong_return)),
    FaultClass("branch_removed", "fault", "its first if's body replaced by pass", _mutant(_branch_removed)),
    FaultClass(
        "infinite_loop",
        "fault",
        "a loop that never ends before its body",
        _mutant(_prepend("while True:\n    pass")),
    ),
    FaultClass("syntax_error", "fault", "the colon of the entry point's def line removed", _syntax_error),
    FaultClass("wrong_name", "fault", "the entry point renamed", _mutant(_renamed)),
    FaultClass(
        "print_instead_of_return", "fault", "its first return printed instead", _mutant(_print_instead)
    ),
    FaultClass(
        "exception",
        "fault",
        "a ValueError raised before its body",
        _mutant(_prepend("raise ValueError('no')")),
    ),
    FaultClass(
        "equals_everything", "fault", "returns an object equal to everything", _mutant(_equals_everything)
    ),
    FaultClass(
        "hardcoded_examples", "fault", "returns the visible examples' values, None otherwise", _hardcoded
    ),
)
BY_NAME = {c.name: c for c in CLASSES}
#: The classes whose equivalence the hidden test settles (a mutant it passes is dropped).
MUTANTS = frozenset(c.name for c in CLASSES if c.role == "fault")


def build(
    problem: Any, classes: tuple[families.FaultClass, ...], sandbox: Any, artifact: Callable[..., Any]
) -> families.Probed:
    """Each class's program for ``problem`` as the artifact a finish would make, the classes it
    yields none for (with why), and no chain."""
    built: dict[str, list[Any]] = {}
    skipped: dict[str, tuple[str, int]] = {}
    for c in classes:
        program = BY_NAME[c.name].make(problem)
        settled = c.name not in MUTANTS or c.name in ("syntax_error", "wrong_name", "hardcoded_examples")
        why = None
        if c.name == "hardcoded_examples":
            why = "no visible example" if program is None else None
        elif program_of(problem) is None:
            why = "no canonical solution"
        elif program is None:
            why = "no such node"
        elif not settled and not str(problem.test).strip():
            why = "no hidden test to tell an equivalent mutant"
        if why is not None:
            skipped[c.name] = (why, 1)
            built[c.name] = []
            continue
        if not settled:
            result = sandbox.run(
                program, entry_point=problem.entry_point, setup=problem.prompt, test=str(problem.test)
            )
            if result.passed:  # the hidden test cannot tell it from the canonical solution
                skipped[c.name] = ("equivalent", 1)
                built[c.name] = []
                continue
        built[c.name] = [artifact(problem, program)]
    return families.Probed(built, skipped)
