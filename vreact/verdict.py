"""Verdicts: the only events that write memory."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Literal

from vreact.v import Level, Source, V

Decision = Literal["accept", "reject"]
#: What the success ledger holds: an accepted plan, a subtask's accepted result, the chain R2
#: accepted, the final answer.
UnitKind = Literal["plan", "unit", "chain", "answer"]


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
    seconds: float | None = None  # how long the check took (None: not timed, as a guard's stop)

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


@dataclass(frozen=True)
class Unit:
    """Accepted work, as the success ledger keeps it: a plan, a subtask's result, the chain or
    the final answer, once the verifier paired with it accepted it as a whole (or, where no verifier runs,
    as in N and NP, once the controller took it). ``input`` is everything its gates read (the
    answer, its evidence, the cited paragraphs' text, the ids the try retrieved, its searches),
    so the controller reads the ascent back from it and a replay can verify it again."""

    kind: UnitKind
    verifier: str  # the verifier whose accept it follows: plan, R1, R2 or R3
    component: str
    slot: str  # the subtask's id in its plan ("s1"); "" for a plan or the final answer
    input: dict[str, Any]
    artifact: Any  # its identity: what its verdicts' hash is of

    @property
    def level(self) -> Level:
        return V[self.verifier].level

    @property
    def artifact_hash(self) -> str:
        return artifact_hash(self.artifact)
