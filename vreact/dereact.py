"""DeReAct's replies (seed 000), whatever the task family: the critic's decision on a proposed
step and the context manager's State update, their JSON schemas and how each reply is read.
Anything but a confident accept rejects, and an update that cannot be read is ``None`` (fail
closed). A family supplies only the words (its system messages, how a step is shown, and the
name its context manager is told for what a fact cites: qa's ``paragraph_ids``, code's ``runs``;
the State itself calls them ``cites``)."""

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

#: What a State's fact cites (the ids of what the try retrieved), as the core names it.
CITES = "cites"


def cm_schema(cites: str = CITES) -> dict[str, Any]:
    """The context manager's reply schema, each fact's citations under the name ``cites`` (the
    family's word for them, which its messages use too)."""
    return {
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
                        cites: {
                            "type": "array",
                            "items": {"type": "string", "maxLength": 6},
                            "maxItems": 4,
                        },
                    },
                    "required": ["fact", cites],
                    "additionalProperties": False,
                },
            },
            "reason": {"type": "string", "maxLength": 200},
        },
        "required": ["status", "state", "reason"],
        "additionalProperties": False,
    }


def worded(state: list[dict[str, Any]], cites: str = CITES) -> list[dict[str, Any]]:
    """The State (facts with ``fact`` and ``cites``) as a family's roles are shown it: each
    fact's citations under the family's name for them."""
    return [{"fact": f["fact"], cites: list(f[CITES])} for f in state]


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
    """One fact of the State and the ids it cites (what the try retrieved)."""

    model_config = ConfigDict(extra="ignore")

    fact: str
    cites: list[str] = Field(default_factory=list)


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


def parse(text: str, cites: str = CITES) -> Update | None:
    """The context manager's update, or ``None`` when it cannot be read; ``cites``: the name the
    family's schema gives each fact's citations (read as the fact's ``cites``)."""
    data = parse_json_object(text)
    if data is None:
        return None
    if cites != CITES and isinstance(data.get("state"), list):
        data = {**data, "state": [_renamed(f, cites) for f in data["state"]]}
    try:
        update = Update.model_validate(data)
    except ValidationError:
        return None
    return update if update.status in ("success", "continue") else None


def _renamed(fact: Any, cites: str) -> Any:
    """A reply's fact with its citations under ``cites`` moved to the State's name (a fact that
    is not an object is left to fail validation)."""
    if not isinstance(fact, dict):
        return fact
    out = {k: v for k, v in fact.items() if k not in (CITES, cites)}
    return {**out, CITES: fact[cites]} if cites in fact else out
