"""GSM8K's problems as tasks: the dataset's own JSON lines (format ``gsm8k``: ``question`` and
``answer``, the worked solution ending ``#### N``) and a user's maths problems in JSON lines read
through a field map (format ``jsonl``: ``id``, ``question``, ``answer``; the answer a number, or a
worked solution ending ``#### N``). The worked solution and the number it ends with are gold: the
scorer's and the probe's, tagged so that no prompt, gate or judge is handed them.

GSM8K's records have no ids: a problem's id is its split and its 0-based line, ``train/7`` (the
split is the file's name up to its first ``_``, ``train.jsonl`` or ``test_0_499.jsonl``; a file
named as a slice of a split, ``NAME_FIRST_LAST.jsonl``, numbers its lines from ``FIRST``)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, PrivateAttr, field_validator

from vreact.gsm8k.numbers import number
from vreact.inputs import DatasetError, json_records
from vreact.origin import tag

#: The formats: GSM8K's own lines, and a user's through a field map.
GSM8K, JSONL = "gsm8k", "jsonl"
#: A user's record: each part -> the field holding it (``dataset.fields`` names those that differ).
FIELDS: Mapping[str, str] = {"id": "id", "question": "question", "answer": "answer"}
#: A file named as a slice of a split (``test_0_499``): the split and its first line.
_SLICE = re.compile(r"(?P<split>[^_]+)_(?P<first>\d+)_(?P<last>\d+)")
#: Where a worked solution states its final number.
FINAL = re.compile(r"####\s*(.+?)\s*$", re.S)


class Problem(BaseModel):
    """One maths problem: the question the roles read, and its gold (the worked solution, when
    the record has one, and the final number, as written after ``####``)."""

    model_config = ConfigDict(extra="forbid")

    id: str
    question: str
    solution: str = ""
    final: str = ""
    _sandbox: Any = PrivateAttr(None)

    @field_validator("solution", "final")
    @classmethod
    def _gold(cls, v: str) -> str:
        return tag(v, "gold")  # the scorer's and the probe's: refused to every role

    @property
    def text(self) -> str:
        return self.question

    @property
    def sandbox(self) -> Any:
        """The run's sandbox it is placed in (``vreact.gsm8k.GsmSandbox``); None: none yet."""
        return self._sandbox

    def in_sandbox(self, sandbox: Any) -> Problem:
        problem = self.model_copy()
        problem._sandbox = sandbox
        return problem

    def gold(self) -> float | None:
        """The final number (commas and ``$`` removed), or None: the record has none."""
        return number(str(self.final))


def split_of(path: Path) -> tuple[str, int]:
    """The id prefix and the first line's number of a file of GSM8K's lines."""
    m = _SLICE.fullmatch(path.stem)
    if m:
        return m["split"], int(m["first"])
    return path.stem.split("_")[0] or path.stem, 0


def _field(record: Any, name: str, kinds: tuple[type, ...], where: str, required: bool = True) -> Any:
    if not isinstance(record, dict):
        raise DatasetError(f"{where}: (line): a record is a JSON object, not {type(record).__name__}")
    if name not in record:
        if required:
            raise DatasetError(f"{where}: {name}: missing")
        return None
    value = record[name]
    if not isinstance(value, kinds) or isinstance(value, bool):
        want = " or ".join("a number" if k in (int, float) else "a string" for k in dict.fromkeys(kinds))
        raise DatasetError(f"{where}: {name}: expected {want}, got {type(value).__name__}")
    return value


def _final(answer: str, where: str, name: str) -> tuple[str, str]:
    """(the worked solution, the final number as written) of an answer: a solution ending
    ``#### N``, or a number alone."""
    m = FINAL.search(answer)
    final = m.group(1) if m else answer.strip()
    if number(final) is None:
        said = "its final number after ####" if m else "a number, or a worked solution ending #### N"
        raise DatasetError(f"{where}: {name}: expected {said}, got {final[:40]!r}")
    return (answer if m else ""), final


def read(
    path: str | Path, fmt: str, limit: int | None = None, fields: Mapping[str, str] | None = None
) -> list[Problem]:
    """The problems of ``path`` in ``fmt`` (``gsm8k`` or ``jsonl``), the first ``limit`` only
    when given; ``fields``: the ``jsonl`` field map (the parts it names, beside ``FIELDS``)."""
    path = Path(path)
    unknown = sorted(set(fields or {}) - set(FIELDS))
    if unknown:
        raise DatasetError(f"fields: {unknown[0]!r} is not a part of a record (parts: {', '.join(FIELDS)})")
    if fields and fmt != JSONL:
        raise DatasetError(f"fields: a field map is for format {JSONL}, not {fmt}")
    f = {**FIELDS, **(fields or {})}
    split, first = split_of(path)
    problems: list[Problem] = []
    seen: dict[str, str] = {}
    for where, place, record in json_records(path):
        i = place - 1  # the 0-based line (or place in an array)
        if fmt == GSM8K:
            question = _field(record, "question", (str,), where)
            solution, final = _final(_field(record, "answer", (str,), where), where, "answer")
            pid = f"{split}/{first + i}"
        else:
            rid = _field(record, f["id"], (str, int), where, required=False)
            question = _field(record, f["question"], (str,), where)
            answer = _field(record, f["answer"], (str, int, float), where)
            solution, final = _final(str(answer), where, f["answer"])
            pid = str(rid) if rid is not None else f"line{i + 1}"
        if not question.strip():
            raise DatasetError(f"{where}: {'question' if fmt == GSM8K else f['question']}: empty")
        if pid in seen:
            raise DatasetError(f"{where}: id: {pid!r} repeats ({seen[pid]} has it)")
        seen[pid] = where
        problems.append(Problem(id=pid, question=question, solution=solution, final=final))
        if limit is not None and len(problems) >= limit:
            break
    return problems
