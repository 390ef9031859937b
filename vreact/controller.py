"""The deterministic controller: the V-model's state machine for one attempt.

Read top to bottom: ``run`` descends (L3 tries under R1), ascends (R3 on the final answer),
and routes every rejection back to the level it pairs with until that level's budget is
spent, when it abstains naming the level. It alone calls the model, runs the verifiers and
writes verdicts, and verdicts are the only thing that writes memory.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any, Literal

from vreact.budget import Budget, Budgets
from vreact.config import Configuration
from vreact.dataset import Task
from vreact.executor import STEP_SCHEMA, Step, parse_step, render_messages, run_tool
from vreact.gates import Artifact, Gate, GateResult, build_gate, expected_answer_type, reject
from vreact.guards import RepetitionGuard
from vreact.memory import ContextAssembler, Scope, Store
from vreact.model import Completion, Message, Model, ModelError
from vreact.spec import TaskSpec, VerifierSet
from vreact.tools import Corpus
from vreact.verdict import Level, Source, Verdict, artifact_hash

OutcomeKind = Literal["answer", "abstain", "crash"]


@dataclass
class Outcome:
    """How an attempt ended: exactly one of answer, abstention or crash."""

    kind: OutcomeKind
    answer: str | None = None
    evidence: list[str] = field(default_factory=list)
    level: str | None = None  # L1 | L2 | L3 | declined | cap (abstentions only)
    component: str | None = None
    cause: str | None = None
    error: str | None = None

    def record(self) -> dict[str, Any]:
        """The columns of the ``attempts`` row."""
        return {
            "outcome": self.kind,
            "answer": self.answer,
            "evidence": json.dumps(self.evidence),
            "abstain_level": self.level,
            "abstain_component": self.component,
            "abstain_cause": self.cause,
            "error": self.error,
        }


@dataclass(frozen=True)
class Subtask:
    """One L3 step design: objective, contract and the checks R1 applies."""

    id: str
    objective: str
    contract: str
    checks: tuple[str, ...]

    @property
    def component(self) -> str:
        return f"executor.{self.id}"


@dataclass
class _Rejection:
    source: Source
    verifier: str
    result: GateResult
    args: dict[str, Any]
    hash: str


class Controller:
    """Runs one configuration once on one task (one attempt)."""

    def __init__(
        self,
        config: Configuration,
        spec: TaskSpec,
        verifiers: VerifierSet,
        assembler: ContextAssembler,
        model: Model,
        store: Store,
        attempt_id: int,
        task: Task,
        seed: int = 0,
    ) -> None:
        self.config, self.spec, self.task = config, spec, task
        self.model, self.store, self.assembler = model, store, assembler
        self.attempt_id, self.seed = attempt_id, seed
        self.budgets = Budgets(config.budgets.model_dump())
        defaults = spec.requirements.answer.model_dump()
        self.r1 = [build_gate(g.name, g.args, defaults) for g in verifiers.R1.gates]
        self.r3 = [build_gate(g.name, g.args, defaults) for g in verifiers.R3.gates]
        self.corpus = Corpus(task.paragraphs)
        self._last_reject: dict[str, Verdict] = {}

    # --- the state machine ----------------------------------------------------------------

    def run(self) -> Outcome:
        subtask = self._single_task()
        if not self.config.verified:
            return self._plain(subtask)
        r3 = self.budgets["r3"]
        while True:
            artifact = self._unit(subtask)  # descend: tries under R1
            if isinstance(artifact, Outcome):
                return artifact
            final = dataclasses.replace(artifact, question=self.task.question)
            rejection = self._verify("L1", subtask.component, self.r3, final, r3)
            if rejection is None:
                return self._outcome_of(final, subtask)
            more = not r3.spent
            if more:
                r3.spend()
            self._reject("L1", subtask.component, rejection, r3)
            if not more:
                return self._abstain("L1", subtask.component)
            # re-descend from the top: without a planner, the single-task executor

    def _unit(self, subtask: Subtask) -> Artifact | Outcome:
        """L3 tries of one subtask until R1 accepts or the L3 budget is spent."""
        tries = self.budgets[f"r1:{subtask.id}"]
        steps = self.budgets["steps"]
        while True:
            if tries.spent or steps.spent:  # the last reject recorded says why
                return self._abstain("L3", subtask.component)
            tries.spend()
            artifact = self._try(subtask, tries)
            if artifact is None:  # the try was stopped; its verdict is recorded
                continue
            rejection = self._verify("L3", subtask.component, self.r1, artifact, tries)
            if rejection is None:
                return artifact
            self._reject("L3", subtask.component, rejection, tries)

    def _plain(self, subtask: Subtask) -> Outcome:
        """Configuration N: plain ReAct, one try, no verdicts; the step cap ends it."""
        tries = self.budgets[f"r1:{subtask.id}"]
        tries.spend()
        artifact = self._try(subtask, tries)
        if artifact is None:
            return Outcome("abstain", level="cap", component=subtask.component, cause="step_cap")
        return self._outcome_of(artifact, subtask)

    # --- one try: the executor's ReAct loop -------------------------------------------------

    def _try(self, subtask: Subtask, tries: Budget) -> Artifact | None:
        """One executor try. Returns its finish or abstain, or None when a check stopped it."""
        verified = self.config.verified
        guard = (
            RepetitionGuard(self.config.guard.repeat_hint, self.config.guard.repeat_stop)
            if self.config.guards
            else None
        )
        steps: list[tuple[str, str]] = []
        retrieved: set[str] = set()
        searches = 0
        for _ in range(self.config.budgets.step_cap):
            if verified and self.budgets["steps"].spent:
                self._stop(subtask, "step_budget", "step_budget", repr(steps[-1:]), tries)
                return None
            scope = Scope(
                self.attempt_id,
                subtask.component,
                {
                    "subtask.objective": subtask.objective,
                    "subtask.contract": subtask.contract,
                    "subtask.checks": list(subtask.checks),
                    "try.steps": list(steps),
                },
            )
            messages = render_messages(self.assembler.build("executor", scope))
            completion = self._call("executor", messages, STEP_SCHEMA)
            self.budgets["steps"].spend()
            step = parse_step(completion.text)
            if step is None:
                if verified:  # fail closed: unparseable output is a reject by the parse gate
                    self._record(
                        Verdict(
                            "L3",
                            subtask.component,
                            "gate",
                            "parses",
                            "reject",
                            "format",
                            completion.text[:200],
                            tries.left,
                            artifact_hash(completion.text),
                        )
                    )
                    return None
                steps.append((completion.text, "not a JSON step; reply with one JSON object"))
                continue
            if step.action in ("finish", "abstain"):
                return self._artifact(step, subtask, retrieved, searches)
            note = ""
            if guard is not None:
                signal = guard.observe(step.call())
                if signal == "stop":
                    self._stop(
                        subtask,
                        "repetition_guard",
                        "repeated_call",
                        f"{guard.run} identical calls: {step.call()}",
                        tries,
                    )
                    return None
                if signal == "hint":
                    note = "\n" + RepetitionGuard.HINT.format(n=guard.run)
            searches += step.action == "search"
            steps.append((completion.text, run_tool(step, self.corpus, retrieved) + note))
        if verified:
            self._stop(subtask, "step_cap", "step_cap", f"{len(steps)} steps", tries)
        return None

    # --- verifiers and verdicts ---------------------------------------------------------------

    def _verify(
        self, level: Level, component: str, gates: list[Gate], artifact: Artifact, budget: Budget
    ) -> _Rejection | None:
        """Run the gates in order; record each accept; return the first rejection unrecorded
        (the caller spends the budget first, so the verdict carries what is left)."""
        ident = artifact.identity()
        h = artifact_hash(ident)
        for g in gates:
            if not g.applies_to(artifact):
                continue
            try:
                result = g(artifact)
            except Exception as e:  # fail closed: a verifier that raises rejects
                result = reject("verifier_error", f"{type(e).__name__}: {e}")
            if not result.ok:
                return _Rejection("gate", g.name, result, g.args, h)
            self._record(
                Verdict(level, component, "gate", g.name, "accept", "", "", budget.left, h, g.args),
                artifact=ident,
            )
        return None

    def _reject(self, level: Level, component: str, r: _Rejection, budget: Budget) -> None:
        self._record(
            Verdict(
                level,
                component,
                r.source,
                r.verifier,
                "reject",
                r.result.cause,
                r.result.detail,
                budget.left,
                r.hash,
                r.args,
            )
        )

    def _stop(self, subtask: Subtask, guard: str, cause: str, detail: str, budget: Budget) -> None:
        """A guard stop: a verdict with source "guard", routed like an R1 reject."""
        self._record(
            Verdict(
                "L3",
                subtask.component,
                "guard",
                guard,
                "reject",
                cause,
                detail,
                budget.left,
                artifact_hash(detail),
            )
        )

    def _record(self, verdict: Verdict, artifact: Any = None) -> None:
        self.store.record_verdict(self.attempt_id, verdict, artifact)
        if not verdict.accepted:
            self._last_reject[verdict.component] = verdict

    # --- endings ----------------------------------------------------------------------------

    def _abstain(self, level: str, component: str) -> Outcome:
        last = self._last_reject.get(component)
        cause = f"{last.verifier}:{last.cause}" if last else "budget_spent"
        return Outcome("abstain", level=level, component=component, cause=cause)

    @staticmethod
    def _outcome_of(artifact: Artifact, subtask: Subtask) -> Outcome:
        if artifact.kind == "abstain":
            return Outcome(
                "abstain",
                level="declined",
                component=subtask.component,
                cause=f"agent_declined: {artifact.reason[:160]}",
            )
        return Outcome("answer", answer=str(artifact.answer), evidence=list(artifact.evidence))

    # --- helpers ----------------------------------------------------------------------------

    def _single_task(self) -> Subtask:
        """Without a planner the question is the one subtask; its L3 design comes from L1."""
        want = self.spec.requirements.answer
        kind = expected_answer_type(self.task.question)
        shape = "a short answer" if kind == "any" else f"a {kind}"
        contract = f"{shape}, at most {want.max_words} words"
        if want.cite_evidence:
            contract += ", citing the ids of paragraphs you found"
        checks = (
            tuple(g.name for g in self.r1 if "answer" in g.kinds and g.name != "parses")
            if self.config.gates
            else ()
        )
        return Subtask("s1", self.task.question, contract, checks)

    def _artifact(self, step: Step, subtask: Subtask, retrieved: set[str], searches: int) -> Artifact:
        if step.action == "abstain":
            return Artifact(
                "abstain",
                subtask.objective,
                reason=step.input or step.thought,
                retrieved=frozenset(retrieved),
                searches=searches,
            )
        cited = {e: self.corpus.text(e) for e in step.evidence if self.corpus.read(e)}
        return Artifact(
            "answer",
            subtask.objective,
            answer=step.input,
            evidence=list(step.evidence),
            cited=cited,
            retrieved=frozenset(retrieved),
            searches=searches,
        )

    def _call(self, role: str, messages: list[Message], schema: dict[str, Any]) -> Completion:
        """The only way a generator is invoked; every call is recorded, failed ones too."""
        try:
            c = self.model.generate(
                messages,
                schema,
                temperature=self.config.temperature,
                max_tokens=self.config.max_tokens,
                seed=self.seed,
            )
        except ModelError as e:
            self.store.record_call(self.attempt_id, role, self.model.name, 0, 0, 0.0, "error", str(e))
            raise
        self.store.record_call(
            self.attempt_id, role, self.model.name, c.prompt_tokens, c.completion_tokens, c.latency_ms
        )
        return c
