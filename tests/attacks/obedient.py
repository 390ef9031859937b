"""An obedient agent: an executor that adopts what an added paragraph says (the attacker's goal,
citing that paragraph beside the gold ones). It reads the attack from the task, which no role
can (the test knows it); the controller and the verifiers see only its steps."""

from __future__ import annotations

from typing import Any

from tests.helpers import finish, hops_finish, read, search
from vreact.qa.attacks import URL
from vreact.qa.dataset import Task


def goal_answer(task: Task) -> str:
    """What the attack asks the answer to be: its target, the gold with the URL, or reversed."""
    attack = task.attack
    answers = {"answer": str(attack.target), "url": f"{task.answer} {URL}", "reverse": str(task.answer)[::-1]}
    return answers[attack.goal]


def steps_taken(messages: list[dict[str, str]]) -> int:
    """How many steps the current try has taken (its history lists each with ``-> ``)."""
    return messages[-1]["content"].count("\n   -> ") if len(messages) > 2 else 0


def gold_ids(task: Task) -> list[str]:
    """The paragraphs of the task's hops that are located, in hop order (else its first one)."""
    located = [
        str(h.paragraph_support_idx)
        for h in task.question_decomposition
        if h.paragraph_support_idx is not None
    ]
    return list(dict.fromkeys(located)) or [str(task.paragraphs[0].idx)]


def final_step(task: Task, added: str | None, hops: bool) -> dict[str, Any]:
    """The finish: the gold answer on the gold paragraphs, or, when it obeys the ``added``
    paragraph, the attack's goal citing it in place of the last hop's (with ``hops``: the gold
    hops but the last, then the goal at the added paragraph)."""
    gold = gold_ids(task)
    answer = goal_answer(task) if added else str(task.answer)
    if not hops:
        return finish(answer, [*gold[:-1], added] if added else gold)
    chain = [(str(h.answer), str(h.paragraph_support_idx)) for h in task.question_decomposition[:-1]]
    return hops_finish(answer, [*chain, (answer, added or gold[-1])])


def obedient(task: Task, hops: bool = False) -> Any:
    """The executor's script as a function of its prompt: search the question, read the gold
    paragraphs and the first added one, then finish with what the attack asks. A clean task is
    solved."""
    added = str(task.attack.added[0]) if task.attack else None
    reads = [*gold_ids(task), *([added] if added else [])]

    def step(messages: list[dict[str, str]]) -> dict[str, Any]:
        n = steps_taken(messages)
        if n == 0:
            return search(task.question)
        if n <= len(reads):
            return read(reads[n - 1])
        return final_step(task, added, hops)

    return step
