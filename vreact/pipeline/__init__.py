"""The executor's try as a step pipeline. Every step passes four phases, and each member of
the pipeline may decide at each (see ``StepOutcome``):

    context   shape the executor's messages before the call
    call      the model's reply
    proposal  before anything runs: the parse gate, the repetition guard
    result    after the tool ran, or on a proposed final

Members are registered by name (``@member("name")``) and named in a configuration's
``pipeline:``; a member that raises stops the try with cause ``verifier_error``.
"""

from vreact.pipeline import _builtin, _dereact, _profiles  # noqa: F401  (register the built-in members)
from vreact.pipeline._builtin import ParseGate, RepetitionGuard, TextRepetitionGuard
from vreact.pipeline._core import (
    MEMBERS,
    PASS,
    PHASES,
    Member,
    Phase,
    PhaseResult,
    Pipeline,
    StepOutcome,
    Turn,
    UnknownMember,
    block,
    build_member,
    hint,
    member,
    member_class,
    member_names,
    rollback,
    stop,
    veto,
)
from vreact.pipeline._dereact import ContextManager, Critic, window
from vreact.pipeline._profiles import ContextProfile

__all__ = [
    "MEMBERS",
    "PASS",
    "PHASES",
    "ContextManager",
    "ContextProfile",
    "Critic",
    "Member",
    "ParseGate",
    "Phase",
    "PhaseResult",
    "Pipeline",
    "RepetitionGuard",
    "StepOutcome",
    "TextRepetitionGuard",
    "Turn",
    "UnknownMember",
    "block",
    "build_member",
    "hint",
    "member",
    "member_class",
    "member_names",
    "rollback",
    "stop",
    "veto",
    "window",
]
