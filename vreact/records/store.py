"""The run store: one SQLite file (``DIR/vreact.db``) through sqlite-utils.

The schema only changes through the append-only ``MIGRATIONS`` list (vreact/records/migrations.py).
Only the verdict writers (``Store.record_verdict`` and its batch forms) write the failure index,
each reject in one transaction with its row there; the success ledger is written by the
controller's accepts (``Store.defer_unit``), one row per accepted unit, after its verdicts.
"""

from __future__ import annotations

import functools
import hashlib
import json
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlite_utils
from sqlite_utils.db import NotFoundError

from vreact.families import Score
from vreact.records.faults import RETRYABLE_CRASHES
from vreact.records.migrations import MIGRATIONS, score_before_families
from vreact.verdict import Unit, Verdict


def message_hash(message: dict[str, str]) -> str:
    """The key of one chat message in ``messages``: the same role and text are stored once."""
    return _message_hash(message.get("role", ""), message.get("content", ""))


@functools.lru_cache(maxsize=4096)
def _message_hash(role: str, content: str) -> str:
    # kept: a try's system prompt and earlier steps come back in every later call
    return hashlib.sha256(f"{role}\0{content}".encode()).hexdigest()[:20]


def _set(conn: sqlite3.Connection, table: str, pk: int, fields: dict[str, Any]) -> None:
    """Update the row ``pk`` of ``table``; ``NotFoundError`` when there is none."""
    sets = ", ".join(f'"{c}" = ?' for c in fields)
    cur = conn.execute(
        f'update "{table}" set {sets} where id = ?', [*(_value(v) for v in fields.values()), pk]
    )
    if cur.rowcount == 0:
        raise NotFoundError(f"no {table} row with id {pk}")


@functools.lru_cache(maxsize=256)
def _insert_sql(table: str, columns: tuple[str, ...], verb: str = "insert") -> str:
    names = ", ".join(f'"{c}"' for c in columns)
    return f'{verb} into "{table}" ({names}) values ({", ".join("?" * len(columns))})'


_VERDICT_COLUMNS = (
    "attempt_id",
    "level",
    "component",
    "source",
    "verifier",
    "check_name",
    "args",
    "decision",
    "cause",
    "detail",
    "budget_left",
    "artifact_hash",
    "seconds",
    "input_hash",
)
#: A verdict and its place in the attempt (``seq``: how many verdicts the attempt had before it),
#: counted by the store for an attempt it started (``_SEQ_SQL``), else by the file.
_SEQ_SQL = _insert_sql("verdicts", (*_VERDICT_COLUMNS, "seq"))
_VERDICT_SQL = (
    f"insert into verdicts ({', '.join(_VERDICT_COLUMNS)}, seq)"
    f" values ({', '.join('?' * len(_VERDICT_COLUMNS))},"
    " (select count(*) from verdicts where attempt_id = ?))"
)


#: A ledger row's columns after its ids (as ``defer_unit`` gives them, and a held-back row shows them).
_UNIT_COLUMNS = ("attempt_id", "level", "component", "artifact_hash", "artifact", "kind", "slot", "input")
#: An accepted unit, tied to the verdict that accepted it (the last accept of its verifier on
#: that component; none where no verifier runs, as in N and NP).
_LEDGER_SQL = (
    "insert into ledger"
    " (verdict_id, attempt_id, level, component, artifact_hash, artifact, kind, slot, input) values"
    " ((select max(id) from verdicts where attempt_id = ? and component = ? and verifier = ?"
    " and artifact_hash = ? and decision = 'accept'), ?, ?, ?, ?, ?, ?, ?, ?)"
)
_FAILURE_SQL = _insert_sql(
    "failures",
    ("verdict_id", "attempt_id", "level", "component", "source", "verifier", "check_name", "cause", "detail"),
)


#: The tables of an attempt's own rows, in an order where each row's references come first.
_ATTEMPT_TABLES = ("model_calls", "steps", "verdicts", "failures", "ledger", "events", "scores", "agreements")


def _without_id(row: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k != "id"}


class RecordsError(ValueError):
    """A run folder's database that vreact cannot open, said in one line that names the file."""


class DamagedRecords(RecordsError):
    """The file is empty, not SQLite, truncated, or SQLite says it is malformed."""


class ForeignRecords(RecordsError):
    """A SQLite database, but another program's: it has tables and no ``_migrations``."""


class NewerRecords(RecordsError):
    """Records of a newer vreact: its ``_migrations`` lists one this code does not know."""


class NeedsMigration(RecordsError):
    """Records of an older vreact, opened read-only: the migrations they lack cannot be made."""


def wal_of(path: Path) -> Path:
    """The write-ahead log SQLite keeps beside ``path`` while it is open for writing."""
    return path.with_name(path.name + "-wal")


def damage(path: Path) -> str | None:
    """What is wrong with the file at ``path`` before SQLite reads it: only that it is empty
    (None: it is not, or does not exist). It looks at the file's size alone and never opens it:
    closing a descriptor of a database this process has open would drop every SQLite lock the
    process holds on it (POSIX locks are per process), and another process could then take its
    write-ahead log away. What else is wrong SQLite says when it reads (:func:`unreadable`)."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return None
    return "it is empty (0 bytes): no run wrote it (remove it to run into this folder)" if size == 0 else None


def unreadable(e: sqlite3.DatabaseError) -> str:
    """What SQLite's refusal to read a file says of it, in words."""
    if "not a database" in str(e):
        return "it is not a SQLite database"
    if "malformed" in str(e):
        return f"SQLite cannot read it ({e}): truncated or overwritten"
    return f"SQLite cannot read it ({e})"


def connect_read_only(path: Path) -> sqlite3.Connection:
    """A connection that never writes ``path`` nor makes a file beside it. With no write-ahead
    log beside the file, no writer has it open: it is opened ``immutable`` (a plain ``mode=ro``
    would leave an empty -wal and a -shm behind, and cannot open it at all in a read-only
    folder); with one, a writer may be at work and ``mode=ro`` reads its log too."""
    uri = path.resolve().as_uri() + ("?mode=ro" if wal_of(path).exists() else "?mode=ro&immutable=1")
    return sqlite3.connect(uri, uri=True, timeout=60, check_same_thread=False)


_SCALARS = frozenset({str, int, float, type(None), bool})


def _value(v: Any) -> Any:
    """A column value as sqlite-utils would store it: dicts, lists and tuples as JSON."""
    if isinstance(v, (dict, list, tuple)):
        return json.dumps(v, default=repr, ensure_ascii=False)
    return v


#: The end of a damaged file's message.
_CHECK_HINT = "the file was left as it is"


#: Writes held back at most before a read of memory writes them anyway.
_HOLD_MAX = 64
#: The last attempt id this process handed out, by database file (``Store.start_attempt``).
_ATTEMPT_IDS: dict[str, int] = {}
_ATTEMPT_IDS_LOCK = threading.Lock()


class RowId:
    """The id of a row held back: None until it is written."""

    value: int | None = None


class Store:
    """The records of one run folder.

    The schema is sqlite-utils' (migrations); the writes of an attempt are plain prepared
    statements, each record in one transaction: a call with its transcript's messages, a reject
    with its failure row, an accepted unit with the accepts before it (so a crash never leaves
    one without the other).

    Calls, steps, events, verdicts and units the recorder makes are held back and written with the
    next transaction (the attempt's end), or before a read of this store (of the failure index,
    when a verdict is held back: the assembler always reads it whole), or on ``flush``/``close``;
    a read of the ledger shows the units held back after the rows in the file, writing nothing. A
    process killed before that loses them with the attempt, which is unfinished, and discarded on
    resume.
    """

    def __init__(self, path: str | Path, *, read_only: bool = False) -> None:
        """Open (and migrate) the store. One Store per thread: concurrent attempts each open
        their own, and SQLite serialises their writes (waiting up to 60 s for the lock).

        ``read_only`` opens it without writing anything (:func:`connect_read_only`): records
        that need a migration are refused (``NeedsMigration``). Either way a file that is not
        this vreact's records is refused before anything is written (``RecordsError``: empty,
        not SQLite, truncated, another program's, a newer vreact's), and left as it was."""
        self.path = Path(path)
        self.read_only = read_only
        problem = damage(self.path)
        if problem is not None:
            raise DamagedRecords(f"{self.path}: {problem}; {_CHECK_HINT}")
        if read_only and not self.path.is_file():
            raise RecordsError(f"{self.path}: no such file")
        conn = self._connect(read_only)
        self.db = sqlite_utils.Database(conn)
        try:
            pending = self._pending_migrations()
        except BaseException:
            conn.close()
            raise
        if read_only and pending:
            conn.close()
            names = ", ".join(m.__name__ for m in pending)
            raise NeedsMigration(
                f"{self.path}: written by an older vreact, its records lack {len(pending)} migration(s)"
                f" ({names}), which a read-only open cannot make; read it with open_to_read (as"
                " 'vreact report' does): it migrates a private copy and leaves the file as it is"
            )
        if not read_only:
            self.db.execute("PRAGMA journal_mode=WAL")
            # a commit survives the process being killed (not the machine losing power)
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("PRAGMA foreign_keys=ON")
        self._calls: Counter[int] = Counter()  # the calls handed to this store, by attempt
        self._pending: list[Callable[[sqlite3.Connection], Any]] = []  # writes held back
        self._memory_pending = False  # a verdict among them: memory reads must see it
        self._held_units: dict[int, list[dict[str, Any]]] = {}  # ledger rows among them, by attempt
        self._failures: dict[int, list[dict[str, Any]]] = {}  # read failure indexes, by attempt
        #: the attempts this store started and has not finished: their verdicts' count (the next
        #: seq), and their failure index and ledger as written through it, read without the file
        self._seq: dict[int, int] = {}
        #: each run's provenance row its attempts are made under (``record_provenance``)
        self._provenance: dict[int, int | None] = {}
        self._messages: set[str] = set()  # the hashes of the messages this store has written
        #: whose attempt ids this store takes from (_ATTEMPT_IDS): the file's, or its own in memory
        self._ids_key = str(self.path.resolve()) if str(self.path) != ":memory:" else f":memory:{id(self)}"
        self._units: dict[int, list[dict[str, Any]]] = {}
        if not read_only:
            self._migrate()

    def _connect(self, read_only: bool) -> sqlite3.Connection:
        """The connection to the records: ``connect_read_only``'s, or one that writes the file
        (its folder made first). A private copy connects elsewhere (``_PrivateCopy``)."""
        if read_only:
            return connect_read_only(self.path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        return sqlite3.connect(self.path, timeout=60, check_same_thread=False)

    def close(self) -> None:
        try:
            self.flush()
        finally:
            self.db.conn.close()

    def flush(self) -> None:
        """Write what is held back (in one transaction)."""
        if self._pending:
            with self._transaction():
                pass

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, committed at the end (rolled back on an error). It takes the
        write lock at once (waiting for other writers), so it never fails half-way on a lock."""
        conn = self.db.conn
        if conn.in_transaction:  # part of the caller's
            yield conn
            return
        conn.execute("BEGIN IMMEDIATE")
        try:
            pending, self._pending, self._memory_pending = self._pending, [], False
            self._held_units = {}
            for write in pending:
                write(conn)
            yield conn
        except BaseException:
            conn.rollback()
            self._messages.clear()  # some it took for written were not
            raise
        conn.commit()

    def _row(self, conn: sqlite3.Connection, table: str, row: dict[str, Any]) -> int:
        """Insert one row inside the caller's transaction; its rowid."""
        values = [v if type(v) in _SCALARS else _value(v) for v in row.values()]  # most are scalars
        cur = conn.execute(_insert_sql(table, tuple(row)), values)
        assert cur.lastrowid is not None
        return cur.lastrowid

    def _insert(self, table: str, row: dict[str, Any]) -> int:
        with self._transaction() as conn:
            return self._row(conn, table, row)

    def _update(self, table: str, pk: int, fields: dict[str, Any]) -> None:
        with self._transaction() as conn:
            _set(conn, table, pk, fields)

    def _pending_migrations(self) -> list[Callable[[sqlite_utils.Database], None]]:
        """The migrations the file lacks (reading only); ``RecordsError`` when it is not this
        vreact's records: malformed, another program's database, or a newer vreact's."""
        try:
            tables = {
                r[0]
                for r in self.db.conn.execute("select name from sqlite_master where type = 'table'")
                if not r[0].startswith("sqlite_")
            }
            done = (
                [r[0] for r in self.db.conn.execute("select name from _migrations")]
                if "_migrations" in tables
                else []
            )
        except sqlite3.DatabaseError as e:
            raise DamagedRecords(f"{self.path}: {unreadable(e)}; {_CHECK_HINT}") from None
        if "_migrations" not in tables and tables:
            listed = ", ".join(sorted(tables)[:5]) + (", …" if len(tables) > 5 else "")
            raise ForeignRecords(
                f"{self.path}: another program's SQLite database (tables {listed}), not a vreact run's"
                " records; give a folder made by 'vreact run'"
            )
        known = {m.__name__ for m in MIGRATIONS}
        unknown = [name for name in done if name not in known]
        if unknown:
            raise NewerRecords(
                f"{self.path}: written by a newer vreact (migration {unknown[0]} is unknown to this"
                " one); open it with that version, or upgrade vreact"
            )
        return [m for m in MIGRATIONS if m.__name__ not in done]

    def _migrate(self) -> None:
        migrations = self.db.table("_migrations")
        done = {r["name"] for r in migrations.rows} if migrations.exists() else set()
        missing = [m for m in MIGRATIONS if m.__name__ not in done]
        if not missing:
            return
        # one transaction (SQLite's DDL is transactional): the migrations are recorded exactly
        # when they were applied, all of them or none, even when the disk fills half-way
        with self._transaction():
            for m in missing:
                m(self.db)
                self.db.table("_migrations").insert({"name": m.__name__, "applied": time.time()}, pk="name")

    # --- runs and tasks -----------------------------------------------------------------

    def new_run(
        self, config: dict[str, Any], model: str, dataset: str, family: dict[str, str] | None = None
    ) -> int:
        """A new run; ``family``: the family that makes it, with its version (``TaskFamily.record``)."""
        row = {
            "started": time.time(),
            "config_json": json.dumps(config),
            "model": model,
            "dataset": dataset,
            "status": "running",
            **(family or {}),
        }
        return self._insert("runs", row)

    def find_run(self, config: dict[str, Any]) -> int | None:
        """The latest run recorded with exactly this resolved configuration, to resume it."""
        row = next(
            self.query("select max(id) as id from runs where config_json = ?", [json.dumps(config)]),
            None,
        )
        return row["id"] if row else None

    def run_configs(self) -> Iterator[tuple[int, dict[str, Any]]]:
        """Every run of the folder with its resolved configuration."""
        for r in self.query("select id, config_json from runs order by id"):
            yield r["id"], json.loads(r["config_json"])

    def reopen_run(self, run_id: int, config: dict[str, Any] | None = None) -> None:
        """Resume a run; ``config`` records its resolved configuration anew (a run resumed with
        more configurations lists them all), None keeps it."""
        fields: dict[str, Any] = {"status": "running", "finished": None}
        if config is not None:
            fields["config_json"] = json.dumps(config)
        self.db.table("runs").update(run_id, fields)

    def finished_attempts(self, run_id: int) -> dict[tuple[str, str, int], str]:
        """The outcome of every attempt of the run that has ended, by (config, task id, attempt
        index)."""
        rows = self.query(
            "select config, task_id, attempt_index, outcome from attempts"
            " where run_id = ? and outcome != 'running'",
            [run_id],
        )
        return {(r["config"], r["task_id"], r["attempt_index"]): r["outcome"] for r in rows}

    def record_skips(self, run_id: int, skipped: dict[str, dict[str, int]]) -> None:
        """A probe's classes that records could not yield, with why and how often (replacing
        what an earlier pass of the same probe recorded)."""
        rows = [(run_id, c, reason, n) for c, reasons in skipped.items() for reason, n in reasons.items()]
        with self._transaction() as conn:
            conn.execute("delete from probe_skips where run_id = ?", [run_id])
            conn.executemany(
                "insert into probe_skips (run_id, class, reason, count) values (?, ?, ?, ?)", rows
            )

    def record_provenance(self, run_id: int, data: dict[str, Any]) -> int:
        """Record what makes the run's attempts from now on (``vreact.records.provenance``):
        a row beside the run's identity, never in it; every attempt this store or another
        opened after it starts names it."""
        row = {"run_id": run_id, "recorded": time.time(), "data": json.dumps(data, sort_keys=True)}
        self._provenance[run_id] = rowid = self._insert("provenance", row)
        return rowid

    def latest_provenance(self, run_id: int) -> dict[str, Any] | None:
        """What the run's latest provenance row records (None: none was recorded)."""
        row = self.db.execute(
            "select data from provenance where run_id = ? order by id desc limit 1", [run_id]
        ).fetchone()
        return json.loads(row[0]) if row else None

    def provenance_id(self, run_id: int) -> int | None:
        """The provenance row the run's attempts are made under now: its latest (None: none was
        recorded, as in a run made before provenance or by a replay)."""
        if run_id not in self._provenance:
            row = self.db.execute("select max(id) from provenance where run_id = ?", [run_id]).fetchone()
            self._provenance[run_id] = row[0]
        return self._provenance[run_id]

    def finish_run(self, run_id: int, status: str = "completed") -> None:
        self.db.table("runs").update(run_id, {"finished": time.time(), "status": status})

    def add_tasks(self, rows: list[dict[str, Any]]) -> None:
        self.db.table("tasks").upsert_all(rows, pk="id")

    # --- attempts -----------------------------------------------------------------------

    def start_attempt(
        self,
        run_id: int,
        config: str,
        task_id: str,
        attempt_index: int,
        seed: int,
        started: float | None = None,
    ) -> int:
        """A new attempt's id. Its row is held back with the attempt's other writes (written first,
        with them), so an attempt costs one transaction, not two; a killed process leaves nothing
        of it. The id is taken here, above the file's largest and any this process handed out for
        it (one process writes a folder's attempts at a time: the run folder's lock). ``started``
        (``time.time()``; default now): when its work began, for a writer that records an attempt
        after doing it (a probe checking several artifacts at once records them in order)."""
        with _ATTEMPT_IDS_LOCK:
            key = self._ids_key
            largest = self.db.execute("select coalesce(max(id), 0) from attempts").fetchone()[0]
            attempt_id = _ATTEMPT_IDS[key] = max(largest, _ATTEMPT_IDS.get(key, 0)) + 1
        row = {
            "id": attempt_id,
            "run_id": run_id,
            "config": config,
            "task_id": task_id,
            "attempt_index": attempt_index,
            "seed": seed,
            "outcome": "running",
            "started": time.time() if started is None else started,
            "provenance_id": self.provenance_id(run_id),
        }
        self._pending.append(lambda conn: self._row(conn, "attempts", row))
        # it is written through this store alone until it ends: its memory is kept here too
        self._seq[attempt_id], self._failures[attempt_id], self._units[attempt_id] = 0, [], []
        return attempt_id

    def finish_attempt(self, attempt_id: int, fields: dict[str, Any], *scores: Score | None) -> None:
        """End an attempt: its outcome's columns, and ``calls``, how many model calls this store
        was given for it (what ``vreact check`` holds its ``model_calls`` rows to); with
        ``scores``, its family's scores (the first its primary), in the same transaction.
        Without any (a writer that scores nothing, as vreact did before task families: a probe,
        a test), an ended attempt of a question-answering task is scored as the records made
        before families are (``migrations.score_before_families``), so the report, which reads
        scores only, reads it as before."""
        self._failures.pop(attempt_id, None)
        self._seq.pop(attempt_id, None)
        self._units.pop(attempt_id, None)
        calls = self._calls.pop(attempt_id, 0)
        with self._transaction() as conn:
            _set(conn, "attempts", attempt_id, {"calls": calls, **fields, "finished": time.time()})
            for i, score in enumerate(scores):  # None: that scorer had nothing to score by
                if score is not None:
                    self._score(conn, attempt_id, score, primary=i == 0)
            if not scores:
                score_before_families(conn, attempt_id)

    @staticmethod
    def _score(conn: sqlite3.Connection, attempt_id: int, score: Score, primary: bool) -> None:
        correct = None if score.correct is None else int(score.correct)
        conn.execute(
            "insert or replace into scores (attempt_id, scorer, is_primary, correct, metrics, tries)"
            " values (?, ?, ?, ?, ?, ?)",
            [
                attempt_id,
                score.scorer,
                int(primary),
                correct,
                json.dumps(dict(score.metrics)),
                json.dumps(dict(score.tries)),
            ],
        )

    def add_scores(self, scores: dict[int, Score | None]) -> None:
        """A scorer's scores of ended attempts (by attempt id; None: nothing to score by), none of
        them primary: what ``vreact rescore`` adds to a copy of a run's records, in one
        transaction."""
        with self._transaction() as conn:
            for attempt_id, score in scores.items():
                if score is not None:
                    self._score(conn, attempt_id, score, primary=False)

    def discard_unfinished(self) -> int:
        """Delete attempts a killed process left running, and those that crashed without a fair
        run (a retryable crash kind: ``RETRYABLE_CRASHES``), with everything they wrote, so
        resume runs them again."""
        kinds = ", ".join(f"'{k}'" for k in RETRYABLE_CRASHES)
        redo = f"outcome = 'running' or (outcome = 'crash' and crash_kind in ({kinds}))"
        ids = [r["id"] for r in self.db.query(f"select id from attempts where {redo}")]
        if not ids:
            return 0
        self._failures.clear()
        with self._transaction() as conn:  # all or nothing
            for table in (
                "ledger",
                "failures",
                "steps",
                "events",
                "agreements",
                "diagnoses",
                "verdicts",
                "model_calls",
                "scores",
            ):
                conn.execute(
                    f"delete from {table} where attempt_id in (select id from attempts where {redo})"
                )
            conn.execute(f"delete from attempts where {redo}")
        self._seq.clear()
        self._units.clear()
        return len(ids)

    # --- an attempt made elsewhere (a Ray worker's store) ---------------------------------

    def export_attempt(self, attempt_id: int) -> dict[str, list[dict[str, Any]]]:
        """An ended attempt's records as plain rows (its own ids kept), with the messages,
        artifacts and gate inputs they name, then deleted from this store: what a worker sends
        the writer (:meth:`import_attempt`)."""
        self.flush()
        batch: dict[str, list[dict[str, Any]]] = {
            "attempts": list(self.db.query("select * from attempts where id = ?", [attempt_id]))
        }
        for table in _ATTEMPT_TABLES:
            batch[table] = list(self.db.query(f"select * from {table} where attempt_id = ?", [attempt_id]))
        hashes = {h for c in batch["model_calls"] for h in json.loads(c["messages"] or "[]")}
        named = {
            "messages": hashes,
            "artifacts": {r["artifact_hash"] for t in ("verdicts", "ledger") for r in batch[t]},
            "inputs": {r["input_hash"] for r in batch["verdicts"]},
        }
        for table, keys in named.items():
            found = (
                self.db.query(f"select * from {table} where hash = ?", [k])
                for k in sorted(filter(None, keys))
            )
            batch[table] = [r for rows in found for r in rows]
        with self._transaction() as conn:
            for table in reversed(("attempts", *_ATTEMPT_TABLES)):
                key = "id" if table == "attempts" else "attempt_id"
                conn.execute(f"delete from {table} where {key} = ?", [attempt_id])
        return batch

    def import_attempt(self, run_id: int, batch: dict[str, list[dict[str, Any]]]) -> int | None:
        """Write an attempt another store made (:meth:`export_attempt`) into run ``run_id``, in
        one transaction: new ids for the attempt, its calls, steps and verdicts (the rows naming
        them follow), the messages, artifacts and gate inputs once each. None, writing nothing,
        when the run already holds that attempt (a retried worker's second answer)."""
        [attempt] = batch["attempts"]
        key = (run_id, attempt["config"], attempt["task_id"], attempt["attempt_index"])
        with self._transaction() as conn:
            held = (
                "select 1 from attempts where run_id = ? and config = ? and task_id = ? and attempt_index = ?"
            )
            if conn.execute(held, key).fetchone():
                return None
            for table in ("messages", "artifacts", "inputs"):
                for row in batch.get(table, []):
                    conn.execute(_insert_sql(table, tuple(row), "insert or ignore"), list(row.values()))
            # made under the provenance the run records now (a worker's own store records none)
            made = {**_without_id(attempt), "run_id": run_id, "provenance_id": self.provenance_id(run_id)}
            new = self._row(conn, "attempts", made)
            ids: dict[str, dict[int, int]] = {"model_calls": {}, "verdicts": {}}
            for table in _ATTEMPT_TABLES:
                for row in batch.get(table, []):
                    fields = {**_without_id(row), "attempt_id": new}
                    if table == "steps" and row.get("call_id") is not None:
                        fields["call_id"] = ids["model_calls"][row["call_id"]]
                    if row.get("verdict_id") is not None and table in ("failures", "ledger"):
                        fields["verdict_id"] = ids["verdicts"][row["verdict_id"]]
                    rowid = self._row(conn, table, fields)
                    if table in ids:
                        ids[table][row["id"]] = rowid
        return new

    # --- calls and verdicts -------------------------------------------------------------

    def record_call(self, *args: Any, **kwargs: Any) -> int:
        """Record one model call with its transcript (in one transaction); return its id. The
        arguments are ``_call``'s; ``cached_tokens`` is the prompt tokens the server said it
        reused from its prompt cache (None: it did not say)."""
        write = self._call(*args, **kwargs)
        with self._transaction() as conn:
            return write(conn)

    def defer_call(self, *args: Any, **kwargs: Any) -> RowId:
        """``record_call`` (with its arguments) held back to the next transaction or read (the
        recorder's); its id is known once written (a step that names it is written after it)."""
        write, ref = self._call(*args, **kwargs), RowId()

        def written(conn: sqlite3.Connection) -> None:
            ref.value = write(conn)

        self._pending.append(written)
        return ref

    def _call(
        self,
        attempt_id: int,
        role: str,
        model: str,
        prompt_tokens: int,
        completion_tokens: int,
        latency_ms: float,
        status: str = "ok",
        error: str = "",
        retries: int = 0,
        cached: bool = False,
        cost_usd: float | None = None,
        endpoint: str | None = None,
        messages: list[dict[str, str]] | None = None,
        response: str | None = None,
        cached_tokens: int | None = None,
        cut: bool = False,
        verifier: str | None = None,
        caused_by: str | None = None,
        stop_reason: str | None = None,
    ) -> Callable[[sqlite3.Connection], int]:
        """The writer of one call's row and its transcript's messages (made now, written later);
        the call counts towards its attempt's ``calls`` from now. ``stop_reason`` is why the
        provider says the reply stopped (``Completion.stop_reason``; None: it did not say)."""
        self._calls[attempt_id] += 1
        hashes = None
        rows: list[Sequence[Any]] = []
        if messages is not None:
            rows = [(message_hash(m), m.get("role", ""), m.get("content", "")) for m in messages]
            hashes = json.dumps([r[0] for r in rows])
        row = {
            "messages": hashes,
            "response": response,
            "endpoint": endpoint,
            "retries": retries,
            "cached": int(cached),
            "cached_tokens": cached_tokens,
            "cut": int(cut),
            "cost_usd": cost_usd,
            "attempt_id": attempt_id,
            "role": role,
            "model": model,
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "latency_ms": round(latency_ms, 1),
            "status": status,
            "error": error,
            "verifier": verifier,
            "caused_by": caused_by,
            "stop_reason": stop_reason,
        }

        def write(conn: sqlite3.Connection) -> int:
            new = [r for r in rows if r[0] not in self._messages]  # a try repeats most of its prompt
            if new:
                conn.executemany(
                    _insert_sql("messages", ("hash", "role", "content"), "insert or ignore"), new
                )
                self._messages.update(r[0] for r in new)
            return self._row(conn, "model_calls", row)

        return write

    def record_step(self, attempt_id: int, component: str, try_: int, index: int, **fields: Any) -> None:
        """One executor step of a try: thought, action, input, evidence, observation, call_id."""
        for key in ("evidence", "hops"):
            if isinstance(fields.get(key), list):
                fields[key] = json.dumps(fields[key])
        row = {"attempt_id": attempt_id, "component": component, "try": try_, "step": index, **fields}

        def write(conn: sqlite3.Connection) -> None:
            if isinstance(row.get("call_id"), RowId):  # a call held back too: written by now
                row["call_id"] = row["call_id"].value
            self._row(conn, "steps", row)

        self._pending.append(write)

    def replace_diagnoses(self, judge: str, rows: list[dict[str, Any]]) -> None:
        """A judge's diagnoses of this folder's attempts: a rerun with the same judge replaces
        that judge's rows."""
        with self._transaction() as conn:  # all or nothing
            conn.execute("delete from diagnoses where judge = ?", [judge])
            stamped = [{**r, "judge": judge, "created": time.time()} for r in rows]
            self.db.table("diagnoses").insert_all(stamped)

    def record_event(
        self, attempt_id: int, component: str, try_: int, index: int, guard: str, kind: str, detail: str
    ) -> None:
        """A hint or a rollback of a pipeline member: an event, never memory."""
        row = {"attempt_id": attempt_id, "component": component, "try": try_, "step": index}
        row.update(guard=guard, kind=kind, detail=detail)
        self._pending.append(lambda conn: self._row(conn, "events", row))

    def record_agreement(self, attempt_id: int, row: dict[str, Any]) -> None:
        """What an attempt made of its k candidates (``vreact.controller._candidates``): JSON
        columns given as values, written as JSON."""
        row = {"attempt_id": attempt_id, **row}
        for key in ("candidates", "hashes", "groups", "record"):
            row[key] = json.dumps(row.get(key), default=str)
        self._pending.append(lambda conn: self._row(conn, "agreements", row))

    def record_verdict(
        self, attempt_id: int, verdict: Verdict, artifact: Any = None, given: Any = None
    ) -> int:
        """Write a verdict; a reject appends to the failure index (an accept is a verdict only:
        what a verifier accepted as a whole reaches the ledger as a unit, ``defer_unit``).
        ``artifact`` (the JSON the verdict's hash is of) is kept once per hash in ``artifacts``.

        This is the only writer of ``failures``: memory is written by verdicts. ``given`` is the
        gate input the verdict was reached on (``vreact replay`` reads it back), kept once per
        hash in ``inputs``.
        """
        return self.record_verdicts(attempt_id, [verdict], artifact, given)[0]

    def record_verdicts(
        self, attempt_id: int, verdicts: list[Verdict], artifact: Any = None, given: Any = None
    ) -> list[int]:
        """Write verdicts on one artifact, in order, each reject with its failure row, all in one
        transaction (as ``record_verdict`` does one); return their ids."""
        blob = json.dumps(artifact, default=str)
        kept = _given(given)
        kept_rows = self._remember(attempt_id, verdicts, artifact)
        with self._transaction() as conn:
            return self._verdicts(
                conn, attempt_id, verdicts, blob if artifact is not None else None, kept, kept_rows
            )

    def defer_verdicts(
        self, attempt_id: int, verdicts: list[Verdict], artifact: Any = None, given: Any = None
    ) -> None:
        """``record_verdicts`` held back to the next transaction or read (the recorder's): each
        reject and its failure row still go in one transaction."""
        blob = json.dumps(artifact, default=str)  # now: what the verdicts' hash is of
        kept, inputs = (blob if artifact is not None else None), _given(given)
        # a live attempt's index, read with no write first
        rows = self._remember(attempt_id, verdicts, artifact)
        self._pending.append(
            lambda conn: self._verdicts(conn, attempt_id, list(verdicts), kept, inputs, rows)
        )
        if attempt_id not in self._seq:
            self._memory_pending = True

    def _remember(
        self, attempt_id: int, verdicts: list[Verdict], artifact: Any = None
    ) -> list[dict[str, Any]] | None:
        """The failure rows of ``verdicts``, added to the failure index kept for a live attempt
        (their ids filled in when they are written), each with the artifact it rejected (as a
        read of the file joins it in); None for an attempt not kept here."""
        if attempt_id not in self._seq:
            return None
        rows = [
            {
                "id": None,  # known once written; the list is in the order they were
                "verdict_id": None,
                "attempt_id": attempt_id,
                "level": v.level,
                "component": v.component,
                "source": v.source,
                "verifier": v.verifier,
                "check_name": v.check_name,
                "cause": v.cause,
                "detail": v.detail,
                "artifact": artifact,
            }
            for v in verdicts
            if not v.accepted
        ]
        self._failures[attempt_id] += rows
        return rows

    def _verdicts(
        self,
        conn: sqlite3.Connection,
        attempt_id: int,
        verdicts: list[Verdict],
        artifact: str | None,
        given: tuple[str, str] | None = None,
        kept: list[dict[str, Any]] | None = None,
    ) -> list[int]:
        """The verdicts' rows; ``artifact`` is the artifact's JSON (None: no artifact), ``given``
        the gate input's hash and JSON (None: not kept)."""
        blob = artifact if artifact is not None else "null"
        ids: list[int] = []
        if artifact is not None:
            hashes = dict.fromkeys(v.artifact_hash for v in verdicts)
            conn.executemany(
                "insert or ignore into artifacts (hash, json) values (?, ?)", [(h, blob) for h in hashes]
            )
        if given is not None:
            conn.execute("insert or ignore into inputs (hash, json) values (?, ?)", given)
        input_hash = given[0] if given is not None else None
        live = attempt_id in self._seq
        if not live and not all(v.accepted for v in verdicts):
            self._failures.pop(attempt_id, None)  # read again, with the new rows
        for v in verdicts:
            row = (attempt_id, v.level, v.component, v.source, v.verifier, v.check_name)
            values: tuple[Any, ...] = (*row, _args_json(v.args), v.decision, v.cause, v.detail)
            values += (v.budget_left, v.artifact_hash, v.seconds, input_hash)
            if live:  # the store counts its attempt's verdicts: no count over the file
                cur = conn.execute(_SEQ_SQL, (*values, self._seq[attempt_id]))
                self._seq[attempt_id] += 1
            else:
                cur = conn.execute(_VERDICT_SQL, (*values, attempt_id))
            assert cur.lastrowid is not None
            vid = cur.lastrowid
            ids.append(vid)
            if not v.accepted:
                where = (vid, attempt_id, v.level, v.component)
                cur = conn.execute(
                    _FAILURE_SQL, (*where, v.source, v.verifier, v.check_name, v.cause, v.detail)
                )
                if kept:  # the row the store keeps for it: its ids, now they are known
                    kept.pop(0).update(id=cur.lastrowid, verdict_id=vid)
        return ids

    def defer_unit(self, attempt_id: int, unit: Unit) -> None:
        """An accepted unit's ledger row, held back like the verdicts that accepted it (and
        written after them, in the same transaction): the success ledger's only writer."""
        h = unit.artifact_hash
        accepted_by = (attempt_id, unit.component, unit.verifier, h)  # the accept of this very artifact
        artifact, given = json.dumps(unit.artifact, default=str), json.dumps(unit.input, default=str)
        row = (attempt_id, unit.level, unit.component, h, artifact, unit.kind, unit.slot, given)
        held = {"id": None, "verdict_id": None, **dict(zip(_UNIT_COLUMNS, row, strict=True))}

        def write(conn: sqlite3.Connection) -> None:
            written = conn.execute(_LEDGER_SQL + " returning id, verdict_id", (*accepted_by, *row)).fetchone()
            held.update(id=written[0], verdict_id=written[1])  # as the file holds it now

        self._pending.append(write)
        if attempt_id in self._units:  # a live attempt's ledger is kept here whole
            self._units[attempt_id].append(held)
        else:
            self._held_units.setdefault(attempt_id, []).append(held)

    # --- reads (the assembler's and the reports') ----------------------------------------

    def failures(self, attempt_id: int, component: str | None = None) -> list[dict[str, Any]]:
        """The attempt's failure index (of one component), oldest first. It is read once and kept
        until this store writes a rejection of the attempt, or the attempt ends: an attempt's
        verdicts are all written through the store its recorder holds. An attempt this store
        started is read from what it kept (``id`` then None), with nothing written first. Each row
        carries ``artifact``: what it rejected (None: a rejection of no artifact)."""
        if attempt_id in self._seq:
            if len(self._pending) > _HOLD_MAX:
                self.flush()
            kept = self._failures[attempt_id]
            return [r for r in kept if component is None or r["component"] == component]
        if self._memory_pending or len(self._pending) > _HOLD_MAX:
            self.flush()
        rows = self._failures.get(attempt_id)
        if rows is None:
            sql = (
                "select f.*, a.json as artifact from failures f left join verdicts v on v.id = f.verdict_id"
                " left join artifacts a on a.hash = v.artifact_hash where f.attempt_id = ? order by f.id"
            )
            rows = self._rows(sql, [attempt_id])
            for r in rows:
                r["artifact"] = json.loads(r["artifact"]) if r["artifact"] is not None else None
            self._failures[attempt_id] = rows
        return [r for r in rows if component is None or r["component"] == component]

    def ledger(self, attempt_id: int, component: str | None = None) -> list[dict[str, Any]]:
        """The attempt's success ledger (of one component), oldest first: the rows in the file,
        read each time, then the units this store holds back for it (written with the next
        transaction, after the verdicts that accepted them; until then without ``id`` or
        ``verdict_id``). Reading it writes nothing: a unit held back needs no commit to be read.
        An attempt this store started is read from what it kept, with no read of the file."""
        if attempt_id in self._units:
            return [u for u in self._units[attempt_id] if component is None or u["component"] == component]
        sql = "select * from ledger where attempt_id = ?"
        params: list[Any] = [attempt_id]
        if component is not None:
            sql += " and component = ?"
            params.append(component)
        cur = self.db.conn.execute(sql + " order by id", params)
        names = [d[0] for d in cur.description]
        rows = [dict(zip(names, r, strict=True)) for r in cur.fetchall()]
        held = self._held_units.get(attempt_id, [])
        return rows + [u for u in held if component is None or u["component"] == component]

    def _rows(self, sql: str, params: list[Any]) -> list[dict[str, Any]]:
        """Rows of the failure index, with every verdict recorded so far."""
        if self._memory_pending or len(self._pending) > _HOLD_MAX:
            self.flush()
        cur = self.db.conn.execute(sql, params)
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]

    def query(self, sql: str, params: Any = None) -> Iterator[dict[str, Any]]:
        self.flush()  # a read sees everything recorded
        return self.db.query(sql, params or [])


def _given(given: Any) -> tuple[str, str] | None:
    """A gate input as kept in ``inputs``: its hash (``artifact_hash``, as a verdict's, of the same
    JSON) and its JSON (None: none given)."""
    if given is None:
        return None
    blob = json.dumps(given, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16], blob


_ARGS: dict[int, tuple[Any, str]] = {}  # id(args) -> (args, its JSON): a gate's args are one dict


def _args_json(args: dict[str, Any]) -> str:
    """A verdict's arguments as JSON: a gate's, built once per run, are dumped once."""
    hit = _ARGS.get(id(args))
    if hit is not None and hit[0] is args:
        return hit[1]
    text = json.dumps(args, default=str)
    if len(_ARGS) > 4096:
        _ARGS.clear()
    _ARGS[id(args)] = (args, text)  # the dict is kept: its id stays its own
    return text


class _PrivateCopy(Store):
    """Records of an older vreact, read through a migrated copy of their own: the file is only
    ever read (``connect_read_only``), so a reader writes nothing into the folder it reads, be it
    on read-only storage or not, and the records stay as the vreact that made them left them.

    The copy is SQLite's private temporary database (an empty file name): kept in memory while
    it fits SQLite's page cache, else spilled to a file in SQLite's temporary folder (TMPDIR),
    which SQLite removes when the connection closes, or the process ends, however it ends. Once
    migrated, the copy refuses every write (``query_only``), as a read-only open does."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)  # a writer's open, of the copy: it migrates it
        self.db.execute("PRAGMA query_only = ON")
        self.read_only = True

    def _connect(self, read_only: bool) -> sqlite3.Connection:
        source = connect_read_only(self.path)
        copy = sqlite3.connect("", timeout=60, check_same_thread=False)
        try:
            source.backup(copy)  # a consistent snapshot, with a live writer's log when it has one
        except sqlite3.DatabaseError as e:
            copy.close()
            raise DamagedRecords(f"{self.path}: {unreadable(e)}; {_CHECK_HINT}") from None
        finally:
            source.close()
        return copy


def open_to_read(path: str | Path) -> Store:
    """A store to read, which writes nothing into the file or its folder, whatever version made
    it: opened read-only (:func:`connect_read_only`). Records of an older vreact, which this code
    reads only once migrated, are read from a migrated private copy (``_PrivateCopy``): a reader
    that migrated the file in place would write into what it reads, change a record an older
    vreact may still have to read, and fail on read-only storage. A file that does not exist
    reads as records without a run (an empty store in memory: nothing is made on disk)."""
    path = Path(path)
    if not path.exists():
        return Store(":memory:")
    try:
        return Store(path, read_only=True)
    except NeedsMigration:
        return _PrivateCopy(path)
