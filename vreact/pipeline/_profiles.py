"""Context profiles (seed 003's ``simple`` and ``benchmark``): what of a try's history the
executor's next prompt keeps. Both keep the last ``keep_last_k`` tool results in full and blank
older ones to the family's stub (qa: the paragraph ids they showed); ``benchmark`` also folds
the oldest steps into the family's one-line summary when the prompt would pass 75% of
``context_tokens``."""

from __future__ import annotations

from vreact.families import SUMMARY, StepKit
from vreact.pipeline._core import PASS, Member, StepOutcome, Turn, member


@member("context_profile")
class ContextProfile(Member):
    def __init__(self, name: str = "simple", keep_last_k: int = 5, context_tokens: int = 8192) -> None:
        self.profile, self.keep, self.context_tokens = name, keep_last_k, context_tokens

    def context(self, turn: Turn) -> StepOutcome:
        kit = turn.kit or StepKit({})  # a turn made outside a try: the defaults
        full = list(turn.history)
        history = self._kept(full, kit)
        if self.profile == "benchmark":
            fixed = sum(len(m["content"]) for m in turn.messages) - _chars(full)
            folded = 0
            while folded < len(full) - 1 and (fixed + _chars(history)) / 4 > 0.75 * self.context_tokens:
                folded += 1
                history = [(SUMMARY, kit.summary(full[:folded])), *self._kept(full, kit)[folded:]]
        turn.history = history
        return PASS

    def _kept(self, history: list[tuple[str, str]], kit: StepKit) -> list[tuple[str, str]]:
        """The last ``keep`` results in full, older ones blanked to a stub."""
        if self.keep < 0:
            return list(history)
        cut = max(len(history) - self.keep, 0)
        return [(t, kit.stub(o)) for t, o in history[:cut]] + history[cut:]


def _chars(history: list[tuple[str, str]]) -> int:
    return sum(len(t) + len(o) + 16 for t, o in history)
