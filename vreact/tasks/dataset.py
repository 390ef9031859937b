"""Tasks from MuSiQue-format JSON lines (MuSiQue-Ans, MuSiQue-Full, or the built-in sample)."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, PrivateAttr, ValidationError, field_validator

from vreact.origin import tag


class Paragraph(BaseModel):
    model_config = ConfigDict(extra="ignore")

    idx: int
    title: str
    paragraph_text: str
    is_supporting: bool = False


class Hop(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: int | str
    question: str
    answer: str
    paragraph_support_idx: int | None = None

    @field_validator("answer")
    @classmethod
    def _gold(cls, v: str) -> str:
        return tag(v, "gold")  # a hop's answer is gold: no role may read it


class Task(BaseModel):
    """One question (one dataset record), in MuSiQue's v1.0 schema."""

    model_config = ConfigDict(extra="ignore")

    id: str
    question: str
    paragraphs: list[Paragraph]
    answer: str = ""
    answer_aliases: list[str] = []
    answerable: bool = True
    question_decomposition: list[Hop] = []
    pair_id: str | None = None  # MuSiQue-Full: both members of a pair share the dataset's id

    @field_validator("answer")
    @classmethod
    def _gold_answer(cls, v: str) -> str:
        return tag(v, "gold")  # for scoring only: the context assembler refuses it in any context

    @field_validator("answer_aliases")
    @classmethod
    def _gold_aliases(cls, v: list[str]) -> list[str]:
        return [tag(a, "gold") for a in v]

    # where it is searched: the run's corpus and its gold ids there (vreact.tools.in_corpus),
    # else its own paragraphs, whose index vreact.tools.corpus_of keeps here once built
    _corpus: Any = PrivateAttr(None)
    _corpus_support: list[str] | None = PrivateAttr(None)
    _own_index: Any = PrivateAttr(None)

    @property
    def golds(self) -> list[str]:
        return [self.answer, *self.answer_aliases]

    @property
    def hops(self) -> int:
        """Hop count: the decomposition's length, else the id's prefix (``3hop1__...``)."""
        if self.question_decomposition:
            return len(self.question_decomposition)
        return int(self.id[0]) if self.id[:1].isdigit() else 0

    @property
    def supporting_ids(self) -> list[str]:
        """The gold supporting paragraphs' ids: in the run's corpus when the task is in one."""
        if self._corpus_support is not None:
            return [tag(i, "gold") for i in self._corpus_support]
        return [tag(str(p.idx), "gold") for p in self.paragraphs if p.is_supporting]

    @property
    def search_corpus(self) -> Any:
        """The run's corpus (a vreact.tools.OpenCorpus) this task is searched in; None: its own paragraphs."""
        return self._corpus

    def in_corpus(self, corpus: Any, support: list[str]) -> Task:
        """This task searched in ``corpus``, its gold supporting paragraphs being ``support`` there."""
        task = self.model_copy()
        task._corpus, task._corpus_support, task._own_index = corpus, list(support), None
        return task

    @property
    def own_index(self) -> Any:
        """``(paragraphs, index)``: the index of its own paragraphs, once built (vreact.tools.corpus_of)."""
        return self._own_index

    @own_index.setter
    def own_index(self, value: Any) -> None:
        self._own_index = value

    def record(self) -> dict[str, Any]:
        """The row for the ``tasks`` table."""
        return {
            "id": self.id,
            "question": self.question,
            "answer": self.answer,
            "aliases": json.dumps(self.answer_aliases),
            "answerable": int(self.answerable),
            "hops": self.hops,
            "support": json.dumps(self.supporting_ids),
            "pair_id": self.pair_id,
        }


class DatasetError(ValueError):
    """A dataset line that is not a MuSiQue record: ``FILE:LINE: field: message``."""


def _sample_path() -> Path:
    return Path(str(resources.files("vreact") / "data" / "sample.jsonl"))


def load_tasks(source: str | Path, limit: int | None = None) -> list[Task]:
    """Read tasks from a MuSiQue JSONL file, or ``"sample"`` for the built-in sample."""
    path = _sample_path() if str(source) == "sample" else Path(source)
    if not path.is_file():
        raise DatasetError(f"{path}: no such dataset file (give a MuSiQue .jsonl or 'sample')")
    tasks: list[Task] = []
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                tasks.append(Task.model_validate_json(line))
            except ValidationError as e:
                err = e.errors()[0]
                where = ".".join(str(p) for p in err["loc"]) or "(line)"
                raise DatasetError(f"{path}:{lineno}: {where}: {err['msg']}") from None
            if limit is not None and len(tasks) >= limit:
                break
    return _split_pairs(tasks, path)


def _split_pairs(tasks: list[Task], path: Path) -> list[Task]:
    """MuSiQue-Full gives both members of a pair one id: keep the answerable member's id,
    suffix the unanswerable one's, and link both by ``pair_id``."""
    by_id: dict[str, list[Task]] = {}
    for t in tasks:
        by_id.setdefault(t.id, []).append(t)
    out = []
    for t in tasks:
        group = by_id[t.id]
        if len(group) == 1:
            out.append(t)
            continue
        if len(group) != 2 or {m.answerable for m in group} != {True, False}:
            raise DatasetError(f"{path}: id {t.id!r} repeats and is not an answerable/unanswerable pair")
        suffix = "" if t.answerable else "__unanswerable"
        out.append(t.model_copy(update={"id": t.id + suffix, "pair_id": t.id}))
    return out


def select_tasks(
    tasks: list[Task],
    *,
    hops: list[int] | None = None,
    answerable: bool | None = None,
    task_ids: list[str] | None = None,
    limit: int | None = None,
    source: str = "dataset",
) -> list[Task]:
    """Filter by hop count and answerability, then keep ``task_ids`` in their order (an unknown
    id is an error naming ``source``), then the first ``limit``."""
    kept = [
        t
        for t in tasks
        if (hops is None or t.hops in hops) and (answerable is None or t.answerable == answerable)
    ]
    if task_ids:
        by_id = {t.id: t for t in kept}
        missing = [i for i in task_ids if i not in by_id]
        if missing:
            raise DatasetError(f"{source}: no task with id {', '.join(missing)} (after the filter)")
        kept = [by_id[i] for i in task_ids]
    return kept[:limit] if limit is not None else kept
