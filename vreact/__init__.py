"""vreact: a V-model verification layer for LLM agents.

The short API: write a gate (``gate``, ``accept``, ``reject``) or a member of the executor's
step pipeline (``member``, ``Member`` and its outcomes), name them in an experiment file, run
it, and read the run back.
"""

from vreact.pipeline import (
    PASS,
    Member,
    StepOutcome,
    Turn,
    block,
    hint,
    member,
    member_names,
    rollback,
    stop,
    veto,
)
from vreact.verify.gates import Artifact, GateResult, accept, gate, gate_names, reject

__all__ = [
    "PASS",
    "Artifact",
    "GateResult",
    "Member",
    "StepOutcome",
    "Turn",
    "accept",
    "block",
    "gate",
    "gate_names",
    "hint",
    "member",
    "member_names",
    "reject",
    "rollback",
    "stop",
    "veto",
]
