"""The qa family's step kit: an executor that searches and reads a task's paragraphs (or the
run's corpus), finishes with an answer and the paragraphs it cites (or, with ``finish: hops``,
the hops from the question to the answer), may ask the L3 designer to search for a bridge
entity, and abstains when the paragraphs do not hold the answer."""

from __future__ import annotations

import re
from functools import cached_property
from types import SimpleNamespace
from typing import Any

from vreact.families import Step as CoreStep
from vreact.families import StepKit
from vreact.model import ToolSpec
from vreact.qa.gates import Artifact
from vreact.qa.guards import DuplicateSearchRollback
from vreact.qa.roles import context_manager, critic
from vreact.qa.roles.designer import Subtask, bridge_query, first_query
from vreact.qa.roles.executor import (
    HOP_CHECKS,
    Step,
    actions_of,
    native_tools,
    offered,
    parse_step,
    render_messages,
    step_schema,
)
from vreact.qa.settings import QASteps
from vreact.qa.tools import DEFAULT_TOOLS, Corpus, CorpusView, corpus_of
from vreact.tools import ToolContext

#: What final-answer recovery asks when a try hits its step cap.
RECOVER = (
    "Your steps for this question are spent. Reply now with ONE JSON object whose action is "
    '"finish" (the answer and the ids of the paragraphs it rests on) or "abstain" (why).'
)

#: DeReAct's critic and context manager for question answering's steps.
CRITIC = SimpleNamespace(schema=critic.CRITIC_SCHEMA, messages=critic.render_messages, decide=critic.decide)
CONTEXT_MANAGER = SimpleNamespace(
    schema=context_manager.CM_SCHEMA,
    messages=context_manager.render_messages,
    parse=context_manager.parse,
    cites=context_manager.CITES,
)
#: A search or read result's line: ``[id] title: text``.
_HIT = re.compile(r"^\[(\w+)\] ([^:\n]*):", re.M)


def stub(observation: str) -> str:
    """An older tool result, blanked: the ids (and titles) it showed, nothing else."""
    hits = _HIT.findall(observation)
    if not hits:
        return observation if len(observation) <= 80 else observation[:77] + "..."
    return "(shown before: " + ", ".join(f"[{i}] {t.strip()}" for i, t in hits) + ")"


def summary(history: list[tuple[str, str]]) -> str:
    """The steps folded away: the queries issued and the paragraphs retrieved."""
    queries, seen = [], []
    for text, observation in history:
        step = parse_step(text)
        if step is not None and step.action == "search":
            queries.append(repr(step.input))
        seen += [f"[{i}] {t.strip()}" for i, t in _HIT.findall(observation)]
    parts = []
    if queries:
        parts.append("searched " + ", ".join(dict.fromkeys(queries)))
    if seen:
        parts.append("saw " + ", ".join(dict.fromkeys(seen)))
    return "; ".join(parts) or "nothing found"


class QAKit(StepKit):
    """One try's tools over the task's corpus, and its step format (the configuration's
    ``finish``, the designer's ``first_search`` and ``follow_up``)."""

    def __init__(self, ctx: Any, subtask: Subtask, settings: QASteps) -> None:
        self.corpus: Corpus = corpus_of(ctx.task)
        self.subtask = subtask
        self.hops = settings.finish == "hops"
        self.bridge = settings.designer.follow_up == "bridge"
        self.first_search = settings.designer.first_search
        self.marked = ctx.config.observation_marking
        guard = settings.guard
        if guard.duplicate_search:  # run with the guards (pipeline_of)
            self.guards = (DuplicateSearchRollback(guard.duplicate_rollbacks),)
        #: the configuration's tools (search and read when it names none), and every action
        self.tools: tuple[str, ...] = tuple(settings.tools) if settings.tools is not None else DEFAULT_TOOLS
        self.actions = actions_of(self.tools, self.bridge)
        self._tools = {t.name: t for t in offered(self.tools)}
        self.native = ctx.family.native_actions and ctx.acts_natively()
        checks = tuple(c for c in subtask.checks if self.hops or c not in HOP_CHECKS)
        schema = None if self.native else step_schema(self.hops, self.bridge, subtask.min_hops, self.tools)
        super().__init__(schema, checks, RECOVER)
        #: what a tool reads of the try (the retrieved ids are the try's own set)
        self.context = ToolContext(ctx.task.text, CorpusView(self.corpus), self.retrieved, self.marked)
        #: the designer's next search: the question's at the start (first_search), then each bridge's
        if self.first_search:
            self.designed.append(Step(action="search", input=first_query(subtask.objective)))
        self.searches = 0

    critic = CRITIC
    context_manager = CONTEXT_MANAGER

    def stub(self, observation: str) -> str:
        return stub(observation)

    def summary(self, history: list[tuple[str, str]]) -> str:
        return summary(history)

    def parse(self, text: str) -> CoreStep | None:
        step = parse_step(text, self.actions)  # an action the step's schema does not have: not a step
        if step is not None and step.hops and not self.hops:
            return step.model_copy(update={"hops": []})  # not asked for: not read
        return step

    def messages(self, context: dict[str, Any]) -> list[dict[str, str]]:
        return render_messages(context, self.hops, self.bridge, self.tools, self.native)

    def native_tools(self) -> list[ToolSpec]:
        return native_tools(self.hops, self.bridge, self.subtask.min_hops, self.tools)

    def act(self, step: CoreStep) -> tuple[str, bool]:
        assert isinstance(step, Step)
        if step.action == "bridge":  # the designer answers it with a search, the next step
            query = bridge_query(step.input, self.subtask.objective, self._covered)
            self.designed.append(Step(action="search", input=query))
            return f"the designer searches for {step.input.strip()!r}", False
        self.searches += step.action == "search"
        tool = self._tools.get(step.action)
        if tool is None:
            raise ValueError(f"{step.action} is not a tool call")
        self.context.cut = False
        observation = tool.run(step.input, self.context)
        return observation, self.context.cut

    @cached_property
    def _covered(self) -> str:
        """The hop the try's first search found: its best paragraph's text (none without
        ``first_search``); searched once per try, at its first bridge."""
        if not self.first_search:
            return ""
        best = self.corpus.search(first_query(self.subtask.objective), k=1)
        return self.corpus.text(best[0].id) if best else ""

    def artifact(self, step: CoreStep) -> Artifact:
        """The try's final: an answer with its cited paragraphs' text, or an abstention."""
        assert isinstance(step, Step)
        retrieved = frozenset(self.retrieved)
        if step.action == "abstain":
            reason = step.input or step.thought
            return Artifact(
                "abstain", self.subtask.objective, reason=reason, retrieved=retrieved, searches=self.searches
            )
        evidence = step.cited()
        found = {e: p for e in evidence if (p := self.corpus.read(e))}
        cited = {e: self.corpus.text(e) for e in found}
        return Artifact(
            "answer",
            self.subtask.objective,
            answer=step.input,
            evidence=evidence,
            cited=cited,
            retrieved=retrieved,
            searches=self.searches,
            hops=tuple(h.model_dump() for h in step.hops),
            titles={e: p.title for e, p in found.items()},
        )

    def record(self, step: CoreStep) -> dict[str, Any]:
        hops = getattr(step, "hops", None)
        return {"hops": [h.model_dump() for h in hops]} if hops else {}
