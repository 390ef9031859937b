"""LLM judges: run only on what a verifier's gates cleared; they read the artifact and the
level it pairs with, never gold answers (their prompts: vreact.verify.gates._prompts). Anything
but a confident accept is a reject.

A judge whose prompt carries a claim check (``@judge_prompt(name, claims=check)``) shows its
work: its rejection names an input, what the artifact does on it and what it should do
(``CLAIM_SCHEMA``), and the check weighs that claim for free before the controller acts on it
(``Claim``): founded, it rejects; refuted or not corroborated, it is recorded with cause
``unfounded:<why>`` and, as the judge's setting ``unfounded: ignore`` says, not acted on."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

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

#: A judge that shows its work also names, when it rejects, the input it found, what the artifact
#: returns there and what it should return (empty when it accepts).
CLAIM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reason": {"type": "string", "maxLength": 200},
        "input": {"type": "string", "maxLength": 300},
        "returns": {"type": "string", "maxLength": 200},
        "expected": {"type": "string", "maxLength": 200},
        "decision": {"type": "string", "enum": ["accept", "reject"]},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
    },
    "required": ["reason", "input", "returns", "expected", "decision", "confidence"],
    "additionalProperties": False,
}


class Judgement(BaseModel):
    model_config = ConfigDict(extra="ignore")

    reason: str = ""
    decision: str
    confidence: float = Field(ge=0.0, le=1.0)
    input: str = ""  # the claim of a judge that shows its work
    returns: str = ""
    expected: str = ""


@dataclass(frozen=True)
class Claim:
    """What a claim check found of a judge's rejection. ``founded``: the artifact does what the
    judge says and something other than the judge corroborates what it should do (``how``: a
    stated example, another behaviour group, a property check); ``unfounded``: the check refutes
    it (``how``: what it refutes); ``unverified``: nothing corroborates the value the judge
    expects. ``detail`` is what the records keep; founded, it is also what reaches the next try,
    so it holds the judge's expected value only where a stated example gives it."""

    status: Literal["founded", "unfounded", "unverified"]
    how: str
    detail: str

    @property
    def cause(self) -> str:
        """The verdict's cause: ``founded:<how>``, ``unfounded:<how>`` or ``unfounded:unverified``."""
        return f"unfounded:{self.status}" if self.status == "unverified" else f"{self.status}:{self.how}"


def read(text: str, min_confidence: float) -> tuple[GateResult, Judgement | None]:
    """A judge's output as a decision, and the judgement it parsed to (None: it did not);
    fail closed on anything unclear."""
    data = parse_json_object(text)
    if data is None:
        return reject("judge_format", f"unparseable judge output: {text[:120]!r}"), None
    try:
        j = Judgement.model_validate(data)
    except ValidationError as e:
        return reject("judge_format", str(e).splitlines()[0][:160]), None
    if j.decision not in ("accept", "reject"):
        return reject("judge_format", f"unknown decision {j.decision!r}"), j
    if j.decision == "reject":
        return reject("judge_reject", j.reason[:200]), j
    if j.confidence < min_confidence:
        return reject("low_confidence", f"accept at confidence {j.confidence:.2f} < {min_confidence}"), j
    return accept(), j


def decide(text: str, min_confidence: float) -> GateResult:
    """Turn a judge's output into a decision; fail closed on anything unclear."""
    return read(text, min_confidence)[0]
