"""One executor try: a loop over ReAct steps, each through the step pipeline (vreact.pipeline),
until the executor proposes a final, a member stops the try, or a budget is spent."""

from __future__ import annotations

import time
from typing import Any

from vreact.budget import Budget, BudgetStop
from vreact.config import Configuration
from vreact.controller._context import AttemptContext
from vreact.families import Artifact, Subtask, open_kit
from vreact.marking import told
from vreact.model import ReasoningRunaway
from vreact.pipeline import (
    ContextManager,
    ContextProfile,
    Critic,
    Member,
    ParseGate,
    Phase,
    Pipeline,
    RepetitionGuard,
    StepOutcome,
    TextRepetitionGuard,
    Turn,
    build_member,
)
from vreact.v import V
from vreact.verdict import Verdict, artifact_hash

#: The component whose failures an answer-producing subtask also reads (R3's rejections).
ANSWER = "answer"


def pipeline_of(config: Configuration, guards: tuple[Member, ...] = ()) -> Pipeline:
    """A new try's members: the context profile (if named), the DeReAct context manager, the
    parse gate, the loop guards (with guards on: the family's kit's own first, ``guards``, such
    as qa's duplicate-search rollback; repeated calls, repeated thoughts if switched on), the
    DeReAct critic, then the configuration's own, in order."""
    g = config.guard
    members: list[Member] = []
    if config.profile:
        keep = config.keep_last_k if config.keep_last_k is not None else 5
        members.append(ContextProfile(config.profile, keep, config.context_tokens))
    d = config.dereact
    if config.context_manager:  # after a profile: the State, and the brain's history window
        members.append(ContextManager(d.window, d.initial))
    members.append(ParseGate(strict=config.gates))
    if config.guards:  # a rollback first, so the other guards never count a dropped step
        members += guards
        members.append(RepetitionGuard(g.repeat_hint, g.repeat_stop))
        if g.text_repeat:
            members.append(TextRepetitionGuard(g.text_similarity, g.text_hint, g.text_stop))
    if config.critic:  # after the free checks: a model call only for what they let through
        members.append(Critic(d.kappa_min))
    members += [build_member(m.name, m.args) for m in config.pipeline]
    return Pipeline(members)


class ExecutorTry:
    """One try of one subtask. ``run`` returns its finish or abstain, or None when it was
    stopped (``stop_cause`` says why; the stop's verdict is recorded, unverified runs record
    none)."""

    def __init__(
        self,
        ctx: AttemptContext,
        subtask: Subtask,
        tries: Budget,
        fresh: bool = False,
        temperature: float | None = None,
    ) -> None:
        """A try of the V's own (a later one is a retry, re-sampled at ``retry_temperature``,
        that reads why earlier ones were rejected), or with ``fresh`` one of k candidates
        (vreact/controller/_candidates.py): it reads no rejection and samples at ``temperature``
        (None: the configuration's own)."""
        self.ctx, self.subtask, self.tries = ctx, subtask, tries
        config = ctx.config
        self.verified = config.verified
        self.fresh = fresh
        retry = tries.used > 1 and not self.fresh
        #: the family's kit for this try: the step's schema, its tools, the designer's steps
        self.kit = open_kit(ctx.family, ctx, subtask, retry)
        self.pipeline = pipeline_of(config, tuple(self.kit.guards))
        # the designer's steps pass the guards, not the critic (no model proposed them)
        self.designer_pipeline = Pipeline([m for m in self.pipeline.members if not isinstance(m, Critic)])
        self.marked = config.observation_marking
        # a try after a rejection routed like R1's is re-sampled (retry_temperature)
        self.temperature = config.retry_temperature if retry else temperature
        self.history: list[tuple[str, str]] = []  # (reply, observation) of every spent step
        self.reask: list[str] = []  # the note of a rolled-back step, for the next prompt
        self.rollbacks = 0  # at most the step cap's worth in one try
        self.stop_cause = ""

    def run(self) -> Artifact | None:
        try:
            return self._run()
        except BudgetStop as stop:  # a model call the attempt's tokens or wall clock refused or cut
            self._budget_stop(stop.cause, stop.detail)
            return None

    def _run(self) -> Artifact | None:
        budgets = self.ctx.budgets
        cap = budgets.step_cap()
        while not cap.spent:
            spent = budgets.attempt_spent()
            if spent:
                self._budget_stop(*spent)
                return None
            st = self.subtask
            turn = Turn(
                st.component, st.objective, cap.used, [], list(self.history), ask=self._ask, kit=self.kit
            )
            turn.retrieved = frozenset(self.kit.retrieved)
            if self.kit.designed:  # a step the designer issues (a search): no model call
                turn.step, turn.source = self.kit.designed.pop(0), "designer"
                turn.text = turn.step.model_dump_json(include={"thought", "action", "input", "evidence"})
            else:
                turn.messages = self._messages(turn.history)
            ended, done = self._step(turn, cap)
            if ended:
                return done
        if self.ctx.config.final_answer_recovery:  # one more step: never past the attempt's budgets
            spent = budgets.attempt_spent()
            if spent:
                self._budget_stop(*spent)
                return None
            recovered = self._recover(cap)
            if recovered is not None:
                return recovered
        self._budget_stop("step_cap", f"{len(self.history)} steps")
        return None

    def _step(self, turn: Turn, cap: Budget) -> tuple[bool, Artifact | None]:
        """One step through the four phases; (True, final or None) when the try ends. A
        designer's step (its search already in ``turn.step``) passes the proposal and result
        phases of the members but the critic."""
        hints: list[str] = []
        designer = turn.source == "designer"
        pipeline = self.designer_pipeline if designer else self.pipeline
        phases: tuple[Phase, ...] = ("proposal",) if designer else ("context", "call", "proposal")
        for phase in phases:
            if phase == "call":
                if turn.history != self.history or turn.sources:  # a context member shaped it
                    turn.messages = self._messages(turn.history, turn.sources)
                try:
                    turn.text, turn.truncated = self._call(turn.messages)
                except ReasoningRunaway as e:  # the watchdog cut the reply off: a guard stop
                    self.ctx.budgets.steps.spend()
                    cap.spend()
                    self.stop_cause = "reasoning_runaway"
                    if self.verified:
                        detail = str(e)[:300]
                        self._write("guard", "guard", "reasoning_watchdog", self.stop_cause, detail, detail)
                    return True, None
            elif phase == "proposal" and not designer:
                self._parse(turn)
            d = pipeline.run(phase, turn)
            self._member_verdicts(turn)
            hints += self._hinted(turn, d.hints)
            kind = d.outcome.kind
            if kind == "rollback" and self.rollbacks < cap.limit:  # then it is spent like a block
                self.rollbacks += 1
                self._event(turn, d.member, "rollback", d.outcome.note)
                self.reask = [] if designer else [d.outcome.note]  # a designer's search is dropped
                return False, None
            if phase != "context" and (kind == "stop" or phase == "proposal"):
                self.ctx.budgets.steps.spend()  # the call was made and is kept
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
            started = time.perf_counter()
            turn.observation, turn.cut = self.kit.act(step)
            turn.seconds = time.perf_counter() - started
            turn.retrieved = frozenset(self.kit.retrieved)
        d = pipeline.run("result", turn)
        self._member_verdicts(turn)
        hints += self._hinted(turn, d.hints)
        if d.outcome.kind == "stop":
            self._stopped(turn, d.outcome, d.member)
            return True, None
        if d.outcome.kind == "veto":
            self._verdict(d.outcome, d.member)
            self._keep(turn, d.outcome.note, hints)
            return False, None
        if turn.final:
            self._record(turn, "")
            return True, self.kit.artifact(step)
        self._keep(turn, turn.observation or "", hints)
        return False, None

    def _recover(self, cap: Budget) -> Artifact | None:
        """Final-answer recovery: one more call that may only finish or abstain."""
        turn = Turn(self.subtask.component, self.subtask.objective, cap.used, [], self.history, kit=self.kit)
        turn.messages = [*self._messages(self.history), {"role": "user", "content": self.kit.recover}]
        turn.text, turn.truncated = self._call(turn.messages)
        self.ctx.budgets.steps.spend()
        self._parse(turn)
        if turn.truncated:  # cut at its allowance: never the answer, whatever it parses as
            self._record(
                turn, f"final-answer recovery: the reply stopped at its token allowance ({turn.truncated})"
            )
            return None
        if turn.step is None or not turn.final:
            self._record(turn, "final-answer recovery: not a finish or abstain")
            return None
        self._record(turn, "")
        return self.kit.artifact(turn.step)

    def _call(self, messages: list[dict[str, str]]) -> tuple[str, str]:
        """The executor's reply: JSON against the kit's schema, or one of its actions as a native
        tool call (its model's ``actions: native``); and the provider's stop reason when it
        stopped at its token allowance (empty: it did not)."""
        tools = self.kit.native_tools() if self.kit.native else None
        c = self.ctx.call("executor", messages, self.kit.schema, self.temperature, tools=tools)
        return c.text, (c.stop_reason or "") if c.truncated else ""

    def _parse(self, turn: Turn) -> None:
        """The step in the reply (None: not one; ``turn.problem`` then says why, if the kit can).
        A native call is read as the JSON step it stands for, which the history then shows."""
        if not self.kit.native:
            turn.step = self.kit.parse(turn.text)
            return
        text, cause, detail = self.kit.parse_native(turn.text)
        if text is None:
            turn.step, turn.problem = None, (cause, detail)
            return
        turn.step = self.kit.parse(text)
        if turn.step is None:
            turn.problem = ("bad_arguments", f"not a step of its action: {text[:160]}")
        else:
            turn.text = text

    def _messages(
        self, history: list[tuple[str, str]], extra: dict[str, Any] | None = None
    ) -> list[dict[str, str]]:
        own = (self.subtask.component, ANSWER) if self.subtask.final else (self.subtask.component,)
        scope = self.ctx.scope(
            own,
            {
                "subtask.objective": self.subtask.objective,
                "subtask.contract": self.subtask.contract,
                "subtask.checks": list(self.kit.checks),
                "try.steps": list(history),
                **(extra or {}),
            },
        )
        context = self.ctx.assembler.build("executor", scope)
        if self.fresh:  # a candidate is sampled as if it were the first: no rejection reaches it
            context = {k: v for k, v in context.items() if not k.startswith("failures.")}
        messages = self.kit.messages(context)
        messages = told(messages) if self.marked else messages
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
            {"thought": step.thought, "action": step.action, "input": step.input, "evidence": step.cited()}
            if step is not None
            else {"thought": turn.text, "action": None}
        )
        if step is not None:
            fields.update(self.kit.record(step))
        fields["cut"] = int(turn.cut)
        if turn.seconds is not None:
            fields["seconds"] = turn.seconds
        self.ctx.recorder.step(
            self.subtask.component,
            self.tries.used,
            turn.index,
            observation,
            source=turn.source,
            **fields,
        )

    def _ask(self, role: str, sources: dict[str, Any], render: Any, schema: dict[str, Any]) -> str:
        """A member's model call: the role's context under its row of memory/roles.yaml."""
        scope = self.ctx.scope((self.subtask.component,), sources)
        messages = render(self.ctx.assembler.build(role, scope))
        return self.ctx.call(role, told(messages) if self.marked else messages, schema).text

    def _member_verdicts(self, turn: Turn) -> None:
        """The verdicts members left beside their outcomes (a critic's accept, a gate's reject)."""
        artifact = turn.step.call() if turn.step is not None else turn.text
        for v in turn.verdicts if self.verified else []:
            m = v.member
            name, source = v.check_name or m.name, v.source or m.source
            self._write(m.verifier, source, name, v.cause, v.detail, artifact, v.decision, v.args)
        turn.verdicts.clear()

    def _hinted(self, turn: Turn, hints: list[tuple[Member, str]]) -> list[str]:
        """Each hint is an event; the notes go on the step's observation."""
        for m, note in hints:
            self._event(turn, m, "hint", note)
        return [note for _, note in hints]

    def _event(self, turn: Turn, m: Member | None, kind: str, detail: str) -> None:
        name = m.name if m is not None else kind
        self.ctx.recorder.event(self.subtask.component, self.tries.used, turn.index, name, kind, detail)

    def _stopped(self, turn: Turn, outcome: StepOutcome, member: Member | None) -> None:
        """The try ends: its last step (if it was proposed) is recorded, then the stop's verdict."""
        if turn.text:
            self._record(turn, outcome.note)
        self.stop_cause = outcome.cause
        self._verdict(outcome, member)

    def _budget_stop(self, cause: str, detail: str) -> None:
        """A spent budget (the step cap, the attempt's steps, tokens or wall clock): a verdict with
        source ``budget`` in a verified run, routed like an R1 reject."""
        self.stop_cause = cause
        if self.verified:
            left = self.ctx.budgets.of("budget", self.subtask.component).left
            self.ctx.recorder.budget_stop(self.subtask.component, cause, detail, left)

    def _verdict(self, outcome: StepOutcome, member: Member | None) -> None:
        """The reject verdict of a member's block, stop or veto, when it has a cause."""
        if outcome.cause and self.verified and member is not None:
            artifact = outcome.artifact if outcome.artifact is not None else outcome.detail
            m = member
            self._write(
                m.verifier, m.source, m.name, outcome.cause, outcome.detail, artifact, args=outcome.args
            )

    def _write(
        self,
        verifier: str,
        source: Any,
        name: str,
        cause: str,
        detail: str,
        artifact: str,
        decision: Any = "reject",
        args: dict[str, Any] | None = None,
    ) -> None:
        """A verdict with what is left of the budget its verifier spends (vreact/v.py)."""
        assert verifier in V
        left = self.ctx.budgets.of(verifier, self.subtask.component).left
        verdict = Verdict(
            verifier,
            self.subtask.component,
            source,
            name,
            decision,
            cause,
            detail,
            left,
            artifact_hash(artifact),
            dict(args or {}),
        )
        self.ctx.recorder.verdict(verdict, artifact)
