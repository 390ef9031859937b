"""The deterministic controller: the V-model's state machine for one attempt.

Read top to bottom. ``run`` descends (a plan at L2, step designs at L3, executor tries under
R1), ascends (R2 over the assembled chain, R3 on the final answer), and routes every
rejection back to the level it pairs with until that level's budget is spent:

    rejected by          goes back to                     budget   when spent
    plan gates / judge   the planner (a new plan)          plan     fall back to one task
    R1 (or a guard)      the subtask's executor (new try)  r1       abstain naming L3
    R2                   the planner (re-descend from L2)  r2       abstain naming L2
    R3                   the top (planner or the executor) r3       abstain naming L1

It alone calls models, runs verifiers and writes verdicts, and only verdicts write memory.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from vreact import judges, planner
from vreact.budget import Budget, Budgets
from vreact.config import Configuration
from vreact.dataset import Task
from vreact.executor import STEP_SCHEMA, Step, parse_json_object, parse_step, render_messages, run_tool
from vreact.gates import (
    Artifact,
    ChainArtifact,
    ChainStep,
    Gate,
    GateResult,
    PlanArtifact,
    build_gate,
    expected_answer_type,
    reject,
)
from vreact.guards import RepetitionGuard
from vreact.memory import ContextAssembler, Scope
from vreact.model import Completion, Message, Model, ModelError, endpoint_of
from vreact.records import Store
from vreact.spec import JudgeSpec, TaskSpec, VerifierSet
from vreact.tools import Corpus
from vreact.v import Level, Source, V, judge_name
from vreact.verdict import Verdict, artifact_hash

OutcomeKind = Literal["answer", "abstain", "crash"]
#: What ended a crashed attempt: the four expected failures, else a bug in vreact ("internal").
CrashKind = Literal["model", "timeout", "context_length", "script", "internal"]
Verifier = Literal["plan", "R1", "R2", "R3"]
#: Components whose verdicts are not an executor's: the plan and chain, and the final answer.
PLANNER, ANSWER = "planner", "answer"


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
    crash_kind: CrashKind | None = None  # crashes only
    traceback: str | None = None  # internal errors only: the whole traceback
    plan_fallback: bool = False

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
            "crash_kind": self.crash_kind,
            "traceback": self.traceback,
            "plan_fallback": int(self.plan_fallback),
        }


@dataclass(frozen=True)
class Subtask:
    """One L3 step design: objective, contract and the checks R1 applies."""

    id: str
    objective: str
    contract: str
    checks: tuple[str, ...]
    component: str
    depends_on: tuple[str, ...] = ()
    final: bool = True
    plan_ids: tuple[str, ...] = ()


@dataclass
class _Rejection:
    verifier: str
    source: Source
    check_name: str
    result: GateResult
    args: dict[str, Any]
    artifact: Any  # its identity: what the verdict's hash is of

    @property
    def hash(self) -> str:
        return artifact_hash(self.artifact)


class Controller:
    """Runs one configuration once on one task (one attempt)."""

    def __init__(
        self,
        config: Configuration,
        spec: TaskSpec,
        verifiers: VerifierSet,
        assembler: ContextAssembler,
        models: dict[str, Model],
        store: Store,
        attempt_id: int,
        task: Task,
        seed: int = 0,
    ) -> None:
        self.config, self.spec, self.task = config, spec, task
        self.models, self.store, self.assembler = models, store, assembler
        self.attempt_id, self.seed = attempt_id, seed
        self.budgets = Budgets(config.budgets.model_dump())
        defaults = spec.requirements.answer.model_dump()
        specs = {"plan": verifiers.plan, "R1": verifiers.R1, "R2": verifiers.R2, "R3": verifiers.R3}
        self.gates: dict[str, list[Gate]] = {
            k: [build_gate(g.name, g.args, defaults) for g in v.gates] if config.gates else []
            for k, v in specs.items()
        }
        self.judges: dict[str, JudgeSpec | None] = {
            k: v.judge if config.judges else None for k, v in specs.items()
        }
        self.corpus = Corpus(task.paragraphs)
        self.plan_fallback = False
        self._plans = 0
        self._declined_by: str | None = None  # the executor whose abstain ended the attempt
        self._last_reject: dict[str, Verdict] = {}
        self._last_call: int | None = None  # the id of the last model call recorded

    # --- the state machine ----------------------------------------------------------------

    def run(self) -> Outcome:
        if not self.config.verified:
            return self._plain()
        r3 = self.budgets["r3"]
        while True:
            final = self._descend()  # L2 -> L3 -> R1 -> R2
            if isinstance(final, Outcome):
                return final
            rejection = self._verify("R3", ANSWER, final, paired=self._l1())
            if rejection is None:
                return self._outcome_of(final, ANSWER)
            if not self._route(ANSWER, rejection, r3, "L1"):
                return self._abstain("L1", ANSWER)
            # re-descend from the top: the planner, or the single-task executor

    def _descend(self) -> Artifact | Outcome:
        """Plan, run every subtask under R1, and check the chain under R2 (with a planner)."""
        r2 = self.budgets["r2"]
        while True:
            subtasks, planned = self._plan()
            done = self._execute(subtasks)
            if isinstance(done, Outcome):
                return done
            chain, final = done
            if not planned or final.kind == "abstain":
                return final
            rejection = self._verify("R2", PLANNER, chain, paired=self._l2(subtasks))
            if rejection is None:
                return final
            if not self._route(PLANNER, rejection, r2, "L2"):
                return self._abstain("L2", PLANNER)
            # re-descend from L2: the planner reads this rejection

    def _plan(self) -> tuple[list[Subtask], bool]:
        """L2: a plan that passed the plan gates (and judge), designed into L3 subtasks; the
        single task when there is no planner or the plan budget is spent."""
        if not self.config.planner or self.plan_fallback:
            return [self._single_task()], False
        budget = self.budgets["plan"]
        while not budget.spent:
            budget.spend()
            self._plans += 1
            scope = Scope(self.attempt_id, (PLANNER,), {"l1": self._l1(), "tools": planner.TOOL_NAMES})
            messages = planner.render_messages(self.assembler.build("planner", scope))
            completion = self._call("planner", messages, planner.PLAN_SCHEMA)
            proposal = PlanArtifact(self.task.question, parse_json_object(completion.text))
            # the plan gates (if on), then the plan judge (if on): NP has neither
            rejection = self._verify("plan", PLANNER, proposal, paired=self._l1())
            if rejection is None:
                try:
                    plan = planner.Plan.model_validate(proposal.plan)
                except ValueError:  # no gate checked its shape (the plan gates reject these)
                    break
                if not plan.subtasks:  # nor that it plans anything
                    break
                return self._design(plan), True
            self._reject("L2", PLANNER, rejection, budget)
        self.plan_fallback = True
        return [self._single_task()], False

    def _execute(self, subtasks: list[Subtask]) -> tuple[ChainArtifact, Artifact] | Outcome:
        """Each subtask in plan order, upstream answers substituted into its objective. Returns
        the chain and the final artifact (an abstain when a subtask declined)."""
        answers: dict[str, str] = {}
        steps: list[ChainStep] = []
        accepted: list[Artifact] = []
        for st in subtasks:
            st = dataclasses.replace(
                st, objective=planner.substitute(st.objective, list(st.plan_ids), answers)
            )
            artifact = self._unit(st)
            if isinstance(artifact, Outcome):
                return artifact
            if artifact.kind == "abstain":  # R3 still checks that declining is allowed
                self._declined_by = st.component
                return self._chain(steps, subtasks), dataclasses.replace(
                    artifact, question=self.task.question
                )
            answers[st.id] = str(artifact.answer)
            accepted.append(artifact)
            steps.append(
                ChainStep(
                    st.id,
                    st.objective,
                    str(artifact.answer),
                    tuple(artifact.evidence),
                    dict(artifact.cited),
                    st.depends_on,
                )
            )
        return self._chain(steps, subtasks), self._final(accepted)

    def _unit(self, subtask: Subtask) -> Artifact | Outcome:
        """L3 tries of one subtask until R1 accepts or the L3 budget is spent."""
        tries = self.budgets[f"r1:{subtask.component}"]
        steps = self.budgets["steps"]
        while True:
            if tries.spent or steps.spent:  # the last reject recorded says why
                return self._abstain("L3", subtask.component)
            tries.spend()
            artifact = self._try(subtask, tries)
            if artifact is None:  # the try was stopped; its verdict is recorded
                continue
            rejection = self._verify("R1", subtask.component, artifact, paired=self._l3(subtask))
            if rejection is None:
                return artifact
            self._reject("L3", subtask.component, rejection, tries)

    def _plain(self) -> Outcome:
        """N and NP: plain ReAct, one try per subtask, no verdicts; the step cap ends it."""
        subtasks, _ = self._plan()
        answers: dict[str, str] = {}
        accepted: list[Artifact] = []
        for st in subtasks:
            st = dataclasses.replace(
                st, objective=planner.substitute(st.objective, list(st.plan_ids), answers)
            )
            tries = self.budgets[f"r1:{st.component}"]
            tries.spend()
            artifact = self._try(st, tries)
            if artifact is None:
                return Outcome(
                    "abstain",
                    level="cap",
                    component=st.component,
                    cause="step_cap",
                    plan_fallback=self.plan_fallback,
                )
            if artifact.kind == "abstain":
                return self._outcome_of(artifact, st.component)
            answers[st.id] = str(artifact.answer)
            accepted.append(artifact)
        return self._outcome_of(self._final(accepted), ANSWER)

    # --- one try: the executor's ReAct loop -------------------------------------------------

    def _try(self, subtask: Subtask, tries: Budget) -> Artifact | None:
        """One executor try. Returns its finish or abstain, or None when a check stopped it."""
        verified = self.config.verified
        guard = (
            RepetitionGuard(self.config.guard.repeat_hint, self.config.guard.repeat_stop)
            if self.config.guards
            else None
        )
        own = (subtask.component, ANSWER) if subtask.final else (subtask.component,)
        steps: list[tuple[str, str]] = []
        retrieved: set[str] = set()
        searches = 0
        for index in range(self.config.budgets.step_cap):
            if verified and self.budgets["steps"].spent:
                self._stop(
                    subtask, "step_budget", "step_budget", "the attempt's executor steps are spent", tries
                )
                return None
            scope = Scope(
                self.attempt_id,
                own,
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
            record = self._step_recorder(subtask, tries, index, step, completion.text)
            if step is None:
                if self.config.gates:  # fail closed: unparseable output is a reject by the parse gate
                    record("rejected by the parses gate (format)")
                    self._record(
                        Verdict(
                            "R1",
                            subtask.component,
                            "gate",
                            "parses",
                            "reject",
                            "format",
                            "the step was not one JSON object with thought, action, input, evidence",
                            tries.left,
                            artifact_hash(completion.text),
                        ),
                        completion.text,
                    )
                    return None
                steps.append((completion.text, record("not a JSON step; reply with one JSON object")))
                continue
            if step.action in ("finish", "abstain"):
                record("")
                return self._artifact(step, subtask, retrieved, searches)
            note = ""
            if guard is not None:
                signal = guard.observe(step.call())
                if signal == "stop":
                    record(f"stopped by the repetition guard ({guard.run} identical calls)")
                    self._stop(
                        subtask,
                        "repetition_guard",
                        "repeated_call",
                        f"the same {step.action} call {guard.run} times in a row",
                        tries,
                        step.call(),
                    )
                    return None
                if signal == "hint":
                    note = "\n" + RepetitionGuard.HINT.format(n=guard.run)
            searches += step.action == "search"
            steps.append((completion.text, record(run_tool(step, self.corpus, retrieved) + note)))
        if verified:
            self._stop(subtask, "step_cap", "step_cap", f"{len(steps)} steps", tries)
        return None

    # --- verifiers and verdicts ---------------------------------------------------------------

    def _verify(self, verifier: Verifier, component: str, artifact: Any, paired: Any) -> _Rejection | None:
        """Gates in order, then the judge on what they all cleared. Each accept is recorded; the
        first rejection is returned unrecorded (the caller spends the budget first, so the
        verdict carries what is left)."""
        ident = artifact.identity()
        h = artifact_hash(ident)
        left = self._left(verifier, component)
        for g in self.gates[verifier]:
            if not g.applies_to(artifact):
                continue
            try:
                result = g(artifact)
            except Exception as e:  # fail closed: a verifier that raises rejects
                result = reject("verifier_error", f"{type(e).__name__}: {e}")
            if not result.ok:
                return _Rejection(verifier, "gate", g.name, result, g.args, ident)
            self._record(
                Verdict(verifier, component, "gate", g.name, "accept", "", "", left, h, g.args), ident
            )
        judge = self.judges[verifier]
        if judge is None:
            return None
        kind = V[verifier].judge
        assert kind is not None
        scope = Scope(self.attempt_id, (component,), {"artifact": _show(artifact), "paired_level": paired})
        completion = self._call(
            "judge", judges.render_messages(kind, self.assembler.build("judge", scope)), judges.JUDGE_SCHEMA
        )
        result = judges.decide(completion.text, judge.min_confidence)
        args = judge.model_dump()
        if not result.ok:
            return _Rejection(verifier, "judge", judge_name(verifier), result, args, ident)
        self._record(
            Verdict(verifier, component, "judge", judge_name(verifier), "accept", "", "", left, h, args),
            ident,
        )
        return None

    def _route(self, component: str, r: _Rejection, budget: Budget, level: Level) -> bool:
        """Spend one unit of a re-descent budget on a rejection; False when none was left."""
        more = not budget.spent
        if more:
            budget.spend()
        self._reject(level, component, r, budget)
        return more

    def _reject(self, level: Level, component: str, r: _Rejection, budget: Budget) -> None:
        self._record(
            Verdict(
                r.verifier,
                component,
                r.source,
                r.check_name,
                "reject",
                r.result.cause,
                r.result.detail,
                budget.left,
                r.hash,
                r.args,
            ),
            r.artifact,
        )

    def _stop(
        self, subtask: Subtask, guard: str, cause: str, detail: str, budget: Budget, artifact: str = ""
    ) -> None:
        """A guard stop: a verdict with source "guard", routed like an R1 reject. Its detail
        names the cause, never the try's transcript."""
        self._record(
            Verdict(
                "guard",
                subtask.component,
                "guard",
                guard,
                "reject",
                cause,
                detail,
                budget.left,
                artifact_hash(artifact or detail),
            ),
            artifact or detail,
        )

    def _step_recorder(
        self, subtask: Subtask, tries: Budget, index: int, step: Step | None, text: str
    ) -> Callable[[str], str]:
        """Records this step of the try (for people and tools: transcripts never reach a role's
        context) once its observation is known; returns the observation."""

        def record(observation: str) -> str:
            fields = (
                {
                    "thought": step.thought,
                    "action": step.action,
                    "input": step.input,
                    "evidence": step.evidence,
                }
                if step is not None
                else {"thought": text, "action": None}
            )
            self.store.record_step(
                self.attempt_id,
                subtask.component,
                tries.used,
                index,
                call_id=self._last_call,
                observation=observation,
                **fields,
            )
            return observation

        return record

    def _record(self, verdict: Verdict, artifact: Any = None) -> None:
        self.store.record_verdict(self.attempt_id, verdict, artifact)
        if not verdict.accepted:
            self._last_reject[verdict.component] = verdict

    def _left(self, verifier: Verifier, component: str) -> int:
        name = {"plan": "plan", "R1": f"r1:{component}", "R2": "r2", "R3": "r3"}[verifier]
        return self.budgets[name].left

    # --- endings ----------------------------------------------------------------------------

    def _abstain(self, level: str, component: str) -> Outcome:
        last = self._last_reject.get(component)
        cause = f"{last.check_name}:{last.cause}" if last else "budget_spent"
        return Outcome(
            "abstain", level=level, component=component, cause=cause, plan_fallback=self.plan_fallback
        )

    def _outcome_of(self, artifact: Artifact, component: str) -> Outcome:
        if artifact.kind == "abstain":
            return Outcome(
                "abstain",
                level="declined",
                component=self._declined_by or component,
                cause=f"agent_declined: {artifact.reason[:160]}",
                plan_fallback=self.plan_fallback,
            )
        return Outcome(
            "answer",
            answer=str(artifact.answer),
            evidence=list(artifact.evidence),
            plan_fallback=self.plan_fallback,
        )

    # --- specification levels and artifacts ---------------------------------------------------

    def _l1(self) -> dict[str, Any]:
        return {
            "question": self.task.question,
            "task": self.spec.requirements.task,
            "answer": self.spec.requirements.answer.model_dump(),
        }

    @staticmethod
    def _l2(subtasks: list[Subtask]) -> list[dict[str, Any]]:
        return [{"id": s.id, "objective": s.objective, "depends_on": list(s.depends_on)} for s in subtasks]

    @staticmethod
    def _l3(subtask: Subtask) -> dict[str, Any]:
        return {"objective": subtask.objective, "contract": subtask.contract}

    def _contract(self, kind: str, *, whole_question: bool = False) -> str:
        """A subtask's contract; the whole question's also says how many paragraphs R3 wants."""
        want = self.spec.requirements.answer
        shape = "a short answer" if kind == "any" else f"a {kind}"
        contract = f"{shape}, at most {want.max_words} words"
        if whole_question and want.min_paragraphs > 1:
            return contract + f", citing the ids of the {want.min_paragraphs} or more paragraphs it rests on"
        return contract + (", citing the ids of paragraphs you found" if want.cite_evidence else "")

    def _checks(self) -> tuple[str, ...]:
        return tuple(g.name for g in self.gates["R1"] if "answer" in g.kinds and g.name != "parses")

    def _single_task(self) -> Subtask:
        """Without a plan the question is the one subtask; its L3 design comes from L1."""
        kind = expected_answer_type(self.task.question)
        contract = self._contract(kind, whole_question=True)
        return Subtask("s1", self.task.question, contract, self._checks(), "executor.s1")

    def _design(self, plan: planner.Plan) -> list[Subtask]:
        """L3, deterministically from the plan: each subtask's contract from its answer type."""
        ids = [s.id for s in plan.subtasks]
        deps = {
            s.id: tuple(
                dict.fromkeys(
                    d for d in [*s.depends_on, *planner.reference_ids(s.objective, ids)] if d is not None
                )
            )
            for s in plan.subtasks
        }
        used = {d for ds in deps.values() for d in ds}
        finals = [i for i in ids if i not in used]
        final = finals[-1] if finals else ids[-1]
        return [
            Subtask(
                s.id,
                s.objective,
                self._contract(s.answer_type),
                self._checks(),
                f"executor.p{self._plans}.{s.id}",
                deps[s.id],
                s.id == final,
                tuple(ids),
            )
            for s in plan.subtasks
        ]

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

    def _final(self, accepted: list[Artifact]) -> Artifact:
        """The final answer: the last subtask's, with the evidence of the whole chain."""
        last = accepted[-1]
        evidence = list(dict.fromkeys(e for a in accepted for e in a.evidence))
        cited = {k: v for a in accepted for k, v in a.cited.items()}
        retrieved = frozenset().union(*(a.retrieved for a in accepted))
        return Artifact(
            "answer",
            self.task.question,
            answer=last.answer,
            evidence=evidence,
            cited=cited,
            retrieved=retrieved,
            searches=sum(a.searches for a in accepted),
        )

    def _chain(self, steps: list[ChainStep], subtasks: list[Subtask]) -> ChainArtifact:
        final = next((s.id for s in subtasks if s.final), subtasks[-1].id)
        answer = next((s.answer for s in steps if s.id == final), "")
        return ChainArtifact(self.task.question, tuple(steps), final, answer)

    def _call(self, role: str, messages: list[Message], schema: dict[str, Any]) -> Completion:
        """The only way a generator is invoked; every call is recorded, failed ones too."""
        model = self.models.get(role) or self.models["default"]
        endpoint = endpoint_of(model)
        try:
            c = model.generate(
                messages,
                schema,
                temperature=self.config.temperature,
                max_tokens=self.config.max_tokens,
                seed=self.seed,
            )
        except ModelError as e:
            self.store.record_call(
                self.attempt_id,
                role,
                model.name,
                0,
                0,
                0.0,
                "error",
                str(e),
                retries=e.retries,
                endpoint=endpoint,
                messages=messages,
            )
            raise
        self._last_call = self.store.record_call(
            self.attempt_id,
            role,
            model.name,
            c.prompt_tokens,
            c.completion_tokens,
            c.latency_ms,
            retries=c.retries,
            cached=c.cached,
            cost_usd=c.cost_usd,
            endpoint=endpoint,
            messages=messages,
            response=c.text,
        )
        return c


def _show(artifact: Any) -> Any:
    """What a judge is shown of an artifact: its content and cited evidence, nothing else."""
    if isinstance(artifact, PlanArtifact):
        return artifact.plan
    if isinstance(artifact, ChainArtifact):
        return [{"id": s.id, "question": s.objective, "answer": s.answer} for s in artifact.steps]
    if artifact.kind == "abstain":
        return {"abstain": artifact.reason}
    return {"answer": artifact.answer, "evidence": artifact.cited}
