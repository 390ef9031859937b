"""Tasks from MuSiQue-format JSON lines (MuSiQue-Ans, MuSiQue-Full, or the built-in sample); the
other formats' readers (HotpotQA, 2WikiMultihopQA, a user's JSON lines) make the same ``Task``
(``vreact.qa.formats``)."""

from __future__ import annotations

import json
import os
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, PrivateAttr, ValidationError, field_validator, model_validator

from vreact.families import select
from vreact.inputs import DatasetError, InputFileError, check_file, decode_text
from vreact.origin import tag
from vreact.registry import suggestion

#: The longest paragraph text vreact keeps, in characters (MuSiQue's run to about 1,500): a longer
#: one is cut when it is read, saying so at its end, so the executor, the index and the gates
#: all see the same text, and no prompt takes a whole 5 MB paragraph.
MAX_PARAGRAPH_CHARS = 20_000


class Paragraph(BaseModel):
    model_config = ConfigDict(extra="ignore")

    idx: int
    title: str
    paragraph_text: str
    is_supporting: bool = False
    #: its sentences, where the format has them (HotpotQA, 2Wiki: the support is sentences)
    sentences: list[str] = []
    _cut: bool = PrivateAttr(default=False)

    @model_validator(mode="after")
    def _within(self) -> Paragraph:
        text = self.paragraph_text
        if len(text) > MAX_PARAGRAPH_CHARS:
            self.paragraph_text = (
                text[:MAX_PARAGRAPH_CHARS]
                + f" [cut: {len(text):,} characters, the first {MAX_PARAGRAPH_CHARS:,} kept]"
            )
            self._cut = True
        return self

    @property
    def cut(self) -> bool:
        """Its text was longer than MAX_PARAGRAPH_CHARS and was cut when it was read."""
        return self._cut


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
    # -- set by the other formats' readers (vreact.qa.formats), never read from a MuSiQue record --
    #: the record's format (its official metrics: vreact.qa.formats.official)
    format: str = "musique"
    #: the question's type where the data gives one (HotpotQA: bridge, comparison; 2Wiki: four)
    kind: str = ""
    #: the hop count the data gives (the supporting titles), where no decomposition does
    hop_count: int | None = None
    #: the gold supporting sentences, [title, sentence index] (HotpotQA, 2Wiki)
    supporting_facts: list[tuple[str, int]] = []
    #: 2Wiki's gold evidence triples, [subject, relation, object]
    evidences: list[list[str]] = []

    @field_validator("answer")
    @classmethod
    def _gold_answer(cls, v: str) -> str:
        return tag(v, "gold")  # for scoring only: the context assembler refuses it in any context

    @field_validator("supporting_facts", "evidences")
    @classmethod
    def _gold_support(cls, v: list[Any]) -> list[Any]:
        return [type(x)(tag(str(y), "gold") if isinstance(y, str) else y for y in x) for x in v]

    @field_validator("answer_aliases")
    @classmethod
    def _gold_aliases(cls, v: list[str]) -> list[str]:
        return [tag(a, "gold") for a in v]

    # where it is searched: the run's corpus and its gold ids there (vreact.qa.tools.in_corpus),
    # else its own paragraphs, whose index vreact.qa.tools.corpus_of keeps here once built
    _corpus: Any = PrivateAttr(None)
    _corpus_support: list[str] | None = PrivateAttr(None)
    _own_index: Any = PrivateAttr(None)
    # an attacked copy's attack (vreact.qa.attacks.Attacked): for the records, never a role
    _attack: Any = PrivateAttr(None)

    @property
    def attack(self) -> Any:
        """The attack this copy of a task carries (``vreact.qa.attacks.Attacked``), or None."""
        return self._attack

    @attack.setter
    def attack(self, value: Any) -> None:
        self._attack = value

    @property
    def text(self) -> str:
        """What the roles read of it (a task of any family has one): the question."""
        return self.question

    @property
    def golds(self) -> list[str]:
        return [self.answer, *self.answer_aliases]

    @property
    def hops(self) -> int:
        """Hop count, from the data, never the id: the decomposition's length, else the count the
        reader found (the supporting titles), else the supporting paragraphs'."""
        if self.question_decomposition:
            return len(self.question_decomposition)
        if self.hop_count is not None:
            return self.hop_count
        return sum(p.is_supporting for p in self.paragraphs)

    @property
    def supporting_ids(self) -> list[str]:
        """The gold supporting paragraphs' ids: in the run's corpus when the task is in one."""
        if self._corpus_support is not None:
            return [tag(i, "gold") for i in self._corpus_support]
        return [tag(str(p.idx), "gold") for p in self.paragraphs if p.is_supporting]

    @property
    def search_corpus(self) -> Any:
        """The run's corpus (a ``vreact.qa.tools.OpenCorpus``) this task is searched in; None: its
        own paragraphs."""
        return self._corpus

    def in_corpus(self, corpus: Any, support: list[str]) -> Task:
        """This task searched in ``corpus``, its gold supporting paragraphs being ``support`` there."""
        task = self.model_copy()
        task._corpus, task._corpus_support, task._own_index = corpus, list(support), None
        return task

    @property
    def own_index(self) -> Any:
        """``(paragraphs, index)``: the index of its own paragraphs, once built
        (``vreact.qa.tools.corpus_of``)."""
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
            **(self._attack.record() if self._attack is not None else {}),
        }


#: ``VREACT_DATASET_EXTRA_FIELDS=allow`` admits dataset records carrying fields MuSiQue's
#: schema lacks (they are ignored); by default an unknown field is an error naming it.
EXTRA_FIELDS_ENV = "VREACT_DATASET_EXTRA_FIELDS"


def sample_path() -> Path:
    """The shipped sample's file (``dataset: sample``)."""
    return Path(str(resources.files("vreact") / "data" / "sample.jsonl"))


def _extra_allowed() -> bool:
    value = os.environ.get(EXTRA_FIELDS_ENV, "").strip().lower()
    if value not in ("", "allow", "forbid"):
        raise DatasetError(f"{EXTRA_FIELDS_ENV}={value!r}: expected allow or forbid")
    return value == "allow"


#: The fields a record of the other formats' readers carries and a MuSiQue record does not.
_READERS_FIELDS = frozenset({"format", "kind", "hop_count", "supporting_facts", "evidences", "sentences"})


def _unknown_field(record: dict[str, Any]) -> tuple[str, str] | None:
    """The first field of ``record`` (its paragraphs' and decomposition's too) that MuSiQue's
    schema lacks: (its dotted path, the message naming the closest known field)."""

    def check(obj: Any, model: type[BaseModel], at: str) -> tuple[str, str] | None:
        if not isinstance(obj, dict):
            return None
        for key in obj:
            if key not in model.model_fields or key in _READERS_FIELDS:
                known = [f for f in model.model_fields if f not in _READERS_FIELDS]
                return f"{at}{key}", (
                    f"unknown field {key!r}{suggestion(str(key), known)} (records with extra fields:"
                    f" {EXTRA_FIELDS_ENV}=allow)"
                )
        for name, inner in (("paragraphs", Paragraph), ("question_decomposition", Hop)):
            items = obj.get(name) if model is Task else None
            for i, item in enumerate(items if isinstance(items, list) else []):
                found = check(item, inner, f"{name}.{i}.")
                if found:
                    return found
        return None

    return check(record, Task, "")


def _record(text: str, path: Path, lineno: int, strict: bool) -> Task:
    """One JSON line as a Task (``strict``: unknown fields refused)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise DatasetError(f"{path}:{lineno}: (line): not JSON: {e.msg} (column {e.colno})") from None
    except RecursionError:
        raise DatasetError(f"{path}:{lineno}: (line): not a MuSiQue record: JSON nested too deeply") from None
    if not isinstance(value, dict):
        raise DatasetError(
            f"{path}:{lineno}: (line): a record is a JSON object (one MuSiQue record per line),"
            f" not {'a list' if isinstance(value, list) else type(value).__name__}"
        )
    unknown = _unknown_field(value) if strict else None
    if unknown:
        raise DatasetError(f"{path}:{lineno}: {unknown[0]}: {unknown[1]}")
    try:
        task = Task.model_validate(value)
    except ValidationError as e:
        err = e.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "(line)"
        raise DatasetError(f"{path}:{lineno}: {where}: {err['msg']}") from None
    except RecursionError:
        raise DatasetError(f"{path}:{lineno}: (line): not a MuSiQue record: JSON nested too deeply") from None
    seen: dict[int, int] = {}
    for i, p in enumerate(task.paragraphs):
        if p.idx in seen:
            raise DatasetError(
                f"{path}:{lineno}: paragraphs.{i}.idx: idx {p.idx} repeats (paragraphs.{seen[p.idx]} has it)"
            )
        seen[p.idx] = i
    return task


def load_tasks(source: str | Path, limit: int | None = None) -> list[Task]:
    """Read tasks from a MuSiQue JSONL file, or ``"sample"`` for the built-in sample.

    Refused with one ``FILE:LINE: field: message`` line: a file that is missing, a directory,
    not a regular file, over ``VREACT_MAX_FILE_MB`` (default 1024), empty, not UTF-8 (a BOM is
    accepted) or holding a NUL byte; a line that is not a JSON object; a field MuSiQue's schema
    lacks (unless ``VREACT_DATASET_EXTRA_FIELDS=allow``), or of the wrong type; a paragraph
    ``idx`` repeated within a record; an id repeated other than by a MuSiQue-Full pair."""
    path = sample_path() if str(source) == "sample" else Path(source)
    strict = not _extra_allowed()
    try:
        check_file(path)
    except InputFileError as e:
        if not path.exists() and not path.is_symlink():
            raise DatasetError(f"{path}: no such dataset file (give a MuSiQue .jsonl or 'sample')") from None
        raise DatasetError(f"{path}:{e.line}: (file): {e.message}") from None
    tasks: list[Task] = []
    lines: list[int] = []
    blank = True
    try:
        with path.open("rb") as fh:
            for lineno, raw in enumerate(fh, 1):
                try:
                    line = decode_text(raw.removeprefix(b"\xef\xbb\xbf") if lineno == 1 else raw, lineno)
                except InputFileError as e:
                    raise DatasetError(f"{path}:{e.line}: (file): {e.message}") from None
                if not line.strip():
                    continue
                if blank and line.lstrip().startswith("[") and not tasks:
                    _not_lines(path, line, lineno)
                blank = False
                tasks.append(_record(line, path, lineno, strict))
                lines.append(lineno)
                if limit is not None and len(tasks) >= limit:
                    break
    except OSError as e:
        raise DatasetError(f"{path}:0: (file): cannot read: {e.strerror or e}") from None
    if blank:
        raise DatasetError(f"{path}:1: (file): the file is empty (a dataset: one MuSiQue record per line)")
    return _split_pairs(tasks, path, lines)


def _not_lines(path: Path, first: str, lineno: int) -> None:
    """A first line opening a JSON array: refused as such when it is no record on its own."""
    try:
        json.loads(first)
    except (json.JSONDecodeError, RecursionError):
        raise DatasetError(
            f"{path}:{lineno}: (file): a dataset is JSON lines (a MuSiQue record per line), not a JSON array"
        ) from None


def _split_pairs(tasks: list[Task], path: Path, lines: list[int] | None = None) -> list[Task]:
    """MuSiQue-Full gives both members of a pair one id: keep the answerable member's id,
    suffix the unanswerable one's, and link both by ``pair_id``."""
    at = lines or [0] * len(tasks)
    by_id: dict[str, list[int]] = {}
    for i, t in enumerate(tasks):
        by_id.setdefault(t.id, []).append(i)
    out = []
    for t in tasks:
        group = by_id[t.id]
        if len(group) == 1:
            out.append(t)
            continue
        if len(group) != 2 or {tasks[m].answerable for m in group} != {True, False}:
            first, again = group[0], group[1]
            where = f"{path}:{at[again]}" if at[again] else str(path)
            also = f" (line {at[first]} has it)" if at[first] else ""
            raise DatasetError(
                f"{where}: id: {t.id!r} repeats and is not an answerable/unanswerable pair{also}"
            )
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
    return select(kept, task_ids, limit, source)
