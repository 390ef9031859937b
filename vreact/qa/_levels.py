"""What each verifier is paired with (L1 as the judges read it) and the artifacts the ascent
assembles from accepted subtasks (the chain, the final answer), for question answering."""

from __future__ import annotations

from typing import Any

from vreact.families import FINALS
from vreact.model import Message, parse_json_object
from vreact.qa.dataset import Task
from vreact.qa.gates import Artifact, ChainArtifact, ChainStep, Plan, PlanArtifact
from vreact.qa.roles import planner
from vreact.qa.roles.designer import Subtask
from vreact.spec import TaskSpec


def l1(task: Task, spec: TaskSpec) -> dict[str, Any]:
    return {
        "question": task.text,
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
    titles = {k: v for a in accepted for k, v in a.titles.items()}
    retrieved = frozenset().union(*(a.retrieved for a in accepted))
    return Artifact(
        "answer",
        question,
        answer=last.answer,
        evidence=evidence,
        cited=cited,
        titles=titles,
        retrieved=retrieved,
        searches=sum(a.searches for a in accepted),
    )


class Planner:
    """L2 for question answering: a plan of hops, each a sub-question naming the hops it needs."""

    schema = planner.PLAN_SCHEMA

    def __init__(self, tools: list[str] | None = None) -> None:
        #: what the planner is told the executor has: the configuration's tools (and the actions
        #: every step has) when it names them, else the built-in inventory
        self.tools = (*tools, *FINALS) if tools else tuple(planner.TOOL_NAMES)

    def messages(self, context: dict[str, Any]) -> list[Message]:
        return planner.render_messages(context)

    def proposal(self, text: str, reply: str) -> PlanArtifact:
        return PlanArtifact(text, parse_json_object(reply))

    def plan(self, proposal: PlanArtifact) -> Plan | None:
        try:
            plan = Plan.model_validate(proposal.plan)
        except ValueError:
            return None
        return plan if plan.subtasks else None
