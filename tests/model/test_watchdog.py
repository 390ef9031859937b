"""The reasoning-runaway watchdog (seed 003): with a reasoning_only_* limit every call streams,
and a reply that only reasons is aborted at the limit, never retried or cached; without one a
server that never answers is ended by the call timeout, as before."""

from __future__ import annotations

import json
import time

from click.testing import CliRunner

from tests.conftest import FULL
from tests.fakes.reasoning_server import ReasoningServer
from vreact.cli import cli
from vreact.records import read_run


def run(tmp_path, server, limits, config):
    path = tmp_path / "x.yaml"
    experiment = {
        "kind": "experiment",
        "name": "watchdog",
        "dataset": {"path": str(FULL), "limit": 1},
        "configurations": [config],
        "models": {"default": "openai/thinker"},
        "base_url": server.base_url,
        "concurrency": 1,
        "cache": True,
        "limits": {"max_retries": 2, **limits},
    }
    path.write_text(json.dumps(experiment))
    started = time.monotonic()
    result = CliRunner().invoke(cli, ["experiment", str(path), "--out", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    return read_run(tmp_path / "run").attempts[0], time.monotonic() - started


def test_a_reply_that_only_reasons_is_aborted_at_its_token_cap(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    with ReasoningServer() as server:
        config = {"name": "VG", "gates": True, "guards": True}
        a, seconds = run(tmp_path, server, {"reasoning_only_max_tokens": 200, "call_timeout": 60}, config)
    stops = [v for v in a.verdicts if v.check_name == "reasoning_watchdog"]
    assert len(stops) == 3 and {(v.verifier, v.source, v.cause) for v in stops} == {
        ("guard", "guard", "reasoning_runaway")
    }
    assert [v.budget_left for v in stops] == [2, 1, 0]
    assert (a.outcome, a.abstain_level, a.abstain_cause) == (
        "abstain",
        "L3",
        "reasoning_watchdog:reasoning_runaway",
    )
    # each call was cut off just past 200 estimated tokens, not retried, and never answered
    assert server.streamed == 3 and all(c.status == "error" and c.retries == 0 for c in a.calls)
    tokens = [int(c.error.split("reasoning_runaway: ")[1].split()[0]) for c in a.calls]
    assert all(200 < t <= 210 for t in tokens)
    assert seconds < 30


def test_in_n_it_ends_the_attempt_at_the_cap(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    with ReasoningServer() as server:
        a, _ = run(tmp_path, server, {"reasoning_only_max_tokens": 200}, {"name": "N"})
    assert (a.outcome, a.abstain_level, a.abstain_cause) == ("abstain", "cap", "reasoning_runaway")
    assert a.verdicts == []


def test_without_the_key_the_call_timeout_ends_it_as_before(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    with ReasoningServer() as server:
        a, _ = run(tmp_path, server, {"call_timeout": 2, "max_retries": 0}, {"name": "VG", "gates": True})
        assert server.streamed == 0 and server.stalled >= 1
    assert (a.outcome, a.crash_kind) == ("crash", "timeout")


def test_for_the_planner_it_is_an_unparseable_plan_rejected_by_the_plan_gates(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    with ReasoningServer() as server:
        config = {"name": "VPG", "planner": True, "gates": True, "guards": True}
        a, _ = run(tmp_path, server, {"reasoning_only_max_tokens": 100}, config)
    plan = [v for v in a.verdicts if v.verifier == "plan"]
    assert len(plan) == 3 and all(v.decision == "reject" and v.check_name == "plan_parses" for v in plan)
    assert a.outcome == "abstain" and all(c.status == "error" for c in a.calls)


def test_a_reply_that_reasons_a_little_then_answers_is_not_aborted(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    abstain = json.dumps({"thought": "", "action": "abstain", "input": "no paragraph says", "evidence": []})
    with ReasoningServer(then=abstain) as server:  # 20 chunks of ~9 tokens: under 500
        config = {"name": "VG", "gates": True, "guards": True}
        a, _ = run(tmp_path, server, {"reasoning_only_max_tokens": 500}, config)
    assert not [v for v in a.verdicts if v.check_name == "reasoning_watchdog"]
    assert a.calls and all(c.status == "ok" for c in a.calls) and a.calls[0].response == abstain
    assert a.outcome == "abstain" and a.abstain_level in ("declined", "L3", "L1")
