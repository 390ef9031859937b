"""The run folder: its database's name, and the lock that keeps one writer per folder."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

DB_NAME = "vreact.db"
LOCK_NAME = ".vreact.lock"


class RunDirBusy(RuntimeError):
    """Another process is writing to the same run folder."""


@contextmanager
def exclusive(out_dir: Path) -> Iterator[None]:
    """Hold the run folder's lock: two processes writing one folder would discard each other's
    running attempts. The OS releases it when the process dies, even by SIGKILL."""
    out_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(out_dir / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RunDirBusy(f"{out_dir}: another vreact process is running into this folder") from None
        yield
    finally:
        os.close(fd)
