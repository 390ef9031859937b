"""The code family's gates: free, deterministic, with ground truth. A rejection's detail is the
sentence the failure index carries to the next try: the example, what it should return and what
it returned, or the exception and its line. None reads the hidden test."""

from __future__ import annotations

import ast
from typing import Any

from vreact.verify.gates import GateResult, accept, gate, reject


def _call(entry_point: str, args: str) -> str:
    """``f(1, 2)`` from the arguments' tuple literal ``(1, 2)``."""
    inner = args[1:-1].rstrip(",") if args.startswith("(") and args.endswith(")") else args
    return f"{entry_point}({inner})"


@gate("code_parses")
def code_parses() -> Any:
    """The program is Python that parses."""

    def check(p: Any) -> GateResult:
        try:
            ast.parse(str(p.answer))
        except SyntaxError as e:
            return reject("syntax_error", f"line {e.lineno}: {e.msg}")
        return accept()

    return check


@gate("defines_entry_point")
def defines_entry_point() -> Any:
    """The program defines the entry point with the prompt's parameters."""

    def check(p: Any) -> GateResult:
        try:
            tree = ast.parse(str(p.answer))
        except SyntaxError as e:
            return reject("syntax_error", f"line {e.lineno}: {e.msg}")
        found = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == p.entry_point]
        if not found:
            return reject("no_entry_point", f"the program defines no function {p.entry_point}")
        names = tuple(a.arg for a in found[-1].args.args)
        if p.parameters and len(names) != len(p.parameters):
            wanted = ", ".join(p.parameters)
            return reject("wrong_parameters", f"{p.entry_point} takes ({', '.join(names)}), not ({wanted})")
        return accept()

    return check


@gate("examples_pass")
def examples_pass() -> Any:
    """The program passes every visible example of the prompt, in a fresh sandbox, within its
    time."""

    def check(p: Any) -> GateResult:
        from vreact.code import sandbox

        result = sandbox().run(str(p.answer), entry_point=p.entry_point, examples=list(p.examples))
        if not result.marked:
            return reject("sandbox_stopped", f"the program was stopped: {result.killed}")
        if not result.loaded:
            if result.stopped:
                return reject("timeout", f"the program did not finish loading: {result.stopped}")
            where = f" at line {result.line}" if result.line else ""
            return reject("does_not_load", f"the program raised {result.error}{where} when loaded")
        for (args, expected), got in zip(p.examples, result.examples, strict=False):
            if got.get("passed"):
                continue
            call = _call(p.entry_point, args)
            error = str(got.get("error") or "")
            if error.startswith("stopped:"):
                return reject("timeout", f"{call} did not return in time")
            if error:
                where = f" at line {got['line']}" if got.get("line") else ""
                return reject("example_failed", f"{call} should return {expected}; it raised {error}{where}")
            return reject(
                "example_failed", f"{call} should return {expected}; it returned {got.get('actual')}"
            )
        if result.stopped:
            return reject("timeout", f"the program was stopped: {result.stopped}")
        return accept()

    return check
