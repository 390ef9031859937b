"""A run's records as flat tables: one row per attempt, verdict, model call, step or task, the
same values ``read_run`` gives (a list or a dict, written into a CSV or Parquet cell, is JSON),
written as CSV, JSON lines or Parquet, or handed to pandas (``RunRecords.to_pandas``)."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    import pandas as pd

    from vreact.records.reader import RunRecords

#: The tables, and the formats a table is written in.
TABLES = ("attempts", "verdicts", "calls", "steps", "tasks")
FORMATS = ("csv", "jsonl", "parquet")
#: An attempt's own columns leave out what it wrote (its rows in the other tables).
_CHILDREN = frozenset(
    {"verdicts", "calls", "steps", "ledger", "events", "diagnoses", "score", "scores", "agreement"}
)
_HINT = "pip install 'vreact[analysis]' (pandas and pyarrow)"


def _own(record: Any, skip: frozenset[str] = frozenset()) -> dict[str, Any]:
    return {f.name: getattr(record, f.name) for f in fields(record) if f.name not in skip}


def rows(records: RunRecords, table: str) -> list[dict[str, Any]]:
    """The rows of ``table``, in the order they were written (tasks: by id). An attempt's row
    adds ``correct`` and ``metrics`` from its family's score (None: a crash)."""
    if table == "tasks":
        return [_own(records.tasks[k]) for k in sorted(records.tasks)]
    if table == "attempts":
        return [
            {
                **_own(a, _CHILDREN),
                "correct": a.score.correct if a.score else None,
                "metrics": a.score.metrics if a.score else None,
            }
            for a in records.attempts
        ]
    if table not in TABLES:
        raise ValueError(f"no table {table!r} (tables: {', '.join(TABLES)})")
    return [_own(r) for a in records.attempts for r in getattr(a, table)]


def _cell(value: Any) -> Any:
    """A value as a flat cell holds it: a list or a dict as JSON."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True) if isinstance(value, list | dict) else value


def _columns(records: RunRecords, table: str, found: list[dict[str, Any]]) -> list[str]:
    if found:
        return list(found[0])
    from vreact.records import reader

    kinds = {"attempts": reader.AttemptRecord, "verdicts": reader.VerdictRecord, "calls": reader.CallRecord}
    kinds |= {"steps": reader.StepRecord, "tasks": reader.TaskRecord}
    names = [f.name for f in fields(kinds[table]) if table != "attempts" or f.name not in _CHILDREN]
    return names + (["correct", "metrics"] if table == "attempts" else [])


def to_pandas(records: RunRecords, table: str = "attempts") -> pd.DataFrame:
    """``table`` as a DataFrame: one row per record, lists and dicts as Python values."""
    try:
        import pandas as pd
    except ImportError:
        raise ImportError(f"a DataFrame needs pandas: {_HINT}") from None
    found = rows(records, table)
    return pd.DataFrame(found, columns=_columns(records, table, found))


def write(records: RunRecords, table: str, fmt: str, out: Path | TextIO) -> int:
    """``table`` written as ``fmt`` to the file ``out`` (or, csv and jsonl only, the text stream
    ``out``); how many rows it wrote."""
    if fmt not in FORMATS:
        raise ValueError(f"no format {fmt!r} (formats: {', '.join(FORMATS)})")
    found = rows(records, table)
    columns = _columns(records, table, found)
    if fmt == "parquet":
        if not isinstance(out, Path):
            raise ValueError("parquet is written to a file: give --out FILE")
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            raise ImportError(f"parquet needs pyarrow: {_HINT}") from None
        data = {c: [_cell(r[c]) for r in found] for c in columns}
        pq.write_table(pa.table(data), out)
        return len(found)
    buffer = io.StringIO()
    if fmt == "csv":
        w = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n")
        w.writeheader()
        for r in found:
            w.writerow({c: _cell(r[c]) for c in columns})
    else:
        for r in found:
            buffer.write(json.dumps(r, ensure_ascii=False) + "\n")
    if isinstance(out, Path):
        out.write_text(buffer.getvalue(), encoding="utf-8")
    else:
        out.write(buffer.getvalue())
    return len(found)
