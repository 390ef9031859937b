"""k candidates of one task (a configuration's ``agreement.k`` above 1), and what is made of them.

Each candidate is a fresh executor try of the single task: candidate i samples with the attempt's
seed + i at the ``temperatures`` schedule (candidate 0 at the configuration's own, so it is the
first try a configuration without agreement makes, and a response cache serves it), reads no
rejection of another (so what one got wrong never shapes the next), and goes through R1's gates.
Then, by ``select``:

- ``first`` (best of k by gate): the first candidate R1 and R3 accept is the answer; candidates
  are made only until one is, and none left is an abstention naming the level of the last
  rejection, as a spent budget is;
- ``agree`` (agreement at R3): all k are made first; those R1 passed (and those it rejected only
  for a check the task itself states, such as a stated example: their group is then disputed)
  are compared on what they do (the family's ``behaviours``: code runs them on the stated, the
  tester's and made-up inputs in one sandbox start), grouped, and the largest group's candidate
  is answered when ``vreact.verify.agreement.agree`` says so, after R3's own checks; otherwise
  an R3 rejection (check ``agreement``, cause ``no_agreement``, ``disputed_example``,
  ``no_candidate`` or ``unavailable``) ends the attempt in an abstention naming L1. A comparison
  that raises is such a rejection too (``error``): never a silent accept.

Every candidate, group and input is in the records (``agreements``), so the tau curve is read
again without a model (``vreact.verify.agreement.tau_curve``).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from vreact.budget import Budget, BudgetStop
from vreact.controller._outcome import Outcome
from vreact.controller._try import ANSWER, ExecutorTry
from vreact.families import Artifact, Subtask
from vreact.v import V
from vreact.verdict import Verdict, artifact_hash
from vreact.verify.agreement import Agreement, agree, grouped, witnesses

if TYPE_CHECKING:
    from vreact.controller._machine import Controller

#: What a candidate's calls are charged to: the check that asked for k of them.
CHARGED = "R3:gate:agreement"
#: Why a comparison could not be made.
UNAVAILABLE, ERROR = "unavailable", "error"


class Candidates:
    """One attempt's k candidates, made and judged under ``controller``'s budgets and records."""

    def __init__(self, controller: Controller) -> None:
        self.c = controller
        self.ctx = controller.ctx
        self.settings = controller.config.agreement
        self.k = self.settings.k
        self.made: dict[int, str] = {}  # candidate -> its fate: answer, rejected, declined, stopped
        self.hashes: dict[int, str] = {}  # candidate -> its artifact's hash (what scored tries key)
        self.last: tuple[str, str] | None = None  # (verifier, component) of the last rejection
        self.declines: dict[int, Artifact] = {}  # the candidates that declined
        self.recorded = False

    def run(self) -> Outcome:
        subtask = self.c.designer.single_task(self.task_text)
        try:
            if self.settings.select == "first":
                return self._first(subtask)
            return self._agree(subtask)
        except BudgetStop:  # the attempt's steps, tokens or wall clock: what was made is kept
            self._record(None, None, "budget")
            raise

    @property
    def task_text(self) -> str:
        return self.c.task.text

    # --- making them ------------------------------------------------------------------------

    def _candidate(self, subtask: Subtask, i: int, tries: Budget) -> Artifact | None:
        """Candidate ``i``: a fresh try at its seed and temperature, then R1; None when it was
        stopped, declined or rejected (its verdicts recorded), else its final."""
        spent = self.ctx.budgets.attempt_spent()
        if spent is not None:
            raise BudgetStop(*spent, subtask.component)
        tries.spend()
        seed = self.ctx.seed
        self.ctx.seed = seed + i
        try:
            artifact = ExecutorTry(
                self.ctx, subtask, tries, fresh=True, temperature=self.settings.temperature(i)
            ).run()
        finally:
            self.ctx.seed = seed
        if artifact is None:
            self.made[i] = "stopped"
            self.last = ("R1", subtask.component)
            return None
        self.hashes[i] = artifact_hash(artifact.identity())
        if artifact.kind == "abstain":
            self.made[i] = "declined"
            self.declines[i] = artifact
            return None
        rejection = self.c._check("R1", subtask.component, artifact, subtask.l3())
        if rejection is None:
            self.made[i] = "answer"
            return artifact
        self.c._reject(subtask.component, rejection)
        self.last = ("R1", subtask.component)
        said = f"{rejection.check_name}:{rejection.result.cause}"
        stated = rejection.source == "gate" and said in self.ctx.family.stated_checks
        self.made[i] = "stated" if stated else "rejected"
        return artifact if stated else None

    def _first(self, subtask: Subtask) -> Outcome:
        """Best of k by gate: the first candidate every gate passes."""
        tries = Budget(f"candidates:{subtask.component}", self.k)
        for i in range(self.k):
            artifact = self._candidate(subtask, i, tries)
            if artifact is not None and self.made[i] == "answer":
                outcome = self._answer(subtask, artifact, i)
                if outcome is not None:
                    self._record(None, i, None)
                    return outcome
            elif i in self.declines:  # as VG's decline: R3 says whether declining is allowed
                outcome = self._decline(i)
                if outcome is not None:
                    self._record(None, i, None)
                    return outcome
            self.ctx.caused_by = self._charge()  # the next candidate is this one's cost
        self._record(None, None, "no_candidate")
        return self._spent(subtask)

    def _spent(self, subtask: Subtask) -> Outcome:
        """No candidate is the answer: an abstention naming the level of the last rejection (a
        candidate's R1 or R3), as a spent budget is."""
        verifier, component = self.last or ("R1", subtask.component)
        return self.c._abstain(verifier, component)

    def _charge(self) -> str | None:
        """What the next candidate's calls are charged to: the last rejection's check, as a
        retry's are (``vreact.controller._machine.charge``)."""
        from vreact.controller._machine import charge  # the machine imports this module

        last = self.c.ctx.recorder.last_reject.get(self.last[1]) if self.last else None
        return charge(last) if last is not None else None

    def _agree(self, subtask: Subtask) -> Outcome:
        """Agreement at R3: all k candidates, compared."""
        tries = Budget(f"candidates:{subtask.component}", self.k)
        kept: dict[int, Artifact] = {}
        for i in range(self.k):
            self.ctx.caused_by = self.c._descent if i == 0 else CHARGED
            artifact = self._candidate(subtask, i, tries)
            if artifact is not None:
                kept[i] = artifact
        self.ctx.caused_by = CHARGED
        if not kept and self.declines:  # every candidate declined or was rejected
            i = min(self.declines)
            outcome = self._decline(i)
            self._record(None, i if outcome is not None else None, None if outcome else "declined")
            return outcome if outcome is not None else self._spent(subtask)
        decision, record, cause = self._compared(kept)
        if decision is not None and decision.chosen is not None:
            chosen = kept[decision.chosen]
            assert self.made[decision.chosen] == "answer"  # a stated example's failure is disputed
            self._verdict(
                "accept",
                "",
                f"{decision.top.size if decision.top else 0} of {self.k} agree",
                chosen.identity(),
            )
            self.ctx.witnesses = tuple(kept[i] for i in witnesses(decision.groups, decision.chosen))
            try:
                outcome = self._answer(subtask, chosen, decision.chosen)
            finally:
                self.ctx.witnesses = ()
            self._record(decision, decision.chosen if outcome else None, None if outcome else "r3", record)
            return outcome if outcome is not None else self.c._abstain("R3", ANSWER)
        why = decision.cause if decision is not None else cause
        assert why is not None
        # on the largest group's candidate (its family then scores it: the tau curve reads that)
        top = decision.top if decision is not None else None
        first = kept[top.members[0]] if top is not None else next(iter(kept.values()), None)
        identity = first.identity() if first is not None else "no candidate"
        self._verdict("reject", why, self._detail(decision, record, why), identity)
        self._record(decision, None, why, record)
        return Outcome(
            "abstain",
            level=V["R3"].abstain,
            component=ANSWER,
            cause=f"agreement:{why}",
            plan_fallback=self.c.plan_fallback,
        )

    def _compared(self, kept: dict[int, Artifact]) -> tuple[Agreement | None, dict[str, Any], str | None]:
        """The decision on the kept candidates (None, with the cause, when no comparison could
        be made), and what the family kept of it."""
        family, s = self.ctx.family, self.settings
        # the tester's call is a model call like any: its failure is the attempt's crash
        inputs, asked = self._tested() if s.tester and kept else ([], {})
        try:
            b = family.behaviours(self.c.task, kept, inputs, made=s.inputs, seed=self.ctx.seed)
        except BudgetStop:
            raise
        except Exception as e:  # fail closed: a comparison that raises is a reject, with its cause
            return None, {"error": f"{type(e).__name__}: {e}"[:300], **asked}, ERROR
        record = {**b.record, "left_out": {str(i): why for i, why in b.left_out.items()}, **asked}
        if b.unavailable:
            return None, {**record, "unavailable": b.unavailable}, UNAVAILABLE
        # R1 rejected these for an example the task states: their group is disputed, whatever
        # the comparison's own reading of the examples says
        stated = {i for i, fate in self.made.items() if fate == "stated"}
        return agree(self.k, s.tau, grouped(b.of, set(b.disputed) | stated)), record, None

    def _tested(self) -> tuple[list[tuple[Any, ...]], dict[str, Any]]:
        """The tester's inputs, from L1 as its row reads it (none when its family has no tester
        or its reply gives none), and what to record of its reply: how many inputs it gave, and
        whether it stopped at its token allowance (a cut reply's JSON gives none)."""
        tester = self.ctx.family.tester(self.c.task)
        if tester is None:
            return [], {}
        l1 = self.c.family.l1(self.c.task, self.c.spec)
        seen = self.c._read("tester", (), {"l1": l1})
        reply = self.c._call("tester", ANSWER, tester.messages(seen["l1"]), tester.schema)
        given = tester.inputs(reply.text)
        return given, {"tester": {"inputs": len(given), "cut": bool(reply.truncated)}}

    # --- what it ends in --------------------------------------------------------------------

    def _decline(self, i: int) -> Outcome | None:
        """Candidate ``i``'s decline, as VG's: the answer when R3 allows declining (its
        ``declined``), None (the rejection recorded) when it does not."""
        declined = self.c.family.declined(self.c.task, self.declines[i])
        rejection = self.c._check("R3", ANSWER, declined, self.c.family.l1(self.c.task, self.c.spec))
        if rejection is not None:
            self.c._reject(ANSWER, rejection)
            self.last = ("R3", ANSWER)
            return None
        self.c._declined_by = self.c.designer.single_task(self.task_text).component
        self.ctx.recorder.unit("answer", "R3", ANSWER, declined)
        return self.c._outcome_of(declined, ANSWER)

    def _answer(self, subtask: Subtask, artifact: Artifact, i: int) -> Outcome | None:
        """Candidate ``i`` accepted as the subtask's unit and, when R3's own checks pass it, the
        answer; None (the rejection recorded, the candidate's fate ``rejected``) when R3 rejects
        it."""
        final = self.c.family.final(self.c.task, [artifact])
        rejection = self.c._check("R3", ANSWER, final, self.c.family.l1(self.c.task, self.c.spec))
        if rejection is not None:
            self.c._reject(ANSWER, rejection)
            self.made[i] = "rejected"
            self.last = ("R3", ANSWER)
            return None
        self.ctx.recorder.unit("unit", "R1", subtask.component, artifact, subtask.id)
        self.ctx.recorder.unit("answer", "R3", ANSWER, final)
        return self.c._outcome_of(final, ANSWER)

    def _verdict(self, decision: str, cause: str, detail: str, identity: Any) -> None:
        """Agreement's own verdict at R3 (check ``agreement``, source ``gate``) on ``identity``:
        the chosen candidate's, or on a rejection the largest group's first (none: a note)."""
        verdict = Verdict(
            "R3",
            ANSWER,
            "gate",
            "agreement",
            decision,  # type: ignore[arg-type]
            cause,
            detail,
            self.ctx.budgets.of("R3", ANSWER).left,
            artifact_hash(identity),
            {"k": self.k, "tau": self.settings.tau},
        )
        self.ctx.recorder.verdict(verdict, identity)

    def _detail(self, decision: Agreement | None, record: dict[str, Any], why: str) -> str:
        if decision is None:
            return str(record.get("unavailable") or record.get("error") or why)
        sizes = "+".join(str(g.size) for g in decision.groups) or "none"
        return f"groups {sizes} of {self.k} candidates (tau {self.settings.tau})"

    def _record(
        self,
        decision: Agreement | None,
        chosen: int | None,
        cause: str | None,
        record: dict[str, Any] | None = None,
    ) -> None:
        if self.recorded:  # once per attempt (a budget stop after the row is written)
            return
        self.recorded = True
        groups = [dataclasses.asdict(g) for g in decision.groups] if decision is not None else []
        self.ctx.recorder.agreement(
            {
                "k": self.k,
                "tau": self.settings.tau,
                "selected": self.settings.select,
                "chosen": chosen,
                "cause": cause,
                "candidates": {str(i): fate for i, fate in sorted(self.made.items())},
                "hashes": {str(i): h for i, h in sorted(self.hashes.items())},
                "groups": groups,
                "record": record or {},
            }
        )
