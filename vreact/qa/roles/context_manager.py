"""The DeReAct context manager (seed 000): after an action ran, it rebuilds the evidence-only
State (facts, each citing the paragraph ids it rests on) from the previous State, the proposal
and the tool's result, and on a proposed final decides whether the task is complete."""

from __future__ import annotations

import json
from typing import Any

from vreact.dereact import Update, cm_schema
from vreact.dereact import parse as parse_update
from vreact.model import Message

__all__ = ["CITES", "CM_SCHEMA", "parse", "render_messages"]

#: What the context manager is told a fact cites: the ids of paragraphs (the State's ``cites``).
CITES = "paragraph_ids"
CM_SCHEMA = cm_schema(CITES)

_SYSTEM = (
    "You keep the verified facts of an agent that answers a question from paragraphs. Given the "
    "facts so far, the action just taken and what it returned, write the facts again: only what "
    "a returned paragraph states, each with the ids of the paragraphs that state it. Never add "
    "the agent's guesses. If the action is a finish, reply success only if the facts show the "
    "answer is right; otherwise continue, and say what is missing. Reply with JSON: "
    '{"status": "success|continue", "state": [{"fact": "...", "paragraph_ids": ["..."]}], "reason": "..."}'
)


def render_messages(context: dict[str, Any]) -> list[Message]:
    lines = [
        f"Question: {context['subtask.objective']}",
        "Verified facts so far: " + json.dumps(context["state"]),
        "Action: " + json.dumps(context["proposal"]),
        "It returned: " + str(context["result"])[:1500],
    ]
    return [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": "\n".join(lines)}]


def parse(text: str) -> Update | None:
    """The update in a reply, each fact's ``paragraph_ids`` read as what it cites."""
    return parse_update(text, CITES)
