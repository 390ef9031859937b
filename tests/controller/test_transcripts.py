"""Transcripts: every call's messages and reply, every verified artifact and every executor step
are kept in the run's database as plain text, and never reach a role's context."""

from __future__ import annotations

import json
import sqlite3
import subprocess

import pytest

from tests.helpers import attempt, solve, support_ids
from vreact.model import MockModel
from vreact.spec import builtin_configs
from vreact.verdict import artifact_hash


@pytest.fixture
def task(full_tasks):
    return next(t for t in full_tasks if t.answerable)


def vg_attempt(task, store, spec, verifiers, roles, marker="MARK-FIRST-TRY"):
    """A VG attempt whose first try is rejected at R1 (an unsupported answer), then answers."""
    script = solve(task, answer="Zanzibar", thought=marker) + solve(task)
    return attempt(builtin_configs()["VG"], task, MockModel(script), store, spec, verifiers, roles)


def test_every_call_keeps_its_messages_and_reply(task, store, spec, verifiers, roles):
    _, row, model = vg_attempt(task, store, spec, verifiers, roles)
    assert row["outcome"] == "answer"
    db = sqlite3.connect(store.path)
    calls = db.execute("select id, messages, response from model_calls order by id").fetchall()
    script = solve(task, answer="Zanzibar", thought="MARK-FIRST-TRY") + solve(task)
    assert len(calls) == len(model.calls) == len(script)
    for (call_id, _, response), sent, out in zip(calls, model.calls, script, strict=True):
        shown = db.execute(
            "select role, content from transcript where call_id = ? order by position", [call_id]
        ).fetchall()
        assert [{"role": r, "content": c} for r, c in shown] == sent  # the prompt, in order
        assert json.loads(response) == out  # the reply, as the model gave it
    # a message repeated by later calls of a try is stored once
    n_messages = db.execute("select count(*) from messages").fetchone()[0]
    assert n_messages < sum(len(c) for c in model.calls)


def test_every_verified_artifact_is_kept_as_json(task, store, spec, verifiers, roles):
    vg_attempt(task, store, spec, verifiers, roles)
    db = sqlite3.connect(store.path)
    rows = db.execute(
        "select v.decision, v.artifact_hash, a.json from verdicts v"
        " left join artifacts a on a.hash = v.artifact_hash order by v.seq"
    ).fetchall()
    assert rows and all(j is not None for _, _, j in rows)
    for _, h, j in rows:
        assert artifact_hash(json.loads(j)) == h  # the JSON is what the hash is of
    rejected = {json.loads(j)["answer"] for d, _, j in rows if d == "reject"}
    accepted = {json.loads(j)["answer"] for d, _, j in rows if d == "accept"}
    # the gates before `supported` accepted the wrong answer; only the right one passed them all
    assert rejected == {"Zanzibar"} and accepted == {"Zanzibar", task.answer}


def test_every_step_is_kept_with_its_observation(task, store, spec, verifiers, roles):
    vg_attempt(task, store, spec, verifiers, roles)
    db = sqlite3.connect(store.path)
    steps = db.execute(
        'select "try", step, action, thought, observation, call_id from steps order by id'
    ).fetchall()
    one_try = ["search", *(["read"] * len(support_ids(task))), "finish"]
    assert [(t, s, a) for t, s, a, *_ in steps] == [
        (n, i, action) for n in (1, 2) for i, action in enumerate(one_try)
    ]
    assert steps[0][3] == "MARK-FIRST-TRY"
    assert steps[1][4].startswith(f"[{support_ids(task)[0]}] ")
    call_ids = [c for *_, c in steps]
    assert call_ids == [r[0] for r in db.execute("select id from model_calls order by id")]


def test_transcripts_never_reach_a_later_try(task, store, spec, verifiers, roles):
    """The first try's text is in the records, and in no prompt of the second try."""
    _, _, model = vg_attempt(task, store, spec, verifiers, roles, marker="MARK-Q7XZ")
    db = sqlite3.connect(store.path)
    assert db.execute("select count(*) from model_calls where response like '%MARK-Q7XZ%'").fetchone()[0] == 1
    assert db.execute("select count(*) from steps where thought = 'MARK-Q7XZ'").fetchone()[0] == 1
    later = model.calls[len(solve(task)) :]
    assert later and not any("MARK-Q7XZ" in json.dumps(call) for call in later)


def test_the_sqlite3_command_reads_them(task, store, spec, verifiers, roles):
    """What a user types: the sqlite3 shell shows the prompts, the replies and the artifacts."""
    vg_attempt(task, store, spec, verifiers, roles)
    out = subprocess.run(
        ["sqlite3", str(store.path), "select count(*), group_concat(distinct role) from transcript"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert out == f"{sum(len(c) for c in store_calls(store))}|system,user"


def store_calls(store):
    rows = store.query("select messages from model_calls order by id")
    return [json.loads(r["messages"]) for r in rows]
