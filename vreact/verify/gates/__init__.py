"""Gates: free deterministic checks, registered by name with ``@gate``."""

from vreact.verify.gates import _answer, _chain, _plan  # noqa: F401  (register the built-in gates)
from vreact.verify.gates._answer import expected_answer_type
from vreact.verify.gates._artifact import (
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
from vreact.verify.gates._prompts import (
    JudgePrompt,
    UnknownPrompt,
    judge_prompt,
    prompt_names,
    prompt_of,
    render_messages,
)
from vreact.verify.gates._registry import (
    Gate,
    GateResult,
    UnknownGate,
    accept,
    build_gate,
    check_gate_args,
    gate,
    gate_factory,
    gate_names,
    reject,
)

__all__ = [
    "ANSWER_TYPES",
    "REF",
    "Artifact",
    "ChainArtifact",
    "ChainStep",
    "Gate",
    "GateResult",
    "JudgePrompt",
    "Plan",
    "PlanArtifact",
    "PlannedSubtask",
    "UnknownGate",
    "UnknownPrompt",
    "accept",
    "build_gate",
    "check_gate_args",
    "expected_answer_type",
    "gate",
    "gate_factory",
    "gate_names",
    "judge_prompt",
    "prompt_names",
    "prompt_of",
    "reference_ids",
    "reject",
    "render_messages",
]
