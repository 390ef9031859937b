"""A code judge's claim, weighed for free before the controller acts on its rejection
(``@judge_prompt("code_review", claims=weigh)``).

A rejecting judge names an ``input`` (the call's literal arguments), what the program ``returns``
there and what it should return (``expected``). The program runs on the input in the run's
sandbox. The claim is **unfounded** when the run refutes it: no input that can be run, a value
other than the one the judge says, or the value the judge expects. It is **founded** only when the
program does what the judge says and something other than the judge corroborates that it is wrong
there, never gold: a stated example's value for that input, a property check the value breaks
(a type the return annotation does not allow; a type read off the stated examples alone is too
weak to act on: a docstring's ``3`` does not say a ``3.5`` is wrong), or, with agreement
(``select: agree``, at R3), a candidate of another behaviour group that returns the value the
judge expects (a program made apart from this one says so). Otherwise the value the
judge expects is **unverified**. A founded rejection's detail, what reaches the next try, gives the input and
what the program returned, and an expected value only where a stated example states it.

On a plan (``L2``) the judge names one of the plan's helper examples; its rejection is founded
only when the plan contradicts that example by its own words, as a gate reads them: its helper's
def line annotates another return type, or another example of the helper calls it the same way
and states another value. Anything else is advice (``unverified``)."""

from __future__ import annotations

import ast
from collections.abc import Sequence
from typing import Any

from vreact import syntax
from vreact.code.agreement import CALL_S, WALL_S, annotated_types, returned_types
from vreact.code.artifact import Program
from vreact.code.examples import parameters
from vreact.code.plan import CodePlan, call_arguments, split_objective
from vreact.code.sandboxes import of
from vreact.verify.judges import Claim, Judgement

#: What a claimed value is when it is no Python literal (compared as text).
_TEXT = object()
#: Words in a claimed value that say the program raises.
_RAISES = ("raise", "error", "exception")


def weigh(kind: str, artifact: Any, paired: Any, j: Judgement, witnesses: Sequence[Any] = ()) -> Claim:
    """The claim of a rejecting code-review judge, as the module says; ``witnesses``: programs
    of the attempt's other behaviour groups (agreement's), whose outputs may corroborate it."""
    if kind == "L2":
        if not isinstance(artifact, CodePlan):
            raise TypeError(f"a plan judge's claim on a {type(artifact).__name__}")
        return _on_plan(artifact, j)
    if not isinstance(artifact, Program) or artifact.kind not in ("answer", "chain"):
        raise TypeError(f"a code judge's claim on a {type(artifact).__name__} of kind {artifact.kind!r}")
    others = [w for w in witnesses if isinstance(w, Program) and w.entry_point == artifact.entry_point]
    return _on_program(artifact, _prompt(paired), j, others)


def _literal(text: str) -> Any:
    try:
        return syntax.literal_eval(text.strip())
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _TEXT


def _same(a: Any, b: Any) -> bool:
    """Equal as values (``1 == 1.0``; a bool is no number here)."""
    if isinstance(a, bool) != isinstance(b, bool):
        return False
    try:
        return bool(a == b)
    except Exception:
        return False


def arguments(text: str, arity: int) -> tuple[Any, ...] | None:
    """The argument tuple a judge's ``input`` names: a call with literal arguments (of the
    function under review, by whatever name the judge gives it), or the arguments as one literal
    (a bare value for one parameter); None when it names none ``arity`` (0: unknown) allows."""
    text = text.strip()
    try:
        node = syntax.parse(text, mode="eval").body
    except SyntaxError:
        return None
    if isinstance(node, ast.Call):  # by any name: a judge writes f(3.5) for the function it reviews
        if not isinstance(node.func, ast.Name) or node.keywords:
            return None
        values = [_literal(ast.unparse(a)) for a in node.args]
        if any(v is _TEXT for v in values) or (arity and len(values) != arity):
            return None
        return tuple(values)
    value = _literal(text)
    if value is _TEXT:
        return None
    if arity == 1:
        return value if isinstance(value, tuple) and len(value) == 1 else (value,)
    if isinstance(value, tuple) and (not arity or len(value) == arity):
        return value
    return (value,) if not arity else None


def _prompt(paired: Any) -> str:
    """The problem's prompt, from the level a code judge's artifact pairs with."""
    if isinstance(paired, list):  # R2: the plan's subtasks, the function last
        paired = paired[-1] if paired else {}
    if isinstance(paired, dict):
        paired = paired.get("objective") or paired.get("question") or ""
    return split_objective(str(paired))[0]


def _call(entry_point: str, args: tuple[Any, ...]) -> str:
    return f"{entry_point}({', '.join(repr(a) for a in args)})"


def _on_program(p: Program, prompt: str, j: Judgement, witnesses: Sequence[Program] = ()) -> Claim:
    arity = len(p.parameters) or len(parameters(prompt, p.entry_point))
    args = arguments(j.input, arity)
    if args is None:
        return Claim(
            "unfounded", "input", f"no input to run: {j.input[:120]!r} is no literal call of {p.entry_point}"
        )
    call = _call(p.entry_point, args)
    result = of(p).run(p.module, entry_point=p.entry_point, examples=[(repr(args), "None")])
    if not result.marked or not result.loaded:  # nothing checked: the rejection stands
        raise RuntimeError(f"the program could not be run on {call}: {result.killed or result.error}")
    got = result.examples[0] if result.examples else {}
    error = str(got.get("error") or "")
    if error.startswith("stopped:"):
        return Claim(
            "unverified", "stopped", f"{call} did not return in time; the judge said it returns {j.returns!r}"
        )
    said = j.returns.strip()
    if error:
        if not any(w in said.lower() for w in _RAISES) and error.split(":")[0].lower() not in said.lower():
            return Claim(
                "unfounded", "returns", f"the judge said {call} returns {said!r}; it raises {error[:120]}"
            )
        return Claim(
            "unverified",
            "raises",
            f"{call} raises {error[:120]}, as the judge said; nothing states it should not",
        )
    shown = str(got.get("actual"))
    actual, claimed = _literal(shown), _literal(said)
    if not (_same(actual, claimed) if claimed is not _TEXT else said.strip("'\"") == shown.strip("'\"")):
        return Claim(
            "unfounded", "returns", f"the judge said {call} returns {said[:80]!r}; it returns {shown[:80]}"
        )
    expected = _literal(j.expected)
    if expected is not _TEXT and _same(actual, expected):
        return Claim("unfounded", "expected", f"{call} returns {shown[:80]}, the value the judge expects")
    for stated_args, stated in p.examples:
        if _same(_literal(stated_args), args):
            value = _literal(stated)
            if _same(actual, value):
                return Claim(
                    "unfounded", "example", f"{call} returns {shown[:80]}, as the prompt's example states"
                )
            return Claim(
                "founded",
                "example",
                f"{call} should return {stated} (the prompt's example); it returned {shown[:80]}",
            )
    allowed = annotated_types(prompt, p.entry_point)
    if allowed is not None and actual is not _TEXT and type(actual).__name__ not in allowed:
        wanted = " or ".join(sorted(allowed))
        return Claim(
            "founded",
            "property",
            f"{call} returned {shown[:80]}, a {type(actual).__name__}, where a {wanted} is asked",
        )
    # last: the only check that runs other programs
    if witnesses and expected is not _TEXT and _agrees(p, args, j.expected, witnesses):
        return Claim(
            "founded",
            "agreement",
            f"{call} returned {shown[:80]}; another behaviour group's candidate returns the value the"
            " judge expects there",
        )
    return Claim(
        "unverified",
        "expected",
        f"{call} returns {shown[:80]}; nothing corroborates the judge's {j.expected[:80]!r}",
    )


def _agrees(p: Program, args: tuple[Any, ...], expected: str, witnesses: Sequence[Program]) -> bool:
    """Whether a witness returns ``expected`` on ``args`` (compared as agreement compares
    behaviours), all of them run in one start of ``p``'s sandbox; one that cannot start raises
    (the rejection stands)."""
    result = of(p).run(
        "",
        mode="behaviours",
        entry_point=p.entry_point,
        programs=[w.module for w in witnesses],
        inputs=[list(args)],
        expected=[expected.strip()],
        call_s=CALL_S,
        wall_s=WALL_S,
    )
    if not result.marked:
        why = result.killed or result.stopped or result.error or result.output[-200:]
        raise RuntimeError(f"the other candidates could not be run: {why}")
    return any(b.get("loaded") and not b.get("fails") for b in result.behaviours)


def _on_plan(plan: CodePlan, j: Judgement) -> Claim:
    try:
        helpers = plan.parsed().helpers
    except ValueError:
        raise ValueError("the plan does not parse (its gates reject it first)") from None
    for h in helpers:
        named = call_arguments(j.input, h.name)
        if named is None:
            continue
        cases = h.cases()
        mine = [value for args, value in cases if _same(_literal(args), _literal(named))]
        if not mine:
            break
        others = {v for v in mine if not _same(_literal(v), _literal(mine[0]))}
        if others:
            return Claim(
                "founded",
                "contract",
                f"the plan's examples call {j.input.strip()} twice with different values",
            )
        value, hint = _literal(mine[0]), _annotation(h.signature)
        allowed = returned_types(hint)  # as the property check reads a prompt's
        if allowed is not None and value is not _TEXT and type(value).__name__ not in allowed:
            assert hint is not None  # what allowed was read from
            return Claim(
                "founded",
                "contract",
                f"the plan's example {j.input.strip()} returns {mine[0]}, but {h.name} is declared to"
                f" return {ast.unparse(hint)}",
            )
        return Claim(
            "unverified", "contract", f"nothing in the plan contradicts {j.input.strip()} -> {mine[0]}"
        )
    return Claim("unfounded", "example", f"the plan has no example {j.input.strip()[:120]!r}")


def _annotation(signature: str) -> ast.expr | None:
    """A def line's return annotation, parsed (None when it has none or does not parse)."""
    header = signature.strip().rstrip(":")
    header = header if header.startswith("def ") else f"def {header}"
    try:
        node = syntax.parse(header + ":\n    pass\n").body[0]
    except SyntaxError:
        return None
    return node.returns if isinstance(node, ast.FunctionDef) else None
