"""The store: migrations, verdict-only memory writes, unfinished attempts, documented schema."""

from __future__ import annotations

import re

import pytest

from tests.conftest import REPO
from vreact.dataset import Task
from vreact.memory import MIGRATIONS, Store
from vreact.verdict import Verdict


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


def test_a_verdict_writes_the_ledger_or_the_failure_index(store, run):
    a = store.start_attempt(run, "VG", "t1", 0, 0)
    ok = store.record_verdict(a, Verdict("L3", "executor.s1", "gate", "parses", "accept"), {"answer": "x"})
    bad = store.record_verdict(a, Verdict("L3", "executor.s1", "gate", "supported", "reject", "unsupported"))
    [ledger] = store.ledger(a)
    [failure] = store.failures(a)
    assert (ledger["verdict_id"], failure["verdict_id"]) == (ok, bad)
    assert failure["cause"] == "unsupported" and store.failures(a, "executor.s2") == []


def test_unfinished_attempts_are_discarded_with_what_they_wrote(store, run):
    done = store.start_attempt(run, "N", "t1", 0, 0)
    store.finish_attempt(done, {"outcome": "answer", "answer": "a"})
    killed = store.start_attempt(run, "VG", "t1", 0, 0)
    store.record_verdict(killed, Verdict("L3", "executor.s1", "gate", "parses", "reject", "format"))
    store.record_call(killed, "executor", "mock/x", 10, 2, 1.0)
    assert store.discard_unfinished() == 1
    assert [r["id"] for r in store.query("select id from attempts")] == [done]
    for table in ("verdicts", "failures", "model_calls"):
        assert list(store.query(f"select * from {table}")) == []
