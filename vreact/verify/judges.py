"""LLM judges: run only on what a verifier's gates cleared; they read the artifact and the
level it pairs with, never gold answers. Anything but a confident accept is a reject."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from vreact.model import Message, parse_json_object
from vreact.verify.gates import GateResult, accept, reject

JUDGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reason": {"type": "string", "maxLength": 200},
        "decision": {"type": "string", "enum": ["accept", "reject"]},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
    },
    "required": ["reason", "decision", "confidence"],
    "additionalProperties": False,
}

_WHAT = {
    "L2": "a plan (the artifact) for a question (the paired level, L1)",
    "L3": "one subtask's answer and its cited evidence (the artifact) against the subtask's "
    "design (the paired level, L3)",
    "integration": "the chain of subtask answers (the artifact) against the plan (the paired level, L2)",
    "L1": "a final answer and its cited evidence (the artifact) against the task's requirements "
    "(the paired level, L1)",
}


class Judgement(BaseModel):
    model_config = ConfigDict(extra="ignore")

    reason: str = ""
    decision: str
    confidence: float = Field(ge=0.0, le=1.0)


def render_messages(kind: str, context: dict[str, Any]) -> list[Message]:
    """The judge's messages: the artifact and its paired level, nothing else."""
    system = (
        f"You are a strict judge. You check {_WHAT[kind]}. Accept only if the artifact "
        "satisfies the paired level and is supported by its evidence. Reply with JSON: "
        '{"reason": "...", "decision": "accept|reject", "confidence": 0.0-1.0}'
    )
    user = (
        f"Paired level:\n{json.dumps(context['paired_level'], indent=1)}\n\n"
        f"Artifact:\n{json.dumps(context['artifact'], indent=1)}"
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def decide(text: str, min_confidence: float) -> GateResult:
    """Turn a judge's output into a decision; fail closed on anything unclear."""
    data = parse_json_object(text)
    if data is None:
        return reject("judge_format", f"unparseable judge output: {text[:120]!r}")
    try:
        j = Judgement.model_validate(data)
    except ValidationError as e:
        return reject("judge_format", str(e).splitlines()[0][:160])
    if j.decision not in ("accept", "reject"):
        return reject("judge_format", f"unknown decision {j.decision!r}")
    if j.decision == "reject":
        return reject("judge_reject", j.reason[:200])
    if j.confidence < min_confidence:
        return reject("low_confidence", f"accept at confidence {j.confidence:.2f} < {min_confidence}")
    return accept()
