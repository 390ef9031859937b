"""Question answering's gates and the artifacts they read: an executor's answer (its cited
paragraphs), a planner's plan of hops, the chain of hop answers R2 checks. Registered when the
family ``qa`` loads."""

from vreact.qa.gates import _answer, _chain, _plan  # noqa: F401  (register the family's gates)
from vreact.qa.gates._answer import expected_answer_type, polar, support_score
from vreact.qa.gates._artifact import (
    ANSWER_TYPES,
    REF,
    Artifact,
    ChainArtifact,
    ChainStep,
    Plan,
    PlanArtifact,
    PlannedSubtask,
    reference_ids,
)
from vreact.qa.gates._choices import choices, offered_in

__all__ = [
    "ANSWER_TYPES",
    "REF",
    "Artifact",
    "ChainArtifact",
    "ChainStep",
    "Plan",
    "PlanArtifact",
    "PlannedSubtask",
    "choices",
    "expected_answer_type",
    "offered_in",
    "polar",
    "reference_ids",
    "support_score",
]
