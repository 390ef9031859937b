"""Verdicts: the only events that write memory."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Literal

Level = Literal["L1", "L2", "L3"]
Source = Literal["gate", "judge", "guard"]
Decision = Literal["accept", "reject"]

# Which verifier pairs with which specification level (DESIGN.md).
VERIFIER_OF_LEVEL: dict[str, str] = {"L1": "R3", "L2": "R2", "L3": "R1"}


@dataclass(frozen=True)
class Verdict:
    """One decision of one gate, judge or guard on one artifact."""

    level: Level
    component: str
    source: Source
    verifier: str
    decision: Decision
    cause: str = ""
    detail: str = ""
    budget_left: int | None = None
    artifact_hash: str = ""
    args: dict[str, Any] = field(default_factory=dict)

    @property
    def accepted(self) -> bool:
        return self.decision == "accept"


def artifact_hash(artifact: Any) -> str:
    """A short stable hash of any JSON-able artifact."""
    blob = json.dumps(artifact, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:16]
