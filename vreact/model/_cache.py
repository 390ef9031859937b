"""The response cache: one SQLite file keyed by everything that determines an answer, so a
rerun makes no model requests and reproduces the same records."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import sys
import threading
import time
from pathlib import Path
from typing import Any

from vreact.model._base import Completion


def default_cache_dir() -> Path:
    """``$VREACT_CACHE_DIR``, else ``$XDG_CACHE_HOME/vreact``, else ``~/.cache/vreact``."""
    if os.environ.get("VREACT_CACHE_DIR"):
        return Path(os.environ["VREACT_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "vreact"


def request_key(request: dict[str, Any]) -> str:
    """A stable hash of a request: provider, endpoint, model, messages, schema, sampling, seed."""
    return hashlib.sha256(json.dumps(request, sort_keys=True).encode()).hexdigest()


_GET = "select text, prompt_tokens, completion_tokens, latency_ms, stop_reason from responses where key = ?"
#: An upsert: a key answered again keeps the latest completion.
_PUT = (
    "insert into responses (key, model, text, prompt_tokens, completion_tokens, latency_ms, created,"
    " stop_reason) values (?, ?, ?, ?, ?, ?, ?, ?) on conflict (key) do update set"
    " model = excluded.model, text = excluded.text, prompt_tokens = excluded.prompt_tokens,"
    " completion_tokens = excluded.completion_tokens, latency_ms = excluded.latency_ms,"
    " created = excluded.created, stop_reason = excluded.stop_reason"
)


class ResponseCache:
    """``DIR/responses.db``: completions by request key, each with why it stopped.

    Each thread reads and writes through its own connection (no lock: SQLite's WAL lets readers
    run beside the one writer). A write is committed without an fsync (``synchronous=NORMAL``):
    it survives the process being killed, not the machine losing power, and a lost entry is
    only asked again."""

    def __init__(self, directory: str | Path | None = None, *, only: bool = False) -> None:
        self.path = Path(directory or default_cache_dir()) / "responses.db"
        self.only = only  # every call must be served from here: a miss is NotCached, never a request
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._warned = False
        try:
            self._open()
        except sqlite3.DatabaseError as e:  # not a database, or a damaged one: never served from
            if not _damaged(e):
                raise
            self._set_aside(e)
            self._open()

    def _open(self) -> None:
        import sqlite_utils  # 0.1 s to import: only when a cache is opened

        # the schema, count and clear; gets and puts use each thread's own connection
        self.db = sqlite_utils.Database(sqlite3.connect(self.path, timeout=60, check_same_thread=False))
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("select count(*) from sqlite_master").fetchone()  # reads the schema page
        self.table = self.db.table("responses")
        if not self.table.exists():  # (a page damaged deeper is found by the read of it: a miss)
            self.table.create(
                {
                    "key": str,
                    "model": str,
                    "text": str,
                    "prompt_tokens": int,
                    "completion_tokens": int,
                    "latency_ms": float,
                    "created": float,
                    "stop_reason": str,
                },
                pk="key",
            )
        elif "stop_reason" not in self.table.columns_dict:
            self._add_stop_reason()

    def _add_stop_reason(self) -> None:
        """The column a cache made before stop reasons were kept lacks: why each reply stopped
        (``Completion.stop_reason``), so a cached reply cut at its allowance is still known as
        one; NULL for the entries made before (their reason was not kept). Another process may
        add it at the same moment: then it is there."""
        try:
            self.db.execute("alter table responses add column stop_reason text")
        except sqlite3.OperationalError as e:
            if "duplicate column" not in str(e).lower():
                raise

    def _conn(self) -> sqlite3.Connection:
        """This thread's connection (closed when the thread ends and drops it)."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=60, isolation_level=None)  # each write commits
            conn.execute("PRAGMA synchronous=NORMAL")
            self._local.conn = conn
        return conn

    def _set_aside(self, e: BaseException) -> None:
        """Move a damaged cache file (and its WAL) aside with a timestamp, and say so once: the run
        goes on with an empty cache, asking the model again."""
        with contextlib.suppress(Exception):
            self.db.conn.close()
        stamp = time.strftime("%Y%m%d-%H%M%S")
        for suffix in ("", "-wal", "-shm"):
            part = self.path.with_name(self.path.name + suffix)
            if part.exists():
                part.rename(part.with_name(f"{part.name}.damaged-{stamp}"))
        self._warn(
            f"{self.path}: damaged ({e}); moved aside as {self.path.name}.damaged-{stamp}, starting empty"
        )

    def _miss(self, e: sqlite3.DatabaseError) -> None:
        """A read or write that met damage: a miss, said once; any other error (a full disk
        among them: the run stops on it, vreact.records.faults) is raised."""
        if not _damaged(e):
            raise e
        self._warn(f"{self.path}: damaged ({e}); its entries are asked again")

    def _warn(self, message: str) -> None:
        if not self._warned:
            self._warned = True
            print(f"warning: {message}", file=sys.stderr)

    def get(self, key: str) -> Completion | None:
        try:
            row = self._conn().execute(_GET, [key]).fetchone()
        except sqlite3.DatabaseError as e:  # a damaged entry is a miss, never an answer
            self._miss(e)
            return None
        if row is None or not isinstance(row[0], str):
            return None
        return Completion(row[0], row[1], row[2], row[3], cached=True, stop_reason=row[4])

    def put(self, key: str, model: str, c: Completion) -> None:
        row = (
            key,
            model,
            c.text,
            c.prompt_tokens,
            c.completion_tokens,
            c.latency_ms,
            time.time(),
            c.stop_reason,
        )
        try:
            self._conn().execute(_PUT, row)
        except sqlite3.DatabaseError as e:
            self._miss(e)

    def count(self) -> int:
        return self.table.count

    def clear(self) -> int:
        n = self.count()
        self.db.execute("delete from responses")
        self.db.conn.commit()
        return n


def _damaged(e: sqlite3.DatabaseError) -> bool:
    """Whether SQLite's error says the file is damaged or is no database (not a full disk, a
    lock or a read-only folder)."""
    text = str(e).lower()
    return "malformed" in text or "not a database" in text or "corrupt" in text
