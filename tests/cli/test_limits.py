"""Limits a user meets before and around a run (issue 33): bounded plans refused in one line with
nothing created, a dry run that makes nothing, a base URL that is no URL, and a server where
nothing listens once the run has started: the run stops after a bounded number of connection
failures, says which server and how many attempts, exits non-zero, and the same command finishes
it once the server is up."""

from __future__ import annotations

import socket
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import assert_records_whole
from tests.fakes.chaos_server import ChaosServer
from vreact.cli import _servers, cli
from vreact.spec import MAX_ATTEMPTS, MAX_CONCURRENCY, MAX_PLANNED

HUGE = str(10**20)


def invoke(*args: str) -> object:
    return CliRunner().invoke(cli, list(args))


def one_line_refusal(result: object, out: Path, *words: str) -> None:
    assert result.exit_code == 2, result.output  # type: ignore[attr-defined]
    lines = [line for line in result.output.splitlines() if line.strip()]  # type: ignore[attr-defined]
    assert len(lines) == 1 and lines[0].startswith("error:"), result.output  # type: ignore[attr-defined]
    assert all(w in lines[0] for w in words), lines[0]
    assert "Traceback" not in result.output  # type: ignore[attr-defined]
    assert not out.exists()


@pytest.mark.parametrize(
    "args, words",
    [
        (["run", "--dataset", "sample", "--attempts", HUGE], ["--attempts", f"{MAX_ATTEMPTS}"]),
        (
            ["run", "--dataset", "sample", "--concurrency", str(10**9)],
            ["--concurrency", f"{MAX_CONCURRENCY}"],
        ),
        (["run", "--dataset", "sample", "--endpoint-concurrency", str(10**9)], ["--endpoint-concurrency"]),
        (["experiment", "pilot", "--set", f"attempts={HUGE}"], ["attempts", f"{MAX_ATTEMPTS}"]),
        (["experiment", "pilot", "--set", f"concurrency={10**9}"], ["concurrency", f"{MAX_CONCURRENCY}"]),
        # within each bound, but not together: the planned total
        (
            ["run", "--dataset", "sample", "--configs", "N,VG", "--attempts", str(MAX_ATTEMPTS)],
            ["plans", "at most"],
        ),
        (
            ["run", "--dataset", "sample", "--model", "openai/x", "--base-url", "notaurl"],
            ["--base-url", "notaurl"],
        ),
        (["experiment", "pilot", "--set", "base_url=notaurl"], ["base_url", "not a server's base URL"]),
    ],
)
def test_a_plan_past_the_bounds_is_refused_in_one_line_with_nothing_created(
    args, words, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "run"
    one_line_refusal(invoke(*args, "--out", str(out)), out, *words)
    assert not (tmp_path / "runs").exists()


def test_a_huge_attempts_in_a_file_names_its_line(tmp_path):
    path = tmp_path / "big.yaml"
    path.write_text(f"kind: experiment\nname: big\nconfigurations: [{{name: N}}]\nattempts: {HUGE}\n")
    out = tmp_path / "run"
    one_line_refusal(invoke("experiment", str(path), "--out", str(out)), out, f"{path}:4: attempts")


def test_a_dry_run_of_a_million_attempts_prints_the_plan_and_makes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "run"
    cache = tmp_path / "cache"
    monkeypatch.setenv("VREACT_CACHE_DIR", str(cache))
    args = ["--dataset", "sample", "--configs", "N", "--limit", "1", "--attempts", str(MAX_PLANNED)]
    result = invoke("run", *args, "--dry-run", "--out", str(out))
    assert result.exit_code == 0, result.output
    assert "1 configuration(s) x 1 task(s) x 1,000,000 attempt(s) = 1,000,000 attempts" in result.output
    assert "calling llamacpp/smollm2-135m" in result.output  # what it would start, not loaded
    assert "nothing was created" in result.output
    assert not out.exists() and not cache.exists() and not (tmp_path / "runs").exists()


def test_an_experiment_dry_run_names_each_configuration(tmp_path):
    out = tmp_path / "run"
    result = invoke("experiment", "pilot", "--set", "attempts=3", "--dry-run", "--out", str(out))
    assert result.exit_code == 0, result.output
    assert "5 configuration(s) x" in result.output and "N " in result.output and "VPGJ " in result.output
    assert not out.exists()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_server_that_stops_answering_stops_the_run_and_the_same_command_finishes_it(tmp_path, monkeypatch):
    """The server answered the check before the run (a server where nothing listens then is
    refused before anything starts: tests/cli/test_servers.py) and is gone when it is called."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    port = free_port()
    url = f"http://127.0.0.1:{port}/v1"
    out = tmp_path / "run"
    args = ["run", "--dataset", "sample", "--configs", "N,VG", "--limit", "4", "--model", "openai/x"]
    args += ["--base-url", url, "--out", str(out), "--no-cache"]
    with monkeypatch.context() as m:
        m.setattr(_servers, "unanswered", lambda served: [])  # it answered the check, then went away
        first = invoke(*args)
    assert first.exit_code == 1, first.output
    said = [line for line in first.output.splitlines() if line.startswith("error:")]
    assert len(said) == 1 and f"nothing answers at {url}" in said[0], first.output
    assert "attempt(s) ended that way and run again on resume" in said[0]
    assert "unreachable (run again on resume)" in first.output  # under the tables
    assert_records_whole(out)  # vreact check passes the folder
    db = sqlite3.connect(out / "vreact.db")
    crashed = db.execute("select count(*) from attempts where crash_kind = 'unreachable'").fetchone()[0]
    assert 1 <= crashed <= 4  # it stopped starting attempts: at most the first wave (4 in flight)
    assert f"{crashed} attempt(s) ended that way" in said[0]
    db.close()

    server = ChaosServer(mix={"nonsense": 1.0}, seed=1, deterministic=True)
    server.port = port
    with server:
        second = invoke(*args)
    assert second.exit_code == 0, second.output
    db = sqlite3.connect(out / "vreact.db")
    assert db.execute("select count(*) from runs").fetchone()[0] == 1  # the same run, resumed
    outcomes = [r[0] for r in db.execute("select outcome from attempts order by id")]
    assert len(outcomes) == 8 and "crash" not in outcomes
    assert_records_whole(out)
