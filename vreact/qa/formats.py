"""The question-answering family's other record formats, read into MuSiQue's ``Task``:

- ``hotpotqa``: HotpotQA's distractor setting (``_id``, ``question``, ``answer``, ``context``
  [[title, [sentences]]], ``supporting_facts`` [[title, sentence index]], ``type``);
- ``2wiki``: 2WikiMultihopQA (the same shape, its four types, ``evidences`` triples);
- ``jsonl``: a user's own records, one JSON object a line, its fields named by a field map
  (``dataset.fields``: ``FIELDS``).

and scores HotpotQA's and 2Wiki's records by their official metrics (``official``).

HotpotQA's and 2Wiki's files may be JSON lines or the datasets' own JSON array. The hop count
comes from the data (the distinct supporting titles), never from the id. A bad record is one
``FILE:LINE: field: message`` line, as MuSiQue's reader says it."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from vreact.families import Score
from vreact.inputs import DatasetError, json_records
from vreact.metrics import support_f1
from vreact.qa.dataset import Paragraph, Task
from vreact.qa.official import joint, official_best, sentence_support

if TYPE_CHECKING:
    import sqlite3

#: The formats this module reads, beside ``musique`` (``vreact.qa.dataset``).
FORMATS = ("hotpotqa", "2wiki", "jsonl")

#: A user's JSON lines: each of Task's parts -> the record's field holding it (``dataset.fields``
#: names only those that differ). ``paragraphs`` is a list of strings or of objects with
#: ``title`` and ``text``; ``support``, the supporting paragraphs, by title or by position.
FIELDS: Mapping[str, str] = {
    "id": "id",
    "question": "question",
    "answer": "answer",
    "aliases": "aliases",
    "paragraphs": "paragraphs",
    "support": "support",
    "title": "title",
    "text": "text",
}


def _field(record: Any, name: str, kind: type | tuple[type, ...], where: str, required: bool = True) -> Any:
    if not isinstance(record, dict):
        raise DatasetError(f"{where}: (line): a record is a JSON object, not {type(record).__name__}")
    if name not in record:
        if required:
            raise DatasetError(f"{where}: {name}: missing")
        return None
    value = record[name]
    if not isinstance(value, kind):
        want = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise DatasetError(f"{where}: {name}: expected {want}, got {type(value).__name__}")
    return value


def _context(record: dict[str, Any], where: str, spaced: bool) -> list[Paragraph]:
    """HotpotQA's ``context`` [[title, [sentences]]] as paragraphs (its sentences kept: the
    support is sentences). HotpotQA's sentences carry their leading space; 2Wiki's do not."""
    out = []
    for i, item in enumerate(_field(record, "context", list, where)):
        if (
            not isinstance(item, list)
            or len(item) != 2
            or not isinstance(item[0], str)
            or not isinstance(item[1], list)
            or not all(isinstance(x, str) for x in item[1])
        ):
            raise DatasetError(f"{where}: context.{i}: expected [title, [sentences]]")
        title, sentences = item
        text = ("" if spaced else " ").join(sentences).strip()
        out.append(Paragraph(idx=i, title=title, paragraph_text=text, sentences=sentences))
    return out


def _facts(record: dict[str, Any], where: str) -> list[tuple[str, int]]:
    facts = []
    for i, f in enumerate(_field(record, "supporting_facts", list, where)):
        if not (isinstance(f, list) and len(f) == 2 and isinstance(f[0], str) and isinstance(f[1], int)):
            raise DatasetError(f"{where}: supporting_facts.{i}: expected [title, sentence index]")
        facts.append((f[0], f[1]))
    return facts


def _wiki_task(record: Any, where: str, fmt: str) -> Task:
    """A HotpotQA or 2Wiki record: its paragraphs, supporting ones marked by their titles, and its
    hop count the distinct supporting titles."""
    rid = _field(record, "_id", str, where)
    question = _field(record, "question", str, where)
    answer = _field(record, "answer", str, where)
    kind = _field(record, "type", str, where, required=False) or ""
    paragraphs = _context(record, where, spaced=fmt == "hotpotqa")
    facts = _facts(record, where)
    titles = list(dict.fromkeys(t for t, _ in facts))
    known = {p.title for p in paragraphs}
    missing = [t for t in titles if t not in known]
    if missing:
        raise DatasetError(f"{where}: supporting_facts: title {missing[0]!r} is not in the context")
    for p in paragraphs:
        p.is_supporting = p.title in titles
    evidences = (_field(record, "evidences", list, where, required=False) or []) if fmt == "2wiki" else []
    for i, e in enumerate(evidences):
        if not (isinstance(e, list) and len(e) == 3 and all(isinstance(x, str) for x in e)):
            raise DatasetError(f"{where}: evidences.{i}: expected [subject, relation, object]")
    try:
        return Task(
            id=rid,
            question=question,
            paragraphs=paragraphs,
            answer=answer,
            format=fmt,
            kind=kind,
            hop_count=len(titles),
            supporting_facts=facts,
            evidences=evidences,
        )
    except ValidationError as e:
        err = e.errors()[0]
        raise DatasetError(f"{where}: {'.'.join(map(str, err['loc']))}: {err['msg']}") from None


def _user_task(record: Any, where: str, fields: Mapping[str, str], lineno: int) -> Task:
    """A user's record, read through the field map."""
    f = {**FIELDS, **fields}
    rid = _field(record, f["id"], (str, int), where, required=False)
    question = _field(record, f["question"], str, where)
    answer = _field(record, f["answer"], (str, int, float), where)
    aliases = _field(record, f["aliases"], list, where, required=False) or []
    items = _field(record, f["paragraphs"], list, where)
    paragraphs = []
    for i, item in enumerate(items):
        at = f"{where}: {f['paragraphs']}.{i}"
        if isinstance(item, str):
            title, text = "", item
        elif isinstance(item, dict) and isinstance(item.get(f["text"]), str):
            title, text = str(item.get(f["title"], "")), item[f["text"]]
        else:
            raise DatasetError(
                f"{at}: expected a string or an object with {f['text']!r} (and {f['title']!r})"
            )
        paragraphs.append(Paragraph(idx=i, title=title, paragraph_text=text))
    support = _field(record, f["support"], list, where, required=False) or []
    for j, s in enumerate(support):
        hit = [p for p in paragraphs if (p.idx == s if isinstance(s, int) else p.title == s)]
        if not hit:
            by = "position" if isinstance(s, int) else "title"
            raise DatasetError(f"{where}: {f['support']}.{j}: {s!r} is no paragraph's {by}")
        for p in hit:
            p.is_supporting = True
    if any(not isinstance(a, str) for a in aliases):
        raise DatasetError(f"{where}: {f['aliases']}: expected a list of strings")
    return Task(
        id=str(rid) if rid is not None else f"line{lineno}",
        question=question,
        paragraphs=paragraphs,
        answer=str(answer),
        answer_aliases=aliases,
        format="jsonl",
        hop_count=sum(p.is_supporting for p in paragraphs) or None,
    )


def read(
    path: str | Path, fmt: str, limit: int | None = None, fields: Mapping[str, str] | None = None
) -> list[Task]:
    """The tasks of ``path`` in ``fmt`` (one of ``FORMATS``), the first ``limit`` only when given;
    ``fields``: the ``jsonl`` field map (the parts it names, beside ``FIELDS``'s defaults)."""
    path = Path(path)
    unknown = sorted(set(fields or {}) - set(FIELDS))
    if unknown:
        raise DatasetError(f"fields: {unknown[0]!r} is not a part of a record (parts: {', '.join(FIELDS)})")
    if fields and fmt != "jsonl":
        raise DatasetError(f"fields: a field map is for format jsonl, not {fmt}")
    tasks: list[Task] = []
    seen: dict[str, int] = {}
    for where, lineno, record in json_records(path):
        task = (
            _user_task(record, where, fields or {}, lineno)
            if fmt == "jsonl"
            else _wiki_task(record, where, fmt)
        )
        if task.id in seen:
            raise DatasetError(f"{where}: id: {task.id!r} repeats (record {seen[task.id]} has it)")
        seen[task.id] = lineno
        tasks.append(task)
        if limit is not None and len(tasks) >= limit:
            break
    return tasks


def index(pid: object) -> int | None:
    """A cited id as a position among a record's paragraphs ("07" is 7, as MuSiQue's support
    metric reads it); None for an id that is not a plain numeral."""
    s = str(pid).strip()
    return int(s) if s.isascii() and s.isdigit() else None


def cited_paragraphs(task: Task, evidence: list[str]) -> list[Paragraph]:
    """The record's paragraphs an answer cites, each once: by position among its own, or, searched
    in the run's corpus, the record's first paragraph with the cited corpus paragraph's title (a
    corpus keeps title and text, not sentences)."""
    out: dict[int, Paragraph] = {}
    if task.search_corpus is None:
        for e in evidence:
            i = index(e)
            if i is not None and i < len(task.paragraphs):
                out.setdefault(i, task.paragraphs[i])
        return list(out.values())
    first: dict[str, Paragraph] = {}
    for p in task.paragraphs:
        first.setdefault(p.title, p)
    for e in evidence:
        found = task.search_corpus.read(e)
        if found is not None and found.title in first:
            out.setdefault(first[found.title].idx, first[found.title])
    return list(out.values())


def sentence_prediction(cited: list[Paragraph]) -> list[list[Any]]:
    """The official support prediction (``sp``: [title, sentence index]) for an answer citing the
    paragraphs ``cited``: every sentence of each. vreact cites paragraphs, not sentences, so this
    is the sentence-level figure's bound: its recall is the most any choice of sentences within the
    cited paragraphs gets, its precision the least."""
    return [[p.title, i] for p in cited for i in range(len(p.sentences))]


def official(task: Task, answer: str | None, evidence: list[str]) -> Score:
    """A HotpotQA or 2Wiki record's score by its official metrics: answer EM and F1 (2Wiki's
    without its aliases, which ship only with its id-bearing release), support F1 over paragraphs
    (``support_f1``, MuSiQue's), the sentence-level support of every sentence of the cited
    paragraphs (``sp_em``, ``sp_f1``: ``sentence_support``) and, for HotpotQA, the joint
    figures (2Wiki's joint needs evidence triples, which vreact does not predict). An
    abstention predicts nothing: every figure 0, as the scripts score a missing prediction."""
    names = ("em", "f1", "support_f1", "sp_em", "sp_f1") + (
        ("joint_em", "joint_f1") if task.format == "hotpotqa" else ()
    )
    if answer is None:
        return Score(None, dict.fromkeys(names, 0.0))
    a = official_best(answer, task.golds)
    predicted = [(t, i) for t, i in sentence_prediction(cited_paragraphs(task, evidence))]
    sp = sentence_support(predicted, task.supporting_facts, task.format == "2wiki")
    figures = {
        "em": a[0],
        "f1": a[1],
        "support_f1": support_f1(evidence, task.supporting_ids),
        "sp_em": sp[0],
        "sp_f1": sp[1],
    }
    if task.format == "hotpotqa":
        figures["joint_em"], figures["joint_f1"] = joint(a, sp)
    return Score(a[0] == 1.0, figures)


def shape(task: Task) -> dict[str, Any]:
    """What a run keeps of a HotpotQA, 2Wiki or user record beyond MuSiQue's columns: its
    format, its paragraphs' titles and sentence counts (the official support prediction is
    written from them), its type."""
    return {
        "format": task.format,
        "kind": task.kind,
        "paragraphs": [[p.title, len(p.sentences)] for p in task.paragraphs],
        **({"searched": "corpus"} if task.search_corpus is not None else {}),
    }


#: The formats whose official scripts ``predictions`` writes for.
OFFICIAL = ("hotpotqa", "2wiki")


def predictions(con: sqlite3.Connection, run_id: int) -> dict[str, dict[str, Any]]:
    """A run's predictions in the official scripts' shape, one per configuration: ``answer``
    (id -> text) and ``sp`` (id -> [title, sentence index], every sentence of each cited
    paragraph: ``sentence_prediction``), and for 2Wiki an empty ``evidence`` (vreact predicts no
    triples: the script reports them, and the joint figures, as missing). Each task's first
    attempt; an abstention or a crash predicts nothing, as the scripts score a missing id.

    ``con`` is the records' connection as ``vreact.records.open_to_read`` opens them: a plain
    ``mode=ro`` open of the file would leave a -wal and a -shm file in the run folder, and read
    an older vreact's records without the columns their migrations add."""
    shapes = {tid: json.loads(rec) for tid, rec in con.execute("SELECT id, record FROM tasks") if rec}
    rows = con.execute(
        "SELECT config, task_id, outcome, answer, evidence FROM attempts"
        " WHERE run_id = ? AND attempt_index = 0 ORDER BY id",
        (run_id,),
    ).fetchall()
    out: dict[str, dict[str, Any]] = {}
    for config, tid, outcome, answer, evidence in rows:
        shape = shapes.get(tid)
        if shape is None or shape.get("format") not in OFFICIAL:
            continue
        if shape.get("searched") == "corpus":
            raise ValueError(
                f"task {tid} was searched in the run's corpus (dataset.corpus): its citations are the"
                " corpus's, not its record's; write predictions from a run on the records' own paragraphs"
            )
        pred = out.setdefault(
            config, {"answer": {}, "sp": {}, **({"evidence": {}} if shape["format"] == "2wiki" else {})}
        )
        if outcome != "answer" or answer is None:
            continue
        paragraphs = shape["paragraphs"]
        ids = dict.fromkeys(i for e in json.loads(evidence or "[]") if (i := index(e)) is not None)
        cited = [paragraphs[i] for i in ids if i < len(paragraphs)]
        pred["answer"][tid] = answer
        pred["sp"][tid] = [[title, k] for title, n in cited for k in range(n)]
    return out
