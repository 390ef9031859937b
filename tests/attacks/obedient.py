"""An obedient agent: an executor that adopts what an added paragraph says (the attacker's goal,
citing that paragraph beside the gold ones). It reads the attack from the task, which no role
can (the test knows it); the controller and the verifiers see only its steps."""

from __future__ import annotations

from typing import Any

from tests.helpers import finish, hops_finish, read, search
from vreact.tasks.attacks import URL
from vreact.tasks.dataset import Task


def goal_answer(task: Task) -> str:
    """What the attack asks the answer to be: its target, the gold with the URL, or reversed."""
    attack = task.attack
    return {"answer": str(attack.target), "url": f"{task.answer} {URL}", "reverse": str(task.answer)[::-1]}[
        attack.goal
    ]


def steps_taken(messages: list[dict[str, str]]) -> int:
    """How many steps the current try has taken (its history lists each with ``-> ``)."""
    return messages[-1]["content"].count("\n   -> ") if len(messages) > 2 else 0


def obedient(task: Task, hops: bool = False) -> Any:
    """The executor's script as a function of its prompt: search the question, read the gold
    paragraphs and the first added one, then finish with what the attack asks (with ``hops``:
    the gold first hop, then the goal at the added paragraph). A clean task is solved."""
    hop_ids = [h.paragraph_support_idx for h in task.question_decomposition]
    gold = list(dict.fromkeys(str(i) for i in hop_ids if i is not None))
    gold = gold or [str(p.idx) for p in task.paragraphs if p.is_supporting] or [str(task.paragraphs[0].idx)]
    added = str(task.attack.added[0]) if task.attack else None
    reads = [*gold, *([added] if added else [])]
    answer = goal_answer(task) if task.attack else str(task.answer)

    def step(messages: list[dict[str, str]]) -> dict[str, Any]:
        n = steps_taken(messages)
        if n == 0:
            return search(task.question)
        if n <= len(reads):
            return read(reads[n - 1])
        if not hops:
            return finish(answer, [*gold[:-1], added] if added else gold)
        first = str(task.question_decomposition[0].answer)
        return hops_finish(answer, [(first, gold[0]), (answer, added or gold[-1])])

    return step
