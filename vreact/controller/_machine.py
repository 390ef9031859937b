"""The deterministic controller: the V-model's state machine for one attempt.

Read top to bottom. ``run`` descends (a plan at L2, step designs at L3, executor tries under
R1), ascends (R2 over the assembled chain, R3 on the final answer), and routes every
rejection back to the level it pairs with until that level's budget is spent (the table is
vreact/v.py's ``V``):

    rejected by          goes back to                     budget   when spent
    plan gates / judge   the planner (a new plan)          plan     fall back to one task
    R1 (or a guard)      the subtask's executor (new try)  r1       abstain naming L3
    R2                   the planner (re-descend from L2)  r2       abstain naming L2
    R3                   the top (planner or the executor) r3       abstain naming L1

It alone runs verifiers and decides; every model call and verdict goes through the attempt
context's recorder, and only verdicts write memory. One executor try is the step pipeline's
(vreact/controller/_try.py).
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from vreact.budget import BudgetStop
from vreact.config import COMPONENTS
from vreact.controller._candidates import Candidates
from vreact.controller._context import AttemptContext
from vreact.controller._outcome import Outcome
from vreact.controller._try import ANSWER, ExecutorTry
from vreact.families import Artifact, Subtask
from vreact.model import Completion, Message
from vreact.spec import TaskSpec, VerifierSet
from vreact.v import V
from vreact.verdict import Verdict
from vreact.verify.gates import reject
from vreact.verify.verifier import Rejection, Verifiers

#: The component whose verdicts are the plan's and the chain's.
PLANNER = "planner"


def charge(rejection: Rejection | Verdict) -> str:
    """What the calls a rejection caused are charged to: its check, ``VERIFIER:SOURCE:CHECK``."""
    return f"{rejection.verifier}:{rejection.source}:{rejection.check_name}"


def l2(subtasks: list[Subtask]) -> list[dict[str, Any]]:
    """L2 as R2's judge reads it beside the chain: each subtask's objective and dependencies."""
    return [{"id": s.id, "objective": s.objective, "depends_on": list(s.depends_on)} for s in subtasks]


class LedgerError(RuntimeError):
    """The ledger lacks a unit the controller accepted: the attempt's records are broken."""


class Controller:
    """Runs one configuration once on one task (one attempt)."""

    def __init__(self, spec: TaskSpec, verifiers: VerifierSet, ctx: AttemptContext) -> None:
        self.ctx, self.spec, self.config, self.task = ctx, spec, ctx.config, ctx.task
        self.family = ctx.family
        self.budgets = ctx.budgets
        self.verifiers = Verifiers(ctx.config, spec, verifiers)
        self.designer = self._designer()
        self.plan_fallback = False
        self._plans = 0
        #: the R2 or R3 rejection that caused the descent under way: its calls are charged to it
        self._descent: str | None = None
        self._declined_by: str | None = None  # the executor whose abstain ended the attempt

    # --- the state machine ----------------------------------------------------------------

    def run(self) -> Outcome:
        try:
            return self._run() if self.config.verified else self._plain()
        except BudgetStop as stop:  # a planner's or a judge's call the tokens or wall clock refused
            return self._out_of_budget(stop)

    def _run(self) -> Outcome:
        if self.config.sampled:  # k candidates, then best of k or agreement at R3
            return Candidates(self).run()
        while True:
            final = self._descend()  # L2 -> L3 -> R1 -> R2
            if isinstance(final, Outcome):
                return final
            rejection = self._check("R3", ANSWER, final, self.family.l1(self.task, self.spec))
            if rejection is None:
                self.ctx.recorder.unit("answer", "R3", ANSWER, final)
                return self._outcome_of(final, ANSWER)
            if not self._route(ANSWER, rejection):
                return self._abstain("R3", ANSWER)
            # re-descend from the top: the planner, or the single-task executor
            self._descent = charge(rejection)

    def _descend(self) -> Artifact | Outcome:
        """Plan, run every subtask under R1, and check the chain under R2 (with a planner)."""
        while True:
            subtasks, planned = self._plan()
            done = self._execute(subtasks, planned)
            if isinstance(done, Outcome):
                return done
            chain, final = done
            if chain is None or final.kind == "abstain":
                return final
            rejection = self._check("R2", PLANNER, chain, l2(subtasks))
            if rejection is None:
                self.ctx.recorder.unit("chain", "R2", PLANNER, chain)
                return final
            if not self._route(PLANNER, rejection):
                return self._abstain("R2", PLANNER)
            # re-descend from L2: the planner reads this rejection
            self._descent = charge(rejection)

    def _plan(self) -> tuple[list[Subtask], bool]:
        """L2: a plan that passed the plan gates (and judge), designed into L3 subtasks; the
        single task when there is no planner or the plan budget is spent."""
        if not self.config.planner or self.plan_fallback:
            return [self.designer.single_task(self.task.text)], False
        budget = self.budgets.plan
        self.ctx.caused_by = self._descent
        while not budget.spent:
            budget.spend()
            self._plans += 1
            l1 = self.family.l1(self.task, self.spec)
            planning = self.family.planner(self.ctx.steps)
            scope = self.ctx.scope((PLANNER,), {"l1": l1, "tools": planning.tools})
            messages = planning.messages(self.ctx.assembler.build("planner", scope))
            completion = self._call("planner", PLANNER, messages, planning.schema)
            proposal = planning.proposal(self.task.text, completion.text)
            if completion.truncated:  # cut at its allowance: no plan, whatever it parses as
                self._truncated_plan(proposal, completion)
                continue
            # the plan gates (if on), then the plan judge (if on): NP has neither
            rejection = self._check("plan", PLANNER, proposal, l1)
            if rejection is None:
                plan = planning.plan(proposal)
                if plan is None:  # no gate checked that it plans anything (the plan gates reject these)
                    break
                self.ctx.recorder.unit("plan", "plan", PLANNER, proposal)
                l2 = self._read("designer", (), {"l2": plan})["l2"]
                return self.designer.design(l2, self._plans), True
            self._reject(PLANNER, rejection)
            self.ctx.caused_by = charge(rejection)  # the next plan is this rejection's cost
        self.plan_fallback = True
        return [self.designer.single_task(self.task.text)], False

    def _truncated_plan(self, proposal: Artifact, completion: Completion) -> None:
        """A plan whose reply stopped at its token allowance fails closed: where the plan
        verifier runs, its rejection (the ``parses`` check, cause ``truncated``) is recorded and
        the next plan is its cost, as any plan rejection's; in NP, which verifies no plan, the
        plan is dropped without a verdict. Either way it spends a plan try."""
        if not COMPONENTS["plan_verifier"].runs(self.config):
            return
        detail = f"the planner's reply stopped at its token allowance ({completion.stop_reason})"
        rejection = Rejection(
            "plan",
            "gate",
            "parses",
            reject("truncated", detail),
            {},
            proposal.identity(),
            None,
            proposal.gate_input(),
        )
        self._reject(PLANNER, rejection)
        self.ctx.caused_by = charge(rejection)

    def _execute(self, subtasks: list[Subtask], planned: bool) -> tuple[Artifact | None, Artifact] | Outcome:
        """Each subtask in plan order, upstream answers substituted into its objective. Returns
        the chain (``planned`` only: R2 checks none otherwise) and the final artifact (an abstain
        when a subtask declined), both read back from the ledger's accepted units."""
        done: list[Subtask] = []
        for st in subtasks:
            st = self._substituted(st, subtasks)
            artifact = self._unit(st)
            self.ctx.caused_by = self._descent  # what follows is no retry of that unit
            if isinstance(artifact, Outcome):
                return artifact
            if artifact.kind == "abstain":  # R3 still checks that declining is allowed
                self._declined_by = st.component
                declined = self.family.declined(self.task, artifact)
                chain = self._chain(done, subtasks, self._accepted_units(done)) if planned else None
                return chain, declined
            self.ctx.recorder.unit("unit", "R1", st.component, artifact, st.id)
            done.append(st)
        units = self._accepted_units(done)  # one read of the ledger for the chain and the final answer
        return (self._chain(done, subtasks, units) if planned else None), self._final(done, units)

    def _chain(self, done: list[Subtask], subtasks: list[Subtask], units: dict[str, Artifact]) -> Artifact:
        """The chain R2 checks: each accepted subtask's link, from its unit in the ledger."""
        return self.family.chain(self.task, done, subtasks, units)

    def _final(self, done: list[Subtask], units: dict[str, Artifact]) -> Artifact:
        """The final answer, from the ledger: the final subtask's unit, with the evidence of every
        accepted unit in plan order. A final subtask without its unit is a broken record: the
        attempt ends in a crash that says so, never in another subtask's answer."""
        last = next((s for s in reversed(done) if s.final), done[-1])
        if last.id not in units:
            raise LedgerError(f"the ledger holds no accepted unit of {last.component}, the final subtask")
        return self.family.final(self.task, [units[s.id] for s in done if s.id in units])

    def _accepted_units(self, subtasks: list[Subtask]) -> dict[str, Artifact]:
        """The accepted units of ``subtasks`` by subtask id (the latest of each), as the
        controller reads them back from the ledger through the context assembler."""
        rows = self._read("controller", tuple(s.component for s in subtasks), {})["ledger"]
        by_component = {s.component: s.id for s in subtasks}
        return {
            by_component[r["component"]]: self.family.unit(json.loads(r["input"]))
            for r in rows
            if r["kind"] == "unit"
        }

    def _read(self, role: str, components: tuple[str, ...], sources: dict[str, Any]) -> dict[str, Any]:
        """What a deterministic role (the designer, the controller) reads, under its row."""
        return self.ctx.assembler.build(role, self.ctx.scope(components, sources))

    def _designer(self) -> Any:
        """The L3 designer of the task's family, made from what its row lets it read: L1 and
        the checks R1 applies."""
        checks = list(self.verifiers.answer_checks())
        l1 = self.family.l1(self.task, self.spec)
        seen = self._read("designer", (), {"l1": l1, "subtask.checks": checks})
        return self.family.designer(seen["l1"], tuple(seen["subtask.checks"]))

    def _unit(self, subtask: Subtask) -> Artifact | Outcome:
        """L3 tries of one subtask until R1 accepts or the L3 budget is spent."""
        tries = self.budgets.r1(subtask.component)
        retry = False  # this unit's first try is the descent's; each later one, a rejection's
        while True:
            spent = self.budgets.attempt_spent()
            if spent is not None:  # the attempt's steps, tokens or wall clock: the attempt ends
                return self._out_of_budget(BudgetStop(*spent, subtask.component))
            if tries.spent:  # the last reject recorded says why
                return self._abstain("R1", subtask.component)
            tries.spend()
            last = self.ctx.recorder.last_reject.get(subtask.component) if retry else None
            self.ctx.caused_by = charge(last) if last is not None else self._descent  # a retry's cost
            retry = True
            artifact = ExecutorTry(self.ctx, subtask, tries).run()
            if artifact is None:  # the try was stopped; its verdict is recorded
                continue
            rejection = self._check("R1", subtask.component, artifact, subtask.l3())
            if rejection is None:
                return artifact
            self._reject(subtask.component, rejection)

    def _plain(self) -> Outcome:
        """N and NP: plain ReAct, one try per subtask, no verdicts; a budget ends it at "cap".
        What each try returns is taken as it is, and read back from the ledger like a verified one."""
        subtasks, _ = self._plan()
        done: list[Subtask] = []
        for st in subtasks:
            st = self._substituted(st, subtasks)
            tries = self.budgets.r1(st.component)
            tries.spend()
            executor = ExecutorTry(self.ctx, st, tries)
            artifact = executor.run()
            if artifact is None:  # a budget ended it: the step cap, tokens or the wall clock
                cause = executor.stop_cause
                cap = Outcome("abstain", level="cap", component=st.component, cause=cause)
                return dataclasses.replace(cap, plan_fallback=self.plan_fallback)
            if artifact.kind == "abstain":  # taken as it is, as the final answer
                declined = self.family.declined(self.task, artifact)
                self.ctx.recorder.unit("answer", "R3", ANSWER, declined)
                return self._outcome_of(artifact, st.component)
            self.ctx.recorder.unit("unit", "R1", st.component, artifact, st.id)
            done.append(st)
        final = self._final(done, self._accepted_units(done))
        self.ctx.recorder.unit("answer", "R3", ANSWER, final)
        return self._outcome_of(final, ANSWER)

    def _substituted(self, subtask: Subtask, subtasks: list[Subtask]) -> Subtask:
        """``subtask`` with the accepted answers of the subtasks it names (``#1``) substituted into
        its objective, read from the ledger; a reference with no accepted unit stays as it is."""
        upstream = [s for s in subtasks if s.id in subtask.depends_on]
        answers = {k: str(a.answer) for k, a in self._accepted_units(upstream).items()} if upstream else {}
        objective = self.family.substitute(subtask.objective, list(subtask.plan_ids), answers)
        return dataclasses.replace(subtask, objective=objective)

    # --- verdicts and routes ------------------------------------------------------------------

    def _check(self, verifier: str, component: str, artifact: object, paired: object) -> Rejection | None:
        try:
            return self.verifiers.check(self.ctx, verifier, component, artifact, paired)
        except BudgetStop as stop:  # its judge's call
            stop.component = stop.component or component
            raise

    def _call(self, role: str, component: str, messages: list[Message], schema: dict[str, Any]) -> Completion:
        try:
            return self.ctx.call(role, messages, schema)
        except BudgetStop as stop:
            stop.component = stop.component or component
            raise

    def _route(self, component: str, r: Rejection) -> bool:
        """Spend one unit of a re-descent budget on a rejection; False when none was left."""
        budget = self.budgets.of(r.verifier, component)
        more = not budget.spent
        if more:
            budget.spend()
        self._reject(component, r)
        return more

    def _reject(self, component: str, r: Rejection) -> None:
        """Record a rejection with what is left of the budget it spent."""
        self.ctx.recorder.verdict(
            r.verdict(component, self.budgets.of(r.verifier, component).left), r.artifact, r.given
        )

    # --- endings ----------------------------------------------------------------------------

    def _out_of_budget(self, stop: BudgetStop) -> Outcome:
        """The attempt's steps, tokens or wall clock are spent where ``stop`` says: a ``budget``
        verdict (unless the try that stopped wrote it) and an abstention naming its level; in a
        configuration that verifies nothing, an abstention at ``cap`` with the budget's cause."""
        component = stop.component or ANSWER
        if not self.config.verified:
            cap = Outcome("abstain", level="cap", component=component, cause=stop.cause)
            return dataclasses.replace(cap, plan_fallback=self.plan_fallback)
        last = self.ctx.recorder.last_reject.get(component)
        if last is None or last.verifier != "budget" or last.cause != stop.cause:
            left = self.budgets.of("budget", component).left
            self.ctx.recorder.budget_stop(component, stop.cause, stop.detail, left)
        return self._abstain("budget", component)

    def _abstain(self, verifier: str, component: str) -> Outcome:
        """The budget paired with ``verifier`` is spent: abstain naming its level."""
        last = self.ctx.recorder.last_reject.get(component)
        cause = f"{last.check_name}:{last.cause}" if last else "budget_spent"
        return Outcome(
            "abstain",
            level=V[verifier].abstain,
            component=component,
            cause=cause,
            plan_fallback=self.plan_fallback,
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
