"""The DeReAct critic (seed 000): before a proposed action runs, it reads the State (or, with no
context manager, the try's raw steps), the proposal and the objective, and accepts or rejects
it with a confidence and feedback. Anything but a confident accept rejects (fail closed)."""

from __future__ import annotations

import json
from typing import Any

from vreact.dereact import CRITIC_SCHEMA, decide, seen
from vreact.model import Message

__all__ = ["CRITIC_SCHEMA", "decide", "render_messages"]

_SYSTEM = (
    "You check one proposed action of an agent that answers a question from paragraphs it "
    "searches, before the action runs. Check only that the action is well-formed and fits the "
    "question and the verified facts: a search has useful keywords, a read names an id, a finish "
    "answers the question with an answer the facts support and cites their paragraph ids, an "
    "abstain says why. Do not judge its strategy. Reply with JSON: "
    '{"decision": "accept|reject", "confidence": 0.0-1.0, "feedback": "..."}'
)


def render_messages(context: dict[str, Any]) -> list[Message]:
    lines = seen(context, "Question: ", "Steps so far")
    lines.append("Proposed action: " + json.dumps(context["proposal"]))
    return [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": "\n".join(lines)}]
