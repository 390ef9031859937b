"""LLM judges: run only on what a verifier's gates cleared; they read the artifact and the
level it pairs with, never gold answers (their prompts: vreact.verify.gates._prompts). Anything
but a confident accept is a reject."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from vreact.model import parse_json_object
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


class Judgement(BaseModel):
    model_config = ConfigDict(extra="ignore")

    reason: str = ""
    decision: str
    confidence: float = Field(ge=0.0, le=1.0)


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
