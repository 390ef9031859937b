"""The artifacts gates see: an executor's result, a planner's plan (and the plan's schema, which
the planner is asked for and the plan gates check), the assembled chain."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from vreact.marking import mark
from vreact.qa.gates._choices import offered_in


@dataclass(frozen=True)
class Artifact:
    """An executor's finish or abstain, with what a gate needs to check it.

    ``cited`` maps each cited paragraph id to its text (only ids that exist); ``retrieved``
    holds the ids the agent actually saw in this try (search hits and reads); ``hops`` is a
    finish's chain (``finish: hops``), each ``{"entity", "paragraph"}``, ending with the answer.
    """

    kind: str  # "answer" | "abstain"
    question: str
    answer: Any = None
    evidence: Any = field(default_factory=list)
    reason: str = ""
    cited: dict[str, str] = field(default_factory=dict)
    retrieved: frozenset[str] = frozenset()
    searches: int = 0
    hops: tuple[dict[str, str], ...] = ()
    #: each cited paragraph's title (what a yes/no answer's gate reads: the things compared)
    titles: dict[str, str] = field(default_factory=dict)

    def identity(self) -> dict[str, Any]:
        """What makes two artifacts the same (for hashes and corrections)."""
        if self.kind == "abstain":
            return {"kind": "abstain", "reason": self.reason}
        same = {"kind": "answer", "answer": self.answer, "evidence": self.evidence}
        return {**same, "hops": list(self.hops)} if self.hops else same

    def answer_words(self) -> int:
        """How many words its answer is, a choice the question offers counted as one
        (``max_words``: a choice is never too long for being one)."""
        words = len(str(self.answer).split())
        return words - max(len(offered_in(str(self.answer), self.question)) - 1, 0)

    def gate_input(self) -> dict[str, Any]:
        """Everything a gate reads of it, as JSON (the ledger keeps it; ``from_input`` reads it back)."""
        return {
            "kind": self.kind,
            "question": self.question,
            "answer": self.answer,
            "evidence": list(self.evidence) if isinstance(self.evidence, (list, tuple)) else self.evidence,
            "reason": self.reason,
            "cited": dict(self.cited),
            "retrieved": sorted(self.retrieved),
            "searches": self.searches,
            **({"hops": [dict(h) for h in self.hops]} if self.hops else {}),
            **({"titles": dict(self.titles)} if self.titles else {}),
        }

    @classmethod
    def from_input(cls, data: dict[str, Any]) -> Artifact:
        hops = tuple(dict(h) for h in data.get("hops") or ())
        return cls(**{**data, "retrieved": frozenset(data.get("retrieved") or ()), "hops": hops})

    def shown(self, marked: bool = False) -> Any:
        """What a judge is shown: the answer and its cited paragraphs (delimited as data when
        ``marked``), or the abstention's reason; nothing else."""
        if self.kind == "abstain":
            return {"abstain": self.reason}
        cited = {pid: mark(text) for pid, text in self.cited.items()} if marked else self.cited
        return {"answer": self.answer, "evidence": cited}


ANSWER_TYPES = ("person", "date", "number", "place", "any")
#: A reference to an earlier subtask's answer in an objective: ``#2`` (the second) or ``#s2`` (by id).
REF = re.compile(r"#(s?\d+)")


class PlannedSubtask(BaseModel):
    """One subtask of a plan. ``objective`` may name earlier answers as ``#1`` or ``#s1``."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    objective: str = Field(min_length=1)
    depends_on: list[str] = Field(default_factory=list)
    answer_type: Literal["person", "date", "number", "place", "any"]


class Plan(BaseModel):
    """The L2 plan: subtasks with their dependencies and answer types."""

    model_config = ConfigDict(extra="forbid")

    subtasks: list[PlannedSubtask]


def reference_ids(objective: str, ids: list[str]) -> list[str | None]:
    """The subtask ids an objective refers to (``#2`` is the second subtask, ``#s2`` the id
    ``s2``); None for a reference that names no subtask."""
    out: list[str | None] = []
    for ref in REF.findall(objective):
        if ref.startswith("s"):
            out.append(ref if ref in ids else None)
        else:
            k = int(ref)
            out.append(ids[k - 1] if 1 <= k <= len(ids) else None)
    return out


@dataclass(frozen=True)
class PlanArtifact:
    """A planner's proposal (L2): the parsed JSON (or None) and the question it plans for."""

    question: str
    plan: Any = None
    kind: str = "plan"

    def identity(self) -> dict[str, Any]:
        return {"kind": "plan", "plan": self.plan}

    def gate_input(self) -> dict[str, Any]:
        return {"kind": self.kind, "question": self.question, "plan": self.plan}

    @classmethod
    def from_input(cls, data: dict[str, Any]) -> PlanArtifact:
        return cls(data.get("question", ""), data.get("plan"))

    def shown(self, marked: bool = False) -> Any:
        """What a judge is shown: the plan."""
        return self.plan


@dataclass(frozen=True)
class ChainStep:
    """One accepted subtask result in the assembled chain."""

    id: str
    objective: str
    answer: str
    evidence: tuple[str, ...] = ()
    cited: dict[str, str] = field(default_factory=dict)
    depends_on: tuple[str, ...] = ()


@dataclass(frozen=True)
class ChainArtifact:
    """The assembled results of a plan (checked by R2 against L2)."""

    question: str
    steps: tuple[ChainStep, ...]
    final_id: str
    final_answer: str
    kind: str = "chain"

    def gate_input(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "question": self.question,
            "steps": [dataclasses.asdict(s) for s in self.steps],
            "final_id": self.final_id,
            "final_answer": self.final_answer,
        }

    @classmethod
    def from_input(cls, data: dict[str, Any]) -> ChainArtifact:
        steps = tuple(
            ChainStep(
                s["id"],
                s["objective"],
                s["answer"],
                tuple(s.get("evidence") or ()),
                dict(s.get("cited") or {}),
                tuple(s.get("depends_on") or ()),
            )
            for s in data.get("steps", [])
        )
        return cls(data.get("question", ""), steps, data.get("final_id", ""), data.get("final_answer", ""))

    def shown(self, marked: bool = False) -> Any:
        """What a judge is shown: each link's question and answer."""
        return [{"id": s.id, "question": s.objective, "answer": s.answer} for s in self.steps]

    def identity(self) -> dict[str, Any]:
        return {
            "kind": "chain",
            "steps": [(s.id, s.answer, list(s.evidence)) for s in self.steps],
            "final": self.final_answer,
        }
