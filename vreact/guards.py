"""Loop guards (seed 003): cheap deterministic detectors that hint, then stop."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

GuardSignal = Literal["ok", "hint", "stop"]


@dataclass
class RepetitionGuard:
    """Consecutive byte-identical tool calls: a hint at ``hint_at``, a stop at ``stop_at``."""

    hint_at: int = 3
    stop_at: int = 5
    _last: str | None = None
    _run: int = 0

    def observe(self, call: str) -> GuardSignal:
        self._run = self._run + 1 if call == self._last else 1
        self._last = call
        if self._run >= self.stop_at:
            return "stop"
        if self._run >= self.hint_at:
            return "hint"
        return "ok"

    @property
    def run(self) -> int:
        return self._run

    HINT = (
        "(This same call was made {n} times in a row and its result is above: "
        "search other words, read an id, or finish.)"
    )
