"""Context profiles (seed 003's ``simple`` and ``benchmark``): what of a try's history the
executor's next prompt keeps. Both keep the last ``keep_last_k`` tool results in full and blank
older ones to a stub that keeps their paragraph ids; ``benchmark`` also folds the oldest steps
into one deterministic summary when the prompt would pass 75% of ``context_tokens``."""

from __future__ import annotations

import re

from vreact.pipeline._core import PASS, Member, StepOutcome, Turn, member
from vreact.roles.executor import SUMMARY, parse_step

_HIT = re.compile(r"^\[(\w+)\] ([^:\n]*):", re.M)


def stub(observation: str) -> str:
    """An older tool result, blanked: the ids (and titles) it showed, nothing else."""
    hits = _HIT.findall(observation)
    if not hits:
        return observation if len(observation) <= 80 else observation[:77] + "..."
    return "(shown before: " + ", ".join(f"[{i}] {t.strip()}" for i, t in hits) + ")"


def summary(history: list[tuple[str, str]]) -> str:
    """The steps folded away: the queries issued and the paragraphs retrieved."""
    queries, seen = [], []
    for text, observation in history:
        step = parse_step(text)
        if step is not None and step.action == "search":
            queries.append(repr(step.input))
        seen += [f"[{i}] {t.strip()}" for i, t in _HIT.findall(observation)]
    parts = []
    if queries:
        parts.append("searched " + ", ".join(dict.fromkeys(queries)))
    if seen:
        parts.append("saw " + ", ".join(dict.fromkeys(seen)))
    return "; ".join(parts) or "nothing found"


@member("context_profile")
class ContextProfile(Member):
    def __init__(self, name: str = "simple", keep_last_k: int = 5, context_tokens: int = 8192) -> None:
        self.profile, self.keep, self.context_tokens = name, keep_last_k, context_tokens

    def context(self, turn: Turn) -> StepOutcome:
        full = list(turn.history)
        history = self._kept(full)
        if self.profile == "benchmark":
            fixed = sum(len(m["content"]) for m in turn.messages) - _chars(full)
            folded = 0
            while folded < len(full) - 1 and (fixed + _chars(history)) / 4 > 0.75 * self.context_tokens:
                folded += 1
                history = [(SUMMARY, summary(full[:folded])), *self._kept(full)[folded:]]
        turn.history = history
        return PASS

    def _kept(self, history: list[tuple[str, str]]) -> list[tuple[str, str]]:
        """The last ``keep`` results in full, older ones blanked to a stub."""
        if self.keep < 0:
            return list(history)
        cut = max(len(history) - self.keep, 0)
        return [(t, stub(o)) for t, o in history[:cut]] + history[cut:]


def _chars(history: list[tuple[str, str]]) -> int:
    return sum(len(t) + len(o) + 16 for t, o in history)
