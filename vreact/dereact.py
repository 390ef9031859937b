"""DeReAct's replies (seed 000), whatever the task family: the critic's decision on a proposed
step and the context manager's State update, their JSON schemas and how each reply is read.
Anything but a confident accept rejects, and an update that cannot be read is ``None`` (fail
closed). A family supplies only the words (its system messages and how a step is shown)."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from vreact.model import parse_json_object

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

CM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "status": {"type": "string", "enum": ["success", "continue"]},
        "state": {
            "type": "array",
            "maxItems": 8,
            "items": {
                "type": "object",
                "properties": {
                    "fact": {"type": "string", "maxLength": 160},
                    "paragraph_ids": {
                        "type": "array",
                        "items": {"type": "string", "maxLength": 6},
                        "maxItems": 4,
                    },
                },
                "required": ["fact", "paragraph_ids"],
                "additionalProperties": False,
            },
        },
        "reason": {"type": "string", "maxLength": 200},
    },
    "required": ["status", "state", "reason"],
    "additionalProperties": False,
}


def seen(context: dict[str, Any], objective: str, steps: str) -> list[str]:
    """What the critic is shown before the proposal, in a family's words: the objective after
    ``objective``, the State (with a context manager), the try's steps so far under ``steps``."""
    lines = [objective + context["subtask.objective"]]
    if "state" in context:
        lines.append("Verified facts: " + json.dumps(context["state"]))
    if "try.steps" in context:
        done = [f"{i}. {o[:300]}" for i, (_, o) in enumerate(context["try.steps"], 1)]
        lines.append(f"{steps}:\n" + ("\n".join(done) or "(none)"))
    return lines


class Decision(BaseModel):
    model_config = ConfigDict(extra="ignore")

    decision: str
    confidence: float = Field(ge=0.0, le=1.0)
    feedback: str = ""


class Fact(BaseModel):
    model_config = ConfigDict(extra="ignore")

    fact: str
    paragraph_ids: list[str] = Field(default_factory=list)


class Update(BaseModel):
    model_config = ConfigDict(extra="ignore")

    status: str
    state: list[Fact]
    reason: str = ""


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


def parse(text: str) -> Update | None:
    """The context manager's update, or ``None`` when it cannot be read."""
    data = parse_json_object(text)
    if data is None:
        return None
    try:
        update = Update.model_validate(data)
    except ValidationError:
        return None
    return update if update.status in ("success", "continue") else None
