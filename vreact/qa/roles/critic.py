"""The DeReAct critic (seed 000): before a proposed action runs, it reads the State (or, with no
context manager, the try's raw steps), the proposal and the objective, and accepts or rejects
it with a confidence and feedback. Anything but a confident accept rejects (fail closed)."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from vreact.model import Message, parse_json_object

CRITIC_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "decision": {"type": "string", "enum": ["accept", "reject"]},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "feedback": {"type": "string", "maxLength": 200},
    },
    "required": ["decision", "confidence", "feedback"],
    "additionalProperties": False,
}

_SYSTEM = (
    "You check one proposed action of an agent that answers a question from paragraphs it "
    "searches, before the action runs. Check only that the action is well-formed and fits the "
    "question and the verified facts: a search has useful keywords, a read names an id, a finish "
    "answers the question with an answer the facts support and cites their paragraph ids, an "
    "abstain says why. Do not judge its strategy. Reply with JSON: "
    '{"decision": "accept|reject", "confidence": 0.0-1.0, "feedback": "..."}'
)


class Decision(BaseModel):
    model_config = ConfigDict(extra="ignore")

    decision: str
    confidence: float = Field(ge=0.0, le=1.0)
    feedback: str = ""


def render_messages(context: dict[str, Any]) -> list[Message]:
    lines = [f"Question: {context['subtask.objective']}"]
    if "state" in context:
        lines.append("Verified facts: " + json.dumps(context["state"]))
    if "try.steps" in context:
        steps = [f"{i}. {o[:300]}" for i, (_, o) in enumerate(context["try.steps"], 1)]
        lines.append("Steps so far:\n" + ("\n".join(steps) or "(none)"))
    lines.append("Proposed action: " + json.dumps(context["proposal"]))
    return [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": "\n".join(lines)}]


def decide(text: str, kappa_min: float) -> tuple[bool, str, str, float | None]:
    """(accepted, cause, feedback, confidence) from the critic's output."""
    data = parse_json_object(text)
    try:
        d = Decision.model_validate(data) if data is not None else None
    except ValidationError:
        d = None
    if d is None or d.decision not in ("accept", "reject"):
        return False, "critic_format", "the critic's answer could not be read; propose again", None
    if d.decision == "reject":
        return False, "critic_reject", d.feedback or "rejected by the critic", d.confidence
    if d.confidence < kappa_min:
        return (
            False,
            "low_confidence",
            f"accepted at confidence {d.confidence:.2f} < {kappa_min}",
            d.confidence,
        )
    return True, "", d.feedback, d.confidence
