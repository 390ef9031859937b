"""Question answering over paragraphs: vreact's built-in task family ``qa`` (multi-hop QA with
abstention; MuSiQue's records). It registers itself when this module loads: the core never
imports it, it finds it by name (its entry point in pyproject.toml)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

from vreact.families import Behaviours, FaultClass, Probed, Score, StepKit, TaskFamily, family, read_selection
from vreact.metrics import best_em, best_f1, normalize_answer, support_f1
from vreact.qa import _levels, formats
from vreact.qa._kit import QAKit
from vreact.qa.attacks import with_attacks
from vreact.qa.dataset import Task, load_tasks, sample_path, select_tasks
from vreact.qa.faults import CLASSES, build
from vreact.qa.gates import Artifact, ChainArtifact, PlanArtifact
from vreact.qa.roles import planner
from vreact.qa.roles.designer import Designer, Subtask
from vreact.qa.settings import AnswerRequirements, QADataset, QASteps
from vreact.qa.tools import OpenCorpus, load_corpus
from vreact.spec import TaskSpec


@family
class QuestionAnswering(TaskFamily):
    """A question, its paragraphs (or a corpus), and a gold answer with its aliases."""

    name = "qa"
    version = "1"
    formats = ("musique", *formats.FORMATS)
    shapes = MappingProxyType(
        {
            "musique": frozenset({"id", "question", "paragraphs", "question_decomposition"}),
            "hotpotqa": frozenset({"_id", "question", "context", "supporting_facts"}),
            "2wiki": frozenset({"_id", "question", "context", "supporting_facts", "evidences"}),
        }
    )
    shipped = ("sample",)
    requirements = AnswerRequirements
    dataset_settings = QADataset
    step_settings = QASteps
    default_spec = "musique"
    default_verifiers = "musique"
    native_actions = True
    judged = MappingProxyType(
        {
            "L2": "a plan (the artifact) for a question (the paired level, L1)",
            "L3": "one subtask's answer and its cited evidence (the artifact) against the subtask's "
            "design (the paired level, L3)",
            "integration": "the chain of subtask answers (the artifact) against the plan (the paired "
            "level, L2)",
            "L1": "a final answer and its cited evidence (the artifact) against the task's requirements "
            "(the paired level, L1)",
        }
    )
    #: support_f1 is over paragraphs (MuSiQue's); sp_* and joint_* are HotpotQA's and 2Wiki's official
    #: sentence-level figures, their support every sentence of the cited paragraphs (a bound:
    #: vreact cites paragraphs), given for records of those formats
    metrics = ("em", "f1", "support_f1", "sp_em", "sp_f1", "joint_em", "joint_f1")
    audited = MappingProxyType(
        {
            "task": "a question answered from paragraphs the agent searched",
            "cited": "the cited paragraphs",
            "label": "Question",
        }
    )
    noun = "question"
    report_tables = ("support", "hops", "official")  # its metrics are in them (EM, F1, support F1)

    def answer_right(self, task: Any, answer: str) -> bool:
        """MuSiQue's rule, as for a gold answer: an answerable task's gold answer or an alias,
        after its normalisation (``vreact.metrics.best_em``)."""
        return task.answerable and best_em(answer, task.golds) == 1.0

    def spec_for(self, format: str) -> str:
        """HotpotQA's and 2Wiki's records take ``hotpotqa`` (MuSiQue's L1, and yes/no answers to
        their comparisons); the others ``musique``."""
        return "hotpotqa" if format in ("hotpotqa", "2wiki") else self.default_spec

    def read(
        self, path: str, format: str, limit: int | None = None, fields: dict[str, str] | None = None
    ) -> list[Any]:
        if format == "musique" and not fields:
            return list(load_tasks(path, limit))
        return formats.read(path, format, limit, fields)

    def read_dataset(self, selection: Any, limit: int | None = None) -> list[Any]:
        """The file read in its format, through the dataset's field map (``fields``) if it has one."""
        return self.read(selection.path, selection.record_format, limit, selection.settings.fields)

    def tasks(self, selection: Any) -> list[Any]:
        """The file's records filtered by hop count and answerability, then ``task_ids`` and
        ``limit``; each followed by its attacked copies (``attacks``)."""
        d, own = selection, selection.settings
        loaded = read_selection(self, d)
        kept = select_tasks(
            loaded,
            hops=own.hops,
            answerable=own.answerable,
            task_ids=d.task_ids,
            limit=d.limit,
            source=d.path,
        )
        return with_attacks(kept, own.attacks, loaded) if kept else kept

    def shared(self, selection: Any) -> OpenCorpus | None:
        """The ``corpus`` every task is searched in, read and indexed once for the run."""
        corpus = selection.settings.corpus
        return load_corpus(corpus) if corpus else None

    def data_files(self, selection: Any) -> list[Path]:
        """The records' file (``sample``: the shipped sample's) and the corpus, when named."""
        named = [sample_path() if str(selection.path) == "sample" else Path(selection.path)]
        if selection.settings.corpus:
            named.append(Path(selection.settings.corpus))
        return [f for f in named if f.is_file()]

    def row(self, task: Task) -> dict[str, Any]:
        """MuSiQue's columns of the ``tasks`` table, as records made before families have them;
        a record of another format adds what its official predictions need
        (``vreact.qa.formats.shape``), so they are written from the run alone."""
        row = {**task.record(), "family": self.name}
        return row if task.format == "musique" else {**row, "record": json.dumps(formats.shape(task))}

    def score(self, task: Task, answer: str | None, evidence: list[str]) -> Score:
        """Right: an answer to an answerable question that matches a gold answer exactly (after
        MuSiQue's normalisation); an abstention predicts no answer and no support. HotpotQA's and
        2Wiki's records are scored by their official metrics (``vreact.qa.formats.official``)."""
        answered = answer is not None
        if task.format in ("hotpotqa", "2wiki"):
            return formats.official(task, answer, evidence)
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

    def kit(self, ctx: Any, subtask: Subtask, retry: bool, settings: QASteps) -> StepKit:
        return QAKit(ctx, subtask, settings)

    def unit(self, data: dict[str, Any]) -> Any:
        """An artifact read back from its gate input: an answer or abstention, a plan, a chain."""
        kind = data.get("kind")
        read = PlanArtifact if kind == "plan" else ChainArtifact if kind == "chain" else Artifact
        return read.from_input(data)

    def final(self, task: Task, accepted: list[Any]) -> Artifact:
        return _levels.final(task.question, accepted)

    def declined(self, task: Task, artifact: Any) -> Artifact:
        return dataclasses.replace(artifact, question=task.question)

    def behaviours(
        self,
        task: Task,
        candidates: Mapping[int, Any],
        inputs: Sequence[Any] = (),
        made: int = 0,
        seed: int = 0,
    ) -> Behaviours:
        """Majority agreement: each answer as the official metric normalises it (``normalize_answer``:
        lower case, no punctuation or articles); an abstention, or an answer that normalises to
        nothing, is left out. No inputs to run."""
        said = {i: normalize_answer(str(a.answer)) for i, a in candidates.items() if a.kind == "answer"}
        left_out = {i: "declined" for i, a in candidates.items() if a.kind != "answer"}
        left_out |= {i: "an empty answer once normalised" for i, s in said.items() if not s}
        return Behaviours(
            of={i: s for i, s in said.items() if s},
            left_out=left_out,
            record={"answers": {str(i): s for i, s in said.items()}},
        )

    def fault_classes(self) -> tuple[FaultClass, ...]:
        return CLASSES

    def probe(self, task: Task, classes: tuple[FaultClass, ...], spec: TaskSpec) -> Probed:
        answer = spec.requirements.answer
        assert isinstance(answer, AnswerRequirements)  # a spec of the qa family (spec_model)
        return build(task, classes, answer.max_words)

    def planner(self, settings: QASteps | None = None) -> _levels.Planner:
        return _levels.Planner(settings.tools if settings is not None else None)

    def substitute(self, objective: str, plan_ids: list[str], answers: dict[str, str]) -> str:
        return planner.substitute(objective, plan_ids, answers)

    def chain(self, task: Task, done: list[Any], subtasks: list[Any], units: dict[str, Any]) -> Any:
        steps = [_levels.chain_step(st, units[st.id]) for st in done if st.id in units]
        return _levels.chain(task.question, steps, subtasks)
