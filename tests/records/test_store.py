"""The store: migrations, verdict-only memory writes, unfinished attempts, documented schema."""

from __future__ import annotations

import json
import re

import pytest

from tests.conftest import REPO
from vreact.qa.dataset import Task
from vreact.records import MIGRATIONS, Store
from vreact.verdict import Unit, Verdict


def test_schema_page_names_every_table_and_column(store):
    doc = (REPO / "memory" / "schema.md").read_text()
    for table in store.db.table_names():
        section = re.search(rf"^## {table}\n(.*?)(?=^## |\Z)", doc, re.S | re.M)
        assert section, f"memory/schema.md has no section for {table}"
        for column in store.db[table].columns:
            assert f"`{column.name}`" in section.group(1), f"{table}.{column.name} undocumented"


@pytest.fixture
def run(store):
    """A run with one task, ``t1``."""
    run_id = store.new_run({}, "mock/x", "t")
    store.add_tasks([Task(id="t1", question="q?", paragraphs=[], answer="a").record()])
    return run_id


def test_migrations_run_once(tmp_path):
    Store(tmp_path / "vreact.db")
    again = Store(tmp_path / "vreact.db")
    assert [r["name"] for r in again.db.table("_migrations").rows] == [m.__name__ for m in MIGRATIONS]


def test_a_reject_writes_the_failure_index_and_an_accepted_unit_the_ledger(store, run):
    a = store.start_attempt(run, "VG", "t1", 0, 0)
    unit = Unit("unit", "R1", "executor.s1", "s1", {"answer": "x", "cited": {}}, {"answer": "x"})
    accept = Verdict("R1", "executor.s1", "gate", "parses", "accept", artifact_hash=unit.artifact_hash)
    ok = store.record_verdict(a, accept, {"answer": "x"})
    other = Verdict("R1", "executor.s1", "gate", "parses", "accept", artifact_hash="another artifact")
    store.record_verdict(a, other, {"answer": "y"})  # a later accept, of something else
    bad = store.record_verdict(a, Verdict("R1", "executor.s1", "gate", "supported", "reject", "unsupported"))
    assert store.ledger(a) == []  # a gate's accept is a verdict only
    [failure] = store.failures(a)
    assert failure["verdict_id"] == bad
    assert failure["cause"] == "unsupported" and store.failures(a, "executor.s2") == []
    store.defer_unit(a, unit)
    [held] = store.ledger(a)  # read while held back: no commit needed, no ids yet
    assert (held["id"], held["kind"], held["slot"], json.loads(held["input"])) == (
        None,
        "unit",
        "s1",
        unit.input,
    )
    assert next(store.db.query("select count(*) as n from ledger"))["n"] == 0  # nothing was written
    store.flush()
    [row] = store.ledger(a)
    assert {k: row[k] for k in held if k not in ("id", "verdict_id")} == {
        k: v for k, v in held.items() if k not in ("id", "verdict_id")
    }
    # tied to the accept of this very artifact, not to the component's latest accept
    assert (row["verdict_id"], row["kind"], row["slot"], row["level"]) == (ok, "unit", "s1", "L3")
    store.defer_unit(a, Unit("unit", "R1", "executor.s2", "s2", {"answer": "y"}, {"answer": "y"}))
    store.flush()
    assert store.ledger(a, "executor.s2")[0]["verdict_id"] is None  # no verifier accepted it


def test_a_read_failure_index_shows_each_later_rejection(store, run):
    """The store keeps an attempt's failure index once read: a rejection written afterwards,
    at once or held back, is in the next read, an accept changes nothing, another attempt's
    rows never show."""
    a, b = (store.start_attempt(run, "VG", "t1", i, 0) for i in (0, 1))
    assert store.failures(a) == []
    store.record_verdict(a, Verdict("R1", "executor.s1", "gate", "supported", "reject", "unsupported"))
    store.record_verdict(b, Verdict("R1", "executor.s1", "gate", "supported", "reject", "no_evidence"))
    assert [f["cause"] for f in store.failures(a)] == ["unsupported"]
    store.defer_verdicts(a, [Verdict("R1", "executor.s1", "gate", "parses", "accept")])
    store.defer_verdicts(a, [Verdict("R3", "final", "gate", "multi_hop", "reject", "single_hop")])
    assert [f["cause"] for f in store.failures(a)] == ["unsupported", "single_hop"]
    assert [f["cause"] for f in store.failures(a, "final")] == ["single_hop"]
    assert [f["cause"] for f in store.failures(b)] == ["no_evidence"]


def test_a_failure_row_carries_the_artifact_it_rejected_kept_or_read_from_the_file(store, run, tmp_path):
    """What the executor's ``failures.rejected`` reads: the same artifact from the index the
    store keeps for its live attempt and from the file, through the verdict's artifact row."""
    a = store.start_attempt(run, "VG", "t1", 0, 0)
    program = {"kind": "answer", "answer": "def f():\n    return 1\n", "reason": ""}
    rejected = Verdict("R1", "executor.s1", "gate", "examples_pass", "reject", "x", artifact_hash="h1")
    store.record_verdict(a, rejected, program)
    prose = Verdict("R1", "executor.s1", "gate", "parses", "reject", "format", artifact_hash="h2")
    store.defer_verdicts(a, [prose], "no step here")
    budget = Verdict("budget", "executor.s1", "budget", "steps", "reject", "steps", artifact_hash="h3")
    store.defer_verdicts(a, [budget])  # of no artifact
    want = [program, "no step here", None]
    assert [f["artifact"] for f in store.failures(a)] == want
    store.flush()
    again = Store(tmp_path / "vreact.db")  # an attempt it did not start: read from the file
    assert [f["artifact"] for f in again.failures(a)] == want


def test_unfinished_attempts_are_discarded_with_what_they_wrote(store, run):
    done = store.start_attempt(run, "N", "t1", 0, 0)
    store.finish_attempt(done, {"outcome": "answer", "answer": "a"})
    killed = store.start_attempt(run, "VG", "t1", 0, 0)
    store.record_verdict(killed, Verdict("R1", "executor.s1", "gate", "parses", "reject", "format"))
    store.record_call(killed, "executor", "mock/x", 10, 2, 1.0)
    assert store.discard_unfinished() == 1
    assert [r["id"] for r in store.query("select id from attempts")] == [done]
    for table in ("verdicts", "failures", "model_calls"):
        assert list(store.query(f"select * from {table}")) == []


def test_an_old_run_folder_is_backfilled_with_verifier_and_check_name(tmp_path):
    """Before migration 009 ``verifier`` held the check's name; opening the folder moves it to
    ``check_name`` and names the verifier (plan, R1, R2, R3, guard), in ``failures`` too; 010
    makes step cap and step budget stops budget verdicts."""
    import sqlite3

    import sqlite_utils

    db = sqlite_utils.Database(sqlite3.connect(tmp_path / "vreact.db"))
    for m in MIGRATIONS[:8]:
        m(db)
        db.table("_migrations").insert({"name": m.__name__, "applied": 0.0}, pk="name")
    sets = {"plan": {"gates": [{"name": "plan_dag"}]}, "R2": {"gates": [{"name": "chain_final"}]}}
    db.table("runs").insert({"id": 1, "config_json": json.dumps({"verifiers": sets})})
    db.table("tasks").insert({"id": "t1"})
    abstained = {"abstain_level": "L1", "abstain_component": "answer", "abstain_cause": "c", "finished": 1.0}
    db.table("attempts").insert({"id": 1, "run_id": 1, "task_id": "t1", "outcome": "abstain"} | abstained)
    old = [  # level, source, name as recorded before
        ("L2", "gate", "plan_dag"),
        ("L2", "gate", "chain_final"),
        ("L2", "judge", "R2_judge"),
        ("L3", "gate", "supported"),
        ("L3", "guard", "repetition_guard"),
        ("L1", "gate", "multi_hop"),
        ("L3", "guard", "step_cap"),
    ]
    for seq, (level, source, name) in enumerate(old):
        db.table("verdicts").insert(
            {"id": seq + 1, "attempt_id": 1, "seq": seq, "level": level, "source": source}
            | {"verifier": name, "decision": "reject", "cause": "c"}
        )
        db.table("failures").insert(
            {"verdict_id": seq + 1, "attempt_id": 1, "level": level, "source": source, "verifier": name}
            | {"cause": "c"}
        )
    db.conn.commit()
    db.conn.close()

    store = Store(tmp_path / "vreact.db")
    want = [
        ("plan", "plan_dag"),
        ("R2", "chain_final"),
        ("R2", "R2_judge"),
        ("R1", "supported"),
        ("guard", "repetition_guard"),
        ("R3", "multi_hop"),
        ("budget", "step_cap"),  # migration 010: a step cap stop is a budget's, not a guard's
    ]
    got = [(r["verifier"], r["check_name"]) for r in store.query("select * from verdicts order by seq")]
    assert got == want
    assert [(r["verifier"], r["check_name"]) for r in store.failures(1)] == want


def test_the_crash_kinds_vreact_check_knows_are_the_outcome_s():
    from typing import get_args

    from vreact.controller import CrashKind
    from vreact.records import CRASH_KINDS, RETRYABLE_CRASHES

    assert get_args(CrashKind) == CRASH_KINDS
    assert set(RETRYABLE_CRASHES) < set(CRASH_KINDS)
