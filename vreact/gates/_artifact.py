"""The artifact a gate sees: one executor result and the one condition it is checked against."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Artifact:
    """An executor's finish or abstain, with what a gate needs to check it.

    ``cited`` maps each cited paragraph id to its text (only ids that exist); ``retrieved``
    holds the ids the agent actually saw in this try (search hits and reads).
    """

    kind: str  # "answer" | "abstain"
    question: str
    answer: Any = None
    evidence: Any = field(default_factory=list)
    reason: str = ""
    cited: dict[str, str] = field(default_factory=dict)
    retrieved: frozenset[str] = frozenset()
    searches: int = 0

    def identity(self) -> dict[str, Any]:
        """What makes two artifacts the same (for hashes and corrections)."""
        if self.kind == "abstain":
            return {"kind": "abstain", "reason": self.reason}
        return {"kind": "answer", "answer": self.answer, "evidence": self.evidence}
