"""The built-in members: the parse gate and the repetition guard (seed 003)."""

from __future__ import annotations

from typing import ClassVar

from vreact.pipeline._core import PASS, Member, StepOutcome, Turn, block, hint, member, stop
from vreact.v import Source


@member("parses")
class ParseGate(Member):
    """Fail closed on a reply that is not one JSON step: with gates on, the try stops (a
    reject by the ``parses`` gate); without, the model is told and the step is spent."""

    verifier: ClassVar[str] = "R1"
    source: ClassVar[Source] = "gate"

    def __init__(self, strict: bool = True) -> None:
        self.strict = strict

    def proposal(self, turn: Turn) -> StepOutcome:
        if turn.step is not None:
            return PASS
        if not self.strict:
            return block("not a JSON step; reply with one JSON object")
        return stop(
            "format",
            "the step was not one JSON object with thought, action, input, evidence",
            observation="rejected by the parses gate (format)",
            artifact=turn.text,
        )


@member("repetition_guard")
class RepetitionGuard(Member):
    """Consecutive byte-identical tool calls: a hint at ``hint_at``, a stop at ``stop_at``."""

    HINT = (
        "(This same call was made {n} times in a row and its result is above: "
        "search other words, read an id, or finish.)"
    )

    def __init__(self, hint_at: int = 3, stop_at: int = 5) -> None:
        self.hint_at, self.stop_at = hint_at, stop_at
        self._last: str | None = None
        self.run = 0

    def proposal(self, turn: Turn) -> StepOutcome:
        if turn.step is None or turn.final:
            return PASS
        call = turn.step.call()
        self.run = self.run + 1 if call == self._last else 1
        self._last = call
        if self.run >= self.stop_at:
            return stop(
                "repeated_call",
                f"the same {turn.step.action} call {self.run} times in a row",
                observation=f"stopped by the repetition guard ({self.run} identical calls)",
                artifact=call,
            )
        if self.run >= self.hint_at:
            return hint(self.HINT.format(n=self.run))
        return PASS
