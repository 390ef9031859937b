"""A verdict and its memory row (the failure index's for a reject; for the accepts that let a
unit through, the unit's ledger row, held back with them) are one transaction: a process that
dies between the verdict's insert and the commit leaves neither. The process really dies
(``os._exit`` from SQLite's statement trace), no clean-up runs.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from tests.conftest import REPO
from vreact.records import Store

#: Runs in a subprocess: one attempt's verdict, dying (before the statement runs) at the
#: ledger's or failure index's insert (argv[3] "memory_row"), or at the commit after it ("commit").
KILLED = textwrap.dedent(
    """
    import os, re, sys

    from vreact.records import Store
    from vreact.qa.dataset import Task
    from vreact.verdict import Unit, Verdict

    db, decision, at = sys.argv[1:4]
    store = Store(db)
    run = store.new_run({}, "mock/x", "t")
    store.add_tasks([Task(id="t1", question="q?", paragraphs=[], answer="a").record()])
    attempt = store.start_attempt(run, "VG", "t1", 0, 0)
    seen = []  # the verdict's insert, then its memory row's

    def trace(sql):
        low = " ".join(sql.lower().split())
        if re.match(r'insert into [\\["]?verdicts', low):
            seen.append("verdict")
        elif seen == ["verdict"] and re.match(r'insert into [\\["]?(ledger|failures)', low):
            if at == "memory_row":
                os._exit(17)  # the process dies here, mid-transaction
            seen.append("memory_row")
        elif seen == ["verdict", "memory_row"] and low.startswith("commit"):
            os._exit(17)

    store.db.conn.set_trace_callback(trace)
    cause = "" if decision == "accept" else "unsupported"
    verdict = Verdict("R1", "executor.s1", "gate", "supported", decision, cause, "", 2, "h")
    if decision == "accept":  # as the recorder writes them: the accept, then the unit it let through
        store.defer_verdicts(attempt, [verdict], {"answer": "x"})
        store.defer_unit(attempt, Unit("unit", "R1", "executor.s1", "s1", {"answer": "x"}, {"answer": "x"}))
        store.flush()
    else:
        store.record_verdict(attempt, verdict, {"answer": "x"})
    print("verdict recorded, never killed:", seen)
    """
)


@pytest.mark.parametrize("decision", ["accept", "reject"])
@pytest.mark.parametrize("at", ["memory_row", "commit"])
def test_a_verdict_and_its_memory_row_are_one_transaction(tmp_path, decision, at):
    db = tmp_path / "vreact.db"
    done = subprocess.run(
        [sys.executable, "-c", KILLED, str(db), decision, at], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 17, done.stdout + done.stderr
    store = Store(db)  # what another process finds afterwards
    counts = {
        t: next(store.query(f"select count(*) as n from {t}"))["n"]
        for t in ("verdicts", "ledger", "failures")
    }
    assert counts == {"verdicts": 0, "ledger": 0, "failures": 0}
    # the attempt's row is held back and written in its first transaction, this one: gone too
    assert list(store.query("select id from attempts")) == []


#: Runs in a subprocess: a VG attempt whose first try is rejected at R1 and whose second answers,
#: dying at the memory-row insert numbered argv[2] (1-based), before it runs.
KILLED_ATTEMPT = textwrap.dedent(
    """
    import os, re, sys

    from tests.conftest import FULL
    from tests.helpers import attempt, solve
    from vreact.records import Store
    from vreact.spec import builtin_configs, load_roles, load_spec, load_verifiers
    from vreact.qa.dataset import load_tasks

    task = next(t for t in load_tasks(FULL) if t.answerable)
    store = Store(sys.argv[1])
    die_at, rows = int(sys.argv[2]), []

    def trace(sql):
        if re.match(r'insert into [\\\\["]?(ledger|failures)', " ".join(sql.lower().split())):
            rows.append(sql)
            if len(rows) == die_at:
                os._exit(17)

    store.db.conn.set_trace_callback(trace)
    script = solve(task, answer="Zanzibar") + solve(task)
    attempt(builtin_configs()["VG"], task, script, store, load_spec(), load_verifiers(), load_roles())
    print("attempt ended, never killed; memory rows:", len(rows))
    """
)


@pytest.mark.parametrize("die_at", [1, 2, 3])
def test_an_attempt_killed_mid_verdict_leaves_no_verdict_without_its_memory_row(tmp_path, die_at):
    db = tmp_path / "vreact.db"
    done = subprocess.run(
        [sys.executable, "-c", KILLED_ATTEMPT, str(db), str(die_at)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert done.returncode == 17, done.stdout + done.stderr
    store = Store(db)
    orphans = store.query(
        "select v.id from verdicts v where v.decision = 'reject'"
        " and not exists (select 1 from failures f where f.verdict_id = v.id)"
    )
    assert list(orphans) == []
    # an accept that let a unit through is never left without it (the unit's row names it)
    accepted = store.query(
        "select v.id from verdicts v where v.decision = 'accept' and v.verifier = 'R1'"
        " and v.check_name = 'supported'"
        " and not exists (select 1 from ledger l where l.artifact_hash = v.artifact_hash)"
    )
    assert list(accepted) == []
    memory = next(store.query("select (select count(*) from ledger) + (select count(*) from failures) as n"))
    assert memory["n"] < die_at  # the transaction that was cut off left nothing
