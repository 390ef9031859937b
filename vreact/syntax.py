"""Python's own parser, safe to call from several threads at once.

CPython 3.11 keeps the AST constructor's recursion depth in interpreter-wide state (CPython
gh-106905; 3.12.1 and 3.13.0 do not show it here): when a garbage collection inside one thread's
``ast.parse`` runs a finalizer that lets another thread parse, the first parse fails with
``SystemError: AST constructor recursion depth mismatch``. A run at concurrency above 1 parses
in several threads (the gates, the sandbox's replies), so that error would reject a right
program. Every parse in vreact goes through the lock here; a parse takes microseconds, so the
wait is nothing beside a model call or a sandbox. The sandbox's child process is single-threaded
and parses on its own.
"""

from __future__ import annotations

import ast
import threading
from typing import Any, Literal, overload

#: Re-entrant: a finalizer that runs inside a parse may itself parse, in the same thread.
_LOCK = threading.RLock()


@overload
def parse(source: str, mode: Literal["exec"] = "exec") -> ast.Module: ...
@overload
def parse(source: str, mode: Literal["eval"]) -> ast.Expression: ...
def parse(source: str, mode: str = "exec") -> ast.AST:
    """``ast.parse``, one thread at a time."""
    with _LOCK:
        return ast.parse(source, mode=mode)


def literal_eval(node_or_string: str | ast.AST) -> Any:
    """``ast.literal_eval``, one thread at a time, and without ``...``: no value vreact reads (a
    stated example, a tester's input, the sandbox's reply) is an Ellipsis, and the sandbox's
    reader takes none, so a value holding one is a ``ValueError`` like any other non-literal
    (a small tester that copies its prompt's ``"(...)"`` gives one)."""
    with _LOCK:
        node = node_or_string
        if isinstance(node, str):
            if "..." not in node:  # the common case: nothing to look for
                return ast.literal_eval(node)
            node = ast.parse(node.lstrip(" \t"), mode="eval")
        if any(isinstance(n, ast.Constant) and n.value is Ellipsis for n in ast.walk(node)):
            raise ValueError("an Ellipsis is no plain value")
        return ast.literal_eval(node)
