"""How an attempt ends: exactly one of answer, abstention or crash."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

OutcomeKind = Literal["answer", "abstain", "crash"]
#: What ended a crashed attempt: the expected failures, else a bug in vreact ("internal").
#: ``io``: the storage failed (disk full, read-only, failing); ``worker_lost``: a Ray worker was
#: lost under it again and again; ``unreachable``: nothing answered at a model's server: these are
#: retried on resume (vreact.records.RETRYABLE_CRASHES), as ``not_cached``; the others are final.
CrashKind = Literal[
    "model",
    "timeout",
    "context_length",
    "script",
    "io",
    "not_cached",
    "worker_lost",
    "unreachable",
    "internal",
]


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
