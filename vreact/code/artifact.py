"""The code family's artifact: a ``Program`` (a try's final, a helper of a plan, or the module
R2 checks) with what its gates read, and the program a judged try is scored as."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any, Literal

from vreact import syntax
from vreact.code.sandboxes import RunSandbox
from vreact.marking import mark


@dataclass(frozen=True)
class Program:
    """A try's final: a program (kind ``answer``) or an abstention, with what its gates read:
    the entry point, the prompt's parameters and the visible examples (never the hidden test);
    in a plan, the code it builds on (``setup``: the prompt's imports and the accepted helpers)
    and, for a helper, its name. Kind ``chain``: the assembled module R2 checks. ``sandbox``:
    the run's, where its gates run it (``vreact.code.sandboxes``; None: one read back from its
    gate input, which runs in the default one); not part of what it is."""

    kind: str
    entry_point: str
    answer: Any = None
    reason: str = ""
    parameters: tuple[str, ...] = ()
    examples: tuple[tuple[str, str], ...] = ()
    evidence: list[str] = field(default_factory=list)
    setup: str = ""
    helper: str = ""
    sandbox: RunSandbox | None = field(default=None, compare=False, repr=False)

    @property
    def module(self) -> str:
        """What runs: the code it builds on, then the program."""
        return f"{self.setup}\n\n{self.answer}" if self.setup else str(self.answer)

    def identity(self) -> dict[str, Any]:
        planned = {"setup": self.setup, "helper": self.helper} if self.setup or self.helper else {}
        return {"kind": self.kind, "answer": self.answer, "reason": self.reason, **planned}

    def gate_input(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "entry_point": self.entry_point,
            "answer": self.answer,
            "reason": self.reason,
            "parameters": list(self.parameters),
            "examples": [list(e) for e in self.examples],
            "setup": self.setup,
            "helper": self.helper,
        }

    @classmethod
    def from_input(cls, data: dict[str, Any]) -> Program:
        return cls(
            data["kind"],
            data["entry_point"],
            data.get("answer"),
            data.get("reason", ""),
            tuple(data.get("parameters") or ()),
            tuple(tuple(e) for e in data.get("examples") or ()),  # type: ignore[misc]
            setup=data.get("setup") or "",
            helper=data.get("helper") or "",
        )

    def shown(self, marked: bool = False) -> Any:
        if self.kind == "abstain":
            return {"abstain": self.reason}
        program = self.module if self.kind == "chain" else str(self.answer)
        return {"program": mark(program) if marked else program}


def defines(code: str, name: str) -> bool:
    """Whether ``code`` parses and defines the function ``name`` at its top level."""
    try:
        tree = syntax.parse(code)
    except SyntaxError:
        return False
    return any(isinstance(n, ast.FunctionDef) and n.name == name for n in tree.body)


def replaced(module: str, name: str, code: str) -> str | None:
    """``module`` with its definition of ``name`` replaced by ``code``'s; None when either does
    not parse or does not define it (then there is nothing to put it in)."""
    try:
        tree, new = syntax.parse(module), syntax.parse(code)
    except SyntaxError:
        return None
    defs = [n for n in new.body if isinstance(n, ast.FunctionDef) and n.name == name]
    if not defs or not defines(module, name):
        return None
    body = [defs[-1] if isinstance(n, ast.FunctionDef) and n.name == name else n for n in tree.body]
    return ast.unparse(ast.Module(body=body, type_ignores=[]))


def tried_program(artifact: Any, answer: str | None = None) -> str | Literal[False] | None:
    """The program a judged try is scored as (``Code.score_try``): the program, after the code
    it was written on in a plan; a helper, put into the attempt's final program ``answer`` in
    place of the one accepted. None: nothing to score (an abstention; a helper of an attempt
    that gave no answer, or one without it); False: a helper that does not define itself."""
    if not isinstance(artifact, dict) or artifact.get("kind") != "answer":
        return None
    program, setup = str(artifact.get("answer")), str(artifact.get("setup") or "")
    if artifact.get("helper"):
        if answer is None:
            return None
        helper = str(artifact["helper"])
        if not defines(program, helper):
            return False
        return replaced(answer, helper, program)
    return f"{setup}\n\n{program}" if setup else program


def parameters_of(prompt: str, entry_point: str) -> tuple[str, ...]:
    """The entry point's parameter names as the prompt declares them."""
    try:
        tree = syntax.parse(prompt + "\n    pass\n")
    except SyntaxError:
        return ()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == entry_point:
            return tuple(a.arg for a in node.args.args)
    return ()
