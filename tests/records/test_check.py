"""``vreact check``: SQLite's integrity check and the records' own invariants, by row id; it
passes a scripted run and finds what is planted in a copy of it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.records.test_safe import _truncated, beside, invoke, made, migrated, old_folder, run, sha
from vreact.records import DB_NAME, MIGRATIONS

__all__ = ["made", "run"]  # the fixtures


def test_check_passes_a_scripted_run(run):
    result = invoke("check", run)
    assert result.exit_code == 0, result.output
    [line] = result.output.strip().splitlines()
    assert line.startswith("OK: ") and "3 attempts" in line
    conn = sqlite3.connect(run / DB_NAME)
    outcomes = dict(conn.execute("select config, outcome from attempts"))
    rejects = conn.execute("select count(*) from verdicts where decision = 'reject'").fetchone()[0]
    tied = conn.execute("select count(*) from ledger where verdict_id is not null").fetchone()[0]
    calls = conn.execute("select sum(calls) from attempts").fetchone()[0]
    conn.close()
    # the run has what check holds to its invariants: each outcome, a rejection, an accepted unit
    assert outcomes == {"VG": "answer", "N": "abstain", "crash": "crash"}
    assert rejects >= 1 and tied >= 1 and calls >= 3


def plant(run: Path, sql: str) -> None:
    conn = sqlite3.connect(run / DB_NAME)
    conn.execute(sql)
    conn.commit()
    conn.close()


def problems_of(run: Path) -> list[str]:
    result = invoke("check", run)
    assert result.exit_code == 1, result.output
    return result.output.strip().splitlines()[:-1]  # the last line is the count (stderr)


@pytest.mark.damages_records
def test_check_finds_a_rejection_without_its_memory_row(run):
    conn = sqlite3.connect(run / DB_NAME)
    vid, aid = conn.execute("select verdict_id, attempt_id from failures order by id limit 1").fetchone()
    conn.close()
    plant(run, f"delete from failures where verdict_id = {vid}")
    assert problems_of(run) == [f"verdict {vid} (attempt {aid}): a rejection without its failure-index row"]


@pytest.mark.damages_records
def test_check_finds_an_attempt_whose_fields_disagree_with_its_outcome(run):
    conn = sqlite3.connect(run / DB_NAME)
    [aid] = conn.execute("select id from attempts where outcome = 'answer'").fetchone()
    [bid] = conn.execute("select id from attempts where outcome = 'abstain'").fetchone()
    conn.close()
    plant(run, f"update attempts set abstain_level = 'L1' where id = {aid}")
    plant(run, f"update attempts set abstain_cause = null where id = {bid}")
    assert problems_of(run) == [
        f"attempt {aid}: outcome answer but abstain_level set",
        f"attempt {bid}: outcome abstain without abstain_cause",
    ]


@pytest.mark.damages_records
def test_check_finds_an_accepted_unit_untied_from_its_accept(run):
    conn = sqlite3.connect(run / DB_NAME)
    lid, vid = conn.execute("select id, verdict_id from ledger where verdict_id is not null").fetchone()
    [rid] = conn.execute("select id from verdicts where decision = 'reject'").fetchone()
    conn.close()
    plant(run, f"update ledger set verdict_id = null where id = {lid}")
    assert problems_of(run) == [
        f"ledger {lid}: tied to no verdict, though verdict {vid} accepted its artifact"
    ]
    plant(run, f"update ledger set verdict_id = {rid} where id = {lid}")
    assert problems_of(run) == [f"ledger {lid}: its verdict {rid} is no accept"]


@pytest.mark.damages_records
def test_check_finds_a_missing_call(run):
    conn = sqlite3.connect(run / DB_NAME)
    aid, n = conn.execute("select id, calls from attempts where config = 'VG'").fetchone()
    [cid] = conn.execute(f"select max(id) from model_calls where attempt_id = {aid}").fetchone()
    conn.close()
    plant(run, f"update steps set call_id = null where call_id = {cid}")
    plant(run, f"delete from model_calls where id = {cid}")
    assert problems_of(run) == [
        f"attempt {aid}: {n} model call(s) recorded at its end, {n - 1} in model_calls"
    ]


@pytest.mark.damages_records
def test_check_reads_an_older_vreact_s_records_from_a_migrated_copy_and_finds_a_damaged_file(tmp_path, run):
    """Records that lack a migration are an older vreact's, not wrong: checked on a migrated
    private copy (what a problem there is, is found there), the file left as it is."""
    folder = old_folder(tmp_path / "old", run)
    db = folder / DB_NAME
    result = invoke("check", folder)
    assert result.exit_code == 0, result.output
    assert "an older vreact's records, 1 migration(s) short" in result.output
    plant(folder, "update attempts set answer = null where outcome = 'answer'")
    before = sha(db)
    [line] = problems_of(folder)
    assert line.endswith("outcome answer without answer")
    assert sha(db) == before and beside(db) == []
    assert MIGRATIONS[-1].__name__ not in migrated(db)
    _truncated(run / DB_NAME)
    before = sha(run / DB_NAME)
    [line] = problems_of(run)
    assert "malformed" in line and "truncated" in line and sha(run / DB_NAME) == before


@pytest.mark.damages_records
def test_check_writes_nothing(run):
    db = run / DB_NAME
    before = sha(db)
    assert invoke("check", run).exit_code == 0
    plant(run, "update attempts set answer = null where outcome = 'answer'")
    before = sha(db)
    assert invoke("check", run).exit_code == 1
    assert sha(db) == before and beside(db) == []


@pytest.mark.damages_records
def test_an_unfinished_attempt_is_no_problem_but_is_counted(run):
    conn = sqlite3.connect(run / DB_NAME)
    conn.execute(
        "insert into attempts (run_id, config, task_id, attempt_index, seed, outcome, started)"
        " select run_id, config, task_id, 9, 9, 'running', started from attempts limit 1"
    )
    conn.commit()
    conn.close()
    result = invoke("check", run)
    assert result.exit_code == 0, result.output
    assert "1 unfinished" in result.output
    plant(run, "update attempts set answer = 'x' where outcome = 'running'")
    [line] = problems_of(run)
    assert line.endswith("outcome running but answer set")


@pytest.mark.damages_records
def test_check_runs_sqlite_s_integrity_check(run):
    from tests.records.test_safe import overwrite_page_of

    overwrite_page_of(run / DB_NAME, "attempts")
    before = sha(run / DB_NAME)
    found = problems_of(run)
    assert found and all(line.startswith(("integrity: ", f"{run / DB_NAME}: ")) for line in found), found
    assert sha(run / DB_NAME) == before
