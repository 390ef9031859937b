"""Question answering over paragraphs: vreact's built-in task family ``qa`` (multi-hop QA with
abstention; MuSiQue's records). It registers itself when this module loads: the core never
imports it, it finds it by name (``vreact.family.BUILT_IN``)."""

from __future__ import annotations

from typing import Any

from vreact.family import Score, TaskFamily, family
from vreact.tasks.dataset import Task, load_tasks
from vreact.tasks.metrics import best_em, best_f1, support_f1


@family
class QuestionAnswering(TaskFamily):
    """A question, its paragraphs (or a corpus), and a gold answer with its aliases."""

    name = "qa"
    version = "1"
    formats = ("musique",)
    settings = ("hops", "answerable", "corpus", "attacks")
    metrics = ("em", "f1", "support_f1")

    def read(self, path: str, format: str, limit: int | None = None) -> list[Any]:
        return list(load_tasks(path, limit))

    def row(self, task: Task) -> dict[str, Any]:
        """MuSiQue's columns of the ``tasks`` table, as records made before families have them."""
        return {**task.record(), "family": self.name}

    def score(self, task: Task, answer: str | None, evidence: list[str]) -> Score:
        """Right: an answer to an answerable question that matches a gold answer exactly (after
        MuSiQue's normalisation); an abstention predicts no answer and no support."""
        answered = answer is not None
        golds = task.golds
        em = best_em(answer or "", golds) if answered and task.answerable else 0.0
        return Score(
            (task.answerable and em == 1.0) if answered else None,
            {
                "em": em,
                "f1": best_f1(answer or "", golds) if answered and task.answerable else 0.0,
                "support_f1": support_f1(evidence if answered else [], task.supporting_ids),
            },
        )
