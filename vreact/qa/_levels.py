"""What each verifier is paired with (L1 as the judges read it) and the artifacts the ascent
assembles from accepted subtasks (the chain, the final answer), for question answering."""

from __future__ import annotations

from typing import Any

from vreact.roles.designer import Subtask
from vreact.spec import TaskSpec
from vreact.tasks.dataset import Task
from vreact.verify.gates import Artifact, ChainArtifact, ChainStep


def l1(task: Task, spec: TaskSpec) -> dict[str, Any]:
    return {
        "question": task.question,
        "task": spec.requirements.task,
        "answer": spec.requirements.answer.model_dump(),
    }


def chain_step(subtask: Subtask, artifact: Artifact) -> ChainStep:
    """An accepted subtask's link in the chain R2 checks."""
    return ChainStep(
        subtask.id,
        subtask.objective,
        str(artifact.answer),
        tuple(artifact.evidence),
        dict(artifact.cited),
        subtask.depends_on,
    )


def chain(question: str, steps: list[ChainStep], subtasks: list[Subtask]) -> ChainArtifact:
    final = next((s.id for s in subtasks if s.final), subtasks[-1].id)
    answer = next((s.answer for s in steps if s.id == final), "")
    return ChainArtifact(question, tuple(steps), final, answer)


def final(question: str, accepted: list[Artifact]) -> Artifact:
    """The final answer: the last accepted unit's (the final subtask's), with the evidence of the
    whole chain."""
    last = accepted[-1]
    evidence = list(dict.fromkeys(e for a in accepted for e in a.evidence))
    cited = {k: v for a in accepted for k, v in a.cited.items()}
    retrieved = frozenset().union(*(a.retrieved for a in accepted))
    return Artifact(
        "answer",
        question,
        answer=last.answer,
        evidence=evidence,
        cited=cited,
        retrieved=retrieved,
        searches=sum(a.searches for a in accepted),
    )
