"""Storage faults: which errors mean the disk (not vreact, not the model) failed, and the crash
kinds that say an attempt never got a fair run, so resume runs it again."""

from __future__ import annotations

import errno
import sqlite3
from typing import Literal, get_args

#: Crash kinds re-run on resume (their rows discarded, as an unfinished attempt's): the attempt
#: never got a fair run. ``io``: the disk was full, read-only or failing; ``not_cached``: a run
#: with ``--cache-only`` met a request the response cache did not hold; ``worker_lost``: its Ray
#: worker was lost three times; ``unreachable``: nothing answered at a model's server. Every
#: other crash kind is final.
RETRYABLE_CRASHES = ("io", "not_cached", "worker_lost", "unreachable")
#: What ended a crashed attempt: the expected failures, else a bug in vreact ("internal").
#: ``io``: the storage failed (disk full, read-only, failing); ``worker_lost``: a Ray worker was
#: lost under it again and again; ``unreachable``: nothing answered at a model's server: these are
#: retried on resume (``RETRYABLE_CRASHES``), as ``not_cached``; the others are final.
CrashKind = Literal[
    "model",
    "timeout",
    "context_length",
    "script",
    "io",
    "not_cached",
    "worker_lost",
    "unreachable",
    "internal",
]
#: Every crash kind a record may hold.
CRASH_KINDS = get_args(CrashKind)

#: The errno values of a storage fault: full, over quota or a file-size limit, read-only, failing.
_IO_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EIO})
#: SQLite's words for the same faults (it reports them as OperationalError, without an errno).
_SQLITE_IO = ("database or disk is full", "disk i/o error", "readonly database", "unable to open database")


def _fault(e: BaseException) -> BaseException | None:
    """The storage fault ``e`` is, or was raised from (None: it is none)."""
    seen: BaseException | None = e
    while seen is not None:
        if isinstance(seen, OSError) and seen.errno in _IO_ERRNOS:
            return seen
        if isinstance(seen, sqlite3.OperationalError) and any(w in str(seen).lower() for w in _SQLITE_IO):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def io_error(e: BaseException) -> bool:
    """Whether ``e`` (or an error it was raised from) is a storage fault."""
    return _fault(e) is not None


def io_cause(e: BaseException) -> str:
    """A storage fault in a few words, e.g. ``no space left on device``."""
    fault = _fault(e) or e
    if isinstance(fault, OSError) and fault.strerror:
        return fault.strerror.lower()
    return str(fault)


class StorageFault(OSError):
    """The run stopped because its storage failed (``cause``): nothing vreact or the model did.
    The same command, run again once the storage works, resumes it."""

    def __init__(self, folder: str, cause: str) -> None:
        super().__init__(
            f"{folder}: {cause}: the run stopped; free space (or make the folder writable) and run"
            " the same command again to resume"
        )
        self.folder = folder
        self.cause = cause
