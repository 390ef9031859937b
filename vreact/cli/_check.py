"""``vreact check``: SQLite's integrity check and the records' own invariants, read-only."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import click

from vreact.cli._common import UserError, console
from vreact.records import CRASH_KINDS, DB_NAME, MIGRATIONS, RETRYABLE_CRASHES, RecordsError, open_to_read
from vreact.records.store import connect_read_only, damage, unreadable

#: The columns of an attempt's outcome, and which each outcome must set (+) or leave NULL (-).
_ABSTAIN = ("abstain_level", "abstain_component", "abstain_cause")
_CRASH = ("error", "crash_kind")
_OUTCOME_FIELDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "answer": (("answer",), (*_ABSTAIN, *_CRASH)),
    "abstain": (_ABSTAIN, ("answer", *_CRASH)),
    "crash": (_CRASH, ("answer", *_ABSTAIN)),
    "running": ((), ("answer", *_ABSTAIN, *_CRASH, "finished")),
}

#: Each check of the links between verdicts, the failure index and the ledger: its SQL (rows of
#: ``id`` and ``problem``).
_LINKS = (
    # a rejection is written with its failure row, in one transaction (Store._verdicts); joins,
    # not correlated subqueries, so SQLite indexes failures.verdict_id for the read itself
    (
        "select v.id, 'verdict ' || v.id || ' (attempt ' || v.attempt_id || '): a rejection without"
        " its failure-index row' as problem from verdicts v left join failures f"
        " on f.verdict_id = v.id where v.decision = 'reject' and f.id is null"
    ),
    (
        "select v.id, 'verdict ' || v.id || ': ' || count(*) || ' failure-index rows, not one' as problem"
        " from verdicts v join failures f on f.verdict_id = v.id group by v.id having count(*) > 1"
    ),
    (
        "select f.id, 'failure ' || f.id || ': ' || case when v.id is null then 'its verdict '"
        " || coalesce(f.verdict_id, 'NULL') || ' does not exist' when v.decision != 'reject'"
        " then 'its verdict ' || v.id || ' is no rejection' else 'it disagrees with its verdict '"
        " || v.id || ' (attempt, level, component, verifier or cause)' end as problem"
        " from failures f left join verdicts v on v.id = f.verdict_id where v.id is null"
        " or v.decision != 'reject' or v.attempt_id != f.attempt_id or v.level is not f.level"
        " or v.component is not f.component or v.verifier is not f.verifier or v.cause is not f.cause"
    ),
    # an accepted unit names the accept that let it in (NULL where no verifier runs: N, NP)
    (
        "select l.id, 'ledger ' || l.id || ': ' || case when v.id is null then 'its verdict '"
        " || l.verdict_id || ' does not exist' when v.decision != 'accept' then 'its verdict '"
        " || v.id || ' is no accept' else 'it disagrees with its verdict ' || v.id"
        " || ' (attempt, component or artifact)' end as problem"
        " from ledger l left join verdicts v on v.id = l.verdict_id where l.verdict_id is not null"
        " and (v.id is null or v.decision != 'accept' or v.attempt_id != l.attempt_id"
        " or v.component is not l.component or v.artifact_hash is not l.artifact_hash)"
    ),
    # a unit NULL-tied though an accept of its very artifact is recorded (the writer ties it to
    # the accept of the unit's verifier; the ledger keeps no verifier to tell them apart)
    (
        "select l.id, 'ledger ' || l.id || ': tied to no verdict, though verdict ' || max(v.id)"
        " || ' accepted its artifact' as problem from ledger l join verdicts v"
        " on v.attempt_id = l.attempt_id and v.component is l.component"
        " and v.artifact_hash = l.artifact_hash and v.decision = 'accept'"
        " where l.verdict_id is null group by l.id"
    ),
    (
        "select id, 'verdict ' || id || ': decision ' || quote(decision) || ' is neither accept nor"
        " reject' as problem from verdicts where decision not in ('accept', 'reject')"
        " or decision is null"
    ),
    # every call an attempt made is in model_calls (a judge's later diagnosis calls are not its own)
    (
        "select a.id, 'attempt ' || a.id || ': ' || a.calls || ' model call(s) recorded at its end, '"
        " || (select count(*) from model_calls c where c.attempt_id = a.id and c.role != 'diagnosis')"
        " || ' in model_calls' as problem from attempts a where a.outcome != 'running'"
        " and a.calls is not null and a.calls != (select count(*) from model_calls c"
        " where c.attempt_id = a.id and c.role != 'diagnosis')"
    ),
)


def problems(db: Path) -> Iterator[str]:
    """What is wrong with the records at ``db``, one line each (none: they are whole). Reads
    only, and makes no file beside it. Records of an older vreact are not wrong: their
    invariants are checked as every reader reads them, on a migrated private copy
    (:func:`vreact.records.open_to_read`), and the file is left as that vreact wrote it."""
    found = damage(db)
    if found is not None:
        yield f"{db}: {found}"
        return
    conn = connect_read_only(db)
    try:
        yield from _problems(conn, db)
    except sqlite3.DatabaseError as e:
        yield f"{db}: {unreadable(e)}"
    except RecordsError as e:  # the private copy could not be made
        yield str(e)
    finally:
        conn.close()


def _missing(conn: sqlite3.Connection) -> list[str]:
    """The migrations of this vreact the records lack (an older vreact made them)."""
    done = {r[0] for r in conn.execute("select name from _migrations")}
    return [m.__name__ for m in MIGRATIONS if m.__name__ not in done]


def _problems(conn: sqlite3.Connection, db: Path) -> Iterator[str]:
    rows = [r[0] for r in conn.execute("PRAGMA integrity_check")]
    if rows != ["ok"]:
        yield from (f"integrity: {r}" for r in rows)
        return
    tables = {r[0] for r in conn.execute("select name from sqlite_master where type = 'table'")}
    if "_migrations" not in tables:
        yield "migrations: no _migrations table: not a vreact run's records"
        return
    done = [r[0] for r in conn.execute("select name from _migrations order by rowid")]
    code = [m.__name__ for m in MIGRATIONS]
    unknown = [n for n in done if n not in code]
    yield from (f"migrations: {n} is unknown to this vreact (a newer one wrote it)" for n in unknown)
    if unknown:
        return  # the invariants below are of this code's schema
    if _missing(conn):  # an older vreact's: this code's schema is the migrated copy's
        copy = open_to_read(db)
        try:
            yield from _invariants(copy.db.conn)
        finally:
            copy.close()
        return
    yield from _invariants(conn)


def _invariants(conn: sqlite3.Connection) -> Iterator[str]:
    """The records' own invariants, on this code's schema."""
    for table, rowid, parent, _ in conn.execute("PRAGMA foreign_key_check"):
        yield f"{table} {rowid}: names a {parent} row that does not exist"
    yield from _outcomes(conn)
    for sql in _LINKS:
        yield from (problem for _, problem in conn.execute(sql))


def _outcomes(conn: sqlite3.Connection) -> Iterator[str]:
    """Each attempt's fields against its outcome."""
    columns = sorted({c for must, never in _OUTCOME_FIELDS.values() for c in (*must, *never)})
    cur = conn.execute(f"select id, outcome, {', '.join(columns)} from attempts order by id")
    for row in cur:
        a = dict(zip(("id", "outcome", *columns), row, strict=True))
        rule = _OUTCOME_FIELDS.get(a["outcome"])
        if rule is None:
            yield f"attempt {a['id']}: outcome {a['outcome']!r} is none of {', '.join(_OUTCOME_FIELDS)}"
            continue
        must, never = rule
        unset = [c for c in must if a[c] is None]
        wrong = [c for c in never if a[c] is not None]
        if unset:
            yield f"attempt {a['id']}: outcome {a['outcome']} without {', '.join(unset)}"
        if wrong:
            yield f"attempt {a['id']}: outcome {a['outcome']} but {', '.join(wrong)} set"
        if a["outcome"] != "running" and a["finished"] is None:
            yield f"attempt {a['id']}: outcome {a['outcome']} without a finish time"
        if a["crash_kind"] is not None and a["crash_kind"] not in CRASH_KINDS:
            yield f"attempt {a['id']}: crash kind {a['crash_kind']!r} is none of {', '.join(CRASH_KINDS)}"


def _counts(db: Path) -> str:
    """What the records hold; for an older vreact's, as its migrated private copy reads them."""
    first = connect_read_only(db)
    try:
        older = _missing(first)
    finally:
        first.close()
    store = open_to_read(db)
    conn = store.db.conn
    try:
        n = {
            t: conn.execute(f"select count(*) from {t}").fetchone()[0]
            for t in ("runs", "attempts", "verdicts", "failures", "ledger", "model_calls")
        }
        running = conn.execute("select count(*) from attempts where outcome = 'running'").fetchone()[0]
        kinds = ", ".join("?" for _ in RETRYABLE_CRASHES)
        retry = f"select count(*) from attempts where outcome = 'crash' and crash_kind in ({kinds})"
        again = conn.execute(retry, RETRYABLE_CRASHES).fetchone()[0]
    finally:
        store.close()
    unfinished = f", {running} unfinished (a killed run's: discarded when it resumes)" if running else ""
    unfinished += f", {again} crashed without a fair run (run again on resume)" if again else ""
    if older:
        unfinished += (
            f"; an older vreact's records, {len(older)} migration(s) short: checked on a migrated"
            " private copy, the file left as it is"
        )
    return (
        f"{n['runs']} run(s), {n['attempts']} attempts, {n['verdicts']} verdicts, {n['failures']} failure"
        f" rows, {n['ledger']} ledger rows, {n['model_calls']} model calls, {len(MIGRATIONS)} migrations"
        f"{unfinished}"
    )


@click.command()
@click.argument("run_dir", type=click.Path(path_type=Path))
def check(run_dir: Path) -> None:
    """Check a run folder's records without writing them: SQLite's integrity check, the
    migrations, and the records' own invariants (each attempt's fields against its outcome,
    each rejection with its failure-index row, each ledger row with its accept, each attempt's
    model calls); print what is wrong by row id (exit 1), else one OK line."""
    db = run_dir / DB_NAME
    if not db.is_file():
        raise UserError(f"{run_dir}: no {DB_NAME} here; give a folder made by 'vreact run'")
    found = list(problems(db))
    if found:
        for line in found:
            click.echo(line)
        n = len(found)
        click.echo(f"{db}: {n} problem{'' if n == 1 else 's'}", err=True)
        raise click.exceptions.Exit(1)
    console.print(f"OK: {db}: {_counts(db)}", highlight=False, soft_wrap=True)
