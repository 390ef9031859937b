"""``vreact audit``: a dataset checked against itself, with no model: what a family's gates read
from each record that the record's own gold contradicts (code: a stated example the reference
solution fails). It says something about the dataset; it never changes what a gate runs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel

from vreact.families import Finding, TaskFamily


class AuditReport(BaseModel):
    """``vreact audit --json``: the records audited, and each finding."""

    kind: Literal["audit"] = "audit"
    family: str
    dataset: str
    tasks: int
    #: what the family's gates read from these records (code: the examples the prompts state)
    reading: list[str]
    findings: list[Finding]


def audit(
    family: TaskFamily, tasks: list[Any], dataset: str, progress: Callable[[int, int], None] | None = None
) -> AuditReport:
    """The audit of ``tasks`` (read from ``dataset``) by ``family``, run now, a task at a time
    (``progress(done, total)`` after each); a family without an audit raises
    ``NotImplementedError`` naming it."""
    from vreact.families import reading_of

    found: list[Finding] = []
    for i, task in enumerate(tasks, 1):
        found += family.audit([task])
        if progress is not None:
            progress(i, len(tasks))
    read = reading_of(family, tasks)
    return AuditReport(
        family=family.name,
        dataset=dataset,
        tasks=len(tasks),
        reading=read.lines if read is not None else [],
        findings=found,
    )


def tables(r: AuditReport) -> list[tuple[str, list[str], list[list[str]]]]:
    per = len({f.task for f in r.findings})
    rows = [[f.task, f.read, f.gold] for f in r.findings] or [["none", "", ""]]
    return [
        (
            f"Dataset audit of {r.dataset} ({r.family}, {r.tasks} record(s)): {len(r.findings)} finding(s)"
            f" on {per} record(s), each what the gates read that the record's own gold contradicts",
            ["task", "the gates read", "the gold"],
            rows,
        )
    ]
