"""DeReAct on code (seed 000): the critic reads a proposed ``run`` or finish before it runs (code
that reaches for the network, the file system, other processes or the environment is blocked;
a finish must be the whole function), and the context manager keeps the State: facts about the
program, each citing the runs (``r1``, ``r2`` ...) that showed them (``runs``, in its schema and
messages), and on a proposed finish certifies it only when a run showed the function on the
prompt's examples (its completion veto). Their schemas and how their replies are read are
DeReAct's (``vreact.dereact``); only the words differ."""

from __future__ import annotations

import functools
import json
from types import SimpleNamespace
from typing import Any

from vreact import dereact
from vreact.model import Message

CRITIC_SYSTEM = (
    "You check one proposed step of an agent that writes a Python function, before it runs. "
    "Reject code that reaches for the network, reads or writes files, starts processes or reads "
    "the environment (socket, urllib, requests, open, os, subprocess, shutil, pathlib). A run "
    "should try the function on inputs; a finish must define the whole function. Do not judge "
    "its algorithm. Reply with JSON: "
    '{"decision": "accept|reject", "confidence": 0.0-1.0, "feedback": "..."}'
)

CM_SYSTEM = (
    "You keep the verified facts of an agent that writes a Python function and tries it in runs "
    "(r1, r2 ...). Given the facts so far, the step just taken and what it returned, write the "
    "facts again: only what a run showed (an output, a value, an error), each with the ids of the "
    "runs that showed it. If the step is a finish, reply success only if a run showed the function "
    "returning what the prompt's examples expect; otherwise continue, and say which example to run "
    'first. Reply with JSON: {"status": "success|continue", "state": [{"fact": "...", '
    '"runs": ["r1"]}], "reason": "..."}'
)
#: What the context manager is told a fact cites: the ids of runs (the State's ``cites``).
CITES = "runs"


def critic_messages(context: dict[str, Any]) -> list[Message]:
    lines = dereact.seen(context, "Function to write:\n", "Runs so far")
    p = context["proposal"]
    lines.append(f"Proposed step: {p['action']}\n```python\n{str(p['input'])[:2000]}\n```")
    return [{"role": "system", "content": CRITIC_SYSTEM}, {"role": "user", "content": "\n".join(lines)}]


def cm_messages(context: dict[str, Any]) -> list[Message]:
    p = context["proposal"]
    lines = [
        f"Function to write:\n{context['subtask.objective']}",
        "Verified facts so far: " + json.dumps(context["state"]),
        f"Step: {p['action']}\n```python\n{str(p['input'])[:2000]}\n```",
        "It returned: " + str(context["result"])[:1500],
    ]
    return [{"role": "system", "content": CM_SYSTEM}, {"role": "user", "content": "\n".join(lines)}]


CRITIC = SimpleNamespace(schema=dereact.CRITIC_SCHEMA, messages=critic_messages, decide=dereact.decide)
#: a finish is certified only on facts a run showed (the completion veto's deterministic floor)
CONTEXT_MANAGER = SimpleNamespace(
    schema=dereact.cm_schema(CITES),
    messages=cm_messages,
    parse=functools.partial(dereact.parse, cites=CITES),
    cites=CITES,
    certifies_empty=False,
)
