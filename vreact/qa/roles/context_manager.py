"""The DeReAct context manager (seed 000): after an action ran, it rebuilds the evidence-only
State (facts, each citing the paragraph ids it rests on) from the previous State, the proposal
and the tool's result, and on a proposed final decides whether the task is complete."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from vreact.model import Message, parse_json_object

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

_SYSTEM = (
    "You keep the verified facts of an agent that answers a question from paragraphs. Given the "
    "facts so far, the action just taken and what it returned, write the facts again: only what "
    "a returned paragraph states, each with the ids of the paragraphs that state it. Never add "
    "the agent's guesses. If the action is a finish, reply success only if the facts show the "
    "answer is right; otherwise continue, and say what is missing. Reply with JSON: "
    '{"status": "success|continue", "state": [{"fact": "...", "paragraph_ids": ["..."]}], "reason": "..."}'
)


class Fact(BaseModel):
    model_config = ConfigDict(extra="ignore")

    fact: str
    paragraph_ids: list[str] = Field(default_factory=list)


class Update(BaseModel):
    model_config = ConfigDict(extra="ignore")

    status: str
    state: list[Fact]
    reason: str = ""


def render_messages(context: dict[str, Any]) -> list[Message]:
    lines = [
        f"Question: {context['subtask.objective']}",
        "Verified facts so far: " + json.dumps(context["state"]),
        "Action: " + json.dumps(context["proposal"]),
        "It returned: " + str(context["result"])[:1500],
    ]
    return [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": "\n".join(lines)}]


def parse(text: str) -> Update | None:
    data = parse_json_object(text)
    if data is None:
        return None
    try:
        update = Update.model_validate(data)
    except ValidationError:
        return None
    return update if update.status in ("success", "continue") else None
