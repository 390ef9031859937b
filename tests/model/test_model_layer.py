"""Acceptance: the model layer users can trust for thousands of attempts, through the CLI.

Retries of HTTP 500/429 are visible call by call in ``model_calls.retries``; a rerun is served
by the response cache and makes no request; an API key never reaches the records, the output
or the report; a server that stalls cannot hold a run past its logical-call timeout.
Every check is on the records in ``vreact.db`` and on what the fake server saw.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.conftest import FULL
from tests.fakes.chaos_server import JSON, ChaosServer
from tests.model.test_chaos import check_accounting, rows, vreact
from tests.model.test_chaos import run_args as chaos_run_args
from vreact.cli import cli

DEFAULT_MAX_RETRIES = 6  # vreact run --max-retries default
KEY = "sk-test-SECRET-7f3a9c"


class RecordingServer(ChaosServer):
    """A ChaosServer that also records the status of each reply, in order, and (``echo_key``)
    quotes the request's Authorization header in its 500/429 error messages, as some
    providers quote keys back, so the client's redaction is really exercised."""

    def __init__(self, *args: Any, echo_key: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.echo_key = echo_key
        self.statuses: list[int] = []

    def handle_completion(
        self, body: JSON, authorization: str | None = None
    ) -> tuple[int, JSON, dict[str, str]] | None:
        reply = super().handle_completion(body, authorization)
        if reply is None:
            return None
        status, payload, headers = reply
        if self.echo_key and status in (429, 500):
            payload["error"]["message"] += f" (request sent Authorization: {authorization})"
        with self._lock:
            self.statuses.append(status)
        return status, payload, headers


def run_args(out: Path, base_url: str, configs: str, limit: int, *extra: str) -> list[str]:
    return chaos_run_args(FULL, configs, "openai/x", out, limit, base_url, *extra)


def report_json(out: Path) -> dict[str, Any]:
    result = vreact("report", str(out), "--json")
    assert result.exit_code == 0, result.output
    return dict(json.loads(result.stdout))


# ---------------------------------------------------------------------------------------------
# 1. retries


@pytest.mark.timeout(300)
def test_retries_of_500_and_429_are_accounted_call_by_call(tmp_path: Path) -> None:
    out = tmp_path / "run"
    mix = {"nonsense": 0.7, "http500": 0.2, "http429": 0.1}
    with RecordingServer(mix=mix, seed=11) as server:
        started = time.perf_counter()
        result = vreact(*run_args(out, server.base_url, "VG", 40))
        elapsed = time.perf_counter() - started
    print(f"retry run: {elapsed:.1f}s, {len(server.requests)} requests, {server.counts}")
    assert result.exit_code == 0, result.output
    assert elapsed < 120, f"retry run took {elapsed:.0f}s (the server asks for 1 ms between tries)"

    report = check_accounting(out, ["VG"], 40)
    assert report["VG"]["crash"] <= 1, report["VG"]
    db = out / "vreact.db"
    crashes = rows(db, "select error from attempts where outcome = 'crash'")
    for c in crashes:  # a crash may only be a call that failed every try
        assert f"after {DEFAULT_MAX_RETRIES} retries" in c["error"], c

    transient = server.counts["http500"] + server.counts["http429"]
    assert transient > 0 and server.counts["nonsense"] > 0, server.counts
    assert set(server.statuses) <= {200, 429, 500}
    assert len(server.statuses) == len(server.requests)

    calls = rows(db, "select * from model_calls order by id")
    assert calls and all(c["retries"] is not None for c in calls)
    assert sum(c["retries"] for c in calls) > 0, "no retry is visible in the records"
    for c in calls:
        assert 0 <= c["retries"] <= DEFAULT_MAX_RETRIES, c
        assert c["status"] in ("ok", "error"), c
        if c["cached"]:
            assert c["status"] == "ok" and c["retries"] == 0, c
        if c["status"] == "error":
            # only transient failures happen here, so a failed call used every retry
            assert c["retries"] == DEFAULT_MAX_RETRIES, c
            assert "after 6 retries" in c["error"] and re.search(r"Error code: (500|429)", c["error"]), c
    # exact: replaying the calls in order (the run is sequential) gives what the server sent,
    # every 500/429 being a retry of a call or its final failure
    expected: list[str] = []
    for c in calls:
        if c["cached"]:
            continue
        expected += ["T"] * c["retries"] + ["ok" if c["status"] == "ok" else "T"]
    sent = ["ok" if s == 200 else "T" for s in server.statuses]
    assert sent == expected
    failed = sum(c["status"] == "error" for c in calls)
    assert sum(c["retries"] for c in calls) + failed == transient
    assert sum(c["status"] == "ok" and not c["cached"] for c in calls) == server.counts["nonsense"]


# ---------------------------------------------------------------------------------------------
# 2. response cache


@pytest.mark.timeout(300)
def test_a_rerun_is_served_by_the_cache_and_reproduces_the_report(tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    first, second, third = tmp_path / "run1", tmp_path / "run2", tmp_path / "run3"
    with RecordingServer(mix={"nonsense": 1.0}, seed=5) as server:
        url = server.base_url
        r1 = vreact(*run_args(first, url, "N,VG", 5, "--cache-dir", str(cache_dir)))
        assert r1.exit_code == 0, r1.output
        after_first = len(server.requests)
        started = time.perf_counter()
        r2 = vreact(*run_args(second, url, "N,VG", 5, "--cache-dir", str(cache_dir)))
        cached_run = time.perf_counter() - started
        assert r2.exit_code == 0, r2.output
        after_second = len(server.requests)
        r3 = vreact(*run_args(third, url, "N,VG", 5, "--cache-dir", str(cache_dir), "--no-cache"))
        assert r3.exit_code == 0, r3.output
        after_third = len(server.requests)
    print(f"cache: first run {after_first} requests; cached rerun {cached_run:.1f}s")

    # the first run asked the server for every call, the second asked for nothing
    calls1 = rows(first / "vreact.db", "select * from model_calls")
    assert after_first > 0
    assert after_first == sum(not c["cached"] for c in calls1)
    assert after_second == after_first, "the rerun made requests"
    calls2 = rows(second / "vreact.db", "select * from model_calls")
    assert calls2 and {c["cached"] for c in calls2} == {1}
    assert len(calls2) == len(calls1)
    assert {c["retries"] for c in calls2} == {0}

    # the same records, so the same report (only the run id differs)
    rep1, rep2 = report_json(first), report_json(second)
    assert set(rep1) == set(rep2)
    assert list(rep1["configs"]) == ["N", "VG"]
    assert {k: v for k, v in rep1.items() if k != "run"} == {k: v for k, v in rep2.items() if k != "run"}
    check_accounting(second, ["N", "VG"], 5)

    # --no-cache asks the server again, for every call
    calls3 = rows(third / "vreact.db", "select * from model_calls")
    assert calls3 and {c["cached"] for c in calls3} == {0}
    assert after_third - after_second == len(calls3) > 0

    # the cache commands name the file and count what it holds (--no-cache stored nothing)
    db_file = cache_dir / "responses.db"
    assert db_file.is_file()
    shown = vreact("cache", "path", "--cache-dir", str(cache_dir))
    assert shown.exit_code == 0, shown.output
    assert str(db_file) in shown.stdout
    assert f"({after_first} responses)" in shown.stdout, shown.stdout
    cleared = vreact("cache", "clear", "--cache-dir", str(cache_dir))
    assert cleared.exit_code == 0, cleared.output
    assert f"cleared {after_first} responses" in cleared.stdout and str(db_file) in cleared.stdout
    again = vreact("cache", "path", "--cache-dir", str(cache_dir))
    assert "(0 responses)" in again.stdout, again.stdout


def test_cache_commands_default_to_vreact_cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VREACT_CACHE_DIR", str(tmp_path / "elsewhere"))
    shown = vreact("cache", "path")
    assert shown.exit_code == 0, shown.output
    assert str(tmp_path / "elsewhere" / "responses.db") in shown.stdout
    assert "(0 responses)" in shown.stdout


# ---------------------------------------------------------------------------------------------
# 3. secrets


@pytest.mark.timeout(300)
def test_the_api_key_reaches_the_server_and_nothing_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    env: dict[str, str | None] = {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": None}
    out = tmp_path / "run"
    mix = {"nonsense": 0.4, "http500": 0.3, "http429": 0.3}
    with RecordingServer(mix=mix, seed=2, echo_key=True) as server:
        # one retry only, so some calls fail for good and their error messages are recorded
        args = run_args(out, server.base_url, "N,VG", 6, "--max-retries", "1")
        run = CliRunner().invoke(cli, args, env=env)
    assert run.exit_code == 0, run.output
    report = CliRunner().invoke(cli, ["report", str(out), "--json"], env=env)
    assert report.exit_code == 0, report.output
    plain = CliRunner().invoke(cli, ["report", str(out)], env=env)
    assert plain.exit_code == 0, plain.output

    # the server did get the key, on every request
    assert server.requests and server.authorizations == [f"Bearer {KEY}"] * len(server.requests)
    # and echoed it in error messages that were recorded (redacted)
    db = out / "vreact.db"
    errors = [c["error"] for c in rows(db, "select error from model_calls where status = 'error'")]
    errors += [a["error"] for a in rows(db, "select error from attempts where outcome = 'crash'")]
    assert errors, "no error message was recorded; the test would prove nothing"
    assert any("Authorization: Bearer ***" in e for e in errors), errors[:3]

    needles = (KEY.encode(), b"SECRET-7f3a9c", b"7f3a9c")
    files = [p for p in out.rglob("*") if p.is_file()]
    assert any(p.name == "vreact.db" for p in files), files
    cache = Path(os.environ["VREACT_CACHE_DIR"])
    cache_files = [p for p in cache.rglob("*") if p.is_file()]
    assert any(p.name == "responses.db" for p in cache_files), cache_files
    for path in files + cache_files:
        data = path.read_bytes()
        for needle in needles:
            assert needle not in data, f"{needle!r} found in {path}"
    texts = {
        "run output": run.stdout + run.stderr,
        "report --json": report.stdout + report.stderr,
        "report": plain.stdout + plain.stderr,
    }
    for what, text in texts.items():
        assert text.strip(), what
        for needle in needles:
            assert needle.decode() not in text, f"{needle!r} found in {what}"


# ---------------------------------------------------------------------------------------------
# 4. a stalled server


@pytest.mark.timeout(25)
def test_a_stalled_server_cannot_hold_a_run_past_the_call_timeout(tmp_path: Path) -> None:
    out = tmp_path / "run"
    started = time.perf_counter()
    with RecordingServer(script=["stall"], stall_seconds=30.0) as server:
        result = vreact(*run_args(out, server.base_url, "VG", 1, "--call-timeout", "1"))
        run_time = time.perf_counter() - started
    total = time.perf_counter() - started
    print(f"stalled run: {run_time:.1f}s; with server teardown {total:.1f}s")
    assert result.exit_code == 0, result.output
    assert run_time < 10, f"the run took {run_time:.0f}s against a call timeout of 1s"
    assert total < 12, f"the server teardown waited on the stalled request ({total:.0f}s)"

    assert server.counts.get("stall") == len(server.requests) == 1, server.counts
    assert server.statuses == []  # nothing was ever answered
    report = check_accounting(out, ["VG"], 1)
    assert report["VG"]["crash"] == 1, report["VG"]
    db = out / "vreact.db"
    [attempt] = rows(db, "select * from attempts")
    assert attempt["outcome"] == "crash"
    assert attempt["error"].startswith("CallTimeoutError: call_timeout"), attempt["error"]
    [call] = rows(db, "select * from model_calls")
    assert call["status"] == "error" and "call_timeout" in call["error"], call


@pytest.mark.timeout(60)
def test_a_stalled_server_cannot_hold_the_vreact_process(tmp_path: Path) -> None:
    """The same as above through a real ``vreact`` process: it must also *exit* in time."""
    out = tmp_path / "run"
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    with RecordingServer(script=["stall"], stall_seconds=30.0) as server:
        args = run_args(out, server.base_url, "VG", 1, "--call-timeout", "1")
        started = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "vreact.cli", *args], env=env, capture_output=True, text=True, timeout=10
        )
        elapsed = time.perf_counter() - started
    print(f"stalled run as a process: {elapsed:.1f}s")
    assert proc.returncode == 0, proc.stderr
    [attempt] = rows(out / "vreact.db", "select * from attempts")
    assert attempt["error"].startswith("CallTimeoutError: call_timeout"), attempt["error"]


@pytest.mark.timeout(60)
def test_retries_before_a_call_timeout_are_recorded(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with RecordingServer(script=["http500", "http429", "stall"], stall_seconds=30.0) as server:
        result = vreact(*run_args(out, server.base_url, "VG", 1, "--call-timeout", "1"))
    assert result.exit_code == 0, result.output
    assert server.statuses == [500, 429] and len(server.requests) == 3, server.statuses
    [call] = rows(out / "vreact.db", "select * from model_calls")
    assert call["status"] == "error" and "call_timeout" in call["error"], call
    assert call["retries"] == 2, call
