"""One executor try: a loop over ReAct steps, each through the step pipeline (vreact.pipeline),
until the executor proposes a final, a member stops the try, or a step budget is spent."""

from __future__ import annotations

from typing import Any

from vreact.budget import Budget
from vreact.controller._context import AttemptContext
from vreact.pipeline import (
    Member,
    ParseGate,
    Pipeline,
    RepetitionGuard,
    StepOutcome,
    Turn,
    build_member,
    stop,
)
from vreact.roles.designer import Subtask
from vreact.roles.executor import STEP_SCHEMA, Step, parse_step, render_messages, run_tool
from vreact.tools import Corpus
from vreact.v import V
from vreact.verdict import Verdict, artifact_hash
from vreact.verify.gates import Artifact

#: The component whose failures an answer-producing subtask also reads (R3's rejections).
ANSWER = "answer"


def pipeline_of(ctx: AttemptContext) -> Pipeline:
    """A new try's members: the parse gate, the repetition guard (with guards on), then the
    configuration's own, in order."""
    config = ctx.config
    members: list[Member] = [ParseGate(strict=config.gates)]
    if config.guards:
        members.append(RepetitionGuard(config.guard.repeat_hint, config.guard.repeat_stop))
    members += [build_member(m.name, m.args) for m in config.pipeline]
    return Pipeline(members)


class ExecutorTry:
    """One try of one subtask. ``run`` returns its finish or abstain, or None when it was
    stopped (the stop's verdict is recorded; unverified runs record none)."""

    def __init__(self, ctx: AttemptContext, corpus: Corpus, subtask: Subtask, tries: Budget) -> None:
        self.ctx, self.corpus, self.subtask, self.tries = ctx, corpus, subtask, tries
        self.verified = ctx.config.verified
        self.pipeline = pipeline_of(ctx)
        self.history: list[tuple[str, str]] = []  # (reply, observation) of every spent step
        self.retrieved: set[str] = set()
        self.searches = 0
        self.reask: list[str] = []  # the note of a rolled-back step, for the next prompt
        self.rollbacks = 0  # at most the step cap's worth in one try

    def run(self) -> Artifact | None:
        cap, steps = self.ctx.budgets.step_cap(), self.ctx.budgets.steps
        while not cap.spent:
            if self.verified and steps.spent:
                self._stopped(None, stop("step_budget", "the attempt's executor steps are spent"))
                return None
            turn = Turn(
                self.subtask.component, self.subtask.objective, cap.used, self._messages(), self.history
            )
            ended, done = self._step(turn, cap, steps)
            if ended:
                return done
        if self.verified:
            self._stopped(None, stop("step_cap", f"{len(self.history)} steps"))
        return None

    def _step(self, turn: Turn, cap: Budget, steps: Budget) -> tuple[bool, Artifact | None]:
        """One step through the four phases; (True, final or None) when the try ends."""
        hints: list[str] = []
        for phase in ("context", "call", "proposal"):
            if phase == "call":
                turn.text = self.ctx.call("executor", turn.messages, STEP_SCHEMA).text
            elif phase == "proposal":
                turn.step = parse_step(turn.text)
            d = self.pipeline.run(phase, turn)
            hints += d.hints
            kind = d.outcome.kind
            if kind == "rollback" and self.rollbacks < cap.limit:  # then it is spent like a block
                self.rollbacks += 1
                self._verdict(d.outcome, d.member)
                self.reask = [d.outcome.note]
                return False, None
            if phase != "context" and (kind == "stop" or phase == "proposal"):
                steps.spend()  # the call was made and is kept
                cap.spend()
            if kind == "stop":
                self._stopped(turn, d.outcome, d.member)
                return True, None
        self.reask = []
        step = turn.step
        if d.outcome.kind != "pass" or step is None:  # block, veto (or a rollback past its cap)
            self._verdict(d.outcome, d.member)
            self._keep(turn, d.outcome.note, hints)
            return False, None
        if not turn.final:
            self.searches += step.action == "search"
            turn.observation = run_tool(step, self.corpus, self.retrieved)
        d = self.pipeline.run("result", turn)
        hints += d.hints
        if d.outcome.kind == "stop":
            self._stopped(turn, d.outcome, d.member)
            return True, None
        if d.outcome.kind == "veto":
            self._verdict(d.outcome, d.member)
            self._keep(turn, d.outcome.note, hints)
            return False, None
        if turn.final:
            self._record(turn, "")
            return True, self._artifact(step)
        self._keep(turn, turn.observation or "", hints)
        return False, None

    def _messages(self) -> list[dict[str, str]]:
        own = (self.subtask.component, ANSWER) if self.subtask.final else (self.subtask.component,)
        scope = self.ctx.scope(
            own,
            {
                "subtask.objective": self.subtask.objective,
                "subtask.contract": self.subtask.contract,
                "subtask.checks": list(self.subtask.checks),
                "try.steps": list(self.history),
            },
        )
        messages = render_messages(self.ctx.assembler.build("executor", scope))
        if self.reask:  # a rolled-back step: say why, so the re-ask differs
            messages.append({"role": "user", "content": "\n".join(self.reask)})
        return messages

    def _keep(self, turn: Turn, observation: str, hints: list[str]) -> None:
        """A spent step joins the try's history with its observation (and any hints)."""
        observation += "".join("\n" + h for h in hints)
        self._record(turn, observation)
        self.history.append((turn.text, observation))

    def _record(self, turn: Turn, observation: str) -> None:
        step = turn.step
        fields: dict[str, Any] = (
            {"thought": step.thought, "action": step.action, "input": step.input, "evidence": step.evidence}
            if step is not None
            else {"thought": turn.text, "action": None}
        )
        self.ctx.recorder.step(self.subtask.component, self.tries.used, turn.index, observation, **fields)

    def _stopped(self, turn: Turn | None, outcome: StepOutcome, member: Member | None = None) -> None:
        """The try ends: its last step (if any) is recorded, then the stop's verdict."""
        if turn is not None and turn.text:
            self._record(turn, outcome.note)
        self._verdict(outcome, member)

    def _verdict(self, outcome: StepOutcome, member: Member | None) -> None:
        """The reject verdict of a member's outcome (a guard's when no member gave it)."""
        if not outcome.cause or not self.verified:
            return
        verifier, source = (member.verifier, member.source) if member else ("guard", "guard")
        name = member.name if member else outcome.cause
        artifact = outcome.artifact if outcome.artifact is not None else outcome.detail
        assert verifier in V
        verdict = Verdict(
            verifier,
            self.subtask.component,
            source,
            name,
            "reject",
            outcome.cause,
            outcome.detail,
            self.tries.left,
            artifact_hash(artifact),
        )
        self.ctx.recorder.verdict(verdict, artifact)

    def _artifact(self, step: Step) -> Artifact:
        """The try's final: an answer with its cited paragraphs' text, or an abstention."""
        retrieved = frozenset(self.retrieved)
        if step.action == "abstain":
            reason = step.input or step.thought
            return Artifact(
                "abstain", self.subtask.objective, reason=reason, retrieved=retrieved, searches=self.searches
            )
        cited = {e: self.corpus.text(e) for e in step.evidence if self.corpus.read(e)}
        return Artifact(
            "answer",
            self.subtask.objective,
            answer=step.input,
            evidence=list(step.evidence),
            cited=cited,
            retrieved=retrieved,
            searches=self.searches,
        )
