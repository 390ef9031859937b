"""Trust on any machine: the endpoint really used keys the cache, the concurrency slot and the
run; a bug in vreact is an internal error (a failing test, or a crash record that says so),
never an ordinary crash; tests reach loopback only."""

from __future__ import annotations

import json
import socket
import traceback
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tests.conftest import FULL
from tests.fakes.chaos_server import ChaosServer
from tests.helpers import attempt
from tests.model.test_chaos import rows
from vreact.cli import cli
from vreact.experiment import RAISE_INTERNAL, crash, crash_kind
from vreact.model import (
    CallTimeoutError,
    ContextLengthError,
    MockModel,
    MockScriptExhausted,
    ModelConfigError,
    ModelError,
    TransientError,
    get_model,
)
from vreact.qa.roles.designer import Subtask
from vreact.spec import builtin_configs

# --- one notion of an endpoint ----------------------------------------------------------------


def run_via_env(base_url: str, out: Path, cache: Path, limit: int = 2) -> Result:
    """``vreact run`` whose server comes from OPENAI_BASE_URL alone (no --base-url)."""
    args = ["run", "--dataset", str(FULL), "--configs", "N,VG", "--model", "openai/local", "--limit"]
    args += [str(limit), "--out", str(out), "--cache-dir", str(cache), "--concurrency", "1"]
    return CliRunner().invoke(cli, args, env={"OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": None})


def test_the_server_from_the_environment_keys_the_cache_and_the_run(tmp_path):
    cache = tmp_path / "cache"
    mix = {"nonsense": 1.0}
    with ChaosServer(mix, deterministic=True) as one, ChaosServer(mix, deterministic=True) as two:
        first = run_via_env(one.base_url, tmp_path / "a", cache)
        assert first.exit_code == 0, first.output
        asked_one = len(one.requests)
        assert asked_one > 0
        # another server through the environment, one shared cache: it is asked, not replayed
        second = run_via_env(two.base_url, tmp_path / "b", cache)
        assert second.exit_code == 0, second.output
        assert len(two.requests) == asked_one
        # the same server again into a fresh folder: every answer comes from the cache
        third = run_via_env(one.base_url, tmp_path / "c", cache)
        assert third.exit_code == 0, third.output
        assert len(one.requests) == asked_one
        # each call says which server answered it (or whose answer the cache replayed)
        for out, server in (("a", one), ("b", two), ("c", one)):
            db = tmp_path / out / "vreact.db"
            assert {r["endpoint"] for r in rows(db, "select endpoint from model_calls")} == {
                server.base_url.rstrip("/")
            }
            [run] = rows(db, "select config_json from runs")
            assert set(json.loads(run["config_json"])["endpoints"].values()) == {server.base_url.rstrip("/")}
        assert {
            r["cached"] for r in rows(tmp_path / "c" / "vreact.db", "select cached from model_calls")
        } == {1}
        # resuming a folder with the other server is refused, in one line, and asks nothing
        before = len(two.requests)
        resumed = run_via_env(two.base_url, tmp_path / "a", cache, limit=3)
        assert resumed.exit_code == 2, resumed.output
        [line] = [ln for ln in resumed.stderr.splitlines() if ln.strip()][-1:]
        assert "run 1 was made with default at " + one.base_url.rstrip("/") in line
        assert "give it another --out" in line
        assert len(two.requests) == before
        assert len(rows(tmp_path / "a" / "vreact.db", "select id from runs")) == 1


def test_endpoints_of_each_provider():
    openai = get_model("openai/x", base_url="http://127.0.0.1:1/v1/")
    assert openai.endpoint == "http://127.0.0.1:1/v1"  # type: ignore[attr-defined]
    anthropic = get_model("anthropic/x", base_url="http://127.0.0.1:2")
    assert anthropic.endpoint == "http://127.0.0.1:2"  # type: ignore[attr-defined]
    assert MockModel([]).endpoint == "mock"


def test_the_concurrency_slot_follows_the_endpoint(monkeypatch):
    from vreact.model import _resilient

    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:3/v1")
    a = get_model("openai/x")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:4/v1")
    b = get_model("openai/x")
    assert _resilient._slot(a.endpoint, 2) is not _resilient._slot(b.endpoint, 2)  # type: ignore[attr-defined]
    assert a.endpoint != b.endpoint  # type: ignore[attr-defined]


# --- bugs are never hidden as crashes ----------------------------------------------------------


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (CallTimeoutError("call_timeout: no answer"), "timeout"),
        (ContextLengthError("context_length: too long"), "context_length"),
        (MockScriptExhausted("ran out"), "script"),
        (ModelError("HTTP 400"), "model"),
        (ModelConfigError("no key"), "model"),
        (TransientError("HTTP 500 (after 6 retries)"), "model"),
        (KeyError("step"), "internal"),
        (AttributeError("x"), "internal"),
    ],
)
def test_only_expected_failures_are_crashes(error, kind):
    assert crash_kind(error) == kind


def test_an_internal_error_keeps_its_whole_traceback():
    def deep(n: int) -> None:
        if n == 0:
            raise KeyError("x" * 3000)
        deep(n - 1)

    try:
        deep(30)
    except KeyError as e:
        outcome, whole = crash(e), "".join(traceback.format_exception(e))
    assert outcome.crash_kind == "internal" and outcome.traceback == whole
    assert len(whole) > 3000 and whole.rstrip().endswith("x" * 3000 + "'")  # nothing cut


def plant_key_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """A programming error inside the controller: R1 looks up a level that is not there."""

    def broken(self):
        return {"objective": self.objective, "contract": self.contract}["planted_missing_key"]

    monkeypatch.setattr(Subtask, "l3", broken)


def test_under_the_suite_an_internal_error_raises(monkeypatch, task_nissedal, spec, verifiers, roles, store):
    plant_key_error(monkeypatch)
    script = [{"thought": "", "action": "finish", "input": "north", "evidence": ["6"]}]
    with pytest.raises(KeyError, match="planted_missing_key"):
        attempt(builtin_configs()["VG"], task_nissedal, script, store, spec, verifiers, roles)
    # N never reaches R1: it is unaffected
    _, row, _ = attempt(builtin_configs()["N"], task_nissedal, script, store, spec, verifiers, roles)
    assert row["outcome"] == "answer"


PLANTED_SUITE = """
import pytest
from tests.conftest import *  # the suite's fixtures and guards
from tests.properties.test_properties import (
    task,
    test_every_attempt_ends_in_exactly_one_outcome_and_answers_only_through_verdicts,
)
from vreact.qa import _kit


@pytest.fixture(autouse=True)
def planted(monkeypatch):
    def broken(messages, *step_format):
        return {}["planted_missing_key"]
    monkeypatch.setattr(_kit, "render_messages", broken)
"""


def test_a_planted_bug_fails_the_headline_invariant_test(pytester):
    """The headline invariant test accepted a crash as a valid ending, so a KeyError planted in
    the controller passed it; under the suite's conftest it now fails."""
    pytester.makepyfile(test_planted=PLANTED_SUITE)
    result = pytester.runpytest_inprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    assert "planted_missing_key" in result.stdout.str()


def test_a_cli_run_records_an_internal_error_and_says_so(monkeypatch, tmp_path):
    monkeypatch.delenv(RAISE_INTERNAL)  # as a user runs it
    plant_key_error(monkeypatch)
    out = tmp_path / "run"
    with ChaosServer({"nonsense": 1.0}, deterministic=True) as server:
        args = ["run", "--dataset", str(FULL), "--configs", "N,VG", "--model", "openai/x", "--limit", "3"]
        args += ["--out", str(out), "--base-url", server.base_url, "--concurrency", "1"]
        # the schema-valid nonsense often picks finish, so VG attempts reach R1 and its bug
        result = CliRunner().invoke(cli, args, env={"OPENAI_API_KEY": None})
    assert result.exit_code == 0, result.output
    db = out / "vreact.db"
    crashed = rows(db, "select * from attempts where outcome = 'crash'")
    internal = [a for a in crashed if a["crash_kind"] == "internal"]
    assert internal and all(a["config"] == "VG" for a in internal)
    for a in internal:
        assert a["error"].startswith("internal error: KeyError: 'planted_missing_key'")
        tb = a["traceback"]
        assert tb.startswith("Traceback (most recent call last):") and "in broken" in tb
        assert "in run_attempt" in tb and tb.rstrip().endswith("KeyError: 'planted_missing_key'")
    report = json.loads(CliRunner().invoke(cli, ["report", str(out), "--json"]).stdout)
    assert report["configs"]["VG"]["internal_errors"] == len(internal)
    assert report["configs"]["N"]["internal_errors"] == 0
    summary = [ln for ln in result.stdout.splitlines() if "internal error(s)" in ln]
    assert len(summary) == 1 and summary[0].startswith(f"{len(internal)} internal error(s)")
    kinds = [ln for ln in result.stdout.splitlines() if ln.startswith(f"  {len(internal)} internal (final)")]
    assert len(kinds) == 1 and "KeyError: 'planted_missing_key'" in kinds[0]  # among the crash kinds
    assert "crash_kind = 'internal'" in summary[0]


# --- tests reach loopback only, and load no model unless marked --------------------------------


def test_tests_reach_loopback_only():
    with pytest.raises(OSError, match="loopback only"):
        socket.create_connection(("10.255.255.1", 80), timeout=0.5)
    with ChaosServer() as server:
        port = int(server.base_url.rsplit(":", 1)[1].split("/")[0])
        socket.create_connection(("127.0.0.1", port), timeout=2).close()


def test_the_guard_holds_in_subprocesses(tmp_path):
    import subprocess
    import sys

    code = "import socket; socket.create_connection(('192.0.2.1', 80), timeout=0.5)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "loopback only" in done.stderr


def test_no_gguf_is_loaded_unless_the_test_is_marked_real_model():
    with pytest.raises(RuntimeError, match="not allowed here"):
        get_model("llamacpp/smollm2-135m")
