"""Judges' prompts, registered by name with ``@judge_prompt``: what an LLM judge is asked. A
verifier set names one per judge (``judge: {prompt: NAME}``); without a name a judge gets the
built-in prompt. They sit with the gates, under the declarative files, for the same reason:
loading a verifier set checks each name against this registry."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from typing import Any

from vreact.model import Message
from vreact.registry import Registry, UnknownName

#: What a judge's prompt is: ``(kind, context) -> messages``. ``kind`` is what the judge checks
#: (``L2``: a plan against L1; ``L3``: a subtask's answer against its design; ``integration``: the
#: chain against the plan; ``L1``: the final answer against the requirements); ``context`` is
#: what the context assembler gave the judge: ``artifact`` and ``paired_level``, nothing else.
JudgePrompt = Callable[[str, dict[str, Any]], list[Message]]

#: What the built-in prompt says each kind of judge checks, for any family (a family may word
#: it for its own artifacts: ``TaskFamily.judged``).
WHAT = {
    "L2": "a plan (the artifact) for a task (the paired level, L1)",
    "L3": "one subtask's result (the artifact) against the subtask's design (the paired level, L3)",
    "integration": "the chain of subtask results (the artifact) against the plan (the paired level, L2)",
    "L1": "a final answer (the artifact) against the task's requirements (the paired level, L1)",
}

#: The reply every judge's prompt must ask for (the judge's answer is parsed against it).
REPLY = '{"reason": "...", "decision": "accept|reject", "confidence": 0.0-1.0}'


def render_messages(
    kind: str, context: dict[str, Any], what: Mapping[str, str] | None = None
) -> list[Message]:
    """The built-in judge's messages: the artifact and its paired level, nothing else; ``what``:
    how the task's family words each kind (default: ``WHAT``)."""
    system = (
        f"You are a strict judge. You check {(what or WHAT)[kind]}. Accept only if the artifact "
        f"satisfies the paired level and is supported by its evidence. Reply with JSON: {REPLY}"
    )
    user = (
        f"Paired level:\n{json.dumps(context['paired_level'], indent=1)}\n\n"
        f"Artifact:\n{json.dumps(context['artifact'], indent=1)}"
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


class UnknownPrompt(UnknownName):
    pass


PROMPTS: Registry[JudgePrompt] = Registry("judge prompt", UnknownPrompt)
PROMPTS.add("default", render_messages, __name__)  # a judge that names none: the default


#: What a claim check is: ``(kind, artifact, paired_level, judgement, witnesses) ->
#: vreact.verify.judges.Claim``, run on a rejecting judge's claim before the controller acts on it
#: (a check that raises leaves the rejection standing); ``witnesses``: artifacts of the attempt's
#: other behaviour groups, made apart from the one judged (agreement's, at R3; else empty).
ClaimCheck = Callable[[str, Any, Any, Any, tuple[Any, ...]], Any]
#: The prompts whose judges show their work, with the check each one's claims get.
CLAIMS: dict[str, ClaimCheck] = {}


def judge_prompt(name: str, *, claims: ClaimCheck | None = None) -> Callable[[JudgePrompt], JudgePrompt]:
    """Register a judge's prompt under ``name``: a function of (kind, context) that returns the
    judge's messages. A verifier set names it: ``R3: {judge: {prompt: NAME}}``. With ``claims``,
    its judge shows its work: the prompt asks for the claim fields (``judges.CLAIM_SCHEMA``) and
    ``claims`` weighs each rejection's claim."""
    register = PROMPTS.register(name)

    def add(prompt: JudgePrompt) -> JudgePrompt:
        registered = register(prompt)
        if claims is not None:
            CLAIMS[name] = claims
        return registered

    return add


def claims_of(name: str | None) -> ClaimCheck | None:
    """The claim check of the prompt registered as ``name`` (None: its judge shows no work)."""
    return CLAIMS.get(name) if name else None


def prompt_names() -> list[str]:
    return PROMPTS.names()


def prompt_of(name: str | None, what: Mapping[str, str] | None = None) -> JudgePrompt:
    """The prompt registered as ``name`` (None: the built-in one, ``default``, worded by
    ``what``: the task family's); ``UnknownPrompt`` names the closest."""
    if name is None:
        return functools.partial(render_messages, what=what) if what else render_messages
    return PROMPTS[name]
