"""Question answering over paragraphs: vreact's built-in task family ``qa`` (multi-hop QA with
abstention; MuSiQue's records). It registers itself when this module loads: the core never
imports it, it finds it by name (``vreact.families.BUILT_IN``)."""

from __future__ import annotations

import dataclasses
from typing import Any

from vreact.families import FaultClass, Probed, Score, StepKit, TaskFamily, family
from vreact.qa import _levels
from vreact.qa._kit import QAKit
from vreact.roles.designer import Designer, Subtask
from vreact.spec import AnswerRequirements, TaskSpec
from vreact.tasks.dataset import Task, load_tasks
from vreact.tasks.metrics import best_em, best_f1, support_f1
from vreact.verify.gates import Artifact


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

    # --- what an attempt asks of it -------------------------------------------------------

    def l1(self, task: Task, spec: TaskSpec) -> dict[str, Any]:
        return _levels.l1(task, spec)

    def designer(self, l1: dict[str, Any], checks: tuple[str, ...]) -> Designer:
        return Designer(AnswerRequirements.model_validate(l1["answer"]), checks)

    def kit(self, ctx: Any, subtask: Subtask, retry: bool) -> StepKit:
        return QAKit(ctx, subtask)

    def unit(self, data: dict[str, Any]) -> Artifact:
        return Artifact.from_input(data)

    def final(self, task: Task, accepted: list[Any]) -> Artifact:
        return _levels.final(task.question, accepted)

    def declined(self, task: Task, artifact: Any) -> Artifact:
        return dataclasses.replace(artifact, question=task.question)

    def fault_classes(self) -> tuple[FaultClass, ...]:
        from vreact.quality.faults import CLASSES

        return CLASSES

    def probe(self, task: Task, classes: tuple[FaultClass, ...], spec: TaskSpec) -> Probed:
        from vreact.quality.faults import build

        return build(task, classes, spec.requirements.answer.max_words)

    def chain(self, task: Task, done: list[Any], subtasks: list[Any], units: dict[str, Any]) -> Any:
        steps = [_levels.chain_step(st, units[st.id]) for st in done if st.id in units]
        return _levels.chain(task.question, steps, subtasks)
