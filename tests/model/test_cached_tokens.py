"""Cached prompt tokens (issue 14, target 4): what a server says it reused from its prompt cache
is parsed per provider, carried on the Completion and recorded per call; None where the server
does not say (llama-cpp-python's server does not), never a guess."""

from __future__ import annotations

import dataclasses
import sqlite3
from types import SimpleNamespace
from typing import Any

import sqlite_utils

from tests.fakes.anthropic_server import AnthropicServer
from tests.fakes.scripted_server import ScriptedServer
from tests.helpers import attempt, solve
from vreact.config import Configuration
from vreact.model import Completion, MockModel
from vreact.model._anthropic import AnthropicModel
from vreact.model._base import DEFAULT_SETTINGS, Watchdog
from vreact.model._openai import OpenAIModel, cached_tokens
from vreact.records import Store, read_run
from vreact.records.migrations import MIGRATIONS

MESSAGES = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "2+2?"}]


class CachingServer(ScriptedServer):
    """The scripted OpenAI fake, reporting ``cached`` prompt tokens the way OpenAI does."""

    def __init__(self, cached: int | None) -> None:
        super().__init__(lambda body: "4")
        self.cached = cached

    def handle_completion(self, body: Any, authorization: str | None = None) -> Any:
        status, out, headers = super().handle_completion(body, authorization)
        if self.cached is not None:
            out["usage"]["prompt_tokens_details"] = {"cached_tokens": self.cached}
        return status, out, headers


def test_openai_prompt_tokens_details_cached_tokens_is_parsed() -> None:
    with CachingServer(7) as server:
        c = OpenAIModel("scripted", base_url=server.base_url).generate(MESSAGES)
    assert (c.text, c.cached_tokens) == ("4", 7)
    with CachingServer(None) as server:  # a server that does not say (llama-cpp-python's)
        c = OpenAIModel("scripted", base_url=server.base_url).generate(MESSAGES)
    assert c.cached_tokens is None and c.prompt_tokens > 0


def test_a_streamed_reply_carries_the_cached_tokens_of_its_usage_chunk() -> None:
    usage = SimpleNamespace(
        prompt_tokens=30, completion_tokens=2, prompt_tokens_details=SimpleNamespace(cached_tokens=24)
    )
    delta = SimpleNamespace(content="4", model_extra={})
    chunks = [
        SimpleNamespace(usage=None, choices=[SimpleNamespace(delta=delta)]),
        SimpleNamespace(usage=usage, choices=[]),
    ]
    stream = type("S", (), {"__iter__": lambda self: iter(chunks), "close": lambda self: None})()
    assert OpenAIModel._streamed(stream, Watchdog(max_tokens=100)) == ("4", 30, 2, 24, None)
    assert cached_tokens(None) is None
    assert cached_tokens(SimpleNamespace(prompt_tokens_details=None)) is None


class CachingAnthropic(AnthropicServer):
    """The Anthropic fake, reporting a prompt-cache read and write the way the Messages API does."""

    def handle_message(self, body: Any, headers: Any) -> Any:
        status, out, extra = super().handle_message(body, headers)
        if status == 200:
            out["usage"].update(cache_read_input_tokens=40, cache_creation_input_tokens=5)
        return status, out, extra


def test_anthropic_cache_read_input_tokens_is_parsed_and_counted_in_the_prompt() -> None:
    key = "sk-ant-test-0123456789abcdef"
    with AnthropicServer(script=["prose"]) as server:  # a response without the cache fields
        plain = AnthropicModel("claude-test", base_url=server.base_url, api_key=key).generate(MESSAGES)
    assert plain.cached_tokens is None
    with CachingAnthropic(script=["prose"]) as server:
        out = AnthropicModel("claude-test", base_url=server.base_url, api_key=key).generate(MESSAGES)
    assert out.cached_tokens == 40
    # input_tokens leaves out what the cache read and wrote: the prompt is all of it
    assert out.prompt_tokens == plain.prompt_tokens + 40 + 5


class Cached(MockModel):
    """A scripted model whose every answer says it reused half the prompt."""

    def generate(self, messages: Any, schema: Any = None, settings: Any = DEFAULT_SETTINGS) -> Completion:
        c = super().generate(messages, schema, settings)
        return dataclasses.replace(c, cached_tokens=c.prompt_tokens // 2)


def test_each_call_records_its_cached_tokens(task_nissedal, store, spec, verifiers, roles) -> None:
    model = Cached(solve(task_nissedal))
    attempt(Configuration(name="N"), task_nissedal, model, store, spec, verifiers, roles)
    rows = list(store.query("select prompt_tokens, cached_tokens from model_calls order by id"))
    assert rows and all(r["cached_tokens"] == r["prompt_tokens"] // 2 for r in rows)
    [read] = read_run(store).attempts
    assert [c.cached_tokens for c in read.calls] == [r["cached_tokens"] for r in rows]


def test_an_old_folder_gets_the_column_empty(tmp_path) -> None:
    db = sqlite_utils.Database(sqlite3.connect(tmp_path / "vreact.db"))
    for m in MIGRATIONS[:-1]:
        m(db)
        db.table("_migrations").insert({"name": m.__name__, "applied": 0.0}, pk="name")
    db.table("model_calls").insert({"id": 1, "role": "executor", "prompt_tokens": 10})
    db.conn.commit()
    store = Store(tmp_path / "vreact.db")
    [row] = store.query("select cached_tokens from model_calls")
    assert row["cached_tokens"] is None


def test_an_in_process_llama_reports_the_kv_prefix_it_kept() -> None:
    from vreact.model._llamacpp import _reused

    # as Llama.generate matches: the held tokens against the prompt but its last token
    assert _reused([1, 2, 3, 9, 9], [1, 2, 3, 4, 5, 6], 5) == 3
    assert _reused([1, 2, 3, 4, 5, 6], [1, 2, 3, 4, 5, 6, 7], 4) == 3
    assert _reused([], [1, 2], 2) == 0
    assert _reused(None, [1], 1) is None
