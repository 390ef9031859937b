"""vreact.records.read_run: one typed reader of a run's records, checked against what the store
wrote for one recorded VG attempt (scripted mock model, a first try rejected at R1)."""

from __future__ import annotations

import json

from tests.controller.test_transcripts import task, vg_attempt  # noqa: F401 (a fixture)
from vreact.records import DB_NAME, RunRecords, latest_run_id, read_run


def test_read_run_returns_every_call_and_verified_artifact(task, store, spec, verifiers, roles):  # noqa: F811
    _, row, model = vg_attempt(task, store, spec, verifiers, roles)
    records = read_run(store)
    assert isinstance(records, RunRecords) and records.run is not None
    assert records.run.id == records.id == latest_run_id(store) == row["run_id"]
    [a] = records.attempts
    assert (a.id, a.outcome, a.answer, a.config) == (row["id"], "answer", row["answer"], "VG")
    assert records.task(a) is not None and records.task(a).question == task.question
    # every call: the prompt as sent, in order, and the reply as the model gave it
    stored = list(store.query("select * from model_calls order by id"))
    assert [c.id for c in a.calls] == [c["id"] for c in stored]
    assert [c.messages for c in a.calls] == model.calls
    assert [c.response for c in a.calls] == [c["response"] for c in stored]
    assert all(c.response and json.loads(c.response) for c in a.calls)
    # every verdict, all its columns, with the artifact it judged
    verdicts = list(store.query("select * from verdicts order by seq"))
    assert len(a.verdicts) == len(verdicts) > 1 and any(v.rejected for v in a.verdicts)
    for got, want in zip(a.verdicts, verdicts, strict=True):
        for column in ("id", "seq", "level", "component", "source", "verifier", "check_name", "decision"):
            assert getattr(got, column) == want[column], column
        assert got.args == json.loads(want["args"])
        [art] = store.query("select json from artifacts where hash = ?", [want["artifact_hash"]])
        assert got.artifact == json.loads(art["json"]) is not None
    assert {v.verifier for v in a.verdicts} <= {"plan", "R1", "R2", "R3", "guard"}
    # the ledger rows and the executor steps
    ledger = list(store.query("select * from ledger order by id"))
    assert [(r.verdict_id, r.artifact) for r in a.ledger] == [
        (r["verdict_id"], json.loads(r["artifact"])) for r in ledger
    ]
    steps = list(store.query("select * from steps order by id"))
    assert [(s.try_, s.step, s.action, s.call_id) for s in a.steps] == [
        (s["try"], s["step"], s["action"], s["call_id"]) for s in steps
    ]


def test_read_run_without_transcripts_and_by_path(task, store, spec, verifiers, roles):  # noqa: F811
    vg_attempt(task, store, spec, verifiers, roles)
    [a] = read_run(store.path, transcripts=False).attempts
    assert a.calls and all(c.messages is None and c.response is None for c in a.calls)
    assert all(v.artifact is None for v in a.verdicts)
    assert read_run(store.path.parent).attempts[0].id == a.id == read_run(store, a.run_id).attempts[0].id


def test_an_empty_folder_has_no_run(tmp_path):
    records = read_run(tmp_path / DB_NAME)
    assert records.id is None and records.run is None and records.attempts == [] and records.tasks == {}
    # a run id the folder does not have: no row, no attempts (and a report of it is empty)
    missing = read_run(tmp_path / DB_NAME, 7)
    assert (missing.id, missing.run, missing.attempts) == (7, None, [])
