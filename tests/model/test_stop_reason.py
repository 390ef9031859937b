"""Why a reply stopped, through the real HTTP paths: an OpenAI-compatible server's
``finish_reason`` (plain and streamed) and Anthropic's ``stop_reason`` are carried on the
Completion, kept by the response cache (a cache made before the column reads NULL for its old
entries) and recorded on the call. A reply a loopback server ends with ``finish_reason:
length`` is cut, though it reads as a whole program: the code family's N abstains with cause
``truncated``, VG's parses gate rejects every try with it; served from the cache, the same."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import sqlite_utils

import vreact
from tests.fakes.anthropic_server import AnthropicServer
from tests.fakes.reasoning_server import ReasoningServer
from tests.fakes.scripted_server import ScriptedServer
from vreact.code.data import SHIPPED, read_problems
from vreact.model import Completion, ResponseCache
from vreact.model._anthropic import AnthropicModel
from vreact.model._base import Watchdog
from vreact.model._openai import OpenAIModel
from vreact.records import read_run
from vreact.spec import Experiment

MESSAGES = [{"role": "user", "content": "2+2?"}]
[PROBLEM] = read_problems(SHIPPED, 1)  # HumanEval/0
#: the whole, right program: cut or not is the server's word alone
PROGRAM = f"```python\n{PROBLEM.prompt}{PROBLEM.canonical_solution}```"


class StoppingServer(ScriptedServer):
    """The scripted OpenAI fake, ending every reply with ``finish_reason`` ``reason``."""

    def __init__(self, reply: Any, reason: str) -> None:
        super().__init__(reply)
        self.reason = reason

    def completion(self, body: Any, served: int) -> Any:
        out = super().completion(body, served)
        out["choices"][0]["finish_reason"] = self.reason
        return out


class StoppingAnthropic(AnthropicServer):
    """The Anthropic fake, its replies stopped at ``max_tokens``."""

    def handle_message(self, body: Any, headers: Any) -> Any:
        status, out, extra = super().handle_message(body, headers)
        out["stop_reason"] = "max_tokens"
        return status, out, extra


def test_openai_finish_reason_plain_and_streamed() -> None:
    with StoppingServer(lambda body: "4", "length") as server:
        c = OpenAIModel("m", base_url=server.base_url).generate(MESSAGES)
    assert (c.text, c.stop_reason, c.truncated) == ("4", "length", True)
    with StoppingServer(lambda body: "4", "stop") as server:
        c = OpenAIModel("m", base_url=server.base_url).generate(MESSAGES)
    assert (c.stop_reason, c.truncated) == ("stop", False)
    for finish in ("length", "stop"):  # a watchdog streams: the last chunk that says
        with ReasoningServer(every=0.0, then="4", finish=finish) as server:
            c = OpenAIModel("m", base_url=server.base_url, watchdog=Watchdog(max_tokens=10_000)).generate(
                MESSAGES
            )
        assert (c.text, c.stop_reason) == ("4", finish)


def test_anthropic_stop_reason() -> None:
    key = "sk-ant-test-0123456789abcdef"
    with AnthropicServer(script=["prose"]) as server:
        c = AnthropicModel("claude-test", base_url=server.base_url, api_key=key).generate(MESSAGES)
    assert (c.stop_reason, c.truncated) == ("end_turn", False)
    with StoppingAnthropic(script=["prose"]) as server:
        c = AnthropicModel("claude-test", base_url=server.base_url, api_key=key).generate(MESSAGES)
    assert (c.stop_reason, c.truncated) == ("max_tokens", True)


def test_the_cache_keeps_the_reason_and_a_cache_made_before_reads_none(tmp_path) -> None:
    folder = tmp_path / "cache"
    folder.mkdir()
    old = sqlite_utils.Database(folder / "responses.db")  # as a cache made before the column
    columns = ("model", "text", "prompt_tokens", "completion_tokens", "latency_ms", "created")
    old["responses"].insert(
        dict(zip(("key", *columns), ("k0", "m", "old", 1, 2, 3.0, 0.0), strict=True)), pk="key"
    )
    old.conn.close()
    cache = ResponseCache(folder)
    assert cache.get("k0") == Completion("old", 1, 2, 3.0, cached=True, stop_reason=None)
    cache.put("k1", "m", Completion("cut", 1, 2, 3.0, stop_reason="length"))
    again = ResponseCache(folder).get("k1")
    assert again is not None and (again.stop_reason, again.truncated, again.cached) == ("length", True, True)
    names = [r[1] for r in sqlite3.connect(folder / "responses.db").execute("pragma table_info(responses)")]
    assert names.count("stop_reason") == 1


def code_run(base_url: str, cache: bool) -> Experiment:
    return Experiment.model_validate(
        {
            "kind": "experiment",
            "name": "cut",
            "dataset": {"family": "code", "path": "humaneval", "task_ids": [PROBLEM.id]},
            "configurations": [{"name": "N"}, {"name": "VG", "guards": True, "gates": True}],
            "models": {"default": "openai/coder"},
            "base_url": base_url,
            "cache": cache,
            "concurrency": 1,
        }
    )


def outcomes(out) -> dict[str, tuple[str, str | None, str | None]]:
    return {a.config: (a.outcome, a.abstain_level, a.abstain_cause) for a in read_run(out).attempts}


def test_a_reply_the_server_stopped_at_length_is_truncated_not_a_program(tmp_path) -> None:
    with StoppingServer(lambda body: PROGRAM, "length") as server:
        url = server.base_url  # the cache's keys name it: the cached run asks for the same
        run = vreact.resolve(code_run(url, cache=True), cache_dir=tmp_path / "cache")
        vreact.run_experiment(run, tmp_path / "out")
        asked = len(server.requests)
    assert {r["max_tokens"] for r in server.requests} == {768}  # the family's allowance, and still cut
    expected = {"N": ("abstain", "cap", "truncated"), "VG": ("abstain", "L3", "parses:truncated")}
    assert outcomes(tmp_path / "out") == expected
    records = read_run(tmp_path / "out")
    calls = [c for a in records.attempts for c in a.calls]
    # VG's first try asks what N asked (the same prompt and seed): the cache answers, with the reason
    assert (asked, len(calls), sum(c.cached for c in calls)) == (3, 4, 1)
    assert {c.stop_reason for c in calls} == {"length"}
    vg = next(a for a in records.attempts if a.config == "VG")
    assert [(v.check_name, v.cause) for v in vg.verdicts if v.decision == "reject"] == [
        ("parses", "truncated")
    ] * 3
    report = vreact.report(tmp_path / "out")
    assert report.configs["N"].truncated == {"executor": 1} and report.configs["VG"].truncated == {
        "executor": 3
    }
    # the same run served by the response cache: the reason came with each reply
    run = vreact.resolve(code_run(url, cache=True), cache_dir=tmp_path / "cache", cache_only=True)
    vreact.run_experiment(run, tmp_path / "again")
    assert outcomes(tmp_path / "again") == expected
    again = read_run(tmp_path / "again")
    assert {(c.stop_reason, c.cached) for a in again.attempts for c in a.calls} == {("length", True)}


def test_a_reply_that_stopped_on_its_own_is_the_program(tmp_path) -> None:
    with StoppingServer(lambda body: PROGRAM, "stop") as server:
        vreact.run_experiment(vreact.resolve(code_run(server.base_url, cache=False)), tmp_path / "out")
    assert {o for o, _, _ in outcomes(tmp_path / "out").values()} == {"answer"}
    calls = [c for a in read_run(tmp_path / "out").attempts for c in a.calls]
    assert {c.stop_reason for c in calls} == {"stop"}
    assert json.loads(json.dumps(vreact.report(tmp_path / "out").configs["N"].truncated)) == {}
