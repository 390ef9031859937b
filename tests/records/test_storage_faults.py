"""A full disk during a run: one line naming the folder and the cause, exit 1, no internal crash;
once space is freed the same command resumes and the run holds exactly the planned attempts, none
crashed. The same when the response cache fills its own filesystem. The small filesystem is a
tmpfs this test mounts (as root); where mounting is not allowed, a file-size limit
(RLIMIT_FSIZE, SIGXFSZ ignored) stands for it."""

from __future__ import annotations

import contextlib
import json
import os
import resource
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import FULL
from tests.fakes.scripted_server import ScriptedServer
from vreact.records import DB_NAME

TASKS = 10
CONFIGS = "N,VG"
PLANNED = TASKS * 2
#: Every executor step reads a paragraph, then finishes: records with transcripts grow fast.
STEPS = [
    {"thought": "", "action": "read", "input": "1", "evidence": []},
    {"thought": "", "action": "finish", "input": "x", "evidence": ["1"]},
]
FAULTS = ("no space left on device", "database or disk is full", "disk i/o error", "file too large")


def reply(body: dict) -> str:
    # a finish once the step before was a read, else a read: any try ends in two steps
    last = body["messages"][-1]["content"]
    return json.dumps(STEPS[1] if "[1]" in last else STEPS[0])


@contextlib.contextmanager
def small_fs(where: Path, kib: int, mount: bool = True) -> Iterator[Callable[[], None] | None]:
    """A tmpfs of ``kib`` KiB mounted at ``where``, and how to free it (grow it); None where
    mounting is not allowed (or not asked for)."""
    where.mkdir(parents=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={kib}k", "tmpfs", str(where)] if mount else ["false"],
        capture_output=True,
    )
    if mounted.returncode != 0:
        yield None
        return
    try:
        yield lambda: subprocess.run(["mount", "-o", "remount,size=64m", str(where)], check=True)
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def vreact(args: list[str], cwd: Path, fsize: int | None = None) -> subprocess.CompletedProcess[str]:
    def limit() -> None:  # only where no tmpfs could be mounted
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

    return subprocess.run(
        [sys.executable, "-m", "vreact.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=limit if fsize else None,
        env={**os.environ, "VREACT_RAISE_INTERNAL": "0"},
    )


def command(base_url: str, out: Path, cache: Path) -> list[str]:
    return [
        "run",
        "--dataset",
        str(FULL),
        "--limit",
        str(TASKS),
        "--configs",
        CONFIGS,
        "--model",
        "openai/m",
        "--base-url",
        base_url,
        "--concurrency",
        "1",
        "--out",
        str(out),
        "--cache-dir",
        str(cache),
    ]


def stopped_on_a_full_disk(ran: subprocess.CompletedProcess[str], folder: Path) -> None:
    assert ran.returncode == 1, ran.stderr[-2000:]
    [line] = ran.stderr.strip().splitlines()[-1:]
    assert "Traceback" not in ran.stderr
    assert line.startswith(f"error: {folder}: ") and "the run stopped" in line
    assert any(fault in line.lower() for fault in FAULTS), line


def attempts(out: Path) -> list[sqlite3.Row]:
    """The run's attempts, read without writing (the disk may still be full)."""
    conn = sqlite3.connect(f"file:{out / DB_NAME}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    try:
        return list(conn.execute("select outcome, crash_kind from attempts"))
    finally:
        conn.close()


#: How small the filesystem that fills is (KiB): the whole run writes about 1.5 MiB of records
#: (its WAL, before a checkpoint) and the cache about 300 KiB (WAL and shared memory included).
SIZES = {"records": 900, "cache": 200}


@pytest.mark.parametrize(("full", "mount"), [("records", True), ("cache", True), ("records", False)])
def test_a_full_disk_stops_the_run_in_one_line_and_the_same_command_resumes_it(tmp_path, full, mount):
    """``records``: the run folder's filesystem fills; ``cache``: the response cache's does;
    without ``mount``, the file-size limit that stands for a tmpfs where none can be mounted."""
    small = tmp_path / "small"
    with ScriptedServer(reply) as server, small_fs(small, SIZES[full], mount) as free:
        out = small / "run" if full == "records" else tmp_path / "run"
        cache = small / "cache" if full == "cache" else tmp_path / "cache"
        args = command(server.base_url, out, cache)
        fsize = None if free else SIZES[full] * 1024  # no tmpfs: a file may grow that far
        first = vreact(args, tmp_path, fsize)
        stopped_on_a_full_disk(first, out)
        before = attempts(out)
        assert 0 < len(before) < PLANNED  # it stopped part of the way
        assert not any(a["crash_kind"] == "internal" for a in before)
        if free:
            free()
        again = vreact(args, tmp_path)  # the same command, with room
        assert again.returncode == 0, again.stderr[-2000:]
        after = attempts(out)  # (before the small filesystem goes)
    assert len(after) == PLANNED and {a["outcome"] for a in after} <= {"answer", "abstain"}
