"""Model strings, keys and the mock provider."""

from __future__ import annotations

import pytest

from vreact.model import MockModel, MockScriptExhausted, ModelConfigError, get_model


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
