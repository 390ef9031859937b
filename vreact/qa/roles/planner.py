"""The planner role (L2): a question becomes subtasks with dependencies and answer types."""

from __future__ import annotations

import re
from typing import Any

from vreact.model import Message
from vreact.qa.gates import ANSWER_TYPES, REF, reference_ids
from vreact.qa.roles.prompts import failure_lines
from vreact.qa.tools import TOOLS

MAX_SUBTASKS = 5

PLAN_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "subtasks": {
            "type": "array",
            "minItems": 1,
            "maxItems": MAX_SUBTASKS,
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "string", "maxLength": 4},
                    "objective": {"type": "string", "maxLength": 160},
                    "depends_on": {
                        "type": "array",
                        "items": {"type": "string", "maxLength": 4},
                        "maxItems": 3,
                    },
                    "answer_type": {"type": "string", "enum": list(ANSWER_TYPES)},
                },
                "required": ["id", "objective", "depends_on", "answer_type"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["subtasks"],
    "additionalProperties": False,
}


def substitute(objective: str, ids: list[str], answers: dict[str, str]) -> str:
    """Replace ``#k`` / ``#sK`` with the accepted answers of the subtasks they name."""

    def repl(m: re.Match[str]) -> str:
        [target] = reference_ids(m.group(0), ids)
        return answers.get(target or "", m.group(0))

    return REF.sub(repl, objective)


_SYSTEM = (
    "You are the planner. Split a multi-hop question into at most "
    f"{MAX_SUBTASKS} simple questions, each answerable from one paragraph. A later question "
    "names an earlier answer as #1, #2 ... and lists that subtask in depends_on. The last "
    "subtask answers the whole question.\n"
    'Reply with JSON: {"subtasks": [{"id": "s1", "objective": "...", "depends_on": [], '
    '"answer_type": "person|date|number|place|any"}]}\n'
    'Example: "Where was the author of Dune born?" -> {"subtasks": [{"id": "s1", "objective": '
    '"Who wrote Dune?", "depends_on": [], "answer_type": "person"}, {"id": "s2", "objective": '
    '"Where was #1 born?", "depends_on": ["s1"], "answer_type": "place"}]}'
)


def render_messages(context: dict[str, Any]) -> list[Message]:
    """The planner's messages, from its assembled context (L1, tools, failures addressed to L2)."""
    lines = [f"Question: {context['l1']['question']}", f"Requirements: {context['l1']['task']}"]
    tools = context.get("tools")
    if tools:
        lines.append("The executor's tools: " + ", ".join(tools))
    lines += failure_lines(context.get("failures.l2") or [], "Earlier plans or answers were rejected:")
    return [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": "\n".join(lines)}]


TOOL_NAMES = list(TOOLS)
