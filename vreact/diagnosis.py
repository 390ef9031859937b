"""``vreact diagnose``: an independent judge reads sampled complete trajectories of a run and
rates them (seed 000, Tables 5, 7, 22), blind to the gold answer and to the outcome. It reads
the records (read_run), takes the folder's lock, and writes its calls (role ``diagnosis``) and
ratings (``diagnoses``) back."""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from vreact.families import DEFAULT, UnknownFamily, family_of
from vreact.model import Message, Model, ModelError, parse_json_object
from vreact.records import DB_NAME, AttemptRecord, Store, exclusive, read_run

Rating = Literal["GOOD", "MIXED", "POOR", "N/A"]
RATINGS = ("GOOD", "MIXED", "POOR")

DIAGNOSIS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "state": {"type": "string", "enum": [*RATINGS, "N/A"]},
        "validation": {"type": "string", "enum": [*RATINGS, "N/A"]},
        "evidence_complete": {"type": "boolean"},
        "constraints_satisfied": {"type": "boolean"},
        "admitted_guessing": {"type": "boolean"},
        "reason": {"type": "string", "maxLength": 300},
    },
    "required": [
        "state",
        "validation",
        "evidence_complete",
        "constraints_satisfied",
        "admitted_guessing",
        "reason",
    ],
    "additionalProperties": False,
}

#: How the audit names a run's task, what its answer cites and the task's own label: a family's
#: wording (``TaskFamily.audited``), or this one for any task.
TASK_WORDS = {"task": "a task the agent worked on with its tools", "cited": "what it cited", "label": "Task"}
_SYSTEM = (
    "You audit one agent trajectory: {task}. "
    "Rate, from the trajectory alone: state (GOOD, MIXED or POOR: did the agent's verified facts "
    "keep the evidence it found; N/A if it kept none), validation (GOOD, MIXED or POOR: was the "
    "decision to finish supported by the evidence; N/A if there was no completion check), "
    "evidence_complete (did {cited} hold every fact the answer needs), "
    "constraints_satisfied (does the answer fit what the {label_lower} asks), admitted_guessing (did "
    "the agent say it guessed). Reply with JSON: "
    '{{"state": "...", "validation": "...", "evidence_complete": true, "constraints_satisfied": true, '
    '"admitted_guessing": false, "reason": "..."}}'
)


def words_of(family: str | None) -> Mapping[str, str]:
    """The audit's wording for a run of ``family`` (None: made before families, question
    answering's); a family that cannot be loaded here (a plugin's) gets the wording for any task."""
    try:
        return family_of(family or DEFAULT).audited or TASK_WORDS
    except UnknownFamily:
        return TASK_WORDS


class Ratings(BaseModel):
    model_config = ConfigDict(extra="ignore")

    state: Rating
    validation: Rating
    evidence_complete: bool
    constraints_satisfied: bool
    admitted_guessing: bool
    reason: str = ""


def trajectory(a: AttemptRecord, question: str, label: str = "Question") -> str:
    """What the judge reads: the task's text, each executor step and what it observed, the last
    State the context manager kept. Never the gold answer, the outcome or its correctness."""
    lines = [f"{label}: {question}"]
    for s in a.steps:
        lines.append(f"[{s.component} try {s.try_} step {s.step}] thought: {s.thought or ''}")
        lines.append(f"  action: {s.action} {json.dumps(s.input or '')} evidence: {s.evidence}")
        if s.observation:
            lines.append(f"  observed: {s.observation[:400]}")
    cm = [c for c in a.calls if c.role == "context_manager" and c.response]
    if cm:
        state = (parse_json_object(cm[-1].response or "") or {}).get("state")
        lines.append(f"Verified facts the agent kept: {json.dumps(state)}")
    return "\n".join(lines)


def messages(a: AttemptRecord, question: str, words: Mapping[str, str] | None = None) -> list[Message]:
    w = words or words_of(None)
    system = _SYSTEM.format(task=w["task"], cited=w["cited"], label_lower=w["label"].lower())
    user = trajectory(a, question, w["label"])
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def diagnose(run_dir: Path, judge: Model, sample: int = 8, seed: int = 0) -> list[dict[str, Any]]:
    """Rate ``sample`` complete trajectories (answers and abstentions) drawn with ``seed``; an
    unreadable rating is recorded as POOR with no booleans set (fail closed)."""
    with exclusive(run_dir):
        store = Store(run_dir / DB_NAME)
        records = read_run(store)
        done = [a for a in records.attempts if a.outcome in ("answer", "abstain")]
        picked = sorted(random.Random(seed).sample(done, min(sample, len(done))), key=lambda a: a.id)
        words = words_of(records.run.family if records.run else None)
        rows = [_rate(store, judge, a, records.tasks[a.task_id].question or "", words) for a in picked]
        store.replace_diagnoses(judge.name, rows)
        store.close()
    return rows


def _rate(
    store: Store, judge: Model, a: AttemptRecord, question: str, words: Mapping[str, str]
) -> dict[str, Any]:
    msgs = messages(a, question, words)
    try:
        c = judge.generate(msgs, DIAGNOSIS_SCHEMA)
    except ModelError as e:
        store.record_call(a.id, "diagnosis", judge.name, 0, 0, 0.0, "error", str(e), messages=msgs)
        return _row(a, None, f"the judge failed: {e}"[:300])
    store.record_call(
        a.id,
        "diagnosis",
        judge.name,
        c.prompt_tokens,
        c.completion_tokens,
        c.latency_ms,
        messages=msgs,
        response=c.text,
    )
    try:
        r = Ratings.model_validate(parse_json_object(c.text) or {})
    except ValidationError:
        return _row(a, None, f"unreadable rating: {c.text[:200]!r}")
    if not any(c.role == "context_manager" for c in a.calls):  # no State, no completion check
        r = r.model_copy(update={"state": "N/A", "validation": "N/A"})
    return _row(a, r, r.reason[:300])


def _row(a: AttemptRecord, r: Ratings | None, reason: str) -> dict[str, Any]:
    return {
        "attempt_id": a.id,
        "state": r.state if r else "POOR",
        "validation": r.validation if r else "POOR",
        "evidence_complete": int(r.evidence_complete) if r else 0,
        "constraints_satisfied": int(r.constraints_satisfied) if r else 0,
        "admitted_guessing": int(r.admitted_guessing) if r else 0,
        "reason": reason,
    }
