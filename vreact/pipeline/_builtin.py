"""The built-in members: the parse gate, and the loop guards of seed 003 (repeated calls, repeated
thoughts)."""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from typing import ClassVar

from vreact.pipeline._core import PASS, Member, StepOutcome, Turn, block, hint, member, stop
from vreact.v import Source


@member("parses")
class ParseGate(Member):
    """Fail closed on a reply that is not one JSON step: with gates on, the try stops (a
    reject by the ``parses`` gate); without, the model is told and the step is spent. A reply
    that stopped at its token allowance stops the try either way (cause ``truncated``), even
    when it parses: what it holds is cut (a program mid-function parses as a shorter one), so
    it is never acted on, and its try's rejection says why instead of looking like a bad step."""

    verifier: ClassVar[str] = "R1"
    source: ClassVar[Source] = "gate"

    def __init__(self, strict: bool = True) -> None:
        self.strict = strict

    def proposal(self, turn: Turn) -> StepOutcome:
        if turn.truncated:
            return stop(
                "truncated",
                f"the reply stopped at its token allowance (the provider's {turn.truncated!r}):"
                " what it holds is cut",
                observation="rejected by the parses gate (truncated)",
                artifact=turn.text,
            )
        if turn.step is not None:
            return PASS
        if turn.problem is not None:  # a native reply that is no single call of an offered tool
            cause, detail = turn.problem
            if not self.strict:
                return block(f"not a step ({detail}); call ONE of your tools")
            return stop(
                cause, detail, observation=f"rejected by the parses gate ({cause})", artifact=turn.text
            )
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


def normalised(text: str) -> str:
    """Lower case, punctuation and extra spaces removed."""
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


@member("text_repetition")
class TextRepetitionGuard(Member):
    """Near-verbatim thoughts across consecutive steps of a try: a hint at ``hint_at``
    consecutive near-repeats, a stop at ``stop_at``. A step with no visible thought resets it."""

    def __init__(self, similarity: float = 0.9, hint_at: int = 2, stop_at: int = 4) -> None:
        self.similarity, self.hint_at, self.stop_at = similarity, hint_at, stop_at
        self._last = ""
        self.run = 0

    def proposal(self, turn: Turn) -> StepOutcome:
        if turn.step is None or turn.final:
            return PASS
        thought = normalised(turn.step.thought)
        near = (
            bool(thought and self._last)
            and SequenceMatcher(None, thought, self._last).ratio() >= self.similarity
        )
        self.run = self.run + 1 if near else 0
        self._last = thought
        if self.run >= self.stop_at:
            return stop(
                "repeated_text",
                f"{self.run} consecutive near-repeats of the same thought",
                observation=f"stopped by the text repetition guard ({self.run} near-repeats)",
                artifact=thought,
            )
        if self.run >= self.hint_at:
            return hint("(Your thought repeats the last ones: try something else, or finish.)")
        return PASS
