"""A test plugin (``--plugin tests.code.strict``): a gate stricter than any program needs,
``short_program``, which rejects a program of more than 14 lines, right or wrong: what a false
rejection through the real path is made of."""

from __future__ import annotations

from typing import Any

from vreact import GateResult, accept, gate, reject

MAX_LINES = 14


@gate("short_program")
def short_program() -> Any:
    """The program has at most 14 lines."""

    def check(p: Any) -> GateResult:
        lines = len(str(p.answer).splitlines())
        if lines > MAX_LINES:
            return reject("too_long", f"the program has {lines} lines, more than {MAX_LINES}")
        return accept()

    return check
