"""How an attempt ends: exactly one of answer, abstention or crash."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from vreact.records.faults import CrashKind

OutcomeKind = Literal["answer", "abstain", "crash"]


@dataclass
class Outcome:
    """How an attempt ended: exactly one of answer, abstention or crash."""

    kind: OutcomeKind
    answer: str | None = None
    evidence: list[str] = field(default_factory=list)
    level: str | None = None  # L1 | L2 | L3 | declined | cap (abstentions only)
    component: str | None = None
    cause: str | None = None
    error: str | None = None
    crash_kind: CrashKind | None = None  # crashes only
    traceback: str | None = None  # internal errors only: the whole traceback
    plan_fallback: bool = False

    def record(self) -> dict[str, Any]:
        """The columns of the ``attempts`` row."""
        return {
            "outcome": self.kind,
            "answer": self.answer,
            "evidence": json.dumps(self.evidence),
            "abstain_level": self.level,
            "abstain_component": self.component,
            "abstain_cause": self.cause,
            "error": self.error,
            "crash_kind": self.crash_kind,
            "traceback": self.traceback,
            "plan_fallback": int(self.plan_fallback),
        }
