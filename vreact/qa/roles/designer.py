"""The L3 designer: each subtask's design (objective, contract, the checks R1 applies), made
deterministically from the plan, or from L1 alone when there is no plan."""

from __future__ import annotations

from dataclasses import dataclass

from vreact.families import Subtask as CoreSubtask
from vreact.qa.gates import Plan, expected_answer_type, polar, reference_ids
from vreact.qa.settings import AnswerRequirements
from vreact.qa.tools import tokenize


@dataclass(frozen=True)
class Subtask(CoreSubtask):
    """A qa subtask: the core's, and the hops a finish that names them must have (``finish:
    hops``): the whole question's answer rests on L1's ``min_paragraphs``, a planned subtask's on
    one."""

    min_hops: int = 1


@dataclass(frozen=True)
class Designer:
    """Designs subtasks under L1's answer requirements; ``checks`` are R1's answer gates."""

    answer: AnswerRequirements
    checks: tuple[str, ...]

    def contract(self, kind: str, *, whole_question: bool = False) -> str:
        """A subtask's contract: its answer type (any: none), its length, and the citations L1
        asks for (``cite_evidence``); the whole question's also says how many paragraphs R3 wants."""
        shape = "a short answer" if kind == "any" else f"a {kind}"
        contract = f"{shape}, at most {self.answer.max_words} words"
        if whole_question and self.answer.min_paragraphs > 1:
            n = self.answer.min_paragraphs
            return contract + f", citing the ids of the {n} or more paragraphs it rests on"
        return contract + (", citing the ids of paragraphs you found" if self.answer.cite_evidence else "")

    def single_task(self, question: str) -> Subtask:
        """Without a plan the question is the one subtask; its L3 design comes from L1 (the
        answer type its wh-word asks for, as R3's ``answer_type`` reads it, when L1 says so)."""
        kind = expected_answer_type(question, self.answer.type_from_wh_word)
        contract = self.contract(kind, whole_question=True)
        if self.answer.yes_no and polar(question):
            contract = "yes or no, citing the ids of the paragraphs about each thing the question compares"
        hops = self.answer.min_paragraphs
        return Subtask("s1", question, contract, self.checks, "executor.s1", min_hops=hops)

    def design(self, plan: Plan, plan_number: int) -> list[Subtask]:
        """L3 from the ``plan_number``-th plan: each subtask's contract from its answer type; the
        final subtask is the last one nothing depends on."""
        ids = [s.id for s in plan.subtasks]
        deps = {
            s.id: tuple(
                dict.fromkeys(d for d in [*s.depends_on, *reference_ids(s.objective, ids)] if d is not None)
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
                self.contract(s.answer_type),
                self.checks,
                f"executor.p{plan_number}.{s.id}",
                deps[s.id],
                s.id == final,
                tuple(ids),
            )
            for s in plan.subtasks
        ]


# --- the retrieval the designer issues (designer: first_search, follow_up) ---------------------


def first_query(question: str) -> str:
    """The search that starts every try (``first_search: question``): the question's content words."""
    return " ".join(tokenize(question))


def bridge_query(entity: str, question: str, covered: str = "") -> str:
    """The designer's answer to the executor's bridge (``follow_up: bridge``): the entity, then
    the rest of the question's content words: those neither the entity nor ``covered`` (the best
    paragraph of the try's first search, the hop already found) holds. On the tests' answerable
    records outside the evaluation set, searching each gold bridge entity so shows 0.885 of the
    gold paragraphs beside the first search (0.826 with all the question's words, 0.462 without)."""
    known = set(tokenize(entity)) | set(tokenize(covered))
    rest = [w for w in tokenize(question) if w not in known]
    return " ".join([entity.strip(), *rest])
