"""Model strings, keys and the mock provider."""

from __future__ import annotations

import pytest

from vreact.model import (
    CallPolicy,
    Completion,
    GenerateSettings,
    MockModel,
    MockScriptExhausted,
    ModelConfigError,
    ResilientModel,
    ResponseCache,
    get_model,
)
from vreact.model._cache import request_key
from vreact.spec import RunLimits


def test_openai_without_key_or_base_url_names_the_variable(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ModelConfigError, match="OPENAI_API_KEY"):
        get_model("openai/gpt-4o-mini")


def test_openai_local_base_url_needs_no_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    model = get_model("openai/smollm2", base_url="http://127.0.0.1:9/v1")
    assert model.name == "openai/smollm2"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    assert get_model("openai/x").inner.client.base_url.host == "127.0.0.1"  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "name, message",
    [
        ("smollm2", "expected provider/model"),
        ("claude/x", "unknown provider 'claude'"),
        ("llamacpp/nope.gguf", "not an alias"),
        ("mock/x", "scripted from Python"),
    ],
)
def test_bad_model_strings_are_one_line_errors(name, message):
    with pytest.raises(ModelConfigError, match=message):
        get_model(name)


def test_mock_model_scripts_and_fails_loudly():
    m = get_model("mock/t", outputs=["a", {"b": 1}])
    assert [m.generate([{"role": "user", "content": "hi"}]).text for _ in range(2)] == ["a", '{"b": 1}']
    with pytest.raises(MockScriptExhausted, match="ran out after 2"):
        m.generate([{"role": "user", "content": "hi"}])
    echo = MockModel(lambda messages: messages[-1]["content"].upper())
    assert echo.generate([{"role": "user", "content": "hi"}]).text == "HI"
    gen = MockModel(str(i) for i in range(3))
    assert gen.generate([{"role": "user", "content": ""}]).text == "0"
    gen.generate([], None, GenerateSettings(temperature=0.5, max_tokens=64, seed=1))
    assert gen.settings == [GenerateSettings(), GenerateSettings(0.5, 64, 1)]


def test_the_cache_key_is_the_one_made_before_settings_were_one_object(tmp_path):
    """Caches written before GenerateSettings still hit: the key hashes the same request dict."""
    cache = ResponseCache(tmp_path)
    messages = [{"role": "user", "content": "hi"}]
    old_key = request_key(
        {
            "model": "mock/m",
            "endpoint": "mock",
            "messages": messages,
            "schema": None,
            "temperature": 0.2,
            "max_tokens": 256,
            "seed": 3,
        }
    )
    cache.put(old_key, "mock/m", Completion("from the cache"))
    inner = MockModel(["from the model"], name="mock/m")
    model = ResilientModel(inner, "mock", cache=cache)
    assert model.generate(messages, None, GenerateSettings(0.2, 256, 3)).text == "from the cache"
    assert inner.calls == []
    assert model.generate(messages, None, GenerateSettings(0.2, 256, 4)).text == "from the model"


def test_a_models_file_gives_aliases_roles_structured_output_and_prices(tmp_path):
    import json

    from click.testing import CliRunner

    from tests.conftest import FULL
    from tests.fakes.chaos_server import ChaosServer
    from tests.model.test_chaos import rows
    from vreact.cli import cli

    models = tmp_path / "models.yaml"
    models.write_text(
        "kind: models\n"
        "models:\n"
        "  brain: {model: openai/big, price: {input: 1.0, output: 2.0}}\n"
        "  small: {model: openai/tiny, structured_output: json_object, price: {input: 0.5, output: 0.5}}\n"
        "roles: {default: brain, judge: small}\n"
    )
    out = tmp_path / "run"
    with ChaosServer(mix={"nonsense": 1.0}) as server:
        result = CliRunner().invoke(
            cli,
            [
                "run",
                "--dataset",
                str(FULL),
                "--configs",
                "VPGJ",
                "--limit",
                "2",
                "--models",
                str(models),
                "--base-url",
                server.base_url,
                "--out",
                str(out),
                "--concurrency",
                "1",  # sequential: the seeded server's replies follow the order of requests
            ],
            env={"OPENAI_API_KEY": None},
        )
    assert result.exit_code == 0, result.output
    calls = rows(
        out / "vreact.db", "select role, model, prompt_tokens, completion_tokens, cost_usd from model_calls"
    )
    for c in calls:
        price = (0.5, 0.5) if c["role"] == "judge" else (1.0, 2.0)
        assert c["model"] == ("openai/tiny" if c["role"] == "judge" else "openai/big")
        expected = (c["prompt_tokens"] * price[0] + c["completion_tokens"] * price[1]) / 1e6
        assert c["cost_usd"] == pytest.approx(expected)
    # the judge alias never probes json_schema: its structured-output mode is fixed by the file
    judge_formats = {q["response_format"]["type"] for q in server.requests if q["model"] == "tiny"}
    assert judge_formats == {"json_object"}
    report = json.loads(CliRunner().invoke(cli, ["report", str(out), "--json"]).stdout)["configs"]["VPGJ"]
    assert report["cost_usd"] == pytest.approx(sum(c["cost_usd"] for c in calls), abs=1e-6)


def test_models_file_errors_are_one_line(tmp_path):
    from click.testing import CliRunner

    from vreact.cli import cli

    bad = tmp_path / "models.yaml"
    bad.write_text("kind: models\nmodels:\n  a: {model: openai/x}\nroles:\n  judge: aa\n")
    result = CliRunner().invoke(cli, ["validate", str(bad)])
    assert result.exit_code == 2
    [line] = result.output.strip().splitlines()
    assert line.startswith(f"{bad}:") and "role 'judge': 'aa' is neither an alias" in line
    assert line.endswith("did you mean 'a'?")


def test_a_run_s_call_policy_is_derived_from_its_limits():
    assert RunLimits().policy() == CallPolicy()  # one set of defaults
    limits = RunLimits(max_retries=1, call_timeout=0, endpoint_concurrency=9)
    assert limits.policy() == CallPolicy(max_retries=1, call_timeout=None, concurrency=9)
