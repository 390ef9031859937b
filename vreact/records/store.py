"""The run store: one SQLite file (``DIR/vreact.db``) through sqlite-utils.

The schema only changes through the append-only ``MIGRATIONS`` list (vreact/records/migrations.py).
Only ``Store.record_verdict`` writes the success ledger and the failure index.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import sqlite_utils

from vreact.records.migrations import MIGRATIONS
from vreact.verdict import Verdict


def message_hash(message: dict[str, str]) -> str:
    """The key of one chat message in ``messages``: the same role and text are stored once."""
    blob = f"{message.get('role', '')}\0{message.get('content', '')}".encode()
    return hashlib.sha256(blob).hexdigest()[:20]


class Store:
    """The records of one run folder."""

    def __init__(self, path: str | Path) -> None:
        """Open (and migrate) the store. One Store per thread: concurrent attempts each open
        their own, and SQLite serialises their writes (waiting up to 60 s for the lock)."""
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite_utils.Database(sqlite3.connect(self.path, timeout=60, check_same_thread=False))
        self.db.execute("PRAGMA journal_mode=WAL")
        # a commit survives the process being killed (not the machine losing power)
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute("PRAGMA foreign_keys=ON")
        self._migrate()

    def close(self) -> None:
        self.db.conn.close()

    def _insert(self, table: str, row: dict[str, Any]) -> int:
        pk = self.db.table(table).insert(row).last_pk
        assert pk is not None
        return int(pk)

    def _migrate(self) -> None:
        done = (
            {r["name"] for r in self.db.table("_migrations").rows}
            if self.db.table("_migrations").exists()
            else set()
        )
        for m in MIGRATIONS:
            if m.__name__ not in done:
                with self.db.conn:
                    m(self.db)
                    self.db.table("_migrations").insert(
                        {"name": m.__name__, "applied": time.time()}, pk="name"
                    )

    # --- runs and tasks -----------------------------------------------------------------

    def new_run(self, config: dict[str, Any], model: str, dataset: str) -> int:
        row = {
            "started": time.time(),
            "config_json": json.dumps(config),
            "model": model,
            "dataset": dataset,
            "status": "running",
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

    def reopen_run(self, run_id: int) -> None:
        self.db.table("runs").update(run_id, {"status": "running", "finished": None})

    def finished_attempts(self, run_id: int) -> dict[tuple[str, str, int], str]:
        """The outcome of every attempt of the run that has ended, by (config, task id, attempt
        index)."""
        rows = self.query(
            "select config, task_id, attempt_index, outcome from attempts"
            " where run_id = ? and outcome != 'running'",
            [run_id],
        )
        return {(r["config"], r["task_id"], r["attempt_index"]): r["outcome"] for r in rows}

    def finish_run(self, run_id: int, status: str = "completed") -> None:
        self.db.table("runs").update(run_id, {"finished": time.time(), "status": status})

    def add_tasks(self, rows: list[dict[str, Any]]) -> None:
        self.db.table("tasks").upsert_all(rows, pk="id")

    # --- attempts -----------------------------------------------------------------------

    def start_attempt(self, run_id: int, config: str, task_id: str, attempt_index: int, seed: int) -> int:
        row = {
            "run_id": run_id,
            "config": config,
            "task_id": task_id,
            "attempt_index": attempt_index,
            "seed": seed,
            "outcome": "running",
            "started": time.time(),
        }
        return self._insert("attempts", row)

    def finish_attempt(self, attempt_id: int, fields: dict[str, Any]) -> None:
        self.db.table("attempts").update(attempt_id, {**fields, "finished": time.time()})

    def discard_unfinished(self) -> int:
        """Delete attempts a killed process left running, with everything they wrote."""
        ids = [r["id"] for r in self.db.query("select id from attempts where outcome = 'running'")]
        with self.db.conn:
            for table in ("ledger", "failures", "steps", "events", "diagnoses"):
                self.db.execute(
                    f"delete from {table} where attempt_id in "
                    "(select id from attempts where outcome = 'running')"
                )
            for table in ("verdicts", "model_calls"):
                self.db.execute(
                    f"delete from {table} where attempt_id in "
                    "(select id from attempts where outcome = 'running')"
                )
            self.db.execute("delete from attempts where outcome = 'running'")
        return len(ids)

    # --- calls and verdicts -------------------------------------------------------------

    def record_call(
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
    ) -> int:
        """Record one model call with its transcript; return its id. ``cached_tokens``: the
        prompt tokens the server said it reused from its prompt cache (None: it did not say)."""
        hashes = None
        if messages is not None:
            rows = [
                {"hash": message_hash(m), "role": m.get("role", ""), "content": m.get("content", "")}
                for m in messages
            ]
            self.db.table("messages").insert_all(rows, pk="hash", ignore=True)
            hashes = json.dumps([r["hash"] for r in rows])
        return self._insert(
            "model_calls",
            {
                "messages": hashes,
                "response": response,
                "endpoint": endpoint,
                "retries": retries,
                "cached": int(cached),
                "cached_tokens": cached_tokens,
                "cost_usd": cost_usd,
                "attempt_id": attempt_id,
                "role": role,
                "model": model,
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "latency_ms": round(latency_ms, 1),
                "status": status,
                "error": error,
            },
        )

    def record_step(self, attempt_id: int, component: str, try_: int, index: int, **fields: Any) -> None:
        """One executor step of a try: thought, action, input, evidence, observation, call_id."""
        if isinstance(fields.get("evidence"), list):
            fields["evidence"] = json.dumps(fields["evidence"])
        row = {"attempt_id": attempt_id, "component": component, "try": try_, "step": index, **fields}
        self.db.table("steps").insert(row)

    def replace_diagnoses(self, judge: str, rows: list[dict[str, Any]]) -> None:
        """A judge's diagnoses of this folder's attempts: a rerun with the same judge replaces
        that judge's rows."""
        with self.db.conn:
            self.db.execute("delete from diagnoses where judge = ?", [judge])
            stamped = [{**r, "judge": judge, "created": time.time()} for r in rows]
            self.db.table("diagnoses").insert_all(stamped)

    def record_event(
        self, attempt_id: int, component: str, try_: int, index: int, guard: str, kind: str, detail: str
    ) -> None:
        """A hint or a rollback of a pipeline member: an event, never memory."""
        row = {"attempt_id": attempt_id, "component": component, "try": try_, "step": index}
        self.db.table("events").insert({**row, "guard": guard, "kind": kind, "detail": detail})

    def record_verdict(self, attempt_id: int, verdict: Verdict, artifact: Any = None) -> int:
        """Write a verdict; an accept appends to the ledger, a reject to the failure index.
        ``artifact`` (the JSON the verdict's hash is of) is kept once per hash in ``artifacts``.

        This is the only writer of ``ledger`` and ``failures``: memory is written by verdicts.
        """
        with self.db.conn:
            if artifact is not None:
                self.db.execute(
                    "insert or ignore into artifacts (hash, json) values (?, ?)",
                    [verdict.artifact_hash, json.dumps(artifact, default=str)],
                )
            seq = self.db.execute(
                "select count(*) from verdicts where attempt_id = ?", [attempt_id]
            ).fetchone()[0]
            vid = self._insert(
                "verdicts",
                {
                    "attempt_id": attempt_id,
                    "seq": seq,
                    "level": verdict.level,
                    "component": verdict.component,
                    "source": verdict.source,
                    "verifier": verdict.verifier,
                    "check_name": verdict.check_name,
                    "args": json.dumps(verdict.args, default=str),
                    "decision": verdict.decision,
                    "cause": verdict.cause,
                    "detail": verdict.detail,
                    "budget_left": verdict.budget_left,
                    "artifact_hash": verdict.artifact_hash,
                },
            )
            if verdict.accepted:
                self.db.table("ledger").insert(
                    {
                        "verdict_id": vid,
                        "attempt_id": attempt_id,
                        "level": verdict.level,
                        "component": verdict.component,
                        "artifact_hash": verdict.artifact_hash,
                        "artifact": json.dumps(artifact, default=str),
                    }
                )
            else:
                self.db.table("failures").insert(
                    {
                        "verdict_id": vid,
                        "attempt_id": attempt_id,
                        "level": verdict.level,
                        "component": verdict.component,
                        "source": verdict.source,
                        "verifier": verdict.verifier,
                        "check_name": verdict.check_name,
                        "cause": verdict.cause,
                        "detail": verdict.detail,
                    }
                )
        return vid

    # --- reads (the assembler's and the reports') ----------------------------------------

    def failures(self, attempt_id: int, component: str | None = None) -> list[dict[str, Any]]:
        sql = "select * from failures where attempt_id = ?"
        params: list[Any] = [attempt_id]
        if component is not None:
            sql += " and component = ?"
            params.append(component)
        return list(self.db.query(sql + " order by id", params))

    def ledger(self, attempt_id: int, component: str | None = None) -> list[dict[str, Any]]:
        sql = "select * from ledger where attempt_id = ?"
        params: list[Any] = [attempt_id]
        if component is not None:
            sql += " and component = ?"
            params.append(component)
        return list(self.db.query(sql + " order by id", params))

    def query(self, sql: str, params: Any = None) -> Iterator[dict[str, Any]]:
        return self.db.query(sql, params or [])
