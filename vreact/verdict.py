"""Verdicts: the only events that write memory."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Literal

from vreact.v import Level, Source, V

Decision = Literal["accept", "reject"]


@dataclass(frozen=True)
class Verdict:
    """One decision of one check (gate, judge or guard) of one verifier on one artifact."""

    verifier: str  # a row of vreact.v.V: plan, R1, R2, R3, guard
    component: str
    source: Source
    check_name: str  # the gate, judge or guard that decided
    decision: Decision
    cause: str = ""
    detail: str = ""
    budget_left: int | None = None
    artifact_hash: str = ""
    args: dict[str, Any] = field(default_factory=dict)

    @property
    def level(self) -> Level:
        """The specification level the verifier pairs with."""
        return V[self.verifier].level

    @property
    def accepted(self) -> bool:
        return self.decision == "accept"


def artifact_hash(artifact: Any) -> str:
    """A short stable hash of any JSON-able artifact."""
    blob = json.dumps(artifact, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:16]
