"""The ``anthropic/`` provider against a loopback fake of the Messages API, then a whole run
through the CLI against it (every attempt accounted)."""

from __future__ import annotations

import itertools
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pytest

from tests.conftest import FULL
from tests.fakes.anthropic_server import KINDS, AnthropicServer
from tests.model.test_chaos import check_accounting, run_cli
from vreact.model import (
    ContextLengthError,
    GenerateSettings,
    ModelConfigError,
    ModelError,
    TransientError,
    get_model,
)
from vreact.model._anthropic import AnthropicModel, takes_temperature, to_anthropic
from vreact.qa.roles.executor import STEP_SCHEMA

KEY = "sk-ant-test-0123456789abcdef"
MESSAGES = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "What is the capital of France?"},
]


@pytest.fixture(autouse=True)
def no_anthropic_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No key or base URL from the developer's environment."""
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def server(request: pytest.FixtureRequest) -> Iterator[AnthropicServer]:
    script = getattr(request, "param", None) or ["nonsense"]
    with AnthropicServer(script=script) as s:
        yield s


def model(server: AnthropicServer, **options: object) -> AnthropicModel:
    return AnthropicModel("claude-test", base_url=server.base_url, api_key=KEY, **options)  # type: ignore[arg-type]


def test_tool_use_comes_back_as_json_valid_against_the_schema(server: AnthropicServer) -> None:
    m = model(server)
    c = m.generate(MESSAGES, STEP_SCHEMA, GenerateSettings(temperature=0.3, max_tokens=100, seed=7))
    jsonschema.validate(json.loads(c.text), STEP_SCHEMA)
    assert c.prompt_tokens > 0 and c.completion_tokens > 0 and c.latency_ms > 0
    (body,) = server.requests
    assert body["tools"] == [
        {"name": "output", "description": body["tools"][0]["description"], "input_schema": STEP_SCHEMA}
    ]
    assert body["tool_choice"] == {"type": "tool", "name": "output"}
    assert body["model"] == "claude-test"
    assert body["max_tokens"] == 100
    # temperature only where the API version the SDK speaks takes it (anthropic<2)
    assert body.get("temperature") == (0.3 if m.sends_temperature else None), m.api_version
    assert "seed" not in body  # Anthropic has none
    assert server.versions[0]  # the SDK sends its anthropic-version


@pytest.mark.parametrize("server", [["prose"]], indirect=True)
def test_prose_comes_back_as_text(server: AnthropicServer) -> None:
    m = model(server)
    with_schema = m.generate(MESSAGES, STEP_SCHEMA)
    without = m.generate(MESSAGES)
    for c in (with_schema, without):
        assert c.text and not c.text.lstrip().startswith("{")  # the parse gate fails closed on it
    assert "tools" not in server.requests[1] and "tool_choice" not in server.requests[1]


def test_system_messages_go_to_system_and_turns_alternate(server: AnthropicServer) -> None:
    messages = [
        {"role": "system", "content": "Rule one."},
        {"role": "user", "content": "Question?"},
        {"role": "system", "content": "Rule two."},
        {"role": "user", "content": "More context."},
        {"role": "assistant", "content": '{"action": "search"}'},
        {"role": "assistant", "content": "(continued)"},
        {"role": "user", "content": "Observation: nothing"},
    ]
    model(server).generate(messages, STEP_SCHEMA)
    body = server.requests[0]
    assert body["system"] == "Rule one.\n\nRule two."
    assert body["messages"] == [
        {"role": "user", "content": "Question?\n\nMore context."},
        {"role": "assistant", "content": '{"action": "search"}\n\n(continued)'},
        {"role": "user", "content": "Observation: nothing"},
    ]
    roles = [m["role"] for m in body["messages"]]
    assert all(a != b for a, b in itertools.pairwise(roles))


def test_temperature_only_for_api_versions_that_take_it() -> None:
    assert takes_temperature("2023-06-01")
    assert not takes_temperature("2026-10-21") and not takes_temperature("2027-01-01")
    assert not takes_temperature("")


def test_no_system_message_sends_no_system() -> None:
    system, turns = to_anthropic([{"role": "user", "content": "hi"}])
    assert (system, turns) == ("", [{"role": "user", "content": "hi"}])


@pytest.mark.parametrize("server", [["http500"]], indirect=True)
def test_http_500_is_transient(server: AnthropicServer) -> None:
    with pytest.raises(TransientError) as e:
        model(server).generate(MESSAGES, STEP_SCHEMA)
    assert "500" in str(e.value) and KEY not in str(e.value)
    assert len(server.requests) == 1  # the SDK's own retries are off


@pytest.mark.parametrize("server", [["http429"]], indirect=True)
def test_http_429_is_transient_with_its_retry_after(server: AnthropicServer) -> None:
    with pytest.raises(TransientError) as e:
        model(server).generate(MESSAGES, STEP_SCHEMA)
    assert e.value.retry_after == 0.0
    assert "429" in str(e.value) and KEY not in str(e.value)
    assert len(server.requests) == 1


@pytest.mark.parametrize("server", [["too_long"]], indirect=True)
def test_prompt_too_long_is_a_context_length_error(server: AnthropicServer) -> None:
    with pytest.raises(ContextLengthError):
        model(server).generate(MESSAGES, STEP_SCHEMA)


@pytest.mark.parametrize("server", [["http401"]], indirect=True)
def test_other_errors_are_model_errors_and_never_show_the_key(server: AnthropicServer) -> None:
    with pytest.raises(ModelError) as e:
        model(server).generate(MESSAGES, STEP_SCHEMA)
    assert not isinstance(e.value, TransientError | ContextLengthError)
    assert "401" in str(e.value) and KEY not in str(e.value)


def test_connection_refused_is_transient() -> None:
    with AnthropicServer() as s:
        url = s.base_url
    with pytest.raises(TransientError) as e:
        AnthropicModel("claude-test", base_url=url, api_key=KEY, timeout=5).generate(MESSAGES)
    assert KEY not in str(e.value)


def test_missing_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ModelConfigError, match="ANTHROPIC_API_KEY") as e:
        AnthropicModel("claude-test")
    assert "\n" not in str(e.value)
    with pytest.raises(ModelConfigError, match="ANTHROPIC_API_KEY"):
        get_model("anthropic/claude-test")
    # the default base URL spelled out is still the real API: a key is needed
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "https://api.anthropic.com/v1/")
    with pytest.raises(ModelConfigError, match="ANTHROPIC_API_KEY"):
        AnthropicModel("claude-test")


def test_missing_package_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "anthropic", None)  # import anthropic -> ImportError
    with pytest.raises(ModelConfigError, match="pip install anthropic"):
        AnthropicModel("claude-test", api_key=KEY)


def test_the_configured_key_is_the_one_sent(server: AnthropicServer, monkeypatch: pytest.MonkeyPatch) -> None:
    model(server).generate(MESSAGES)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-from-env-000000")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
    AnthropicModel("claude-test").generate(MESSAGES)
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    AnthropicModel("claude-test").generate(MESSAGES)  # a non-default base URL needs no key
    assert server.api_keys == [KEY, "sk-ant-from-env-000000", "no-key-needed"]


def test_base_url_with_or_without_v1(server: AnthropicServer) -> None:
    for url in (server.base_url, server.base_url + "/", server.base_url + "/v1", server.base_url + "/v1/"):
        AnthropicModel("claude-test", base_url=url, api_key=KEY).generate(MESSAGES)
    assert len(server.requests) == 4


def test_registered_as_anthropic(server: AnthropicServer) -> None:
    m = get_model("anthropic/claude-test", base_url=server.base_url)
    assert m.name == "anthropic/claude-test"
    jsonschema.validate(json.loads(m.generate(MESSAGES, STEP_SCHEMA).text), STEP_SCHEMA)


@pytest.mark.timeout(300)
def test_run_against_the_fake_accounts_for_every_attempt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VREACT_CACHE_DIR", str(tmp_path / "cache"))  # never the user's cache
    out = tmp_path / "run"
    with AnthropicServer(seed=1) as server:
        result, elapsed = run_cli(FULL, "N,VG", "anthropic/claude-test", out, 10, server.base_url)
    print(f"anthropic fake run: {elapsed:.1f}s, {len(server.requests)} requests, {server.counts}")
    assert result.exit_code == 0, result.output
    assert result.exception is None, result.exception
    assert server.requests and set(server.api_keys) == {"no-key-needed"}
    assert all(server.counts[k] > 0 for k in KINDS), server.counts
    check_accounting(out, ["N", "VG"], 10)
