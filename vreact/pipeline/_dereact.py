"""DeReAct's two externalised decisions (seed 000, Algorithm 1) as pipeline members: the critic
authorises each proposal before it runs (``proposal``: block); the context manager keeps the
evidence-only State (``context``: the brain reads it and a history window; ``result``: it
rebuilds the State and certifies or vetoes a proposed final)."""

from __future__ import annotations

from typing import Any, ClassVar

from vreact.dereact import CITES, worded
from vreact.families import Step
from vreact.pipeline._core import PASS, Member, StepOutcome, Turn, block, member, veto
from vreact.v import Source


def proposal(step: Step) -> dict[str, Any]:
    """A step as the critic and the context manager see it: intent and command."""
    return {"intent": step.thought, "action": step.action, "input": step.input, "evidence": step.evidence}


def kit_of(turn: Turn, role: str) -> Any:
    """The family's critic or context manager for this try's steps (its step kit's)."""
    found = getattr(turn.kit, role, None)
    if found is None:
        family = getattr(turn.kit, "family", None) or "this"
        raise NotImplementedError(
            f"the {family} family's steps have no {role.replace('_', ' ')} (StepKit.{role})"
        )
    return found


def cites_of(turn: Turn) -> str:
    """The name this try's context manager gives a fact's citations (``ContextManagerKit.cites``:
    its schema's and messages' word; default the State's own, ``cites``)."""
    return str(getattr(getattr(turn.kit, "context_manager", None), "cites", CITES))


def window(history: list[tuple[str, str]], size: int, initial: int) -> list[tuple[str, str]]:
    """The brain's view of the try's raw steps: all of them up to ``size``, else the first
    ``initial`` and the last ``size - initial``."""
    if len(history) <= size:
        return list(history)
    return history[:initial] + history[len(history) - (size - initial) :]


@member("critic")
class Critic(Member):
    """Reject, a confidence below ``kappa_min`` or an unreadable answer: the action never runs,
    its feedback is the next observation, and the step is spent."""

    verifier: ClassVar[str] = "critic"
    source: ClassVar[Source] = "judge"

    def __init__(self, kappa_min: float = 0.7) -> None:
        self.kappa_min = kappa_min

    def proposal(self, turn: Turn) -> StepOutcome:
        if turn.step is None or turn.ask is None:
            return PASS
        sources: dict[str, Any] = {
            "subtask.objective": turn.objective,
            "proposal": proposal(turn.step),
        }
        if "state" in turn.sources:
            sources["state"] = turn.sources["state"]
        else:  # no context manager: the critic reads the try's raw steps (Ablation B)
            sources["try.steps"] = list(turn.history)
        critic = kit_of(turn, "critic")
        text = turn.ask("critic", sources, critic.messages, critic.schema)
        ok, cause, feedback, confidence = critic.decide(text, self.kappa_min)
        if ok:
            turn.accept(self, confidence=confidence)
            return PASS
        return block(f"critic: {feedback}", cause, feedback, confidence=confidence)


@member("context_manager")
class ContextManager(Member):
    """The State belongs to this try (one instance per try): facts, each with the ids it cites
    (``cites``; the roles are shown them under the family's name, ``ContextManagerKit.cites``),
    which must be ids the try retrieved (``state_grounded``), else the old State is kept and a
    success is not certified."""

    verifier: ClassVar[str] = "context_manager"
    source: ClassVar[Source] = "judge"

    def __init__(self, window: int = 25, initial: int = 5) -> None:
        self.size, self.initial = window, initial
        self.state: list[dict[str, Any]] = []

    def context(self, turn: Turn) -> StepOutcome:
        turn.sources["state"] = worded(self.state, cites_of(turn))
        turn.history = window(turn.history, self.size, self.initial)
        return PASS

    def result(self, turn: Turn) -> StepOutcome:
        if turn.step is None or turn.ask is None:
            return PASS
        result = (
            turn.observation if not turn.final else f"proposed final: {turn.step.action} {turn.step.input!r}"
        )
        cm = kit_of(turn, "context_manager")
        sources = {
            "subtask.objective": turn.objective,
            "state": worded(self.state, cites_of(turn)),
            "proposal": proposal(turn.step),
            "result": result,
        }
        update = cm.parse(turn.ask("context_manager", sources, cm.messages, cm.schema))
        if update is None:
            return (
                veto("the context manager could not read the result; go on", "cm_format")
                if turn.final
                else PASS
            )
        facts = [{"fact": f.fact, CITES: [str(i) for i in f.cites]} for f in update.state]
        stray = sorted({i for f in facts for i in f[CITES]} - turn.retrieved)
        if stray or any(not f[CITES] for f in facts):
            why = f"the State cites {', '.join(stray) or 'no paragraph'} (not retrieved in this try)"
            turn.reject(self, "state_ungrounded", why, check_name="state_grounded", source="gate")
            if turn.final and update.status == "success":
                return veto(
                    "continue: the facts are not all grounded in what you retrieved", "state_ungrounded", why
                )
            return PASS  # the old State is kept
        self.state = facts
        if not turn.final:
            return PASS
        if update.status == "success" and not facts and not getattr(cm, "certifies_empty", True):
            why = "the State is empty: nothing the try ran or read shows the finish right"
            return veto("continue: nothing has been shown yet; try it first", "cm_empty_state", why)
        if update.status == "success":
            turn.accept(self, status="success")
            return PASS
        return veto(f"continue: {update.reason}", "cm_continue", update.reason)
