"""Gates: free deterministic checks, registered by name with ``@gate``; judges' prompts,
registered with ``@judge_prompt``. The gates here read only what every artifact has; a task
family registers its own when it loads (question answering's: ``vreact.qa.gates``)."""

from vreact.verify.gates import _generic  # noqa: F401  (register the gates every family may use)
from vreact.verify.gates._prompts import (
    PROMPTS,
    JudgePrompt,
    UnknownPrompt,
    judge_prompt,
    prompt_names,
    prompt_of,
    render_messages,
)
from vreact.verify.gates._registry import (
    GATES,
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
    "GATES",
    "PROMPTS",
    "Gate",
    "GateResult",
    "JudgePrompt",
    "UnknownGate",
    "UnknownPrompt",
    "accept",
    "build_gate",
    "check_gate_args",
    "gate",
    "gate_factory",
    "gate_names",
    "judge_prompt",
    "prompt_names",
    "prompt_of",
    "reject",
    "render_messages",
]
