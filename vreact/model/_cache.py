"""The response cache: one SQLite file keyed by everything that determines an answer, so a
rerun makes no model requests and reproduces the same records."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
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


class ResponseCache:
    """``DIR/responses.db``: completions by request key."""

    def __init__(self, directory: str | Path | None = None) -> None:
        self.path = Path(directory or default_cache_dir()) / "responses.db"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        import sqlite_utils  # 0.1 s to import: only when a cache is opened

        # shared by the threads of a concurrent run: one connection, one lock
        self.db = sqlite_utils.Database(sqlite3.connect(self.path, timeout=60, check_same_thread=False))
        self.db.execute("PRAGMA journal_mode=WAL")
        self._lock = threading.Lock()
        self.table = self.db.table("responses")
        if not self.table.exists():
            self.table.create(
                {
                    "key": str,
                    "model": str,
                    "text": str,
                    "prompt_tokens": int,
                    "completion_tokens": int,
                    "latency_ms": float,
                    "created": float,
                },
                pk="key",
            )

    def get(self, key: str) -> Completion | None:
        with self._lock:
            rows = list(self.db.query("select * from responses where key = ?", [key]))
        if not rows:
            return None
        r = rows[0]
        return Completion(r["text"], r["prompt_tokens"], r["completion_tokens"], r["latency_ms"], cached=True)

    def put(self, key: str, model: str, c: Completion) -> None:
        row = {
            "key": key,
            "model": model,
            "text": c.text,
            "prompt_tokens": c.prompt_tokens,
            "completion_tokens": c.completion_tokens,
            "latency_ms": c.latency_ms,
            "created": time.time(),
        }
        with self._lock:
            self.table.upsert(row, pk="key")

    def count(self) -> int:
        return self.table.count

    def clear(self) -> int:
        n = self.count()
        self.db.execute("delete from responses")
        self.db.conn.commit()
        return n
